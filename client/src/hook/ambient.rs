//! `helix hook ambient` (PreToolUse on file tools): what the team knows about the file a
//! tool is about to touch. Entries that list the file among their sources; entries that
//! name it by its whole, rare name or write out its path or folder; for an edit, entries
//! that name a symbol it removes; the topics that share sources with it. The searches pass
//! a literal-mention gate (`gate::names_file`, `gate::names_rare_term`, `gate::writes_path`),
//! except the last, for a file nothing names: its path's words, under the evidence gate
//! with a higher bar (`gate::about_path`). No entry is shown twice for the same file in a
//! session.

use super::agent::is_file_action;
use super::call::{Action, Answer};
use super::ctx::Ctx;
use super::events::{Shape, entry_ref_line, hit_line, search, topic_list, with_vectors};
use super::gate::{self, Signal};
use super::inject::Injection;
use super::keywords::{
    code_languages, file_name_term, is_config_name, name_words, path_words, pattern_words,
    plain_name_words, removed_symbols, tool_names, tool_words,
};
use super::output::{self, MAX_CONTEXT_CHARS, Text};
use super::state;
use crate::knowledge::Found;
use helix_index_format::EntryRef;
use helix_index_format::relevance::SEPARATION_DEPTH;
use std::path::{Component, Path, PathBuf};

/// Hits looked at per search (the gate then keeps the literal mentions): every entry a
/// name the gate accepts can be in.
const SEARCH_DEPTH: usize = gate::MAX_NAMED_DF as usize;
/// Most entries one searching layer shows.
const LAYER_MAX: usize = 3;
/// Folders of at least this many names are specific enough to search
/// (`test/mailers/previews/`; `app/models/` is in every Rails app).
const MIN_FOLDER_DEPTH: usize = 3;

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

/// The searching layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Impact,
    Named,
    Path,
    Language,
    Config,
    Tool,
    Words,
}

/// What to look for written out in entries when nothing names the file: its project path
/// (`src/content/config.ts`: two names or more), else its folder when that is deep enough
/// (`test/mailers/previews/`).
fn path_literals(rel: &str) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let mut out = Vec::new();
    if parts.len() >= 2 {
        out.push(parts.join("/"));
    }
    if parts.len() > MIN_FOLDER_DEPTH {
        out.push(format!("{}/", parts[..parts.len() - 1].join("/")));
    }
    out
}

/// Takes the hits of one layer's search (`found`, search `s` of the hook's) that passed its
/// rule, `(hit, verdict)` in the order to show them, while the layer has fewer than
/// [`LAYER_MAX`] and the session has not seen them.
fn take_layer(
    taken: &mut Vec<(Layer, usize, usize)>,
    injection: &mut Injection<'_>,
    layer: Layer,
    s: usize,
    found: &Found<'_>,
    passed: impl IntoIterator<Item = (usize, gate::Verdict)>,
) {
    for (at, v) in passed {
        let h = &found.hits[at];
        if taken.iter().filter(|t| t.0 == layer).count() < LAYER_MAX
            && injection.take(h.project, h.hit.entry.id, h.hit.score, v.signal, 0.0)
        {
            taken.push((layer, s, at));
        }
    }
}

pub fn ambient(cx: &Ctx<'_>) -> Option<Answer> {
    let tool = cx.call.tool.as_ref().filter(|t| is_file_action(t.action))?;
    let pattern = tool.pattern.filter(|_| tool.action == Action::Search);
    let file = tool
        .file
        .as_deref()
        .filter(|f| !f.trim().is_empty() && f.len() <= 4096);
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
    let symbols = if tool.action == Action::Edit {
        removed_symbols(&tool.edits)
    } else {
        Vec::new()
    };
    let target = rel.as_deref().or(file).or(pattern).unwrap_or("");
    let mut injection = Injection::new(cx, "ambient", state::key(target));

    // 1. Entries whose sources name this file (declared, so no gate).
    let mut about: Vec<(&str, EntryRef<'_>)> = Vec::new();
    if let Some(rel) = &rel {
        about.extend(k.by_source(rel));
    }
    // Only a distinctive file name: `mod.rs` would match every module.
    if about.is_empty()
        && let Some(name) = name
        && file_name_term(name).is_some()
    {
        about.extend(k.by_file_name(name));
    }
    // Instructions for the files a glob matches (Copilot `applyTo`, Cursor `globs`).
    if let Some(rel) = &rel {
        about.extend(k.by_source_glob(rel));
    }
    about.retain(|(p, e)| injection.take(p, e.id, 0.0, Signal::Source, 0.0));
    about.truncate(4);

    // 2. Impact: entries that name a symbol this edit removes. 3. Entries that name the
    // file (or the searched pattern) by its whole, rare name. Each search is kept, with
    // the hits taken from it: (layer, search, hit).
    let mut searches: Vec<Found<'_>> = Vec::new();
    let mut taken: Vec<(Layer, usize, usize)> = Vec::new();
    let names: Vec<String> = match (name.and_then(file_name_term), pattern) {
        (Some(n), _) => vec![n],
        (None, Some(p)) => pattern_words(p),
        (None, None) => Vec::new(),
    };
    let layers = symbols
        .iter()
        .map(|s| (Layer::Impact, s.as_str()))
        .chain(names.iter().take(2).map(|n| (Layer::Named, n.as_str())));
    for (layer, query) in layers {
        let found = search(k, query, Shape::Whole, SEARCH_DEPTH);
        // What the file is, for titles: the file's name words; a symbol or pattern has none.
        let words = match layer {
            Layer::Named => name_words(query),
            Layer::Impact
            | Layer::Path
            | Layer::Language
            | Layer::Config
            | Layer::Tool
            | Layer::Words => Vec::new(),
        };
        // Entries whose title says what the file is come first, then by score.
        let mut order: Vec<(usize, gate::Verdict)> = found
            .hits
            .iter()
            .enumerate()
            .filter_map(|(at, h)| {
                let literal = match layer {
                    // The symbol as written, not only its lowercase token.
                    Layer::Impact => {
                        h.hit.entry.body.contains(query) || h.hit.entry.title.contains(query)
                    }
                    Layer::Named
                    | Layer::Path
                    | Layer::Language
                    | Layer::Config
                    | Layer::Tool
                    | Layer::Words => true,
                };
                let verdict = match layer {
                    Layer::Impact => gate::names_rare_term(&found, h).map(|mut v| {
                        v.signal = Signal::Symbol;
                        v
                    }),
                    Layer::Named => gate::names_file(&found, h, &words),
                    // Searched below, with its own rule.
                    Layer::Path | Layer::Language | Layer::Config | Layer::Tool | Layer::Words => {
                        None
                    }
                };
                literal.then_some(())?;
                verdict.map(|v| (at, v))
            })
            .collect();
        order.sort_by_key(|(at, v)| (v.signal != Signal::FileTitle, *at));
        take_layer(
            &mut taken,
            &mut injection,
            layer,
            searches.len(),
            &found,
            order,
        );
        searches.push(found);
    }
    // 4. Entries that write out the file's project path, or its deep folder's, when no
    // layer above found anything.
    let paths = match &rel {
        Some(r) if taken.is_empty() && about.is_empty() => path_literals(r),
        _ => Vec::new(),
    };
    let mut path_found: Option<&str> = None;
    // Entries that write out the path, passed or not: it is an example of theirs.
    let mut path_shown = false;
    for path in &paths {
        let found = search(k, path, Shape::All, SEARCH_DEPTH);
        path_shown |= gate::any_writes_path(&found, path);
        let passed = gate::writes_path(&found, path);
        take_layer(
            &mut taken,
            &mut injection,
            Layer::Path,
            searches.len(),
            &found,
            passed,
        );
        searches.push(found);
        if !taken.is_empty() {
            path_found = Some(path);
            break;
        }
    }
    // 5. A source file that nothing names or writes out (`config/initializers/flipper.rb`):
    // entries whose title says every word of its name and that show code in its language.
    let languages = name.map(code_languages).unwrap_or_default();
    let source_words: Vec<String> = match name {
        Some(n) if taken.is_empty() && about.is_empty() && !languages.is_empty() => name_words(n),
        _ => Vec::new(),
    };
    if !source_words.is_empty() {
        let found = search(k, &source_words.join(" "), Shape::Rare, SEARCH_DEPTH);
        let passed: Vec<(usize, gate::Verdict)> = (0..found.hits.len())
            .filter_map(|at| {
                gate::titles_name_in_language(&found, &found.hits[at], &source_words, languages)
                    .map(|v| (at, v))
            })
            .collect();
        take_layer(
            &mut taken,
            &mut injection,
            Layer::Language,
            searches.len(),
            &found,
            passed,
        );
        searches.push(found);
    }
    // 6. A configuration file that nothing names or writes out (`honeybadger.yml`,
    // `~/.gitconfig`): entries whose title or topic says every word of its name.
    let config_words: Vec<String> = match name {
        Some(n) if taken.is_empty() && about.is_empty() && is_config_name(n) => name_words(n),
        _ => Vec::new(),
    };
    if (1..=2).contains(&config_words.len()) {
        let found = search(k, &config_words.join(" "), Shape::Words, SEARCH_DEPTH);
        let passed = gate::titles_config(&found, &config_words);
        take_layer(
            &mut taken,
            &mut injection,
            Layer::Config,
            searches.len(),
            &found,
            passed,
        );
        searches.push(found);
    }
    // 7. A tool's file whose name says little: a user-level configuration file outside the
    // project (`~/.ssh/config`, `~/.config/git/ignore`), or a file in a dot-directory at
    // the project's top (`.git/info/exclude`, `.vscode/launch.json`): entries about its
    // tool that say every word of the tool and the name.
    let tools = match (&rel, file) {
        (None, Some(f)) if taken.is_empty() => tool_words(
            Path::new(f),
            std::env::var_os("HOME").as_deref().map(Path::new),
        ),
        (Some(r), _) if taken.is_empty() && r.starts_with('.') => tool_words(Path::new(r), None),
        _ => Vec::new(),
    };
    if !tools.is_empty() {
        let mut words = tools.clone();
        for w in plain_name_words(name.unwrap_or_default()) {
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let found = search(k, &words.join(" "), Shape::Words, SEARCH_DEPTH);
        // The title may name the product rather than the program (`nvim`: Neovim).
        let names = tool_names(&tools);
        let passed: Vec<(usize, gate::Verdict)> = (0..found.hits.len())
            .filter_map(|at| gate::about_tool(&found, at, &names).map(|v| (at, v)))
            .collect();
        take_layer(
            &mut taken,
            &mut injection,
            Layer::Tool,
            searches.len(),
            &found,
            passed,
        );
        searches.push(found);
    }
    // 8. A file nothing names, whose path's words (its name's and two folders') an entry
    // shares many of (`db/migrate/…_add_on_delete_cascade_to_orders.rb`, the note on adding
    // ON DELETE CASCADE): the evidence gate, with a higher bar (`gate::about_path`). Not
    // when entries write the path out as an example (`git log -p app/models/user.rb`): they
    // share every word of it and are not about it.
    let words = match file {
        Some(f) if taken.is_empty() && about.is_empty() && !path_shown => {
            path_words(rel.as_deref().unwrap_or(f))
        }
        _ => Vec::new(),
    };
    if words.len() as u32 >= gate::PATH_MIN_MATCHED {
        // When this hook asks the embedder (`HELIX_EMBED_HOOKS`; not by default), the hits'
        // cosine with the path's words counts in their points (a hit found by vector alone
        // never passes here: it needs the words).
        let query = words.join(" ");
        let found = with_vectors(
            k,
            "ambient",
            search(k, &query, Shape::Words, SEPARATION_DEPTH),
            &query,
        );
        let passed = gate::about_path(&found, LAYER_MAX);
        take_layer(
            &mut taken,
            &mut injection,
            Layer::Words,
            searches.len(),
            &found,
            passed,
        );
        searches.push(found);
    }
    let lines = |layer: Layer| -> Vec<String> {
        taken
            .iter()
            .filter(|t| t.0 == layer)
            .map(|&(_, s, at)| hit_line(k.root(), &searches[s], &searches[s].hits[at]))
            .collect()
    };
    let (impact, named, path, language, config, tool, worded) = (
        lines(Layer::Impact),
        lines(Layer::Named),
        lines(Layer::Path),
        lines(Layer::Language),
        lines(Layer::Config),
        lines(Layer::Tool),
        lines(Layer::Words),
    );

    // 9. Coupling: topics whose entries share sources with this file (once per file).
    let mut coupled = rel
        .as_deref()
        .map(|r| k.related_topics(r))
        .unwrap_or_default();
    if !coupled.is_empty() && !injection.once("coupled-topics") {
        coupled.clear();
    }

    let mut t = Text::new(MAX_CONTEXT_CHARS);
    t.line(&format!(
        "helix team knowledge for {} ({}):",
        output::compact(target, 120),
        cx.read_hint()
    ));
    if !about.is_empty() {
        t.line("About this file:");
        for (p, e) in &about {
            t.item(&entry_ref_line(k.root(), p, e));
        }
    }
    if !impact.is_empty() {
        // Impact searches come first, one per symbol, so a search's index is its symbol's.
        let mut named_symbols: Vec<&str> = taken
            .iter()
            .filter(|t| t.0 == Layer::Impact)
            .filter_map(|t| symbols.get(t.1).map(String::as_str))
            .collect();
        named_symbols.dedup();
        t.line(&format!(
            "Impact warning: this edit removes `{}`, which these entries mention:",
            named_symbols.join("`, `")
        ));
        for line in &impact {
            t.item(line);
        }
    }
    if !named.is_empty() {
        t.line("Entries that name it:");
        for line in &named {
            t.item(line);
        }
    }
    if !path.is_empty() {
        match path_found {
            Some(p) if p.ends_with('/') => t.line(&format!("Entries about its folder {p}:")),
            _ => t.line("Entries that write out its path:"),
        };
        for line in &path {
            t.item(line);
        }
    }
    if !language.is_empty() {
        t.line(&format!("Entries about {}:", source_words.join(" ")));
        for line in &language {
            t.item(line);
        }
    }
    if !config.is_empty() {
        t.line(&format!("Entries about {}:", config_words.join(" ")));
        for line in &config {
            t.item(line);
        }
    }
    if !tool.is_empty() {
        t.line(&format!("Entries about {}:", tools.join(", ")));
        for line in &tool {
            t.item(line);
        }
    }
    if !worded.is_empty() {
        t.line("Entries about what its path says:");
        for line in &worded {
            t.item(line);
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
    injection.finish(Some(target));
    Some(Answer::Context(t.as_str().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_deep_folders_are_looked_for() {
        assert_eq!(
            path_literals("src/content/config.ts"),
            ["src/content/config.ts"]
        );
        assert_eq!(
            path_literals("test/mailers/previews/order_preview.rb"),
            [
                "test/mailers/previews/order_preview.rb",
                "test/mailers/previews/"
            ]
        );
        assert!(path_literals("Cargo.toml").is_empty());
    }

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
