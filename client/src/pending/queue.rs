//! The push queue on disk: one `<key>.md` per write (an edit also `<key>.edit.json`), rendered
//! from a `NewEntry` and parsed back, listed and counted; the id an entry gets from its title.

use super::dir::PendingDir;
use anyhow::{Context, Result};
use helix_index_format::{Entry, NewEntry};
use std::path::{Path, PathBuf};

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

/// Pending entries of `pending`, oldest first. Unreadable files are reported and skipped.
pub fn list(pending: &PendingDir) -> Result<Vec<PendingFile>> {
    let dir = pending.path();
    let rd = match std::fs::read_dir(dir) {
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

/// Number of pending entries in `pending` (cheap: counts files).
pub fn count(pending: &PendingDir) -> usize {
    std::fs::read_dir(pending.path())
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
}
