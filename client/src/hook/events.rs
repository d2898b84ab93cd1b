//! The nine hook handlers (`table::HOOKS` lists them). Each takes the call's context and
//! returns what to print (`None`: print nothing). They never fail: every problem means "no
//! output".

use super::ctx::Ctx;
use super::fresh;
use super::keywords::{
    error_terms, error_text, is_build_command, path_stem, pattern_words, prompt_terms,
    removed_symbols,
};
use super::output::{self, MAX_CONTEXT_CHARS, Text, body_excerpt, entry_line};
use super::state::{self, State};
use super::tools;
use crate::knowledge::{Knowledge, ProjectHit};
use helix_index_format::{EntryRef, Mode, SearchOptions};
use std::path::{Component, Path, PathBuf};

/// How to read a whole entry, said once in every header.
const READ_HINT: &str = "`helix read <project:id>` shows a whole entry";

fn hit_line(h: &ProjectHit<'_>) -> String {
    let e = &h.hit.entry;
    let snippet = if h.hit.snippet.trim().is_empty() {
        body_excerpt(e.body, 160)
    } else {
        h.hit.snippet.clone()
    };
    entry_line(h.project, e.id, e.topic, e.date, e.title, &snippet)
}

fn entry_ref_line(project: &str, e: &EntryRef<'_>) -> String {
    entry_line(
        project,
        e.id,
        e.topic,
        e.date,
        e.title,
        &body_excerpt(e.body, 160),
    )
}

fn search<'k>(k: &'k Knowledge, query: &str, mode: Mode, limit: usize) -> Vec<ProjectHit<'k>> {
    if query.trim().is_empty() {
        return Vec::new();
    }
    let opts = SearchOptions {
        limit,
        mode,
        now: Some(crate::sys::now_secs()),
        ..SearchOptions::default()
    };
    k.search(query, &opts)
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

fn topic_list(topics: &[(String, u32)], max: usize) -> String {
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

pub fn session_start(cx: &Ctx<'_>) -> Option<String> {
    let cfg = cx.config()?;
    state::prune();
    super::once::prune();
    let search = cx.tools().search_hint();
    let syncing = fresh::maybe_sync(cfg);
    let k = cx.knowledge()?;
    let event = cx.event_name();
    if k.sources().is_empty() {
        if !syncing {
            return None;
        }
        let text = format!(
            "helix: no team knowledge cached yet for {}; a background `helix sync` has started. Later, {search}.",
            cfg.projects.join(", ")
        );
        return Some(output::context(event, &text));
    }
    // The prompt hooks that follow read the dictionary and postings: have them paged in
    // (a no-op when they already are).
    k.prefetch();
    let topics = topic_counts(k);
    let compact = cx.input.str("source") == Some("compact");
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge: {} entries in {} topics ({}). Before guessing at a build, tooling or design question, {search}; {READ_HINT}. Store non-obvious findings with {}.",
        k.entry_count(),
        topics.len(),
        project_names(k),
        cx.tools().store_hint()
    ));
    if compact {
        t.item(&format!("All topics: {}", topic_list(&topics, usize::MAX)));
    } else if !topics.is_empty() {
        t.item(&format!("Top topics: {}", topic_list(&topics, 10)));
    }
    Some(output::context(event, t.as_str()))
}

pub fn subagent_start(cx: &Ctx<'_>) -> Option<String> {
    let k = cx.knowledge()?;
    if k.sources().is_empty() {
        return None;
    }
    let topics = topic_counts(k);
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge ({} entries, {}): before guessing, {}; {READ_HINT}.",
        k.entry_count(),
        project_names(k),
        cx.tools().search_hint()
    ));
    if !topics.is_empty() {
        t.item(&format!("Topics: {}", topic_list(&topics, 40)));
    }
    Some(output::context(cx.event_name(), t.as_str()))
}

fn hits_text(header: &str, hits: &[ProjectHit<'_>]) -> Option<String> {
    if hits.is_empty() {
        return None;
    }
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(header);
    for h in hits {
        t.item(&hit_line(h));
    }
    t.has_content.then(|| t.as_str().to_string())
}

pub fn prompt(cx: &Ctx<'_>) -> Option<String> {
    let terms = prompt_terms(cx.input.str("prompt")?);
    if terms.is_empty() {
        return None;
    }
    let k = cx.knowledge()?;
    let hits = search(k, &terms.join(" "), Mode::Or, 3);
    let text = hits_text(
        &format!("helix team knowledge that may apply to this prompt ({READ_HINT}):"),
        &hits,
    )?;
    Some(output::context(cx.event_name(), &text))
}

pub fn error(cx: &Ctx<'_>) -> Option<String> {
    if cx.input.flag("is_interrupt") {
        return None;
    }
    let raw = cx.input.str("error")?;
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
    let terms = error_terms(&text);
    if terms.is_empty() {
        return None;
    }
    let hits = search(k, &terms.join(" "), Mode::Or, 3);
    let text = hits_text(
        &format!("helix: the team has knowledge matching this error ({READ_HINT}):"),
        &hits,
    )?;
    Some(output::context(cx.event_name(), &text))
}

pub fn post_build(cx: &Ctx<'_>) -> Option<String> {
    let tool = cx.input.str("tool_name").unwrap_or("Bash");
    let command = cx.input.tool_str("command").unwrap_or("");
    let stored = (tools::is_helix_tool(tool) && tool.ends_with("__store"))
        || command.contains("helix store");
    if !stored && (tool != "Bash" || !is_build_command(command)) {
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
    let text = format!(
        "helix: if this build needed a non-obvious fix (a surprising error, an ordering, version or environment gotcha), store the root cause and the fix for the team in a few lines with {}.",
        cx.tools().store_hint()
    );
    Some(output::context(cx.event_name(), &text))
}

pub fn pre_compact(cx: &Ctx<'_>) -> Option<String> {
    let session = cx.session()?;
    cx.config()?;
    let now = crate::sys::now_ms();
    state::update(session, |s| {
        s.compactions = s.compactions.saturating_add(1);
        s.last_compaction = now;
    });
    None
}

pub fn stop(cx: &Ctx<'_>) -> Option<String> {
    if cx.input.flag("stop_hook_active") {
        return None;
    }
    let session = cx.session()?;
    let st = State::load(session);
    if st.reminded || !st.failure_unrecorded() {
        return None;
    }
    cx.config()?;
    state::update(session, |s| s.reminded = true);
    Some(output::block(&format!(
        "Before you finish: this session hit a failure and stored nothing in helix. If its root cause or fix was non-obvious and would help a teammate, store it now in a few lines with {} (topic, title, what happened, the fix). If it was trivial, just finish.",
        cx.tools().store_hint()
    )))
}

pub fn approve_mcp(cx: &Ctx<'_>) -> Option<String> {
    let tool = cx.input.str("tool_name")?;
    tools::is_helix_tool(tool).then(output::allow_permission)
}

/// Removes `.` and `..` components without touching the filesystem.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `file` relative to the project root, with `/` separators.
fn repo_rel(root: &Path, cwd: &Path, file: &str) -> Option<String> {
    let p = Path::new(file);
    let abs = normalize(&if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    });
    let rel = match abs.strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => {
            // The root may be reached through a symlink (macOS /tmp, home dirs).
            let real_root = root.canonicalize().ok()?;
            let real = abs
                .parent()
                .and_then(|d| d.canonicalize().ok())?
                .join(abs.file_name()?);
            real.strip_prefix(&real_root).ok()?.to_path_buf()
        }
    };
    let s = rel.to_str()?.to_string();
    (!s.is_empty()).then_some(s)
}

pub fn ambient(cx: &Ctx<'_>) -> Option<String> {
    let input = cx.input;
    let tool = input.str("tool_name").unwrap_or("");
    let file = input
        .tool_str("file_path")
        .or_else(|| input.tool_str("notebook_path"))
        .or_else(|| input.tool_str("path"));
    let pattern = if matches!(tool, "Glob" | "Grep") {
        input.tool_str("pattern")
    } else {
        None
    };
    let file = file.filter(|f| !f.trim().is_empty() && f.len() <= 4096);
    if file.is_none() && pattern.is_none() {
        return None;
    }
    let k = cx.knowledge()?;
    let cwd = cx.cwd()?;
    if k.sources().is_empty() {
        return None;
    }
    let rel = file.and_then(|f| repo_rel(k.root(), cwd, f));
    let name = file
        .and_then(|f| Path::new(f).file_name())
        .and_then(|n| n.to_str());
    let stem = file.and_then(path_stem);
    let symbols = if matches!(tool, "Edit" | "MultiEdit") {
        removed_symbols(&input.edits())
    } else {
        Vec::new()
    };
    let mut stem_terms: Vec<String> = stem.iter().cloned().collect();
    stem_terms.extend(pattern.map(pattern_words).unwrap_or_default());

    let mut seen: Vec<(&str, &str)> = Vec::new();

    // 1. Entries whose sources name this file.
    let mut about: Vec<(&str, EntryRef<'_>)> = Vec::new();
    if let Some(rel) = &rel {
        about.extend(k.by_source(rel));
    }
    // Only a distinctive file name: `mod.rs` would match every module.
    if about.is_empty()
        && let (Some(name), Some(stem)) = (name, &stem)
        && name.starts_with(stem.as_str())
    {
        about.extend(k.by_file_name(name));
    }
    about.retain(|(p, e)| {
        let new = !seen.contains(&(*p, e.id));
        if new {
            seen.push((p, e.id));
        }
        new
    });
    about.truncate(4);

    // 5. Impact: entries that mention a symbol this edit removes, literally.
    // A symbol is queried as its whole-identifier token (`merge_base` → `mergebase`): the
    // tokenizer indexes that form too, and its posting list is short, unlike `merge`/`base`.
    let whole = |sym: &str| -> String {
        sym.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let mut impact: Vec<(String, ProjectHit<'_>)> = Vec::new();
    for sym in &symbols {
        for h in search(k, &whole(sym), Mode::Or, 5) {
            let e = &h.hit.entry;
            if impact.len() < 3
                && (e.body.contains(sym.as_str()) || e.title.contains(sym.as_str()))
                && !seen.contains(&(h.project, e.id))
            {
                seen.push((h.project, e.id));
                impact.push((sym.clone(), h));
            }
        }
    }

    // 2. OR search on the stem plus removed symbols; 3. global BM25 on the stem.
    let mut related: Vec<ProjectHit<'_>> = Vec::new();
    let mut or_terms = stem_terms.clone();
    or_terms.extend(symbols.iter().map(|s| whole(s)));
    let mut layers = vec![(or_terms.join(" "), Mode::Or)];
    // With one term and no symbols, layer 3 would repeat layer 2's query exactly.
    if or_terms.len() > 1 {
        layers.push((stem_terms.join(" "), Mode::AndThenOr));
    }
    for (query, mode) in &layers {
        for h in search(k, query, *mode, 3) {
            if related.len() < 4 && !seen.contains(&(h.project, h.hit.entry.id)) {
                seen.push((h.project, h.hit.entry.id));
                related.push(h);
            }
        }
    }

    // 4. Coupling: topics whose entries share sources with this file.
    let coupled = rel
        .as_deref()
        .map(|r| k.related_topics(r))
        .unwrap_or_default();

    let target = rel.as_deref().or(file).or(pattern).unwrap_or("");
    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge for {} ({READ_HINT}):",
        output::compact(target, 120)
    ));
    if !about.is_empty() {
        t.line("About this file:");
        for (p, e) in &about {
            t.item(&entry_ref_line(p, e));
        }
    }
    if !impact.is_empty() {
        let mut names: Vec<&str> = impact.iter().map(|(s, _)| s.as_str()).collect();
        names.dedup();
        t.line(&format!(
            "Impact warning: this edit removes `{}`, which these entries mention:",
            names.join("`, `")
        ));
        for (_, h) in &impact {
            t.item(&hit_line(h));
        }
    }
    if !related.is_empty() {
        t.line("Related:");
        for h in &related {
            t.item(&hit_line(h));
        }
    }
    if !coupled.is_empty() {
        let mut topics: Vec<(String, u32)> = Vec::new();
        for (_, tc) in &coupled {
            match topics.iter_mut().find(|(n, _)| n == tc.topic) {
                Some(slot) => slot.1 += tc.count,
                None => topics.push((tc.topic.to_string(), tc.count)),
            }
        }
        t.item(&format!(
            "Topics sharing sources with this file: {}",
            topic_list(&topics, 6)
        ));
    }
    if !t.has_content {
        return None;
    }
    Some(output::context(cx.event_name(), t.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let root = Path::new("/r");
        assert_eq!(
            repo_rel(root, Path::new("/r/sub"), "../src/a.rs").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            repo_rel(root, Path::new("/x"), "/r/src/./b.rs").as_deref(),
            Some("src/b.rs")
        );
    }
}
