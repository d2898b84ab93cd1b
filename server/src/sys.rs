//! Small system pieces shared by every module of the server, each defined once here:
//! crash-safe file replacement, the wall clock, lock guards that survive a panic, and the
//! TLS provider.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Makes ring rustls's process-wide cryptography, once; reqwest refuses to build a client
/// before one is chosen (helix builds without aws-lc, reqwest's default).
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err: another part of the process chose one already, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Writes `bytes` to `path` atomically: temporary file in the same directory, fsync,
/// rename, fsync of the directory, so readers see the old or the new content, never a
/// torn file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`], running `prepare` on the temporary file (its mode, its owner) after
/// the bytes are written and before it is synced and renamed over `path`.
pub fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    prepare: impl FnOnce(&File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".part")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    prepare(tmp.as_file())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = File::open(dir) {
        // Directory fsync makes the rename durable; not supported everywhere, so best effort.
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes leftover temporary files from an interrupted `write_atomic` in `dir`.
pub fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".tmp-") && name.ends_with(".part") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Unix time in seconds (0 if the clock is before 1970).
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

// The locks below guard values replaced or bumped in one step (counters, the served
// artifact, a channel): a panic while one was held leaves at worst a stale value, so a
// poisoned lock is used as it is instead of failing every later request.

/// Read access to `l`, poisoned or not.
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Write access to `l`, poisoned or not.
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// `m` locked, poisoned or not.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `e` and every error below it, joined with `: ` (what anyhow's `{:#}` prints): for
/// messages built from another library's error, whose own `Display` leaves its causes out.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}
