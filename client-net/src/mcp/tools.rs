//! The six tools' bodies: each reads the knowledge (or writes a pending entry) and answers
//! with one compact text for the model. No structured content: Claude Code hands the model a
//! tool's `structuredContent` instead of its text when there is one (docs/mcp.md, measured
//! with the real client), and the text is the smaller and the one that carries the advice.

use super::background::spawn_background_sync;
use helix_client::config::{self, ProjectConfig};
use helix_client::human::{count, one_line};
use helix_client::knowledge::Knowledge;
use helix_client::pending::{self, NewEntry};
use helix_index_format::{EntryRef, SearchOptions};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use helix_index_format::validate::MAX_BODY_BYTES;
const MAX_QUERY_CHARS: usize = 2_000;
const DEFAULT_LIMIT: usize = 8;
const MAX_LIMIT: usize = 50;
/// At most this many entries listed by `brief` for one topic.
const BRIEF_TOPIC_ENTRIES: usize = 50;
/// At most this many topics listed by `brief` without a topic.
const BRIEF_TOP_TOPICS: usize = 20;

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Keywords or an error message to look for, e.g. "cargo build linker error openssl".
    pub query: String,
    /// Maximum number of hits (1-50, default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// Only entries of this topic (see `topics`), e.g. "build".
    #[serde(default)]
    pub topic: Option<String>,
    /// Only entries of this project (see `topics`); default: every followed project.
    #[serde(default)]
    pub project: Option<String>,
    /// Also retired and superseded entries (marked so), which are left out by default.
    #[serde(default)]
    pub all: bool,
}

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// Entry id as returned by `search`: "project:topic/slug.md" or "topic/slug.md".
    pub id: String,
    /// The whole new entry file (YAML front matter and Markdown body), as `read` with `file: true` shows it; or give only the fields to change below.
    #[serde(default)]
    pub content: Option<String>,
    /// New one-line title.
    #[serde(default)]
    pub title: Option<String>,
    /// New Markdown body.
    #[serde(default)]
    pub body: Option<String>,
    /// New tags (replace the old ones).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// New repository-relative sources (replace the old ones).
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    /// "retired" for an entry that is simply wrong now (it leaves search and hooks), "active" to bring it back.
    #[serde(default)]
    pub status: Option<String>,
    /// Ids of entries this one replaces (they leave search and hooks); [] removes the list.
    #[serde(default)]
    pub supersedes: Option<Vec<String>>,
    /// The blob id the edit starts from, as `read` with `file: true` shows it; default: the version in the cache. The edit is refused if the entry changed since.
    #[serde(default)]
    pub base: Option<String>,
}

/// Arguments of `store`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreArgs {
    /// Topic folder for the entry, lowercase, e.g. "build", "ci", "database". Prefer an existing topic (see `topics`).
    pub topic: String,
    /// Specific one-line title stating the fact, e.g. "cargo test hangs when DATABASE_URL points at prod".
    pub title: String,
    /// Markdown body (at most 64 KiB): what happens, the root cause, the fix or decision, and how to recognise it. No secrets.
    pub body: String,
    /// Optional keywords, e.g. ["linker", "openssl"].
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Optional repository-relative code paths the entry is about, e.g. ["src/db/pool.rs"]; hooks show the entry when these files are read or edited.
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    /// Project to store into; default: the first project of `.helix.toml`.
    #[serde(default)]
    pub project: Option<String>,
    /// Store even though an existing entry says nearly the same. Without it, such a store is
    /// refused and the answer names that entry: read it, and prefer improving it (or a more
    /// specific title) over a second copy.
    #[serde(default)]
    pub force: Option<bool>,
}

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Entry id as returned by `search`: "project:topic/slug.md" or a bare "topic/slug.md".
    pub id: String,
    /// Show the entry file as `edit` takes it (front matter and body) and its version.
    #[serde(default)]
    pub file: bool,
}

/// Arguments of `brief`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefArgs {
    /// A topic to list the entries of; omit for an overview of all topics.
    #[serde(default)]
    pub topic: Option<String>,
}

/// Arguments of `topics` (none).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopicsArgs {}

/// A tool failure the model can act on: reported as a tool result with `isError: true`, so the
/// message reaches the model (protocol errors are often shown only as "internal error").
#[derive(Debug)]
pub(super) struct ToolError(pub(super) String);

pub(super) type ToolOutcome = Result<String, ToolError>;

fn fail<T>(msg: impl Into<String>) -> Result<T, ToolError> {
    Err(ToolError(msg.into()))
}

/// Loads the project configuration; a missing `.helix.toml` is a tool error saying what to create.
/// Claude Code may start the server outside the repository; then its project directory
/// (`CLAUDE_PROJECT_DIR`) is tried as well.
fn require_config(cwd: &Path) -> Result<ProjectConfig, ToolError> {
    match config::find(cwd) {
        Ok(Some(cfg)) => return Ok(cfg),
        Ok(None) => {}
        Err(e) => return fail(format!("{e:#}")),
    }
    if let Some(dir) = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from)
        && dir.is_absolute()
        && dir != cwd
        && let Ok(Some(cfg)) = config::find(&dir)
    {
        return Ok(cfg);
    }
    fail(config::missing_config_help(cwd))
}

/// Opens the knowledge of `cfg`; no artifact at all is an error saying to run `helix sync`.
fn open_knowledge(cfg: &ProjectConfig) -> Result<Knowledge, ToolError> {
    let k = Knowledge::from_config(cfg);
    if k.sources().is_empty() {
        return fail(format!(
            "no knowledge cached yet for {} ({}); run `helix sync` in {} to download it",
            plural_list(&cfg.projects),
            cfg.file.display(),
            cfg.root.display()
        ));
    }
    Ok(k)
}

fn plural_list(projects: &[String]) -> String {
    match projects {
        [one] => format!("project `{one}`"),
        many => format!(
            "projects {}",
            many.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn check_project(cfg: &ProjectConfig, project: &Option<String>) -> Result<(), ToolError> {
    match project {
        Some(p) if !cfg.projects.contains(p) => fail(format!(
            "unknown project `{p}`; {} follows {}",
            cfg.file.display(),
            plural_list(&cfg.projects)
        )),
        _ => Ok(()),
    }
}

pub(super) fn search_tool(cwd: &Path, args: SearchArgs) -> ToolOutcome {
    let query = args.query.trim();
    if query.is_empty() {
        return fail("`query` is empty; pass keywords or an error message");
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return fail(format!(
            "`query` is {} characters; at most {MAX_QUERY_CHARS} (pass the distinctive part of an error)",
            query.chars().count()
        ));
    }
    let limit = match args.limit {
        None => DEFAULT_LIMIT,
        Some(0) => return fail("`limit` must be at least 1"),
        Some(n) => (n as usize).min(MAX_LIMIT),
    };
    let topic = args
        .topic
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let cfg = require_config(cwd)?;
    check_project(&cfg, &args.project)?;
    let k = open_knowledge(&cfg)?;
    let opts = SearchOptions {
        limit,
        topic: topic.clone(),
        now: Some(helix_client::sys::now_secs()),
        include_hidden: args.all,
        ..SearchOptions::default()
    };
    // Scored with the statistics of everything searched together (one project's alone
    // with a project filter).
    // With vectors in an artifact, fused with the entries nearest by meaning (as `helix
    // search` does).
    let found = k.find(query, &opts, args.project.as_deref());
    let hits = helix_client::semantic::search_fusion(
        &k,
        found,
        args.project.as_deref(),
        query,
        &opts,
        false,
    )
    .hits;

    let mut text = String::new();
    if hits.is_empty() {
        let _ = write!(text, "No entries match \"{query}\"");
        if let Some(t) = &topic {
            let _ = write!(text, " in topic `{t}`");
        }
        text.push_str(". Try fewer or other keywords, or `topics` to see what is covered.");
    } else {
        let _ = writeln!(
            text,
            "{} for \"{query}\":",
            count(hits.len() as u64, "hit", "hits")
        );
    }
    for (i, h) in hits.iter().enumerate() {
        let e = &h.hit.entry;
        let date = e.date.map(helix_index_format::format_day);
        let _ = write!(
            text,
            "{}. {}:{} — {} [{}",
            i + 1,
            h.project,
            e.id,
            e.title,
            e.topic
        );
        if let Some(d) = &date {
            let _ = write!(text, ", {d}");
        }
        text.push(']');
        if let Some(note) = k.hidden_note(h) {
            let _ = write!(text, " ({note})");
        }
        text.push('\n');
        let snippet = one_line(&h.hit.snippet);
        if !snippet.is_empty() {
            let _ = writeln!(text, "   {snippet}");
        }
    }
    Ok(text.trim_end().to_string())
}

/// The body size, with advice for the model; every other rule (and the secret scan) is
/// checked by `pending::store`, the one write path, before anything is written.
pub(super) fn check_store_args(args: &StoreArgs) -> Result<(), ToolError> {
    if args.body.len() > MAX_BODY_BYTES {
        return fail(format!(
            "`body` is {} bytes; at most {MAX_BODY_BYTES} bytes (64 KiB). Store the essence: \
             root cause, fix, how to recognise it",
            args.body.len()
        ));
    }
    Ok(())
}

pub(super) fn store_tool(cwd: &Path, args: StoreArgs) -> ToolOutcome {
    check_store_args(&args)?;
    let cfg = require_config(cwd)?;
    check_project(&cfg, &args.project)?;
    let new = NewEntry {
        topic: args.topic.trim().to_string(),
        title: args.title.trim().to_string(),
        body: args.body,
        tags: args.tags.unwrap_or_default(),
        sources: args.sources.unwrap_or_default(),
        force: false,
    };
    let stored = pending::store(
        &cfg,
        args.project.as_deref(),
        new,
        args.force.unwrap_or(false),
    )
    .map_err(|e| match e.downcast_ref::<pending::Duplicate>() {
        Some(d) => ToolError(format!(
            "Not stored: `{}:{}` (\"{}\"{}) already says nearly the same (similarity {:.2}). \
             Read it; if it is the same knowledge, leave it or improve it instead of storing a copy; \
             if yours is different, call `store` again with `force: true` (a more specific title helps).",
            d.project,
            d.id,
            d.title,
            if d.pending { ", pending" } else { "" },
            d.score
        )),
        None => ToolError(format!("{e:#}")),
    })?;
    let full_id = format!("{}:{}", stored.project, stored.id);
    let syncing = match &cfg.server {
        Some(_) => spawn_background_sync(&cfg.root),
        None => false,
    };
    let text = match (&cfg.server, syncing) {
        (Some(server), true) => format!(
            "Stored `{full_id}` as a pending entry; search and hooks see it now. \
             `helix sync` is pushing it to {server} in the background."
        ),
        (Some(server), false) => format!(
            "Stored `{full_id}` as a pending entry; search and hooks see it now. \
             It will be pushed to {server} at the next `helix sync`."
        ),
        (None, _) => {
            // The knowledge directory as the repository names it: where to `git add`.
            let dir = cfg.local.as_ref().map(|d| {
                d.strip_prefix(&cfg.root)
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|_| d.clone())
            });
            format!(
                "Stored `{full_id}` in {}/ and recompiled; search and hooks see it now. Commit the file to share it.",
                dir.map_or_else(
                    || "the knowledge directory".into(),
                    |d| d.display().to_string()
                )
            )
        }
    };
    Ok(text)
}

/// `read`. `agent`: helix's name of the agent that asked, when its client name says
/// (`agent_of_client`); the read goes into the injection log for usage reports.
pub(super) fn read_tool(cwd: &Path, args: ReadArgs, agent: Option<&str>) -> ToolOutcome {
    let id = args.id.trim();
    if id.is_empty() {
        return fail("`id` is empty; pass an id from `search`, e.g. \"build/linker-errors.md\"");
    }
    if id.len() > 1024 {
        return fail("`id` is longer than 1024 bytes; pass an id from `search`");
    }
    let cfg = require_config(cwd)?;
    let k = open_knowledge(&cfg)?;
    if args.file {
        let d = helix_client::edit::draft(&k, &cfg, id).map_err(|e| ToolError(format!("{e:#}")))?;
        return Ok(format!(
            "id: {}:{} · base: {}\n\n{}",
            d.project,
            d.id,
            d.base.as_deref().unwrap_or("unknown (local knowledge)"),
            d.text
        ));
    }
    let Some((src, e)) = k.read_in(id) else {
        return fail(format!(
            "no entry `{id}`; ids look like \"project:topic/slug.md\" or \"topic/slug.md\" — use `search` to find one"
        ));
    };
    helix_client::journal::append_read(&format!("{}:{}", src.project, e.id), Some(cwd), agent);
    let mut text = render_entry_text(&src.project, &e);
    if let Some(note) = helix_client::knowledge::hidden_note(&src.index, e.doc) {
        text = format!("({note}: left out of search and hooks)\n{text}");
    }
    Ok(text)
}

pub(super) fn edit_tool(cwd: &Path, args: EditArgs) -> ToolOutcome {
    let cfg = require_config(cwd)?;
    let k = open_knowledge(&cfg)?;
    let err = |e: anyhow::Error| ToolError(format!("{e:#}"));
    let d = helix_client::edit::draft(&k, &cfg, args.id.trim()).map_err(err)?;
    let changes = helix_client::edit::Changes {
        title: args.title,
        body: args.body,
        tags: args.tags,
        sources: args.sources,
        status: args.status,
        supersedes: args.supersedes,
    };
    let text = match (args.content, changes.is_empty()) {
        (Some(_), false) => {
            return fail("pass either `content` (the whole file) or fields to change, not both");
        }
        (Some(c), true) => c,
        (None, true) => {
            return fail(
                "nothing to change: pass `content` (the whole file, see `read` with `file: true`) or fields such as `body`, `status` or `supersedes`",
            );
        }
        (None, false) => helix_client::edit::apply(&d.id, &d.text, &changes).map_err(err)?,
    };
    if text == d.text {
        return Ok(format!(
            "`{}:{}` is unchanged; nothing stored.",
            d.project, d.id
        ));
    }
    let base = args.base.or(d.base);
    let stored = pending::edit(&cfg, &d.project, &d.id, base.as_deref(), &text).map_err(err)?;
    let full_id = format!("{}:{}", stored.project, stored.id);
    Ok(match &cfg.server {
        Some(server) if spawn_background_sync(&cfg.root) => format!(
            "Edited `{full_id}` as a pending edit; search and hooks see it now. `helix sync` is pushing it to {server} in the background; if the entry changed there meanwhile, the edit is refused and kept with both versions (helix's pending rejected/ folder)."
        ),
        Some(server) => format!(
            "Edited `{full_id}` as a pending edit; search and hooks see it now. It will be pushed to {server} at the next `helix sync`."
        ),
        None => format!(
            "Edited `{full_id}` in the knowledge directory and recompiled; commit the file to share it."
        ),
    })
}

fn render_entry_text(project: &str, e: &EntryRef<'_>) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# {}", e.title);
    let _ = write!(t, "id: {project}:{} · topic: {}", e.id, e.topic);
    if let Some(d) = e.date {
        let _ = write!(t, " · date: {}", helix_index_format::format_day(d));
    }
    if let Some(a) = e.author.filter(|a| !a.is_empty()) {
        let _ = write!(t, " · author: {a}");
    }
    t.push('\n');
    if !e.tags.is_empty() {
        let _ = writeln!(t, "tags: {}", e.tags.join(", "));
    }
    if !e.sources.is_empty() {
        let _ = writeln!(t, "sources: {}", e.sources.join(", "));
    }
    t.push('\n');
    t.push_str(e.body.trim());
    t
}

pub(super) fn brief_tool(cwd: &Path, args: BriefArgs) -> ToolOutcome {
    let cfg = require_config(cwd)?;
    let k = open_knowledge(&cfg)?;
    let topics = k.topics();
    let topic = args
        .topic
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let Some(topic) = topic else {
        // Overview: per-project totals and the largest topics.
        let mut per_project: BTreeMap<&str, (u64, usize)> = BTreeMap::new();
        for (p, t) in &topics {
            let e = per_project.entry(p).or_default();
            e.0 += u64::from(t.count);
            e.1 += 1;
        }
        let mut largest: Vec<_> = topics.iter().collect();
        largest.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.1.topic.cmp(b.1.topic)));
        largest.truncate(BRIEF_TOP_TOPICS);
        let total: u64 = per_project.values().map(|v| v.0).sum();
        let mut text = format!("helix: {}", count(total, "entry", "entries"));
        for (p, (n, t)) in &per_project {
            let _ = write!(
                text,
                "\n- {p}: {} in {}",
                count(*n, "entry", "entries"),
                count(*t as u64, "topic", "topics")
            );
        }
        if !largest.is_empty() {
            text.push_str("\nLargest topics: ");
            let parts: Vec<String> = largest
                .iter()
                .map(|(p, t)| topic_label(&per_project, p, t.topic, t.count))
                .collect();
            text.push_str(&parts.join(", "));
        }
        text.push_str(
            "\nUse `brief` with a topic to list its entries, `search` to find by keywords.",
        );
        return Ok(text);
    };

    if !topics.iter().any(|(_, t)| t.topic == topic) {
        let mut known: Vec<&str> = topics.iter().map(|(_, t)| t.topic).collect();
        known.sort_unstable();
        known.dedup();
        let shown = known
            .iter()
            .take(40)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        return fail(format!(
            "no topic `{topic}`; known topics: {shown}{}",
            if known.len() > 40 { ", …" } else { "" }
        ));
    }
    let mut entries = k.topic_entries(&topic);
    let total = entries.len();
    entries.truncate(BRIEF_TOPIC_ENTRIES);
    let mut text = format!(
        "Topic `{topic}`: {}",
        count(total as u64, "entry", "entries")
    );
    if total > entries.len() {
        let _ = write!(text, " (newest {} shown)", entries.len());
    }
    for (p, e) in &entries {
        let date = e.date.map(helix_index_format::format_day);
        let _ = write!(text, "\n- {p}:{} — {}", e.id, e.title);
        if let Some(d) = &date {
            let _ = write!(text, " ({d})");
        }
    }
    Ok(text)
}

/// `project/topic (n)` when several projects are followed, else `topic (n)`.
fn topic_label<V>(
    per_project: &BTreeMap<&str, V>,
    project: &str,
    topic: &str,
    count: u32,
) -> String {
    if per_project.len() > 1 {
        format!("{project}/{topic} ({count})")
    } else {
        format!("{topic} ({count})")
    }
}

pub(super) fn topics_tool(cwd: &Path) -> ToolOutcome {
    let cfg = require_config(cwd)?;
    let k = open_knowledge(&cfg)?;
    let mut per_project: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
    for (p, t) in k.topics() {
        per_project.entry(p).or_default().push((t.topic, t.count));
    }
    let mut text = String::new();
    for (p, topics) in &per_project {
        let total: u64 = topics.iter().map(|(_, n)| u64::from(*n)).sum();
        let list: Vec<String> = topics.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        let _ = writeln!(
            text,
            "{p} — {total} entries, {} topics: {}",
            topics.len(),
            list.join(", ")
        );
    }
    if per_project.is_empty() {
        text.push_str(
            "No topics yet: the knowledge base is empty. Use `store` to add the first entry.",
        );
    }
    Ok(text.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_as_utc_days() {
        assert_eq!(helix_index_format::format_day(0), "1970-01-01");
        assert_eq!(helix_index_format::format_day(951_782_400), "2000-02-29");
        assert_eq!(helix_index_format::format_day(1_767_225_599), "2025-12-31");
        assert_eq!(helix_index_format::format_day(-86_400), "1969-12-31");
    }

    #[test]
    fn oversize_body_is_rejected_before_writing() {
        let args = StoreArgs {
            topic: "build".into(),
            title: "t".into(),
            body: "x".repeat(MAX_BODY_BYTES + 1),
            tags: None,
            sources: None,
            project: None,
            force: None,
        };
        let err = check_store_args(&args).unwrap_err();
        assert!(err.0.contains("64 KiB"), "{}", err.0);
    }
}
