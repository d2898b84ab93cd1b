//! `store` and `edit`: validated, refused on a near-duplicate, queued as a pending file and the
//! overlay rebuilt (in local mode, written into the knowledge directory and recompiled).

use super::dir::PendingDir;
use super::overlay::rebuild_overlay;
use super::queue::{PendingEdit, edit_meta_path, entry_id, list, render};
use crate::config::ProjectConfig;
use anyhow::{Context, Result, bail};
use helix_index_format::NewEntry;
use std::path::Path;

/// Where a stored entry went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub project: String,
    /// Idempotency key (the pending file's stem); empty in local mode, where it is written directly.
    pub key: String,
    /// Entry id it will have on the server: `<topic>/<slug>.md`.
    pub id: String,
}

/// Checks a new entry before anything is written: the server's rules (field limits, safe
/// topic and source paths, secret scan), so what is stored here will be accepted there.
pub fn validate(new: &NewEntry) -> Result<()> {
    helix_index_format::validate_new_entry(new)
        .map_err(|e| anyhow::anyhow!("invalid entry: {e}"))?;
    Ok(())
}

fn new_key() -> String {
    let now = crate::sys::since_epoch();
    format!(
        "{}-{:09}-{:016x}",
        now.as_secs(),
        now.subsec_nanos(),
        rand::random::<u64>()
    )
}

/// The followed project `wanted` names (default: the configuration's default project).
pub fn project_for<'a>(cfg: &'a ProjectConfig, wanted: Option<&'a str>) -> Result<&'a str> {
    match wanted {
        None => Ok(cfg.default_project()),
        Some(p) if cfg.projects.iter().any(|q| q == p) => Ok(p),
        Some(p) => bail!(
            "project `{p}` is not followed by {} (it follows: {})",
            cfg.file.display(),
            cfg.projects.join(", ")
        ),
    }
}

/// A store refused because the project already holds a near-duplicate (docs/entry-format.md,
/// "Duplicates"). The MCP server finds it in the error chain to answer the model its way.
#[derive(Debug, Clone, PartialEq)]
pub struct Duplicate {
    pub project: String,
    /// The existing entry.
    pub id: String,
    pub title: String,
    /// Whether it is a pending entry (not yet synced).
    pub pending: bool,
    pub score: f32,
}

impl std::fmt::Display for Duplicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} ({:?}{}) says nearly the same (similarity {:.2}); edit it instead (`helix edit {}`), or store anyway with --force",
            self.project,
            self.id,
            self.title,
            if self.pending { ", pending" } else { "" },
            self.score,
            self.id
        )
    }
}

impl std::error::Error for Duplicate {}

/// The entries of `project` (synced cache plus pending overlay) at least
/// [`helix_index_format::DUPLICATE_THRESHOLD`] alike to `new`, most similar first.
pub fn near_duplicates(cfg: &ProjectConfig, project: &str, new: &NewEntry) -> Vec<Duplicate> {
    let k = crate::knowledge::Knowledge::from_config(cfg);
    let sources: Vec<&crate::knowledge::Source> = k
        .sources()
        .iter()
        .filter(|s| s.project == project)
        .collect();
    let indexes: Vec<_> = sources.iter().map(|s| &s.index).collect();
    let found = helix_index_format::Collection::new(&indexes)
        .near_duplicates(
            &new.title,
            &new.body,
            &new.sources,
            helix_index_format::DUPLICATE_THRESHOLD,
        )
        .unwrap_or_default();
    let mut out: Vec<Duplicate> = Vec::new();
    for s in found {
        if out.iter().any(|d| d.id == s.entry.id) {
            continue;
        }
        out.push(Duplicate {
            project: project.to_string(),
            id: s.entry.id.to_string(),
            title: s.entry.title.to_string(),
            pending: sources[s.artifact].overlay,
            score: s.score,
        });
    }
    out
}

/// Validates `new`, refuses it when the project holds a near-duplicate (unless `force`),
/// writes it as a pending entry and rebuilds the overlay so it is visible at once. In local
/// mode the entry is written straight into the knowledge directory and the local cache is
/// recompiled.
pub fn store(
    cfg: &ProjectConfig,
    project: Option<&str>,
    new: NewEntry,
    force: bool,
) -> Result<Stored> {
    let mut new = new;
    new.force |= force;
    new.topic = new.topic.trim().to_string();
    new.title = new.title.trim().to_string();
    new.tags = new
        .tags
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    validate(&new)?;
    let project = project_for(cfg, project)?.to_string();
    let id = entry_id(&new);
    let text = render(&new);
    // Same parser as the server: what we store must compile.
    helix_index_format::parse_entry(&id, text.as_bytes(), None)
        .map_err(|d| anyhow::anyhow!("invalid entry: {d}"))?;
    // Same file first: the more precise refusal.
    if let Some(local) = &cfg.local
        && local.join(&id).exists()
    {
        bail!(
            "{} already exists; choose another title",
            local.join(&id).display()
        );
    }
    if !new.force
        && let Some(dup) = near_duplicates(cfg, &project, &new).into_iter().next()
    {
        return Err(dup.into());
    }

    if let Some(local) = &cfg.local {
        let text = render(&NewEntry {
            force: false,
            ..new.clone()
        });
        let path = local.join(&id);
        return write_local(cfg, project, &path, &text, id);
    }

    let pending = queue_of(cfg, &project)?;
    let dir = pending.path();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::sys::remove_stale_temps(dir);
    let key = new_key();
    let path = dir.join(format!("{key}.md"));
    crate::sys::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    rebuild_overlay(&pending, &cfg.cache_dir(&project))?;
    Ok(Stored { project, key, id })
}

/// The pending directory `project`'s writes go to (server mode: local mode never queues).
fn queue_of(cfg: &ProjectConfig, project: &str) -> Result<PendingDir> {
    match PendingDir::of(cfg, project) {
        Some(p) => Ok(p),
        None => bail!("{} names no server to queue writes for", cfg.file.display()),
    }
}

/// Local mode: writes the entry file into the knowledge directory and recompiles it.
fn write_local(
    cfg: &ProjectConfig,
    project: String,
    path: &Path,
    text: &str,
    id: String,
) -> Result<Stored> {
    crate::sys::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    crate::cache::compile_local(cfg, &project)?;
    Ok(Stored {
        project,
        key: String::new(),
        id,
    })
}

/// Stores an edit of entry `id` of `project`: `text` is the whole new file, `base` the blob
/// id of the version it starts from. Checked as the server checks it (parse, `status`,
/// `supersedes`, secret scan); a queued edit of the same id not yet pushed is replaced (the
/// new one carries its base, as the caller read it). In local mode the file is written
/// straight into the knowledge directory.
pub fn edit(
    cfg: &ProjectConfig,
    project: &str,
    id: &str,
    base: Option<&str>,
    text: &str,
) -> Result<Stored> {
    let project = project_for(cfg, Some(project))?.to_string();
    helix_index_format::validate_edit(id, text)
        .map_err(|e| anyhow::anyhow!("invalid entry: {e}"))?;
    if let Some(local) = &cfg.local {
        let path = local.join(id);
        if !path.is_file() {
            bail!(
                "{} does not exist; `helix store` adds new entries",
                path.display()
            );
        }
        return write_local(cfg, project, &path, text, id.to_string());
    }
    let Some(base) = base else {
        bail!(
            "the version of {id} is unknown (its cached artifact predates edits, or the entry is not synced yet); run `helix sync` and try again"
        );
    };
    let pending = queue_of(cfg, &project)?;
    let dir = pending.path();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::sys::remove_stale_temps(dir);
    for queued in list(&pending)? {
        if queued.edit.as_ref().is_some_and(|e| e.id == id) {
            let _ = std::fs::remove_file(&queued.path);
            let _ = std::fs::remove_file(edit_meta_path(&queued.path));
        }
    }
    let key = new_key();
    let path = dir.join(format!("{key}.md"));
    let meta = serde_json::to_vec(&PendingEdit {
        id: id.to_string(),
        base: base.to_string(),
    })
    .expect("serialising a plain struct cannot fail");
    // The meta first: the `.md` is what queues the write.
    crate::sys::write_atomic(&edit_meta_path(&path), &meta)?;
    crate::sys::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    rebuild_overlay(&pending, &cfg.cache_dir(&project))?;
    Ok(Stored {
        project,
        key,
        id: id.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_traversal() {
        let mut n = NewEntry {
            topic: "..".into(),
            title: "t".into(),
            body: "b".into(),
            ..Default::default()
        };
        assert!(validate(&n).is_err());
        n.topic = "git".into();
        n.sources = vec!["../x".into()];
        assert!(validate(&n).is_err());
        n.sources = vec!["src/x.rs".into()];
        assert!(validate(&n).is_ok());
        // Nested topics are folders within folders, as on the server.
        n.topic = "backend/db".into();
        assert!(validate(&n).is_ok());
        assert_eq!(entry_id(&n), "backend/db/t.md");
        for bad in ["backend/../etc", "/abs", "a\\b", ".hidden"] {
            n.topic = bad.into();
            assert!(validate(&n).is_err(), "{bad}");
        }
    }
}
