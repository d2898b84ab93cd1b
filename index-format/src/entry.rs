//! Markdown knowledge entries: `(path, bytes, git metadata) -> Entry | Diagnostic`.
//! Front matter (YAML), defaults for title/topic/date/author, and the rules of docs/entry-format.md.

use std::collections::BTreeMap;

/// Largest entry file accepted, in bytes.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;

/// What git knows about the commit that last changed an entry's file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitMeta {
    /// Commit time, Unix seconds.
    pub time: i64,
    /// Commit author name.
    pub author: String,
}

/// One parsed knowledge entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    /// Repository-relative path with `/` separators, e.g. `git/rebase-onto.md`.
    pub id: String,
    pub topic: String,
    pub title: String,
    pub tags: Vec<String>,
    /// Repository-relative code paths the entry is about.
    pub sources: Vec<String>,
    /// Unix seconds; `None` when neither front matter nor git gives one.
    pub date: Option<i64>,
    pub author: Option<String>,
    /// Markdown body without front matter, line ends normalised to `\n`.
    pub body: String,
    /// Other front-matter keys, kept as JSON values, not interpreted.
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Why a file is not a valid entry, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    pub reason: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.reason)
    }
}

/// Whether a repository-relative path names an entry: a `*.md` file inside at least one
/// folder, with no hidden component (`.github/…`). Root-level Markdown is not an entry.
pub fn is_entry_path(path: &str) -> bool {
    let _ = path;
    unimplemented!("being written")
}

/// Parses one entry file. `path` is repository-relative with `/` separators.
pub fn parse_entry(path: &str, bytes: &[u8], git: Option<&GitMeta>) -> Result<Entry, Diagnostic> {
    let _ = (path, bytes, git);
    unimplemented!("being written")
}
