//! The one write path for `helix store`, `helix edit` and MCP `store`/`edit`: a pending entry
//! file per write under `$XDG_DATA_HOME/helix/pending/<project>/<key>.md` (an edit also has
//! `<key>.edit.json`: the id it replaces and the blob it starts from), plus a small overlay
//! index rebuilt at once.

use crate::config::ProjectConfig;
use crate::knowledge::OVERLAY_FILE;
use anyhow::{Context, Result, bail};
pub use helix_index_format::NewEntry;
use helix_index_format::{BuildInfo, Entry};
use std::path::{Path, PathBuf};

/// Where a stored entry went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub project: String,
    /// Idempotency key (the pending file's stem); empty in local mode, where it is written directly.
    pub key: String,
    /// Entry id it will have on the server: `<topic>/<slug>.md`.
    pub id: String,
}

/// One pending entry on disk.
#[derive(Debug, Clone)]
pub struct PendingFile {
    pub key: String,
    pub path: PathBuf,
    pub new: NewEntry,
    /// Set for an edit of an existing entry.
    pub edit: Option<PendingEdit>,
    /// The file's text (what an edit sends).
    pub text: String,
}

/// What a pending edit replaces (`<key>.edit.json` beside `<key>.md`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingEdit {
    /// The entry id it replaces.
    pub id: String,
    /// The git blob id of the version it starts from.
    pub base: String,
}

/// `<key>.edit.json` beside `<key>.md` (in the queue, `acked/` or `rejected/`).
pub fn edit_meta_path(md: &Path) -> PathBuf {
    md.with_extension("edit.json")
}

fn read_edit_meta(md: &Path) -> Option<PendingEdit> {
    let bytes = std::fs::read(edit_meta_path(md)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

impl PendingFile {
    /// The id this write has (or will have) on the server.
    pub fn id(&self) -> String {
        match &self.edit {
            Some(e) => e.id.clone(),
            None => entry_id(&self.new),
        }
    }
}

/// Safe `[a-z0-9-]` slug of a title (never empty); the server's own slug function.
pub fn slugify(title: &str) -> String {
    helix_index_format::slugify(title)
}

/// The id the server will give this entry.
pub fn entry_id(new: &NewEntry) -> String {
    format!("{}/{}.md", new.topic, slugify(&new.title))
}

/// Checks a new entry before anything is written: the server's rules (field limits, safe
/// topic and source paths, secret scan), so what is stored here will be accepted there.
pub fn validate(new: &NewEntry) -> Result<()> {
    helix_index_format::validate_new_entry(new)
        .map_err(|e| anyhow::anyhow!("invalid entry: {e}"))?;
    Ok(())
}

/// Markdown with YAML front matter for a new entry, written by the same code as every
/// other entry file (`render_entry`), so it parses back the same.
pub fn render(new: &NewEntry) -> String {
    let mut extra = std::collections::BTreeMap::new();
    // A forced store stays forced when `helix sync` sends it (a pending file only: in local
    // mode the file is the team's entry).
    if new.force {
        extra.insert(FORCE_KEY.to_string(), serde_json::Value::Bool(true));
    }
    helix_index_format::render_entry(&Entry {
        // Only decides whether `topic:` is written: always, unless the topic is the
        // pending folder's own name, which the path then gives back.
        id: "pending/entry.md".into(),
        topic: new.topic.trim().to_string(),
        title: new.title.trim().to_string(),
        tags: new.tags.clone(),
        sources: new.sources.clone(),
        body: format!("\n{}\n", new.body.trim_end()),
        extra,
        ..Default::default()
    })
}

/// The front-matter key of a pending file stored with `--force`.
const FORCE_KEY: &str = "helix_force";

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

    let dir = crate::paths::pending_dir(&project);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::sys::remove_stale_temps(&dir);
    let key = new_key();
    let path = dir.join(format!("{key}.md"));
    crate::sys::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    rebuild_overlay(&project, &cfg.cache_dir(&project))?;
    Ok(Stored { project, key, id })
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
    let dir = crate::paths::pending_dir(&project);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::sys::remove_stale_temps(&dir);
    for queued in list(&project)? {
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
    rebuild_overlay(&project, &cfg.cache_dir(&project))?;
    Ok(Stored {
        project,
        key,
        id: id.to_string(),
    })
}

/// Parses a pending file's text back into a [`NewEntry`].
pub fn parse_pending(key: &str, text: &str) -> Result<NewEntry> {
    let e = helix_index_format::parse_entry(&format!("pending/{key}.md"), text.as_bytes(), None)
        .map_err(|d| anyhow::anyhow!("{d}"))?;
    Ok(NewEntry {
        topic: e.topic,
        title: e.title,
        body: e.body.trim().to_string(),
        tags: e.tags,
        sources: e.sources,
        force: e.extra.get(FORCE_KEY) == Some(&serde_json::Value::Bool(true)),
    })
}

/// Pending entries of `project`, oldest first. Unreadable files are reported and skipped.
pub fn list(project: &str) -> Result<Vec<PendingFile>> {
    let dir = crate::paths::pending_dir(project);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let mut out = Vec::new();
    for de in rd {
        let de = de?;
        let path = de.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(key) = name.strip_suffix(".md") else {
            continue;
        };
        if key.starts_with('.') || !helix_index_format::wire::is_valid_idempotency_key(key) {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("helix: skipping pending entry {}: {e}", path.display());
                continue;
            }
        };
        match parse_pending(key, &text) {
            Ok(new) => out.push(PendingFile {
                key: key.to_string(),
                edit: read_edit_meta(&path),
                path,
                new,
                text,
            }),
            Err(e) => eprintln!("helix: skipping pending entry {}: {e:#}", path.display()),
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

/// Number of pending entries of `project` (cheap: counts files).
pub fn count(project: &str) -> usize {
    std::fs::read_dir(crate::paths::pending_dir(project))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.ends_with(".md") && !n.starts_with('.'))
                })
                .count()
        })
        .unwrap_or(0)
}

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
struct AckedMeta {
    id: String,
    generation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    proposal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
}

fn acked_dir(project: &str) -> PathBuf {
    crate::paths::pending_dir(project).join("acked")
}

/// Moves an acknowledged pending file out of the push queue into `acked/`, remembering the
/// server's id and generation (and the proposal it became, in review mode). A crash before
/// the move only means one more (idempotent) POST.
pub fn mark_acked(
    project: &str,
    file: &PendingFile,
    id: &str,
    generation: u64,
    proposal: Option<&str>,
    blob: Option<&str>,
) -> Result<()> {
    let dir = acked_dir(project);
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
fn set_aside(from: &Path, key: &str, dir: &Path, why: &str) -> Result<PathBuf> {
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

/// Acknowledged entries of `project` still waiting for a synced artifact.
pub fn list_acked(project: &str) -> Vec<Acked> {
    let dir = acked_dir(project);
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

/// Forgets acknowledged entries that the cached artifact (of `synced_generation`) now
/// contains, and rebuilds the overlay if anything changed. Returns how many were dropped.
pub fn drop_acked(project: &str, cache_dir: &Path, synced_generation: u64) -> Result<usize> {
    remove_orphan_acks(project);
    let mut dropped = 0;
    for a in list_acked(project) {
        // A proposal is in no artifact until it lands: `settle_proposal` decides.
        if a.proposal.is_none() && a.generation <= synced_generation {
            let _ = std::fs::remove_file(&a.path);
            let _ = std::fs::remove_file(a.path.with_extension("json"));
            dropped += 1;
        }
    }
    if dropped > 0 {
        rebuild_overlay(project, cache_dir)?;
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
    project: &str,
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
            let dir = crate::paths::pending_dir(project).join("rejected");
            set_aside(&a.path, &a.key, &dir, why)?;
            let _ = std::fs::remove_file(&meta_path);
        }
    }
    rebuild_overlay(project, cache_dir)
}

/// Teammates' open proposals as the server shares them (`show_proposals`), kept beside the
/// pending entries in one file and put in the overlay marked `proposed_id`.
const PROPOSED_FILE: &str = "proposed.json";

/// A teammate's open proposal: its id, the entry id it would land as, who proposed it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Proposed {
    pub id: String,
    pub entry_id: String,
    pub author: String,
    pub entry: NewEntry,
}

/// Replaces the shared proposals of `project` with `list` (empty: none shared) and rebuilds
/// the overlay when they changed.
pub fn set_proposed(project: &str, list: &[Proposed], cache_dir: &Path) -> Result<()> {
    if read_proposed(project) == list {
        return Ok(());
    }
    let path = crate::paths::pending_dir(project).join(PROPOSED_FILE);
    if list.is_empty() {
        let _ = std::fs::remove_file(&path);
    } else {
        let dir = crate::paths::pending_dir(project);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let bytes = serde_json::to_vec(list).expect("plain data serialises");
        crate::sys::write_atomic(&path, &bytes)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    rebuild_overlay(project, cache_dir)
}

fn read_proposed(project: &str) -> Vec<Proposed> {
    std::fs::read(crate::paths::pending_dir(project).join(PROPOSED_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// `acked/<key>.json` without its entry, in `acked/` or still queued, is what a process
/// killed inside [`mark_acked`] leaves (or a hand-deleted entry): nothing reads it again.
fn remove_orphan_acks(project: &str) {
    let dir = acked_dir(project);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let queued = crate::paths::pending_dir(project);
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

/// Rebuilds `overlay.hix` of `project` from its pending and acknowledged-but-not-yet-synced
/// files (removes it when there are none). Serialised with a lock file so two concurrent
/// stores never lose each other's entry. An entry they supersede that only the synced
/// artifact in `cache_dir` holds is copied in: the builder hides it there, and the copy
/// shadows the synced one, so it leaves hooks and search at once.
pub fn rebuild_overlay(project: &str, cache_dir: &Path) -> Result<()> {
    let dir = crate::paths::pending_dir(project);
    let _guard = crate::sys::lock_dir(&dir)?;
    let pending = list(project)?;
    let acked = list_acked(project);
    let proposed = read_proposed(project);
    let overlay = dir.join(OVERLAY_FILE);
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
        project: project.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe() {
        assert_eq!(
            slugify("Cargo: build fails on ../etc"),
            "cargo-build-fails-on-etc"
        );
        assert_eq!(slugify("!!!"), "entry");
    }

    #[test]
    fn pending_files_parse_back_to_what_was_stored() {
        for (topic, force) in [("build", false), ("pending", true)] {
            let new = NewEntry {
                topic: topic.into(),
                title: "Linker: \"cannot find -lssl\" # on CI".into(),
                body: "Install `libssl-dev`.\n\n---\nNot front matter.\n".into(),
                tags: vec!["linker".into(), "ci: fresh".into()],
                sources: vec!["build.rs".into()],
                force,
            };
            let back = parse_pending("k1", &render(&new)).expect("parses");
            assert_eq!(back.topic, new.topic);
            assert_eq!(back.title, new.title);
            assert_eq!(back.body, new.body.trim());
            assert_eq!(back.tags, new.tags);
            assert_eq!(back.force, force);
            assert_eq!(back.sources, new.sources);
        }
    }

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
