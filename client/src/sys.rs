//! Small operating-system pieces every module uses: the clock, crash-safe file writes,
//! clean-up after killed processes, and advisory directory locks.

use anyhow::Context;
use std::path::Path;

/// Unix seconds now.
pub fn now_secs() -> i64 {
    now_ms() / 1000
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    i64::try_from(since_epoch().as_millis()).unwrap_or(i64::MAX)
}

/// Time since the Unix epoch (zero for a clock set before it).
pub fn since_epoch() -> std::time::Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename.
/// A file that is replaced keeps its permissions.
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
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// The entries of `dir` (at most 10,000) not modified for `age`; none when it cannot be read.
pub fn entries_older_than(dir: &Path, age: std::time::Duration) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    rd.flatten()
        .take(10_000)
        .filter(|e| {
            e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|a| a > age)
        })
        .map(|e| e.path())
        .collect()
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

/// Takes an exclusive advisory lock (`flock`) on `dir/.lock`, creating both; released when
/// the returned file is dropped.
pub fn lock_dir(dir: &Path) -> anyhow::Result<std::fs::File> {
    std::fs::create_dir_all(dir)?;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lock"))
        .with_context(|| format!("opening lock in {}", dir.display()))?;
    // std's advisory file lock (flock): needs Rust 1.89; the toolchain here is newer.
    #[allow(clippy::incompatible_msrv)]
    f.lock()
        .with_context(|| format!("locking {}", dir.display()))?;
    Ok(f)
}
