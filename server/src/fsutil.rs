//! Crash-safe file writes: temporary file in the same directory, fsync, rename, fsync of
//! the directory, so readers see the old or the new content, never a torn file.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".part")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = std::fs::File::open(dir) {
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
