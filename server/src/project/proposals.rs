//! The proposals of a project in review mode: each one's record (what was proposed, on which
//! branch, and what became of it) in `proposals.json`, written atomically on every change.

use std::collections::BTreeMap;
use std::path::PathBuf;

use helix_index_format::NewEntry;
use helix_index_format::wire::{ForgeOutcome, ProposalInfo, ProposalState};
use serde::{Deserialize, Serialize};

use crate::git::PROPOSAL_BRANCHES;

/// Decided proposals kept in the file (the oldest are forgotten first).
const KEEP_DECIDED: usize = 1000;

/// One proposal: what the API shows, and what the server needs to land it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    #[serde(flatten)]
    pub info: ProposalInfo,
    /// Repository path of the entry file in the proposal's commit.
    pub path: String,
    /// Blob id of that file: the proposal is merged when the branch holds it.
    pub blob: String,
    /// The branch tip the proposal was made on (`None`: the branch did not exist).
    pub base: Option<String>,
    /// The entry as posted, to apply again on a branch that moved.
    pub entry: NewEntry,
    /// The write's idempotency key and fingerprint: a retry whose answer was lost (the key
    /// log not yet saved) finds its proposal here instead of making a second one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default)]
    pub fingerprint: String,
    /// Set when the proposal is an edit of an existing entry: landed on a branch that moved,
    /// it is applied again as that edit (its base checked), not as a new entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<ProposedEdit>,
}

/// What an edit proposal replaces: the blob it started from and the whole new file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProposedEdit {
    pub base: String,
    pub content: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    next: u64,
    proposals: BTreeMap<u64, Record>,
}

/// `proposals.json` of a project, in memory and on disk.
#[derive(Debug)]
pub struct Book {
    path: PathBuf,
    file: File,
}

impl Book {
    /// Reads the book; a missing file is an empty book, an unreadable one is logged and
    /// set aside (renamed `.bad`) rather than overwritten.
    pub fn open(path: PathBuf) -> Book {
        let file = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::error!(path = %path.display(), error = %e, "unreadable proposals file; set aside as .bad");
                let _ = std::fs::rename(&path, path.with_extension("json.bad"));
                File::default()
            }),
            Err(_) => File::default(),
        };
        Book { path, file }
    }

    /// Writes the book (atomically); a failure is logged: git still holds the branches.
    pub fn save(&mut self) {
        let decided: Vec<u64> = self
            .file
            .proposals
            .iter()
            .filter(|(_, r)| r.info.state != ProposalState::Open)
            .map(|(k, _)| *k)
            .collect();
        for k in decided
            .iter()
            .take(decided.len().saturating_sub(KEEP_DECIDED))
        {
            self.file.proposals.remove(k);
        }
        let bytes = serde_json::to_vec_pretty(&self.file).expect("plain data serialises");
        if let Err(e) = crate::sys::write_atomic(&self.path, &bytes) {
            tracing::error!(path = %self.path.display(), error = %e, "cannot write proposals file");
        }
    }

    /// The id the next proposal gets.
    pub fn next_id(&mut self) -> String {
        self.file.next += 1;
        self.file.next.to_string()
    }

    pub fn insert(&mut self, r: Record) {
        if let Ok(n) = r.info.id.parse::<u64>() {
            self.file.proposals.insert(n, r);
        }
    }

    pub fn remove(&mut self, id: &str) {
        if let Ok(n) = id.parse::<u64>() {
            self.file.proposals.remove(&n);
        }
    }

    /// The proposal made by the write with idempotency key `key` and `fingerprint`.
    pub fn by_key(&self, key: &str, fingerprint: &str) -> Option<&Record> {
        self.all()
            .find(|r| r.key.as_deref() == Some(key) && r.fingerprint == fingerprint)
    }

    pub fn get(&self, id: &str) -> Option<&Record> {
        self.file.proposals.get(&id.parse::<u64>().ok()?)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Record> {
        self.file.proposals.get_mut(&id.parse::<u64>().ok()?)
    }

    pub fn all(&self) -> impl Iterator<Item = &Record> {
        self.file.proposals.values()
    }

    /// Whether a proposal (of any state) uses `branch`.
    pub fn uses_branch(&self, branch: &str) -> bool {
        self.all()
            .any(|r| r.info.branch == branch && r.info.state == ProposalState::Open)
    }

    /// Records what the forge said about proposal `id`.
    pub fn set_forge(&mut self, id: &str, outcome: ForgeOutcome) {
        if let Some(r) = self.get_mut(id) {
            r.info.forge = Some(outcome);
            self.save();
        }
    }
}

/// `helix/proposals/<author>/<slug>`, with `-<n>` after the slug for the n-th try; the
/// author is reduced to `[a-z0-9._-]` (git ref rules: no spaces, `..`, `~^:?*[\`).
pub fn branch_name(author: &str, slug: &str, n: usize) -> String {
    let mut who: String = author
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    who = who.trim_matches('-').to_string();
    while who.contains("--") {
        who = who.replace("--", "-");
    }
    if who.is_empty() {
        who = "anonymous".into();
    }
    who.truncate(40);
    let slug = if slug.is_empty() { "entry" } else { slug };
    if n <= 1 {
        format!("{PROPOSAL_BRANCHES}{who}/{slug}")
    } else {
        format!("{PROPOSAL_BRANCHES}{who}/{slug}-{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_are_safe_refs() {
        assert_eq!(
            branch_name("Alice Smith", "cargo-lock", 1),
            "helix/proposals/alice-smith/cargo-lock"
        );
        assert_eq!(branch_name("../../x~^:", "a", 2), "helix/proposals/x/a-2");
        assert_eq!(branch_name("", "", 1), "helix/proposals/anonymous/entry");
    }
}
