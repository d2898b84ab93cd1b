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

/// How often [`sweep_older_than`] looks through one directory.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// The stamp [`sweep_older_than`] keeps in a directory: when it last looked through it.
const SWEPT: &str = ".swept";

/// Calls `remove` with every entry of `dir` not modified for `age`, looking through the
/// directory at most once per [`SWEEP_EVERY`] (a `.swept` stamp in it records when). A
/// session start then costs one `stat` however many sessions the directory holds, and each
/// sweep looks at every entry, so no old one can escape it behind many young ones. Errors
/// are ignored: this is housekeeping.
pub fn sweep_older_than(dir: &Path, age: std::time::Duration, remove: impl Fn(&Path)) {
    let stamp = dir.join(SWEPT);
    let now = std::time::SystemTime::now();
    let recent = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| now.duration_since(t).ok())
        .is_some_and(|a| a < SWEEP_EVERY);
    // Stamped first, so that sessions starting meanwhile do not all sweep; a directory
    // that cannot take the stamp holds nothing of ours to sweep.
    if recent || std::fs::File::create(&stamp).is_err() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name() == SWEPT {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|a| a > age);
        if old {
            remove(&e.path());
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn age(path: &Path, by: Duration) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(SystemTime::now() - by))
            .expect("age a file");
    }

    #[test]
    fn a_sweep_looks_at_every_entry_at_most_once_an_hour() {
        let dir = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(24 * 3600);
        // More entries than any cap: the old ones sit among many young ones.
        for i in 0..12_000 {
            std::fs::write(dir.path().join(format!("young-{i}")), "").unwrap();
        }
        for i in 0..5 {
            let old = dir.path().join(format!("old-{i}"));
            std::fs::write(&old, "").unwrap();
            age(&old, day * 2);
        }
        let remove = |p: &Path| {
            let _ = std::fs::remove_file(p);
        };
        sweep_older_than(dir.path(), day, remove);
        assert!((0..5).all(|i| !dir.path().join(format!("old-{i}")).exists()));
        assert!(dir.path().join("young-11999").exists());
        assert!(dir.path().join(SWEPT).exists());

        // Within the hour, nothing is looked at.
        let late = dir.path().join("old-late");
        std::fs::write(&late, "").unwrap();
        age(&late, day * 2);
        sweep_older_than(dir.path(), day, remove);
        assert!(late.exists());
        // Once the stamp is an hour old, the next sweep runs.
        age(
            &dir.path().join(SWEPT),
            SWEEP_EVERY + Duration::from_secs(1),
        );
        sweep_older_than(dir.path(), day, remove);
        assert!(!late.exists());
    }
}
