//! XDG directories for helix: config, cache, data and state, honouring `XDG_*_HOME`.
//! Tests and users isolate all client state by setting these variables.

use std::path::{Path, PathBuf};

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn xdg(var: &str, default_rel: &str) -> PathBuf {
    // The XDG spec says relative values are invalid and must be ignored.
    match std::env::var_os(var).map(PathBuf::from) {
        Some(p) if p.is_absolute() => p.join("helix"),
        _ => home().join(default_rel).join("helix"),
    }
}

/// `$XDG_CONFIG_HOME/helix` (default `~/.config/helix`).
pub fn config_dir() -> PathBuf {
    xdg("XDG_CONFIG_HOME", ".config")
}

/// `$XDG_CACHE_HOME/helix` (default `~/.cache/helix`).
pub fn cache_dir() -> PathBuf {
    xdg("XDG_CACHE_HOME", ".cache")
}

/// `$XDG_DATA_HOME/helix` (default `~/.local/share/helix`).
pub fn data_dir() -> PathBuf {
    xdg("XDG_DATA_HOME", ".local/share")
}

/// `$XDG_STATE_HOME/helix` (default `~/.local/state/helix`): backups of files the installer
/// changed.
pub fn state_dir() -> PathBuf {
    xdg("XDG_STATE_HOME", ".local/state")
}

/// The user config file, `config_dir()/config.toml`.
pub fn user_config_file() -> PathBuf {
    config_dir().join("config.toml")
}

/// Directory of one project's pending entries and overlay index on one server:
/// `data_dir()/servers/<server-key>/pending/<project>`. Keyed by server as the cache is, so
/// two servers that both have a project of one name never share a push queue (an entry
/// stored for one team's server is never pushed to another's). Callers go through
/// `pending::PendingDir`, which first moves a [`legacy_pending_dir`] here.
pub fn pending_dir(server: &str, project: &str) -> PathBuf {
    data_dir()
        .join("servers")
        .join(server_key(server))
        .join("pending")
        .join(project)
}

/// The usage-report state of one project on one server (docs/usage.md): the cursor into the
/// injection log, the reports written but not yet acknowledged, a refusal's pause:
/// `state_dir()/servers/<server-key>/usage/<project>.json`. Keyed by server as the pending
/// queue is, so a report meant for one team's server is never sent to another's.
pub fn usage_state_file(server: &str, project: &str) -> PathBuf {
    state_dir()
        .join("servers")
        .join(server_key(server))
        .join("usage")
        .join(format!("{project}.json"))
}

/// Where helix kept a project's pending entries before they were keyed by server:
/// `data_dir()/pending/<project>`, whatever the server. A root of its own (`pending/`, not
/// `servers/`), so it is never mistaken for the current layout.
pub fn legacy_pending_dir(project: &str) -> PathBuf {
    data_dir().join("pending").join(project)
}

/// A server URL made filename-safe: host and port, e.g. `127.0.0.1_7700`, and for a server
/// mounted under a path (`https://corp.example/helix`) the path too, with a hash of it so
/// that `/a/b` and `/a_b` differ: `corp.example_443_helix-1a2b3c4d`. Two servers on one host
/// and port under different paths are two servers, with caches and pending queues of their
/// own. The scheme and any userinfo, query or fragment are not part of the key.
pub fn server_key(url: &str) -> String {
    let (host_port, path) = split_url(url);
    let path = path.trim_matches('/');
    if path.is_empty() {
        return safe_key(&host_port);
    }
    let hash = xxhash_rust::xxh3::xxh3_64(path.as_bytes());
    let shown: String = path.chars().take(40).collect();
    safe_key(&format!("{host_port}/{shown}-{:08x}", hash >> 32))
}

/// [`server_key`] of the server's host and port alone, its path left out: the key versions
/// before paths were part of it gave a server under a path.
pub fn host_key(url: &str) -> String {
    safe_key(&split_url(url).0)
}

/// `host:port` (the scheme's default port when none is given; userinfo dropped, never put
/// into a path) and the path of a server URL, without query or fragment.
fn split_url(url: &str) -> (String, &str) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let mut host_port = authority.to_string();
    if !host_port.contains(':') || host_port.ends_with(']') {
        let default = if url.starts_with("https://") {
            "443"
        } else {
            "80"
        };
        host_port = format!("{host_port}:{default}");
    }
    (host_port, path)
}

/// `raw` with every character but letters, digits, `.` and `-` made `_`, never empty nor
/// starting with a dot: one safe path component.
fn safe_key(raw: &str) -> String {
    let key: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let key = key.trim_matches('_').to_string();
    if key.is_empty() || key.starts_with('.') {
        format!("server_{}", key.trim_start_matches('.'))
    } else {
        key
    }
}

/// Cache directory of one project: `cache_dir()/<server-key>/<project>`, or in local mode
/// `cache_dir()/local/<project>-<hash>`, the hash of the knowledge directory's absolute
/// path: two code repositories whose knowledge folders share a name (`docs/knowledge`)
/// must not share, and overwrite, one cache.
pub fn project_cache_dir(server: Option<&str>, local: Option<&Path>, project: &str) -> PathBuf {
    let base = cache_dir();
    match (server, local) {
        (Some(url), _) => base.join(server_key(url)).join(project),
        (None, Some(dir)) => {
            let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            let hash = xxhash_rust::xxh3::xxh3_64(dir.as_os_str().as_encoded_bytes());
            base.join("local")
                .join(format!("{project}-{:08x}", hash >> 32))
        }
        (None, None) => base.join("local").join(project),
    }
}

/// Whether a project name is safe to use as a single path component.
pub fn is_safe_name(name: &str) -> bool {
    helix_index_format::wire::is_safe_file_stem(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_caches_differ_by_knowledge_directory() {
        let a = project_cache_dir(None, Some(Path::new("/w/one/docs/knowledge")), "knowledge");
        let b = project_cache_dir(None, Some(Path::new("/w/two/docs/knowledge")), "knowledge");
        assert_ne!(a, b);
        assert_eq!(a.parent(), b.parent());
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("knowledge-") && name.len() == "knowledge-".len() + 8,
            "{name}"
        );
        // The same directory, the same cache.
        assert_eq!(
            a,
            project_cache_dir(None, Some(Path::new("/w/one/docs/knowledge")), "knowledge")
        );
    }

    #[test]
    fn pending_dirs_differ_by_server_and_never_meet_the_legacy_layout() {
        let a = pending_dir("http://one.example:7700", "default");
        let b = pending_dir("https://two.example", "default");
        assert_ne!(a, b);
        assert!(
            a.ends_with("servers/one.example_7700/pending/default"),
            "{a:?}"
        );
        assert!(
            b.ends_with("servers/two.example_443/pending/default"),
            "{b:?}"
        );
        // The same server spelled with a trailing slash: the same queue.
        assert_eq!(b, pending_dir("https://two.example/", "default"));
        let legacy = legacy_pending_dir("default");
        assert!(legacy.ends_with("pending/default"), "{legacy:?}");
        for dir in [&a, &b] {
            assert!(!dir.starts_with(&legacy) && !legacy.starts_with(dir));
        }
    }

    #[test]
    fn server_keys_are_filename_safe() {
        assert_eq!(server_key("http://127.0.0.1:7700"), "127.0.0.1_7700");
        assert_eq!(
            server_key("https://helix.example.com/"),
            "helix.example.com_443"
        );
        assert_eq!(server_key("http://u:p@h:1?q#f"), "h_1");
    }

    #[test]
    fn servers_under_different_paths_of_one_host_have_keys_of_their_own() {
        let a = server_key("https://corp.example/team-a");
        let b = server_key("https://corp.example/team-b/");
        assert!(a.starts_with("corp.example_443_team-a-"), "{a}");
        assert_ne!(a, b);
        assert_ne!(a, server_key("https://corp.example"));
        assert_eq!(host_key("https://corp.example/team-a"), "corp.example_443");
        assert_eq!(host_key("http://u:p@h:1/x?y"), server_key("http://h:1"));
        // A trailing slash, a query or credentials do not change the server.
        assert_eq!(a, server_key("https://u:p@corp.example/team-a/?x=1"));
        // Paths that read alike once made filename-safe still differ.
        assert_ne!(server_key("http://h:1/a/b"), server_key("http://h:1/a_b"));
        for k in [&a, &b, &server_key("http://h:1/../../etc")] {
            assert!(is_safe_name(k), "{k}");
        }
    }

    #[test]
    fn unsafe_names_rejected() {
        assert!(is_safe_name("backend"));
        assert!(!is_safe_name(".."));
        assert!(!is_safe_name("a/b"));
        assert!(!is_safe_name(""));
    }
}
