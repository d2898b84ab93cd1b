//! Cache freshness for `session-start`: when a followed project's cache is older than
//! `HELIX_SYNC_MAX_AGE` seconds (default 3600), start `helix sync --quiet` fully detached.
//!
//! Rate-limited by a timestamp file per project root; never waits for the sync.

use crate::config::ProjectConfig;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

/// Default cache age after which a background sync starts.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(3600);
/// At most one background sync per project root within this window.
pub const MIN_INTERVAL: Duration = Duration::from_secs(300);

/// `HELIX_SYNC_MAX_AGE` in seconds; `0` or `off` disables background syncs.
pub fn max_age() -> Option<Duration> {
    match std::env::var("HELIX_SYNC_MAX_AGE") {
        Ok(v) if v.trim() == "off" => None,
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(n) => Some(Duration::from_secs(n)),
            Err(_) => Some(DEFAULT_MAX_AGE),
        },
        Err(_) => Some(DEFAULT_MAX_AGE),
    }
}

fn age(path: &Path, now: SystemTime) -> Option<Duration> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(now.duration_since(m).unwrap_or_default())
}

/// Age of a project's cache: `meta.json`'s `fetched_at`, else the artifact's mtime.
/// `None` when there is no cache at all.
fn cache_age(cfg: &ProjectConfig, project: &str, now: SystemTime) -> Option<Duration> {
    let dir = cfg.cache_dir(project);
    if let Ok(text) = std::fs::read(dir.join("meta.json"))
        && text.len() < 64 * 1024
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text)
        && let Some(at) = v.get("fetched_at").and_then(serde_json::Value::as_u64)
    {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(at);
        return Some(now.duration_since(at).unwrap_or_default());
    }
    age(&dir.join(crate::knowledge::INDEX_FILE), now)
}

/// The stamp file of the last background sync for this project root.
pub fn stamp_path(cfg: &ProjectConfig) -> PathBuf {
    let key = xxhash_rust::xxh3::xxh3_64(cfg.root.as_os_str().as_encoded_bytes());
    crate::paths::cache_dir()
        .join("hook-sync")
        .join(format!("{key:016x}"))
}

/// Whether any followed project's cache is missing or older than `max`.
pub fn stale(cfg: &ProjectConfig, max: Duration) -> bool {
    let now = SystemTime::now();
    cfg.projects
        .iter()
        .any(|p| cache_age(cfg, p, now).is_none_or(|a| a > max))
}

/// Starts `helix sync --quiet` detached when the cache is stale and no sync started lately.
/// Returns whether one was started.
pub fn maybe_sync(cfg: &ProjectConfig) -> bool {
    let Some(max) = max_age() else { return false };
    if !stale(cfg, max) {
        return false;
    }
    let stamp = stamp_path(cfg);
    let interval = MIN_INTERVAL.min(max);
    if age(&stamp, SystemTime::now()).is_some_and(|a| a < interval) {
        return false;
    }
    // Write the stamp first: two sessions starting together start one sync.
    if crate::sys::write_atomic(&stamp, cfg.root.as_os_str().as_encoded_bytes()).is_err() {
        return false;
    }
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    spawn_detached(&exe, &cfg.root)
}

// Deliberately not waited for: the hook exits at once and init reaps the sync.
#[allow(clippy::zombie_processes)]
fn spawn_detached(exe: &Path, root: &Path) -> bool {
    use std::os::unix::process::CommandExt;
    Command::new(exe)
        .args(["sync", "--quiet"])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: Claude Code's timeout or Ctrl-C on the hook never reaches it.
        .process_group(0)
        .spawn()
        .is_ok()
}
