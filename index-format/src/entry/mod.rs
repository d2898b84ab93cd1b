//! Markdown knowledge entries: `(path, bytes, git metadata) -> Entry | Diagnostic`, and back.
//! Front matter (YAML), defaults for title/topic/date/author, and the rules of docs/entry-format.md.

mod dates;
mod files;
mod front_matter;
mod glob;
mod lifecycle;
mod markdown;
mod names;
pub mod yaml;

use std::collections::BTreeMap;

use dates::format_date;
pub(crate) use dates::parse_date;
pub use dates::{format_day, parse_day};
pub use files::{Census, FileKind, Root, Skip};
pub(crate) use front_matter::front_matter_lines;
use front_matter::*;
pub use glob::{glob_matches, is_glob, literal_prefix};
pub use lifecycle::{
    Hidden, STATUS_KEY, STATUSES, SUPERSEDES_KEY, hidden_entries, lifecycle_diagnostics,
};
use markdown::{first_heading, inline_sources};
use names::file_stem;
pub use names::{is_entry_path, slugify};
pub(crate) use names::{is_reserved_name, normalise_source};
use yaml::{Node, load as load_yaml};

/// The front-matter key of the day after which an entry is due for review; kept in
/// [`Entry::extra`] as `YYYY-MM-DD`.
pub const REVIEW_AFTER: &str = "review_after";

/// Whether an entry whose other front-matter keys are `extra_json` (as an artifact stores
/// them) is past its `review_after` day on `today` (`YYYY-MM-DD`). A substring search, no
/// JSON parse: the hooks ask it of every entry they show.
pub fn review_due(extra_json: &str, today: &str) -> bool {
    const KEY: &str = "\"review_after\":\"";
    extra_json
        .find(KEY)
        .and_then(|at| extra_json.get(at + KEY.len()..at + KEY.len() + 10))
        .is_some_and(|day| today > day)
}

/// Largest entry file accepted, in bytes.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;

/// What git knows about the commit that last changed an entry's file, as `git log` shows
/// it: the last non-merge change, its author and its author date.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitMeta {
    /// Author date, Unix seconds.
    pub time: i64,
    /// The author date's UTC offset in seconds (east positive): the entry's date is the
    /// wall-clock time of `time` there (`git log` shows it so).
    pub offset: i32,
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
    /// Wall-clock time where it was written, as seconds since 1970-01-01 00:00 of that
    /// clock (Unix seconds plus the zone's offset: its UTC day is the author's day); `None`
    /// when neither front matter nor git gives one.
    pub date: Option<i64>,
    pub author: Option<String>,
    /// Markdown body without front matter, line ends normalised to `\n`.
    pub body: String,
    /// Other front-matter keys, kept as JSON values, not interpreted (`status` and
    /// `supersedes` are checked when parsed and kept here, normalised).
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The git blob id (hex) of the file this entry was read from, when the compiler knows
    /// it (the server does; a local build does not): the version an edit starts from.
    pub blob: String,
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

impl std::error::Error for Diagnostic {}

/// Front-matter keys with a meaning of their own (matched ASCII-case-insensitively);
/// every other key goes to [`Entry::extra`].
const KNOWN_KEYS: [&str; 9] = [
    "title", "topic", "tags", "sources", "source", "applyto", "globs", "date", "author",
];

/// Parses one entry file of a whole repository. `path` is repository-relative with `/`
/// separators; [`Root::parse`] reads a file of a folder (a `subdir`).
pub fn parse_entry(path: &str, bytes: &[u8], git: Option<&GitMeta>) -> Result<Entry, Diagnostic> {
    Root::Repository.parse(path, bytes, git)
}

impl Root<'_> {
    /// Parses one entry file; `path` is relative to this root, and the topic defaults to
    /// [`Root::default_topic`].
    pub fn parse(
        &self,
        path: &str,
        bytes: &[u8],
        git: Option<&GitMeta>,
    ) -> Result<Entry, Diagnostic> {
        parse_with_topic(path, self.default_topic(path), bytes, git)
    }
}

fn parse_with_topic(
    path: &str,
    default_topic: &str,
    bytes: &[u8],
    git: Option<&GitMeta>,
) -> Result<Entry, Diagnostic> {
    let diag = |line: u32, reason: String| Diagnostic {
        path: path.to_string(),
        line,
        reason,
    };
    if bytes.len() > MAX_ENTRY_BYTES {
        return Err(diag(
            1,
            format!(
                "file is {} bytes, larger than the {} byte limit for an entry",
                bytes.len(),
                MAX_ENTRY_BYTES
            ),
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = &bytes[..err.valid_up_to()];
            return Err(diag(
                line_of(valid),
                format!(
                    "file is not valid UTF-8 (invalid byte 0x{:02x} at offset {})",
                    bytes[err.valid_up_to()],
                    err.valid_up_to()
                ),
            ));
        }
    };
    if text.is_empty() {
        return Err(diag(1, "file is empty".to_string()));
    }
    if text.trim().is_empty() {
        return Err(diag(1, "file contains only whitespace".to_string()));
    }
    // CRLF (and a lone CR, as CommonMark reads it) -> LF once, so every later step and
    // the stored body see `\n` only.
    let normalised;
    let text = if text.contains('\r') {
        normalised = text.replace("\r\n", "\n").replace('\r', "\n");
        normalised.as_str()
    } else {
        text
    };

    let (front, body, body_line) = match split_front_matter(text) {
        FrontMatter::None => (None, text, 1),
        FrontMatter::Unclosed => {
            return Err(diag(
                1,
                "front matter opened at line 1 is never closed (expected a `---` or `...` line)"
                    .to_string(),
            ));
        }
        FrontMatter::Block {
            yaml,
            body,
            body_line,
        } => (Some(yaml), body, body_line),
    };
    if body.trim().is_empty() {
        return Err(diag(
            body_line.saturating_sub(1).max(1),
            "entry has no body after the front matter".to_string(),
        ));
    }

    // YAML lines are offset by the opening `---` line.
    let pairs = match front {
        None => Vec::new(),
        Some(yaml) => match load_yaml(yaml) {
            Err(e) => return Err(diag(e.line.saturating_add(1), e.reason)),
            Ok(None) => Vec::new(),
            Ok(Some(Node::Map(pairs))) => pairs,
            Ok(Some(other)) => {
                return Err(diag(
                    2,
                    format!(
                        "front matter must be a map of `key: value` lines, found {}",
                        other.describe()
                    ),
                ));
            }
        },
    };

    let id = path.to_string();
    let mut fm_title = None;
    // `name` (skills, agents, many tools' front matter) is what the entry is called: the
    // title when there is none, before a heading such as "Workflow" or the file stem.
    let mut fm_name = None;
    let mut fm_topic = None;
    let mut fm_date = None;
    let mut fm_author = None;
    let mut tags = Vec::new();
    let mut sources = Vec::new();
    let mut extra = BTreeMap::new();
    for (key, value, key_line) in pairs {
        let key_text = key.key_string();
        let lower = key_text.to_ascii_lowercase();
        let file_line = key_line.saturating_add(1);
        match lower.as_str() {
            "title" => fm_title = scalar_text(&value).map(trimmed).filter(|s| !s.is_empty()),
            "topic" => fm_topic = scalar_text(&value).map(trimmed).filter(|s| !s.is_empty()),
            "author" => fm_author = author_text(&value),
            "tags" => tags.extend(string_list(&value, ListStyle::Tags)),
            // Copilot's `applyTo` and Cursor's `globs` say which files an instruction is for.
            "sources" | "source" | "applyto" | "globs" => {
                sources.extend(string_list(&value, ListStyle::Paths))
            }
            "date" => match &value {
                Node::Scalar(s) if s.is_null() => {}
                Node::Scalar(s) => match parse_date(&s.text) {
                    Some(t) => fm_date = Some(t),
                    None => {
                        return Err(diag(
                            file_line,
                            format!(
                                "date {:?} is not a date (expected YYYY-MM-DD, optionally with a time like 2024-03-05T10:00:00Z or 2024-03-05 10:00:00 +0100)",
                                s.text
                            ),
                        ));
                    }
                },
                other => {
                    return Err(diag(
                        file_line,
                        format!("date must be a single value, found {}", other.describe()),
                    ));
                }
            },
            "status" => match lifecycle::parse_status(&value) {
                Ok(Some(status)) => {
                    extra.insert(STATUS_KEY.to_string(), status.into());
                }
                Ok(None) => {}
                Err(reason) => return Err(diag(file_line, reason)),
            },
            "supersedes" => match lifecycle::parse_supersedes(&value, path) {
                Ok(ids) if ids.is_empty() => {}
                Ok(ids) => {
                    extra.insert(SUPERSEDES_KEY.to_string(), ids.into());
                }
                Err(reason) => return Err(diag(file_line, reason)),
            },
            // Kept among the other keys, as the day it names (`YYYY-MM-DD`): the artifact
            // needs no field of its own, and readers compare days as strings.
            "review_after" => match &value {
                Node::Scalar(s) if s.is_null() => {}
                Node::Scalar(s) => match parse_date(&s.text) {
                    Some(t) => {
                        extra.insert(
                            REVIEW_AFTER.to_string(),
                            serde_json::Value::String(format_day(t)),
                        );
                    }
                    None => {
                        return Err(diag(
                            file_line,
                            format!(
                                "review_after {:?} is not a date (expected YYYY-MM-DD, optionally with a time like 2024-03-05T10:00:00Z)",
                                s.text
                            ),
                        ));
                    }
                },
                other => {
                    return Err(diag(
                        file_line,
                        format!(
                            "review_after must be a single value, found {}",
                            other.describe()
                        ),
                    ));
                }
            },
            _ => {
                if lower == "name" {
                    fm_name = scalar_text(&value).map(trimmed).filter(|s| !s.is_empty());
                }
                extra.insert(key_text, value.to_json());
            }
        }
    }

    let tags = normalise_tags(tags);
    sources.extend(inline_sources(body));
    let mut seen = std::collections::HashSet::new();
    let sources: Vec<String> = sources
        .iter()
        .filter_map(|s| entry_source(s))
        .filter(|s| seen.insert(s.clone()))
        .collect();

    let title = fm_title
        .or(fm_name)
        .or_else(|| first_heading(body))
        .unwrap_or_else(|| file_stem(path).to_string());
    let topic = fm_topic.unwrap_or_else(|| default_topic.to_string());
    let date = fm_date.or(git.map(|g| g.time.saturating_add(i64::from(g.offset))));
    let author = fm_author.or_else(|| {
        git.map(|g| g.author.trim().to_string())
            .filter(|a| !a.is_empty())
    });

    Ok(Entry {
        id,
        topic,
        title,
        tags,
        sources,
        date,
        author,
        body: body.to_string(),
        extra,
        blob: String::new(),
    })
}

/// Renders an entry as Markdown with YAML front matter, such that
/// `parse_entry(&e.id, render_entry(&e).as_bytes(), None)` gives `e` back for any entry
/// `parse_entry` produced. Extra keys that collide with known keys are skipped.
pub fn render_entry(entry: &Entry) -> String {
    let mut out = String::with_capacity(entry.body.len() + 256);
    out.push_str("---\n");
    push_kv(&mut out, "title", &quoted(&entry.title));
    if entry.topic != Root::Repository.default_topic(&entry.id) {
        push_kv(&mut out, "topic", &quoted(&entry.topic));
    }
    for (key, list) in [("tags", &entry.tags), ("sources", &entry.sources)] {
        if !list.is_empty() {
            out.push_str(key);
            out.push_str(":\n");
            for item in list {
                out.push_str("  - ");
                out.push_str(&quoted(item));
                out.push('\n');
            }
        }
    }
    if let Some(date) = entry.date {
        push_kv(&mut out, "date", &format_date(date));
    }
    if let Some(author) = &entry.author {
        push_kv(&mut out, "author", &quoted(author));
    }
    for (key, value) in &entry.extra {
        let lower = key.to_ascii_lowercase();
        if KNOWN_KEYS.contains(&lower.as_str()) {
            continue;
        }
        let mut v = String::new();
        json_to_yaml_flow(value, &mut v);
        // The lifecycle keys are helix's own, and read by people: written plain.
        let key = if lower == STATUS_KEY || lower == SUPERSEDES_KEY {
            key.clone()
        } else {
            quoted(key)
        };
        push_kv(&mut out, &key, &v);
    }
    out.push_str("---\n");
    out.push_str(&entry.body);
    out
}

/// A source as stored: a normalised path, or a glob (where a leading `/` means the
/// repository root, as in `.gitignore`); a glob that matches every file says nothing and is
/// dropped.
fn entry_source(raw: &str) -> Option<String> {
    let t = raw.trim();
    let t = if is_glob(t) {
        t.trim_start_matches('/')
    } else {
        t
    };
    normalise_source(t).filter(|s| !(is_glob(s) && glob::matches_everything(s)))
}

fn line_of(prefix: &[u8]) -> u32 {
    let n = prefix.iter().filter(|&&b| b == b'\n').count();
    u32::try_from(n).unwrap_or(u32::MAX - 1) + 1
}

#[cfg(test)]
mod tests;
