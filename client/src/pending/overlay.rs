//! The search overlay: `overlay.hix`, rebuilt under a lock file from the queue, `acked/` and
//! teammates' proposals, so that every pending write is in hooks and search at once.

use super::acked::{list_acked, read_proposed};
use super::dir::PendingDir;
use super::queue::list;
use crate::knowledge::OVERLAY_FILE;
use anyhow::{Context, Result};
use helix_index_format::{BuildInfo, Entry};
use std::path::Path;

fn overlay_entry(path: &Path, id: &str, key: &str, marker: &str) -> Option<Entry> {
    let text = std::fs::read(path).ok()?;
    // Pending files always carry `topic:`, so the parse path only supplies the id.
    let mut e = helix_index_format::parse_entry(id, &text, None).ok()?;
    e.id = id.to_string();
    e.date = key.split('-').next().and_then(|s| s.parse().ok());
    e.extra
        .insert(marker.into(), serde_json::Value::String(key.to_string()));
    Some(e)
}

/// Rebuilds `overlay.hix` of `pending` from its pending and acknowledged-but-not-yet-synced
/// files and the teammates' open proposals the last sync listed (removes it when there are
/// none). Serialised with a lock file so two concurrent
/// stores never lose each other's entry. An entry they supersede that only the synced
/// artifact in `cache_dir` holds is copied in: the builder hides it there, and the copy
/// shadows the synced one, so it leaves hooks and search at once.
pub fn rebuild_overlay(pending_dir: &PendingDir, cache_dir: &Path) -> Result<()> {
    let _guard = crate::sys::lock_dir(pending_dir.path())?;
    let pending = list(pending_dir)?;
    let acked = list_acked(pending_dir);
    let proposed = read_proposed(pending_dir);
    let overlay = pending_dir.path().join(OVERLAY_FILE);
    if pending.is_empty() && acked.is_empty() && proposed.is_empty() {
        match std::fs::remove_file(&overlay) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", overlay.display())),
        }
        return Ok(());
    }
    // Newest wins when two entries would get the same id (keys sort by time).
    let mut by_id: std::collections::BTreeMap<String, Entry> = std::collections::BTreeMap::new();
    // Teammates' proposals first: this machine's own copy of an entry wins.
    for p in proposed {
        let mut extra = std::collections::BTreeMap::new();
        extra.insert("proposed_id".to_string(), serde_json::Value::String(p.id));
        let e = Entry {
            id: p.entry_id.clone(),
            topic: p.entry.topic,
            title: p.entry.title,
            tags: p.entry.tags,
            sources: p.entry.sources,
            date: None,
            author: Some(p.author),
            body: p.entry.body,
            extra,
            blob: String::new(),
        };
        by_id.insert(p.entry_id, e);
    }
    for a in acked {
        if let Some(e) = overlay_entry(&a.path, &a.id, &a.key, "acked_key") {
            by_id.insert(a.id, e);
        }
    }
    for p in pending {
        let id = p.id();
        if let Some(e) = overlay_entry(&p.path, &id, &p.key, "pending_key") {
            by_id.insert(id, e);
        }
    }
    let missing: Vec<String> = by_id
        .values()
        .flat_map(|e| e.supersedes())
        .filter(|t| !by_id.contains_key(*t))
        .map(str::to_string)
        .collect();
    if !missing.is_empty()
        && let Ok(Some(synced)) =
            crate::knowledge::open_index(&cache_dir.join(crate::knowledge::INDEX_FILE))
    {
        for id in missing {
            if let Ok(Some(e)) = synced.entry_by_id(&id) {
                by_id.insert(id, crate::knowledge::owned_entry(&e));
            }
        }
    }
    let entries: Vec<Entry> = by_id.into_values().collect();
    let info = BuildInfo {
        project: pending_dir.project().to_string(),
        commit: String::new(),
        generation: 0,
        build_time: crate::sys::now_secs(),
    };
    let bytes = helix_index_format::build(&entries, &info)
        .map_err(|e| anyhow::anyhow!("building overlay: {e}"))?;
    crate::sys::write_atomic(&overlay, &bytes)
        .with_context(|| format!("writing {}", overlay.display()))?;
    Ok(())
}
