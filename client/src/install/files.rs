//! Reading and writing the JSON files the installer edits: invalid JSON is reported and never
//! touched; writes are atomic, and the previous content is kept outside the repository, in
//! `$XDG_STATE_HOME/helix/backups/` (mode 0600: settings can hold secrets in `env`).

use super::ordered::Value;
use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};

/// A JSON file read from disk: `None` when it does not exist.
pub fn load(path: &Path) -> Result<Option<(Value, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some((Value::Object(Vec::new()), text)));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!(
            "{}: not valid JSON ({e}); left untouched — fix or move it, then retry",
            path.display()
        )
    })?;
    Ok(Some((v, text)))
}

/// The document of `path`, or an empty object when there is no file, with its old text.
pub fn load_or_empty(path: &Path) -> Result<(Value, Option<String>)> {
    Ok(match load(path)? {
        Some((v, text)) => (v, Some(text)),
        None => (Value::Object(Vec::new()), None),
    })
}

/// Pretty JSON with a final newline, the layout Claude Code itself writes.
pub fn render(doc: &Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(doc).context("rendering JSON")?;
    text.push('\n');
    Ok(text)
}

/// Where the previous content of `path` is kept: one backup per file, named after it and
/// its directory (`.claude-settings.json.<hash>.bak`).
pub fn backup_path(path: &Path) -> PathBuf {
    let part = |p: Option<&std::ffi::OsStr>| p.map(|n| n.to_string_lossy().into_owned());
    let name = match (
        part(path.parent().and_then(Path::file_name)),
        part(path.file_name()),
    ) {
        (Some(d), Some(f)) => format!("{d}-{f}"),
        (None, Some(f)) => f,
        _ => "file".into(),
    };
    let hash = xxhash_rust::xxh3::xxh3_64(path.as_os_str().as_encoded_bytes());
    crate::paths::state_dir()
        .join("backups")
        .join(format!("{name}.{:08x}.bak", hash >> 32))
}

/// Keeps `previous` (the content of `path` before a change) in its backup file.
pub fn back_up(path: &Path, previous: &str) -> Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let bak = backup_path(path);
    let dir = bak.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let _ = std::fs::remove_file(&bak);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&bak)
        .and_then(|mut f| f.write_all(previous.as_bytes()))
        .with_context(|| format!("writing backup {}", bak.display()))?;
    Ok(bak)
}

/// Writes `text` to `path` atomically (keeping its permissions), the previous content to its
/// backup first. Returns the backup's path, if one was made.
pub fn save(path: &Path, text: &str, previous: Option<&str>) -> Result<Option<PathBuf>> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let bak = previous.map(|p| back_up(path, p)).transpose()?;
    crate::sys::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(bak)
}

/// Removes `path`, its previous content to its backup first.
pub fn remove(path: &Path, previous: &str) -> Result<PathBuf> {
    let bak = back_up(path, previous)?;
    std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    Ok(bak)
}
