//! What an edit starts from — the entry's text now and the version (git blob id) it is —
//! and field changes applied to that text; shared by `helix edit` and MCP `edit`. Storing
//! the result is `pending::edit`.

use crate::config::ProjectConfig;
use crate::knowledge::Knowledge;
use anyhow::{Result, bail};
use helix_index_format::{Entry, EntryRef, Hidden};

/// An entry ready to be edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub project: String,
    /// Bare entry id.
    pub id: String,
    /// The blob id the edit starts from (`None`: unknown, e.g. local mode).
    pub base: Option<String>,
    /// The entry file's text: a queued edit's own text, the local file, or the entry as
    /// the artifact holds it, rendered as Markdown with front matter.
    pub text: String,
    /// `status: retired`: an edit may only bring it back.
    pub retired: bool,
}

/// The draft of `id` (`project:id` or bare). Refuses what the server would refuse anyway:
/// a superseded entry (edit the one that supersedes it), and a stored entry that has not
/// reached the server yet.
pub fn draft(k: &Knowledge, cfg: &ProjectConfig, id: &str) -> Result<Draft> {
    let Some((src, e)) = k.read_in(id) else {
        bail!("no entry `{id}`; `helix search` lists ids");
    };
    let project = src.project.clone();
    if let Some(Hidden::SupersededBy(by)) = src.index.hidden(e.doc) {
        let by = src
            .index
            .entry(by as u32)
            .map(|b| b.id.to_string())
            .unwrap_or_else(|_| "another entry".into());
        bail!(
            "{project}:{} is superseded by {by}; edit {by} instead",
            e.id
        );
    }
    let retired = src.index.hidden(e.doc) == Some(Hidden::Retired);
    if let Some(local) = &cfg.local {
        let path = local.join(e.id);
        let text = std::fs::read_to_string(&path)
            .map_err(|err| anyhow::anyhow!("reading {}: {err}", path.display()))?;
        return Ok(Draft {
            project,
            id: e.id.to_string(),
            base: None,
            text,
            retired,
        });
    }
    let extra: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(e.extra_json).unwrap_or_default();
    let key = |name: &str| extra.get(name).and_then(|v| v.as_str()).map(str::to_string);
    let (base, text) = if !src.overlay {
        let base = src.index.blob(e.doc).ok().flatten().map(str::to_string);
        (base, render(&e))
    } else if let Some(key) = key("pending_key") {
        // A queued write: an edit is edited again from its own base; a new entry is not
        // on the server yet.
        let queued = match crate::pending::PendingDir::of(cfg, &project) {
            Some(pending) => crate::pending::list(&pending)?
                .into_iter()
                .find(|f| f.key == key),
            None => None,
        };
        match queued {
            Some(f) if f.edit.is_some() => (f.edit.map(|m| m.base), f.text),
            _ => bail!(
                "{project}:{} is a stored entry that has not reached the server yet; run `helix sync`, then edit it",
                e.id
            ),
        }
    } else {
        // Acknowledged, not yet in the cache: an edit's answer named the blob it wrote.
        let acked = key("acked_key").and_then(|key| {
            let pending = crate::pending::PendingDir::of(cfg, &project)?;
            crate::pending::list_acked(&pending)
                .into_iter()
                .find(|a| a.key == key)
        });
        match acked {
            Some(a) if a.blob.is_some() => {
                let text = std::fs::read_to_string(&a.path)
                    .map_err(|err| anyhow::anyhow!("reading {}: {err}", a.path.display()))?;
                (a.blob, text)
            }
            _ => bail!(
                "{project}:{} was just stored and is not in the cache yet; run `helix sync`, then edit it",
                e.id
            ),
        }
    };
    Ok(Draft {
        project,
        id: e.id.to_string(),
        base,
        text,
        retired,
    })
}

/// The entry as Markdown with front matter, as `render_entry` writes every entry. The date
/// is left out: an edited entry is dated by the edit's commit.
fn render(e: &EntryRef<'_>) -> String {
    helix_index_format::render_entry(&Entry {
        date: None,
        ..crate::knowledge::owned_entry(e)
    })
}

/// Field changes: each `Some` replaces that field.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub body: Option<String>,
    pub tags: Option<Vec<String>>,
    pub sources: Option<Vec<String>>,
    /// `active` or `retired`.
    pub status: Option<String>,
    /// Ids this entry supersedes (empty: none).
    pub supersedes: Option<Vec<String>>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.body.is_none()
            && self.tags.is_none()
            && self.sources.is_none()
            && self.status.is_none()
            && self.supersedes.is_none()
    }
}

/// `text` (the file of entry `id`) with `changes` applied, written back as Markdown.
pub fn apply(id: &str, text: &str, changes: &Changes) -> Result<String> {
    let mut e = helix_index_format::parse_entry(id, text.as_bytes(), None)
        .map_err(|d| anyhow::anyhow!("the entry does not parse: {d}"))?;
    if let Some(t) = &changes.title {
        e.title = t.trim().to_string();
    }
    if let Some(b) = &changes.body {
        e.body = format!("\n{}\n", b.trim_end());
    }
    if let Some(t) = &changes.tags {
        e.tags = t
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
    }
    if let Some(s) = &changes.sources {
        e.sources = s.clone();
    }
    if let Some(status) = &changes.status {
        e.extra.insert("status".into(), status.trim().into());
    }
    if let Some(ids) = &changes.supersedes {
        if ids.is_empty() {
            e.extra.remove("supersedes");
        } else {
            e.extra.insert("supersedes".into(), ids.clone().into());
        }
    }
    Ok(helix_index_format::render_entry(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_replace_fields_and_keep_the_rest() {
        let text = "---\ntitle: Old\ntags: [a]\nreviewed: true\n---\nOld body.\n";
        let changes = Changes {
            title: Some("New title".into()),
            status: Some("retired".into()),
            supersedes: Some(vec!["ops/x.md".into()]),
            ..Changes::default()
        };
        let out = apply("ops/y.md", text, &changes).unwrap();
        let e = helix_index_format::parse_entry("ops/y.md", out.as_bytes(), None).unwrap();
        assert_eq!(
            (e.title.as_str(), e.body.trim()),
            ("New title", "Old body.")
        );
        assert_eq!(e.tags, ["a"]);
        assert!(e.is_retired());
        assert_eq!(e.supersedes(), ["ops/x.md"]);
        assert_eq!(e.extra["reviewed"], serde_json::json!(true));
        let bad = Changes {
            status: Some("obsolete".into()),
            ..Changes::default()
        };
        let out = apply("ops/y.md", text, &bad).unwrap();
        assert!(helix_index_format::validate_edit("ops/y.md", &out).is_err());
    }
}
