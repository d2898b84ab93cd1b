//! Token creation: fresh `hx_` tokens, their sha256 (all the config stores), and
//! `helix-server token add`, which writes the hash into the config file in place.

use std::path::{Path, PathBuf};

use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::config::{Config, ConfigError, Scope};
use crate::sys::write_atomic_with;

/// Why `token add` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file, as it is or as it would be written, is not a valid configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{}: no project named {project:?}", .path.display())]
    NoProject { path: PathBuf, project: String },
    #[error("token name {0:?} must be non-empty and contain no newlines or angle brackets")]
    BadName(String),
    #[error("at least one scope (read, write) is needed")]
    NoScope,
    #[error("config is not a TOML document: {0}")]
    NotToml(toml_edit::TomlError),
    #[error("config has no [[projects]]")]
    NoProjects,
    #[error("project {0:?}: `tokens` is not an array")]
    TokensNotArray(String),
    #[error("cannot write config {}: {error}", .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// A fresh token: `hx_` and 32 random bytes in hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("hx_{}", hex::encode(bytes))
}

/// Lower-case hex sha256 of a token, as stored in the config.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// `token add`: creates a token for `project` in the config file at `path`, stores only its
/// hash, and returns the plaintext (shown once). The file's comments, order and layout stay.
pub fn add_token(
    path: &Path,
    project: &str,
    name: &str,
    scopes: &[Scope],
) -> Result<String, TokenError> {
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    // Check the file as a whole first, then edit it as a plain TOML table so that
    // defaults are not written out.
    let cfg = Config::parse(&text, &path.display().to_string())?;
    if cfg.project(project).is_none() {
        return Err(TokenError::NoProject {
            path: path.to_path_buf(),
            project: project.to_string(),
        });
    }
    if name.trim().is_empty() || name.contains(['\n', '\r', '<', '>']) {
        return Err(TokenError::BadName(name.to_string()));
    }
    if scopes.is_empty() {
        return Err(TokenError::NoScope);
    }
    // toml_edit keeps the operator's comments, order and formatting.
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(TokenError::NotToml)?;
    let projects = doc
        .get_mut("projects")
        .and_then(toml_edit::Item::as_array_of_tables_mut)
        .ok_or(TokenError::NoProjects)?;
    let token = new_token();
    let mut entry = toml_edit::InlineTable::new();
    entry.insert("name", name.into());
    entry.insert("sha256", hash_token(&token).into());
    entry.insert(
        "scopes",
        toml_edit::Value::Array(scopes.iter().map(|s| s.as_str()).collect()),
    );
    for t in projects.iter_mut() {
        if t.get("name").and_then(toml_edit::Item::as_str) != Some(project) {
            continue;
        }
        match t.get_mut("tokens") {
            None => {
                let mut aot = toml_edit::ArrayOfTables::new();
                aot.push(entry.clone().into_table());
                t.insert("tokens", toml_edit::Item::ArrayOfTables(aot));
            }
            Some(toml_edit::Item::ArrayOfTables(aot)) => aot.push(entry.clone().into_table()),
            Some(toml_edit::Item::Value(toml_edit::Value::Array(arr))) => {
                arr.push(entry.clone());
            }
            Some(_) => return Err(TokenError::TokensNotArray(project.to_string())),
        }
    }
    let out = doc.to_string();
    Config::parse(&out, "updated config")?;
    write_like(path, out.as_bytes()).map_err(|error| TokenError::Write {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(token)
}

/// Replaces `path` atomically, keeping its permissions and (when allowed) its owner: the
/// config holds token hashes and webhook secrets, and a root-run `token add` must not hand
/// a service user's file to root.
fn write_like(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    write_atomic_with(path, bytes, |tmp| {
        tmp.set_permissions(meta.permissions())?;
        let made = tmp.metadata()?;
        if (made.uid(), made.gid()) != (meta.uid(), meta.gid()) {
            std::os::unix::fs::fchown(tmp, Some(meta.uid()), Some(meta.gid())).map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "cannot give the new file the old one's owner {}:{} ({e}); run as that user or root",
                        meta.uid(),
                        meta.gid()
                    ),
                )
            })?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_add_stores_only_the_hash() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[[projects]]\nname = \"p\"\n").expect("write");
        let tok = add_token(&path, "p", "alice", &[Scope::Read]).expect("add");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains(&tok));
        assert!(text.contains(&hash_token(&tok)));
        let cfg = Config::load(&path).expect("reload");
        assert_eq!(cfg.projects[0].tokens[0].name, "alice");
        assert!(add_token(&path, "nope", "bob", &[Scope::Read]).is_err());
    }

    /// The operator's file stays theirs: comments, order, other projects' inline token
    /// arrays and the file mode survive, and the new token lands in the right project.
    #[test]
    fn token_add_keeps_comments_layout_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.toml");
        let original = format!(
            "# helix-server config: ask ops before editing\nlisten = \"127.0.0.1:7700\"\n\n[[projects]]\nname = \"a\"  # the backend team\ntokens = [{{ name = \"ci\", sha256 = \"{}\", scopes = [\"read\"] }}]\n\n[[projects]]\n# no tokens yet\nname = \"b\"\n",
            hash_token("ci-token")
        );
        std::fs::write(&path, original).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let ta = add_token(&path, "a", "alice", &[Scope::Read, Scope::Write]).expect("add a");
        let tb = add_token(&path, "b", "bob", &[Scope::Read]).expect("add b");
        let text = std::fs::read_to_string(&path).expect("read");
        for kept in [
            "# helix-server config: ask ops before editing",
            "# the backend team",
            "# no tokens yet",
            "listen = \"127.0.0.1:7700\"",
        ] {
            assert!(text.contains(kept), "{kept:?} lost:\n{text}");
        }
        assert!(
            text.find("name = \"a\"") < text.find("name = \"b\""),
            "{text}"
        );
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let cfg = Config::load(&path).expect("reload");
        let names = |p: usize| -> Vec<&str> {
            cfg.projects[p]
                .tokens
                .iter()
                .map(|t| t.name.as_str())
                .collect()
        };
        assert_eq!(names(0), ["ci", "alice"]);
        assert_eq!(names(1), ["bob"]);
        assert_eq!(cfg.projects[0].tokens[1].sha256, hash_token(&ta));
        assert_eq!(cfg.projects[1].tokens[0].sha256, hash_token(&tb));
        assert_eq!(
            cfg.projects[0].tokens[1].scopes,
            [Scope::Read, Scope::Write]
        );
    }
}
