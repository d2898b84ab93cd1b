//! The hook handlers (`table::HOOKS` lists them). Each takes the call's context and
//! returns its answer (`None`: print nothing), which the agent's adapter prints. They never
//! fail: every problem means "no answer".

use super::agent::is_file_action;
use super::call::{Action, Answer};
use super::ctx::Ctx;
use super::fresh;
use super::gate;
use super::inject::Injection;
use super::keywords::{
    FailedCommand, error_terms, error_text, is_build_command, phrases, prompt_terms,
};
use super::output::{self, MAX_CONTEXT_CHARS, Text, body_excerpt, entry_line, marked_title};
use super::state::{self, State};
use crate::knowledge::{Found, Knowledge, ProjectHit};
use helix_index_format::relevance::SEPARATION_DEPTH;
use helix_index_format::tokenize::Analyzer;
use helix_index_format::{EntryRef, Mode, SearchOptions};
use std::path::Path;

pub use super::ambient::ambient;

/// Most entries one prompt or error injection shows.
pub const INJECT_MAX: usize = 3;
/// Hits of an error search looked through for one that quotes the failure; the gate weighs
/// the first [`SEPARATION_DEPTH`].
const QUOTE_DEPTH: usize = 20;
const SNIPPET_CHARS: usize = 160;

/// Score factor of an entry past its `review_after` day: it still shows, below what is
/// current (docs/hooks.md, "Review due").
const REVIEW_DUE_FACTOR: f32 = 0.5;
/// Sources of one entry checked for existence (one `stat` each).
const MAX_SOURCE_STATS: usize = 4;

/// What the session should know before trusting an entry, as a suffix of its line:
/// " (review due)" past its `review_after` day, and each source that does not exist in the
/// session's repository (`root`, the directory of `.helix.toml`): one `stat` per source.
fn marks(root: &Path, e: &EntryRef<'_>) -> String {
    let mut m = String::new();
    if !e.extra_json.is_empty() && helix_index_format::review_due(e.extra_json, &today()) {
        m.push_str(" (review due)");
    }
    for src in e
        .sources
        .iter()
        .filter(|s| !helix_index_format::is_glob(s))
        .take(MAX_SOURCE_STATS)
    {
        if std::fs::symlink_metadata(root.join(src)).is_err() {
            m.push_str(" (source ");
            m.push_str(&output::compact(src, 80));
            m.push_str(" no longer exists)");
        }
    }
    m
}

fn today() -> String {
    helix_index_format::format_day(crate::sys::now_secs())
}

/// An entry line for a hit, with a snippet around the query's words (searches run without
/// snippets: only the injected hits need one) and its [`marks`].
pub(super) fn hit_line(root: &Path, found: &Found<'_>, h: &ProjectHit<'_>) -> String {
    let e = &h.hit.entry;
    let query = found.query_of(h);
    let terms: Vec<&str> = query.terms().iter().map(|t| t.text.as_str()).collect();
    let snippet = helix_index_format::snippet::snippet_with(
        Analyzer::for_version(query.tokenizer_version()),
        e.body,
        e.title,
        &terms,
        SNIPPET_CHARS,
    );
    let snippet = if snippet.trim().is_empty() {
        body_excerpt(e.body, SNIPPET_CHARS)
    } else {
        snippet
    };
    entry_line(
        h.project,
        e.id,
        e.topic,
        e.date,
        &marked_title(e.title, e.extra_json),
        &marks(root, e),
        &snippet,
    )
}

pub(super) fn entry_ref_line(root: &Path, project: &str, e: &EntryRef<'_>) -> String {
    entry_line(
        project,
        e.id,
        e.topic,
        e.date,
        &marked_title(e.title, e.extra_json),
        &marks(root, e),
        &body_excerpt(e.body, 160),
    )
}

/// Common terms (in over [`COMMON_DF`] entries) a prompt or error query keeps, the least
/// common first: they add little to a score but walk the longest posting lists. In a
/// knowledge base of a few thousand entries no term is that common; at 100k this bounds a
/// long prompt's cost near a six-word one's.
const MAX_COMMON_TERMS: usize = 4;
const COMMON_DF: u64 = 1000;

/// What a hook searches with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Every term but the commonest beyond [`MAX_COMMON_TERMS`].
    Words,
    /// The first token only: a file's whole name, a symbol's whole identifier.
    Whole,
    /// The two rarest terms, entries with both first, or none when a term is in no entry:
    /// a path's words, whose hits must contain every one.
    All,
    /// Every term, or none when a term is in no entry or in more than
    /// [`gate::MAX_NAMED_DF`]: names whose hits must say every one, and only rare ones.
    Rare,
}

/// A hook's search: OR mode, recency on, no snippets.
pub(super) fn search<'k>(k: &'k Knowledge, query: &str, shape: Shape, limit: usize) -> Found<'k> {
    let opts = SearchOptions {
        limit,
        mode: if shape == Shape::All {
            Mode::AndThenOr
        } else {
            Mode::Or
        },
        now: Some(crate::sys::now_secs()),
        snippet_chars: 0,
        ..SearchOptions::default()
    };
    let mut found = k.find_with(query, &opts, None, |q, stats| match shape {
        Shape::Words => {
            q.drop_common(stats, MAX_COMMON_TERMS, COMMON_DF);
        }
        Shape::All => q.keep_rarest(stats, 2),
        Shape::Whole => q.keep_first(),
        Shape::Rare => {
            let rare = |t: &str| (1..=gate::MAX_NAMED_DF).contains(&stats.df(t));
            if !q.terms().iter().all(|t| rare(&t.text)) {
                // No entry can pass: skip the search's work.
                q.keep_rarest(stats, 0);
            }
        }
    });
    // Entries due for review rank lower: a score factor on the hits, then the order again
    // (stable, so equal scores keep the search's order).
    let mut due = false;
    let mut day = String::new();
    for h in &mut found.hits {
        if h.hit.entry.extra_json.is_empty() {
            continue;
        }
        if day.is_empty() {
            day = today();
        }
        if helix_index_format::review_due(h.hit.entry.extra_json, &day) {
            h.hit.score *= REVIEW_DUE_FACTOR;
            due = true;
        }
    }
    if due {
        found
            .hits
            .sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score));
    }
    found
}

/// [`search`]'s hits with the entries nearest `query` by vector appended (score 0, no
/// matched terms) and every hit's cosine, when `hook` asks the embedder
/// (`semantic::hook_asks`), an artifact has vectors and the warm embedder answers within
/// the hooks' budget. Otherwise `found` as it is (and the embedder started for next time
/// when none listens).
pub(super) fn with_vectors<'k>(
    k: &'k Knowledge,
    hook: &str,
    found: Found<'k>,
    query: &str,
) -> Found<'k> {
    use crate::semantic::{self, Semantic, Wait};
    if !semantic::hook_asks(hook) {
        return found;
    }
    let Some(v) = semantic::query_vector(k, None, query, Wait::hook()) else {
        return found;
    };
    let how = Semantic {
        fusion: helix_index_format::fusion::FusionOptions {
            limit: 0,
            ..Default::default()
        },
        topic: None,
        include_hidden: false,
        lexical_order: true,
    };
    semantic::fuse_found(k, found, None, &v, &how)
}

/// Topics summed over projects, most entries first.
fn topic_counts(k: &Knowledge) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = Vec::new();
    for (_, t) in k.topics() {
        match v.iter_mut().find(|(n, _)| n == t.topic) {
            Some(slot) => slot.1 += t.count,
            None => v.push((t.topic.to_string(), t.count)),
        }
    }
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

pub(super) fn topic_list(topics: &[(String, u32)], max: usize) -> String {
    let mut s: Vec<String> = topics
        .iter()
        .take(max)
        .map(|(t, n)| format!("{} ({n})", output::compact(t, 40)))
        .collect();
    if topics.len() > max {
        s.push(format!("… {} more", topics.len() - max));
    }
    s.join(", ")
}

fn project_names(k: &Knowledge) -> String {
    let mut names: Vec<&str> = k.sources().iter().map(|s| s.project.as_str()).collect();
    names.dedup();
    names.join(", ")
}

pub fn session_start(cx: &Ctx<'_>) -> Option<Answer> {
    let cfg = cx.config()?;
    state::prune();
    super::once::prune();
    let search = cx.search_hint();
    let syncing = fresh::maybe_sync(cfg);
    let k = cx.knowledge()?;
    if k.sources().is_empty() {
        if !syncing {
            return None;
        }
        let text = format!(
            "helix: no team knowledge cached yet for {}; a background `helix sync` has started. Later, {search}.",
            cfg.projects.join(", ")
        );
        return Some(Answer::Context(text));
    }
    // The prompt hooks that follow read the dictionary and postings: have them paged in
    // (a no-op when they already are).
    k.prefetch();
    let topics = topic_counts(k);
    let compact = cx.call.source == Some("compact");
    if compact && let Some(session) = cx.session() {
        // Entries shown before the compaction are gone from the context: each may come
        // back once.
        state::record_compaction(session);
    }
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge: {} entries in {} topics ({}). Before guessing at a build, tooling or design question, {search}; {}. Store non-obvious findings with {}.",
        k.entry_count(),
        topics.len(),
        project_names(k),
        cx.read_hint(),
        cx.store_hint()
    ));
    if compact {
        t.item(&format!("All topics: {}", topic_list(&topics, usize::MAX)));
    } else if !topics.is_empty() {
        t.item(&format!("Top topics: {}", topic_list(&topics, 10)));
    }
    Some(Answer::Context(t.as_str().to_string()))
}

pub fn subagent_start(cx: &Ctx<'_>) -> Option<Answer> {
    let k = cx.knowledge()?;
    if k.sources().is_empty() {
        return None;
    }
    let topics = topic_counts(k);
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge ({} entries, {}): before guessing, {}; {}.",
        k.entry_count(),
        project_names(k),
        cx.search_hint(),
        cx.read_hint()
    ));
    if !topics.is_empty() {
        t.item(&format!("Topics: {}", topic_list(&topics, 40)));
    }
    Some(Answer::Context(t.as_str().to_string()))
}

/// Prompt and error: the hits the gate lets through and the session has not seen, under
/// `header`; records them.
fn gated(
    cx: &Ctx<'_>,
    hook: &'static str,
    found: &Found<'_>,
    form: gate::Form,
    seen: gate::Seen<'_>,
    quoted: &[(usize, gate::Verdict)],
    header: &str,
) -> Option<Answer> {
    let root = cx.knowledge()?.root();
    let mut injection = Injection::new(cx, hook, state::ANY_SCOPE);
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(header);
    // Hits that quote the failure come first, then what the gate passes, INJECT_MAX in all.
    let quoted = quoted.iter().map(|&(at, v)| (&found.hits[at], v));
    let mut shown = 0;
    for (h, v) in quoted.chain(gate::passing(found, form, seen, INJECT_MAX)) {
        if shown < INJECT_MAX
            && injection.take(h.project, h.hit.entry.id, h.hit.score, v.signal, v.points)
        {
            shown += 1;
            t.item(&hit_line(root, found, h));
        }
    }
    if injection.is_empty() || !t.has_content {
        return None;
    }
    injection.finish(None);
    Some(Answer::Context(t.as_str().to_string()))
}

pub fn prompt(cx: &Ctx<'_>) -> Option<Answer> {
    let prompt = cx.call.prompt.as_deref()?;
    let terms = prompt_terms(prompt);
    if terms.is_empty() {
        return None;
    }
    let k = cx.knowledge()?;
    let query = terms.join(" ");
    let found = with_vectors(
        k,
        "prompt",
        search(k, &query, Shape::Words, SEPARATION_DEPTH),
        &query,
    );
    gated(
        cx,
        "prompt",
        &found,
        gate::Form::of_prompt(prompt),
        gate::Seen {
            own_code: gate::names_own_code(&found, prompt),
            tools: &[],
            failure: false,
        },
        &[],
        &format!(
            "helix team knowledge that may apply to this prompt ({}):",
            cx.read_hint()
        ),
    )
}

pub fn error(cx: &Ctx<'_>) -> Option<Answer> {
    if cx.call.interrupted {
        return None;
    }
    let raw = cx.call.failure.as_deref()?;
    let text = error_text(raw);
    let k = cx.knowledge()?;
    if text.trim().chars().count() >= 15
        && let Some(session) = cx.session()
    {
        let now = crate::sys::now_ms();
        state::update(session, |s| {
            s.failures = s.failures.saturating_add(1);
            s.last_failure = now;
        });
    }
    // The tool that failed and what it was asked to do (`pg_dump -t …`, `git rebase
    // --onto`) are what a note about the failure names, often more than its output does.
    let command = cx.call.command().unwrap_or("");
    let FailedCommand { tools, words } = FailedCommand::read(command);
    let terms = error_terms(&text, &words);
    if terms.is_empty() {
        return None;
    }
    // A note quoting the message may rank below the ten the gate weighs (it reads only
    // those): one search deep enough for both.
    let query = terms.join(" ");
    let found = with_vectors(
        k,
        "error",
        search(k, &query, Shape::Words, QUOTE_DEPTH),
        &query,
    );
    let quoted = gate::quoting(&found, &phrases(raw));
    gated(
        cx,
        "error",
        &found,
        gate::Form::Error,
        gate::Seen {
            own_code: false,
            tools: &tools,
            failure: true,
        },
        &quoted,
        &format!(
            "helix: the team has knowledge matching this error ({}):",
            cx.read_hint()
        ),
    )
}

pub fn post_build(cx: &Ctx<'_>) -> Option<Answer> {
    let tool = cx.call.tool.as_ref()?;
    let command = cx.call.command().unwrap_or("");
    let stored = tool.helix == Some("store") || command.contains("helix store");
    if !stored && (tool.action != Action::Shell || !is_build_command(command)) {
        return None;
    }
    cx.config()?;
    let session = cx.session();
    let now = crate::sys::now_ms();
    if stored {
        if let Some(s) = session {
            state::update(s, |st| st.last_store = now);
        }
        return None;
    }
    // Once per session, and again after each new failure: a nudge on every build is noise.
    if let Some(s) = session {
        let st = State::load(s);
        if st.last_nudge != 0 && st.last_failure <= st.last_nudge {
            return None;
        }
        state::update(s, |st| st.last_nudge = now);
    }
    // Agents with one after-tool event run this through `post-tool`: log it as the nudge.
    super::inject::speaks_as(cx, "post-build");
    let text = format!(
        "helix: if this build needed a non-obvious fix (a surprising error, an ordering, version or environment gotcha), store the root cause and the fix for the team in a few lines with {}.",
        cx.store_hint()
    );
    Some(Answer::Context(text))
}

/// After any tool call, for agents that report failed and finished calls through one
/// event: a failed command goes to [`error`] (a `cat` or `rg` that failed too: Codex reads
/// through the shell), a file read or edit to [`ambient`] (their only file event with
/// context), anything else to [`post_build`]. Another tool's failure (a file that does not
/// exist) has nothing to say.
pub fn post_tool(cx: &Ctx<'_>) -> Option<Answer> {
    let action = cx.call.tool.as_ref().map(|t| t.action);
    let failed = cx.call.failure.is_some();
    match action {
        _ if failed && cx.call.command().is_some() => error(cx),
        _ if failed => None,
        Some(a) if is_file_action(a) => ambient(cx),
        _ => post_build(cx),
    }
}

pub fn pre_compact(cx: &Ctx<'_>) -> Option<Answer> {
    let session = cx.session()?;
    cx.config()?;
    let now = crate::sys::now_ms();
    state::update(session, |s| {
        s.compactions = s.compactions.saturating_add(1);
        s.last_compaction = now;
    });
    state::record_compaction(session);
    None
}

pub fn stop(cx: &Ctx<'_>) -> Option<Answer> {
    if cx.call.stop_active {
        return None;
    }
    let session = cx.session()?;
    let st = State::load(session);
    if st.reminded || !st.failure_unrecorded() {
        return None;
    }
    cx.config()?;
    state::update(session, |s| s.reminded = true);
    Some(Answer::Block(format!(
        "Before you finish: this session hit a failure and stored nothing in helix. If its root cause or fix was non-obvious and would help a teammate, store it now in a few lines with {} (topic, title, what happened, the fix). If it was trivial, just finish.",
        cx.store_hint()
    )))
}

pub fn approve_mcp(cx: &Ctx<'_>) -> Option<Answer> {
    let tool = cx.call.tool.as_ref()?;
    (tool.action == Action::Helix).then_some(Answer::Allow)
}
