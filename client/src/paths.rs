//! XDG directories for helix: config, cache and data, honouring `XDG_*_HOME`.
//! Tests and users isolate all client state by setting these three variables.

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

/// The user config file, `config_dir()/config.toml`.
pub fn user_config_file() -> PathBuf {
    config_dir().join("config.toml")
}

/// Directory of one project's pending entries and overlay index.
pub fn pending_dir(project: &str) -> PathBuf {
    data_dir().join("pending").join(project)
}

/// A server URL made filename-safe: host and port, e.g. `127.0.0.1_7700`.
pub fn server_key(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // Drop any userinfo; never put credentials into a path.
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
    let key: String = host_port
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

/// Cache directory of one project: `cache_dir()/<server-key>/<project>` or `cache_dir()/local/<project>`.
pub fn project_cache_dir(server: Option<&str>, project: &str) -> PathBuf {
    let base = cache_dir();
    match server {
        Some(url) => base.join(server_key(url)).join(project),
        None => base.join("local").join(project),
    }
}

/// Whether a project name is safe to use as a single path component.
pub fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_replace(path, bytes, true)
}

/// Like [`write_atomic`] without the fsync: for state that can be rebuilt (cache metadata,
/// last sync result), where readers must never see a torn file but a crash may lose it.
pub fn write_atomic_nosync(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_replace(path, bytes, false)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{name}.{}.{:x}.tmp",
        std::process::id(),
        rand::random::<u32>()
    ));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Removes temporary files that a killed helix process left in `dir`: names of the form
/// `.<name>.<pid>.<hex>.tmp` (written by [`write_atomic`] and downloads) whose process is
/// gone, or that are more than a day old. Errors are ignored: this is housekeeping.
pub fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let day = std::time::Duration::from_secs(24 * 3600);
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
            continue;
        };
        let mut parts = stem.rsplit('.');
        let (Some(hex), Some(pid)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if old || (pid != std::process::id() && !process_alive(pid)) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether process `pid` exists (Linux: `/proc`; elsewhere assumed alive, so only the
/// age rule applies).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_keys_are_filename_safe() {
        assert_eq!(server_key("http://127.0.0.1:7700"), "127.0.0.1_7700");
        assert_eq!(
            server_key("https://helix.example.com/"),
            "helix.example.com_443"
        );
        assert_eq!(server_key("http://u:p@h:1/x"), "h_1");
    }

    #[test]
    fn unsafe_names_rejected() {
        assert!(is_safe_name("backend"));
        assert!(!is_safe_name(".."));
        assert!(!is_safe_name("a/b"));
        assert!(!is_safe_name(""));
    }
}
