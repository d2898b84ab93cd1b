//! What a push leaves: acknowledged entries in `acked/` (the server's id, generation, proposal,
//! blob) until a synced artifact has them, refused ones in `rejected/`; teammates' proposals.

use super::dir::PendingDir;
use super::queue::{PendingFile, edit_meta_path};
use anyhow::{Context, Result};
use helix_index_format::NewEntry;
use std::path::{Path, PathBuf};

/// An entry the server acknowledged, kept in the overlay until a synced artifact of at
/// least `generation` is in the cache (so it never disappears between push and download).
#[derive(Debug, Clone)]
pub struct Acked {
    pub key: String,
    pub path: PathBuf,
    /// The id the server gave it.
    pub id: String,
    /// The generation of the server's artifact that contains it.
    pub generation: u64,
    /// Review mode: the proposal it became. It stays in the overlay until a sync learns the
    /// proposal landed (then it is an ordinary acknowledgement of the landed id and
    /// generation) or was rejected (then it moves to `rejected/`).
    pub proposal: Option<String>,
    /// For an edit: the blob id the server wrote (the base of a next edit before a sync).
    pub blob: Option<String>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct AckedMeta {
    pub(super) id: String,
    pub(super) generation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) proposal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) blob: Option<String>,
}

fn acked_dir(pending: &PendingDir) -> PathBuf {
    pending.path().join("acked")
}

/// Moves an acknowledged pending file out of the push queue into `acked/`, remembering the
/// server's id and generation (and the proposal it became, in review mode). A crash before
/// the move only means one more (idempotent) POST.
pub fn mark_acked(
    pending: &PendingDir,
    file: &PendingFile,
    id: &str,
    generation: u64,
    proposal: Option<&str>,
    blob: Option<&str>,
) -> Result<()> {
    let dir = acked_dir(pending);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let meta = serde_json::to_vec(&AckedMeta {
        id: id.to_string(),
        generation,
        proposal: proposal.map(str::to_string),
        blob: blob.map(str::to_string),
    })
    .expect("serialising a plain struct cannot fail");
    crate::sys::write_atomic(&dir.join(format!("{}.json", file.key)), &meta)?;
    let dest = dir.join(format!("{}.md", file.key));
    // An acknowledged edit's own meta is not needed any more (the ack names its id).
    let _ = std::fs::remove_file(edit_meta_path(&file.path));
    match std::fs::rename(&file.path, &dest) {
        Ok(()) => Ok(()),
        // A concurrent sync (the one `store` starts in the background) got the same answer
        // for the same key and moved it first.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && dest.exists() => Ok(()),
        Err(e) => {
            Err(e).with_context(|| format!("moving {} to {}", file.path.display(), dir.display()))
        }
    }
}

/// Moves a pending file the server refused for good into `rejected/`, with the reason beside
/// it (`<key>.reason`; an edit's `<key>.edit.json` too, and the entry's text on the server
/// now as `<key>.current.md` when the refusal carried it), out of the push queue. Returns
/// where the entry now is.
pub fn mark_rejected(file: &PendingFile, why: &str, current: Option<&str>) -> Result<PathBuf> {
    let dir = file
        .path
        .parent()
        .map(|p| p.join("rejected"))
        .unwrap_or_else(|| PathBuf::from("rejected"));
    if let Some(current) = current {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        crate::sys::write_atomic(
            &dir.join(format!("{}.current.md", file.key)),
            current.as_bytes(),
        )?;
    }
    let dest = set_aside(&file.path, &file.key, &dir, why)?;
    // After the entry: a crash between the two leaves an edit's metadata without its entry
    // (ignored), never an edit without its base (which would be sent as a new entry).
    if file.edit.is_some() {
        let _ = std::fs::rename(
            edit_meta_path(&file.path),
            dir.join(format!("{}.edit.json", file.key)),
        );
    }
    Ok(dest)
}

/// Moves the entry file `from` (key `key`) into `dir` with its reason beside it
/// (`<key>.reason`); returns where the entry now is.
pub(super) fn set_aside(from: &Path, key: &str, dir: &Path, why: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // The reason first: a crash between the two leaves the entry where it was, and the next
    // sync gets the same answer.
    crate::sys::write_atomic(
        &dir.join(format!("{key}.reason")),
        format!("{why}\n").as_bytes(),
    )?;
    let dest = dir.join(format!("{key}.md"));
    match std::fs::rename(from, &dest) {
        Ok(()) => Ok(dest),
        // A concurrent sync got the same answer and moved it first.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && dest.exists() => Ok(dest),
        Err(e) => Err(e).with_context(|| format!("moving {} to {}", from.display(), dir.display())),
    }
}

/// Acknowledged entries in `pending` still waiting for a synced artifact.
pub fn list_acked(pending: &PendingDir) -> Vec<Acked> {
    let dir = acked_dir(pending);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for de in rd.flatten() {
        let path = de.path();
        let Some(key) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".md"))
        else {
            continue;
        };
        let Ok(meta) = std::fs::read(dir.join(format!("{key}.json"))) else {
            continue;
        };
        let Ok(meta) = serde_json::from_slice::<AckedMeta>(&meta) else {
            continue;
        };
        out.push(Acked {
            key: key.to_string(),
            path: path.clone(),
            id: meta.id,
            generation: meta.generation,
            proposal: meta.proposal,
            blob: meta.blob,
        });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Teammates' open proposals as the server shares them (`show_proposals`), kept beside the
/// pending entries in one file and put in the overlay marked `proposed_id`.
pub(super) const PROPOSED_FILE: &str = "proposed.json";

/// A teammate's open proposal: its id, the entry id it would land as, who proposed it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Proposed {
    pub id: String,
    pub entry_id: String,
    pub author: String,
    pub entry: NewEntry,
}

pub(super) fn read_proposed(pending: &PendingDir) -> Vec<Proposed> {
    std::fs::read(pending.path().join(PROPOSED_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// `acked/<key>.json` without its entry, in `acked/` or still queued, is what a process
/// killed inside [`mark_acked`] leaves (or a hand-deleted entry): nothing reads it again.
pub(super) fn remove_orphan_acks(pending: &PendingDir) {
    let dir = acked_dir(pending);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let queued = pending.path();
    for de in rd.flatten() {
        let path = de.path();
        let Some(key) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let md = format!("{key}.md");
        if !dir.join(&md).exists() && !queued.join(&md).exists() {
            let _ = std::fs::remove_file(&path);
        }
    }
}
