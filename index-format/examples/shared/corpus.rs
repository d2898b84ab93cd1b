//! What the examples share: every entry of a corpus directory, parsed as the server would.

use std::path::Path;

use helix_index_format::{Entry, is_entry_path, parse_entry};

/// The entries under `root` (files that parse; the others are left out).
pub fn entries(root: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read corpus dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            if is_entry_path(&rel)
                && let Ok(entry) = parse_entry(&rel, &std::fs::read(&p).expect("read entry"), None)
            {
                entries.push(entry);
            }
        }
    }
    entries
}
