//! Which files of a knowledge repository are entries, the topic each gets by default, and
//! why every other Markdown file is not one: the rule server ingest and client compile share.

use std::collections::BTreeMap;

/// Where a project reads its files from. Paths given to [`Root::classify`] are relative to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root<'a> {
    /// A whole repository: Markdown at its root is the repository's own (README,
    /// CONTRIBUTING, CHANGELOG…), not knowledge.
    Repository,
    /// A folder of a repository (a project's `subdir`, a directory `helix check` is given):
    /// its files count, with the folder's last component as their default topic.
    Folder(&'a str),
}

/// What a path is to helix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind<'a> {
    /// An entry, with the topic it gets when its front matter names none.
    Entry { topic: &'a str },
    /// A Markdown file that is not an entry, and why.
    Skipped(Skip),
    /// Not Markdown: neither read nor counted.
    Other,
}

/// Why a Markdown file is not an entry. The order is the order reports list them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    /// At the repository root (not an agent file): the repository's own documents.
    RepositoryRoot,
    /// A README, index, table of contents or template at the root of the project.
    ReadmeOrIndex,
    /// Under a hidden folder or hidden itself (`.github/`, `.obsidian/`, `.draft.md`), and
    /// not one of the agent instruction files.
    Hidden,
    /// `.mdx` (Markdown with JSX: a documentation site's page) or `.mdc` outside
    /// `.cursor/rules/`.
    NotPlainMarkdown,
    /// A name that cannot be an entry id (a backslash, a NUL, an empty component).
    BadName,
}

impl Skip {
    /// Every reason, in report order.
    pub const ALL: [Skip; 5] = [
        Skip::RepositoryRoot,
        Skip::ReadmeOrIndex,
        Skip::Hidden,
        Skip::NotPlainMarkdown,
        Skip::BadName,
    ];

    /// The stable key of the reason (`/status` JSON, logs).
    pub fn key(self) -> &'static str {
        match self {
            Skip::RepositoryRoot => "repository_root",
            Skip::ReadmeOrIndex => "readme_or_index",
            Skip::Hidden => "hidden",
            Skip::NotPlainMarkdown => "not_plain_markdown",
            Skip::BadName => "bad_name",
        }
    }

    /// The reason as people read it in a count ("12 hidden").
    pub fn label(self) -> &'static str {
        match self {
            Skip::RepositoryRoot => "at the repository root",
            Skip::ReadmeOrIndex => "README, index or template",
            Skip::Hidden => "hidden",
            Skip::NotPlainMarkdown => "MDX or MDC",
            Skip::BadName => "unusable name",
        }
    }

    pub fn from_key(key: &str) -> Option<Skip> {
        Skip::ALL.into_iter().find(|s| s.key() == key)
    }
}

/// Agent instruction files, entries wherever they sit under a hidden folder or at the
/// repository root: (path or folder relative to the project root, required file suffix,
/// topic). A folder (ending in `/`) holds them at any depth.
const AGENT_FILES: [(&str, &str, &str); 5] = [
    ("AGENTS.md", "", "agents"),
    ("CLAUDE.md", "", "agents"),
    (".github/copilot-instructions.md", "", "copilot"),
    (".github/instructions/", ".instructions.md", "copilot"),
    (".cursor/rules/", "", "cursor"),
];

/// File stems (lower case) that describe a folder rather than hold knowledge, at the root
/// of a project: READMEs, index pages (Hugo `_index`), tables of contents (mdBook
/// `SUMMARY`, docsify `_sidebar`).
const FOLDER_FILES: [&str; 5] = ["readme", "index", "_index", "summary", "_sidebar"];

impl<'a> Root<'a> {
    /// The root of a project reading `subdir` of its repository (`None`: all of it).
    pub fn of_subdir(subdir: Option<&'a str>) -> Root<'a> {
        match subdir
            .map(|s| s.trim_matches('/'))
            .filter(|s| !s.is_empty())
        {
            Some(s) => Root::Folder(s),
            None => Root::Repository,
        }
    }

    /// What `path` (relative to this root, `/`-separated) is: an entry and its default
    /// topic, a skipped Markdown file and why, or something else.
    pub fn classify<'s>(&'s self, path: &'s str) -> FileKind<'s> {
        let Some(ext) = markdown_extension(path) else {
            return FileKind::Other;
        };
        let parts: Vec<&str> = path.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains(['\\', '\0']))
        {
            return FileKind::Skipped(Skip::BadName);
        }
        let name = parts[parts.len() - 1];
        let stem = &name[..name.len() - ext.len() - 1];
        if stem.is_empty() {
            return FileKind::Skipped(Skip::Hidden);
        }
        if let Some(topic) = agent_topic(path, ext) {
            return FileKind::Entry { topic };
        }
        if parts.iter().any(|p| p.starts_with('.')) {
            return FileKind::Skipped(Skip::Hidden);
        }
        if !ext.eq_ignore_ascii_case("md") && !ext.eq_ignore_ascii_case("markdown") {
            return FileKind::Skipped(Skip::NotPlainMarkdown);
        }
        if parts.len() > 1 {
            return FileKind::Entry { topic: parts[0] };
        }
        if is_folder_file(stem) {
            return FileKind::Skipped(Skip::ReadmeOrIndex);
        }
        match self {
            Root::Repository => FileKind::Skipped(Skip::RepositoryRoot),
            Root::Folder(dir) => FileKind::Entry {
                topic: folder_topic(dir),
            },
        }
    }

    /// The topic an entry at `path` gets when its front matter names none (empty for a
    /// path that is not an entry).
    pub fn default_topic<'s>(&'s self, path: &'s str) -> &'s str {
        match self.classify(path) {
            FileKind::Entry { topic } => topic,
            _ => path.split_once('/').map_or("", |(first, _)| first),
        }
    }
}

/// `md`, `markdown`, `mdx` or `mdc` (as written) when `path` names a Markdown file.
fn markdown_extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    ["md", "markdown", "mdx", "mdc"]
        .iter()
        .any(|m| ext.eq_ignore_ascii_case(m))
        .then_some(ext)
}

/// The topic of an agent instruction file, if `path` is one.
fn agent_topic(path: &str, ext: &str) -> Option<&'static str> {
    AGENT_FILES.iter().find_map(|&(at, suffix, topic)| {
        let hit = match at.strip_suffix('/') {
            Some(_) => path.strip_prefix(at).is_some_and(|rest| {
                // Below the folder nothing else may be hidden; Cursor's rules are `.mdc`.
                !rest.split('/').any(|p| p.starts_with('.'))
                    && ends_with_ignore_case(rest, suffix)
                    && (!ext.eq_ignore_ascii_case("mdx"))
            }),
            None => path.eq_ignore_ascii_case(at),
        };
        hit.then_some(topic)
    })
}

fn ends_with_ignore_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.is_char_boundary(s.len() - suffix.len())
        && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// READMEs, index pages, tables of contents and templates (`template`, `adr-template`).
fn is_folder_file(stem: &str) -> bool {
    let lower = stem.to_ascii_lowercase();
    FOLDER_FILES.contains(&lower.as_str())
        || lower == "template"
        || lower.ends_with("-template")
        || lower.ends_with("_template")
}

/// A folder's last component without leading dots: `docs/adr` → `adr`, `.github` → `github`.
fn folder_topic(dir: &str) -> &str {
    let last = dir.rsplit('/').next().unwrap_or(dir);
    let t = last.trim_start_matches('.');
    if t.is_empty() { last } else { t }
}

/// How many Markdown files became entries, were invalid, or were skipped and why: the
/// counts the server's `/status` and log, `helix check`, `helix build` and `helix doctor`
/// report the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    pub entries: u64,
    /// Entry files with a diagnostic (left out of the artifact).
    pub invalid: u64,
    pub skipped: BTreeMap<Skip, u64>,
}

impl Census {
    /// Counts one skipped file.
    pub fn skip(&mut self, why: Skip) {
        *self.skipped.entry(why).or_default() += 1;
    }

    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Every Markdown file seen.
    pub fn markdown_files(&self) -> u64 {
        self.entries + self.invalid + self.skipped_total()
    }

    /// The skipped counts by key, for JSON.
    pub fn skipped_by_key(&self) -> BTreeMap<String, u64> {
        self.skipped
            .iter()
            .map(|(s, n)| (s.key().to_string(), *n))
            .collect()
    }

    /// Rebuilds the skipped counts from [`Census::skipped_by_key`]'s form; unknown keys
    /// are dropped.
    pub fn with_skipped_keys<'k>(mut self, keys: impl IntoIterator<Item = (&'k str, u64)>) -> Self {
        for (k, n) in keys {
            if let Some(s) = Skip::from_key(k) {
                *self.skipped.entry(s).or_default() += n;
            }
        }
        self
    }

    /// `12 Markdown files are not entries (9 hidden, 3 at the repository root)`, or `None`
    /// when every Markdown file is an entry or invalid.
    pub fn skipped_line(&self) -> Option<String> {
        let total = self.skipped_total();
        if total == 0 {
            return None;
        }
        let parts: Vec<String> = self
            .skipped
            .iter()
            .map(|(s, n)| format!("{n} {}", s.label()))
            .collect();
        let what = if total == 1 {
            "Markdown file is not an entry"
        } else {
            "Markdown files are not entries"
        };
        Some(format!("{total} {what} ({})", parts.join(", ")))
    }

    /// The warning for Markdown files present and no entry among them: almost certainly
    /// the wrong folder, or a layout helix does not read (docs/entry-format.md).
    pub fn warning(&self) -> Option<String> {
        if self.entries > 0 || self.markdown_files() == 0 {
            return None;
        }
        let mut w = format!(
            "no entries among {} Markdown file{}",
            self.markdown_files(),
            if self.markdown_files() == 1 { "" } else { "s" }
        );
        if self.invalid > 0 {
            w.push_str(&format!(" ({} invalid)", self.invalid));
        }
        if let Some(line) = self.skipped_line() {
            w.push_str(&format!("; {line}"));
        }
        w.push_str(
            "; an entry is a Markdown file in a topic folder, or at the root of a configured subdir (docs/entry-format.md)",
        );
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind<'a>(root: &'a Root<'a>, path: &'a str) -> FileKind<'a> {
        root.classify(path)
    }

    #[test]
    fn topic_folders_and_agent_files_are_entries() {
        let repo = Root::Repository;
        for (path, topic) in [
            ("build/cargo.md", "build"),
            ("ops/runbooks/drain.md", "ops"),
            ("build/x.MARKDOWN", "build"),
            ("build/README.md", "build"),
            ("services/api/AGENTS.md", "services"),
            ("AGENTS.md", "agents"),
            ("CLAUDE.md", "agents"),
            (".github/copilot-instructions.md", "copilot"),
            (".github/instructions/python.instructions.md", "copilot"),
            (".github/instructions/web/react.instructions.md", "copilot"),
            (".cursor/rules/style.mdc", "cursor"),
            (".cursor/rules/backend/db.md", "cursor"),
        ] {
            assert_eq!(kind(&repo, path), FileKind::Entry { topic }, "{path}");
        }
    }

    #[test]
    fn every_other_markdown_file_has_a_reason() {
        let repo = Root::Repository;
        for (path, why) in [
            ("README.md", Skip::ReadmeOrIndex),
            ("index.md", Skip::ReadmeOrIndex),
            ("CONTRIBUTING.md", Skip::RepositoryRoot),
            ("CHANGELOG.markdown", Skip::RepositoryRoot),
            (".github/PULL_REQUEST_TEMPLATE.md", Skip::Hidden),
            (".github/prompts/x.prompt.md", Skip::Hidden),
            (".github/instructions/notes.md", Skip::Hidden),
            (".github/instructions/.x/a.instructions.md", Skip::Hidden),
            ("git/.draft.md", Skip::Hidden),
            (".obsidian/x.md", Skip::Hidden),
            ("git/.md", Skip::Hidden),
            ("docs/intro.mdx", Skip::NotPlainMarkdown),
            ("content/page.mdc", Skip::NotPlainMarkdown),
            ("a//b.md", Skip::BadName),
            ("a/b\\c.md", Skip::BadName),
            ("a/../b.md", Skip::BadName),
        ] {
            assert_eq!(kind(&repo, path), FileKind::Skipped(why), "{path}");
        }
        for other in ["src/main.rs", "notes.txt", "md", "a/b.md.bak", ""] {
            assert_eq!(kind(&repo, other), FileKind::Other, "{other}");
        }
    }

    #[test]
    fn a_folder_root_counts_except_its_readme_index_and_templates() {
        let adr = Root::of_subdir(Some("docs/adr/"));
        assert_eq!(adr, Root::Folder("docs/adr"));
        assert_eq!(
            kind(&adr, "0001-record-decisions.md"),
            FileKind::Entry { topic: "adr" }
        );
        assert_eq!(
            kind(&adr, "superseded/0002-x.md"),
            FileKind::Entry {
                topic: "superseded"
            }
        );
        for readme in [
            "README.md",
            "index.md",
            "template.md",
            "adr-template.md",
            "SUMMARY.md",
        ] {
            assert_eq!(
                kind(&adr, readme),
                FileKind::Skipped(Skip::ReadmeOrIndex),
                "{readme}"
            );
        }
        let gh = Root::of_subdir(Some(".github"));
        assert_eq!(
            kind(&gh, "copilot-instructions.md"),
            FileKind::Entry { topic: "github" }
        );
        assert_eq!(Root::of_subdir(Some("/")), Root::Repository);
        assert_eq!(Root::of_subdir(None), Root::Repository);
        assert_eq!(adr.default_topic("x.md"), "adr");
        assert_eq!(Root::Repository.default_topic("x.md"), "");
    }

    #[test]
    fn census_lines_and_the_zero_entry_warning() {
        let mut c = Census::default();
        assert_eq!((c.skipped_line(), c.warning()), (None, None));
        c.skip(Skip::Hidden);
        c.skip(Skip::Hidden);
        c.skip(Skip::RepositoryRoot);
        assert_eq!(
            c.skipped_line().as_deref(),
            Some("3 Markdown files are not entries (1 at the repository root, 2 hidden)")
        );
        let w = c.warning().expect("warns");
        assert!(
            w.starts_with("no entries among 3 Markdown files; 3 Markdown"),
            "{w}"
        );
        c.entries = 1;
        assert_eq!(c.warning(), None);
        let keys = c.skipped_by_key();
        let back = Census {
            entries: 1,
            ..Census::default()
        }
        .with_skipped_keys(keys.iter().map(|(k, n)| (k.as_str(), *n)));
        assert_eq!(back, c);
    }
}
