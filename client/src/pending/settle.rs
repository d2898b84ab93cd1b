//! What a sync learned, applied: acked entries a synced artifact holds are forgotten, proposals
//! settled (landed or rejected), teammates' proposals replaced; each rebuilds the overlay.

use super::acked::{
    Acked, AckedMeta, PROPOSED_FILE, Proposed, list_acked, read_proposed, remove_orphan_acks,
    set_aside,
};
use super::dir::PendingDir;
use super::overlay::rebuild_overlay;
use anyhow::{Context, Result};
use std::path::Path;

/// Forgets acknowledged entries that the cached artifact (of `synced_generation`) now
/// contains, and rebuilds the overlay if anything changed. Returns how many were dropped.
pub fn drop_acked(pending: &PendingDir, cache_dir: &Path, synced_generation: u64) -> Result<usize> {
    remove_orphan_acks(pending);
    let mut dropped = 0;
    for a in list_acked(pending) {
        // A proposal is in no artifact until it lands: `settle_proposal` decides.
        if a.proposal.is_none() && a.generation <= synced_generation {
            let _ = std::fs::remove_file(&a.path);
            let _ = std::fs::remove_file(a.path.with_extension("json"));
            dropped += 1;
        }
    }
    if dropped > 0 {
        rebuild_overlay(pending, cache_dir)?;
    }
    Ok(dropped)
}

/// What a sync learned about an acknowledged proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposalFate {
    /// On the branch as `id`, in the server's artifact of `generation`.
    Landed { id: String, generation: u64 },
    /// Refused by a reviewer: `why` is kept beside the entry.
    Rejected { why: String },
}

/// Applies `fate` to the acknowledged proposal `a`: a landed one becomes an ordinary
/// acknowledgement (dropped when a synced artifact of that generation is in the cache, so
/// it is never shown twice nor missing in between); a rejected one moves to `rejected/`
/// with the reason (nothing is lost). Rebuilds the overlay.
pub fn settle_proposal(
    pending: &PendingDir,
    a: &Acked,
    fate: &ProposalFate,
    cache_dir: &Path,
) -> Result<()> {
    let meta_path = a.path.with_extension("json");
    match fate {
        ProposalFate::Landed { id, generation } => {
            let meta = serde_json::to_vec(&AckedMeta {
                id: id.clone(),
                generation: *generation,
                proposal: None,
                blob: None,
            })
            .expect("serialising a plain struct cannot fail");
            crate::sys::write_atomic(&meta_path, &meta)?;
        }
        ProposalFate::Rejected { why } => {
            let dir = pending.path().join("rejected");
            set_aside(&a.path, &a.key, &dir, why)?;
            let _ = std::fs::remove_file(&meta_path);
        }
    }
    rebuild_overlay(pending, cache_dir)
}

/// Replaces the shared proposals in `pending` with `list` (empty: none shared) and rebuilds
/// the overlay when they changed.
pub fn set_proposed(pending: &PendingDir, list: &[Proposed], cache_dir: &Path) -> Result<()> {
    if read_proposed(pending) == list {
        return Ok(());
    }
    let path = pending.path().join(PROPOSED_FILE);
    if list.is_empty() {
        let _ = std::fs::remove_file(&path);
    } else {
        let dir = pending.path();
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let bytes = serde_json::to_vec(list).expect("plain data serialises");
        crate::sys::write_atomic(&path, &bytes)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    rebuild_overlay(pending, cache_dir)
}
