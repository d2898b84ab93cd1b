//! The literal rules of the gate: a hit passes because it names what the hook saw, as
//! written (a file's name or path, a tool, a removed symbol, a phrase of a failure), when few
//! entries do; no evidence points are counted.

use super::{Signal, Verdict, scores};
use crate::hook::keywords::{Phrases, quotes};
use crate::knowledge::{Found, ProjectHit};
use helix_index_format::relevance::Evidence;
use helix_index_format::tokenize::Analyzer;

/// Ambient: a file's name (or a removed symbol, or a searched pattern) must be in at most
/// this many entries for a literal mention alone to count as being about it.
pub const MAX_NAME_DF: u64 = 3;
/// Ambient: a file's name in at most this many entries still counts for the entries whose
/// title or topic says what the file is (`tmux` for `.tmux.conf`, `tsconfig` for
/// `tsconfig.json`): tool configuration files are named by a handful of notes about the
/// tool, while an app's own `user.rb` is named in passing by notes about something else.
pub const MAX_NAMED_DF: u64 = 10;

/// Errors: the hits that quote a phrase of the failure's output (see
/// [`crate::hook::keywords::phrases`]), best first. None when more than [`MAX_NAME_DF`] do:
/// a phrase many notes show is a tool's banner, not this failure's message.
pub fn quoting(found: &Found<'_>, phrases: &Phrases) -> Vec<(usize, Verdict)> {
    few(found, Signal::Quote, |h, _| {
        quotes(h.hit.entry.body, phrases) || quotes(h.hit.entry.title, phrases)
    })
}

/// The hits of `found` that pass `test` (given the hit and its evidence), as verdicts with
/// `signal`; none when more than [`MAX_NAME_DF`] do: what many entries say is not what
/// any of them is about.
fn few(
    found: &Found<'_>,
    signal: Signal,
    test: impl Fn(&ProjectHit<'_>, &Evidence) -> bool,
) -> Vec<(usize, Verdict)> {
    let all = scores(found);
    let out: Vec<(usize, Verdict)> = (0..found.hits.len())
        .filter_map(|at| {
            let h = &found.hits[at];
            let evidence = Evidence::of(found.query_of(h), &found.stats, &all, at);
            test(h, &evidence).then_some((
                at,
                Verdict {
                    pass: true,
                    points: 0.0,
                    signal,
                    evidence,
                },
            ))
        })
        .collect();
    if out.len() as u64 > MAX_NAME_DF {
        return Vec::new();
    }
    out
}

/// Ambient: whether hit `h` names the rare term that query term 0 is (a file's whole name,
/// a removed symbol, a pattern), and how rare it is.
pub fn names_rare_term(found: &Found<'_>, h: &ProjectHit<'_>) -> Option<Verdict> {
    let query = found.query_of(h);
    let term = query.terms().first()?;
    let df = found.stats.df(&term.text);
    if h.hit.matched & 1 == 0 || df == 0 || df > MAX_NAME_DF {
        return None;
    }
    let evidence = Evidence::of(query, &found.stats, &scores(found), 0);
    Some(Verdict {
        pass: true,
        points: 0.0,
        signal: Signal::FileName,
        evidence,
    })
}

/// Ambient: whether hit `h` of a whole-name search is about the file whose name words
/// (lowercase, see [`crate::hook::keywords::name_words`]) are `words`. It must name the
/// file (query term 0); then it passes when at most [`MAX_NAME_DF`] entries do, or when at
/// most [`MAX_NAMED_DF`] do and its title or topic carries one of the words.
pub fn names_file(found: &Found<'_>, h: &ProjectHit<'_>, words: &[String]) -> Option<Verdict> {
    let query = found.query_of(h);
    let term = query.terms().first()?;
    let df = found.stats.df(&term.text);
    if h.hit.matched & 1 == 0 || df == 0 || df > MAX_NAMED_DF {
        return None;
    }
    let titled = title_says(h.hit.entry.title, h.hit.entry.topic, words);
    if !titled && df > MAX_NAME_DF {
        return None;
    }
    let evidence = Evidence::of(query, &found.stats, &scores(found), 0);
    Some(Verdict {
        pass: true,
        points: 0.0,
        signal: if titled {
            Signal::FileTitle
        } else {
            Signal::FileName
        },
        evidence,
    })
}

/// Ambient, for a source file no entry names (`flipper.rb`, `Portal.jsx`): whether hit `h`
/// of a search for its name's `words` has every one in its title, each in at most
/// [`MAX_NAMED_DF`] entries, and shows code in one of the file's `languages` (see
/// [`crate::hook::keywords::code_languages`]). A title word alone is a homonym as often as
/// not (`queue.rs` and Elixir's message queue, `jwt.go` and a Ruby note on JWTs); in the
/// file's own language it is the same subject.
pub fn titles_name_in_language(
    found: &Found<'_>,
    h: &ProjectHit<'_>,
    words: &[String],
    languages: &[&str],
) -> Option<Verdict> {
    if words.is_empty() || !shows_code_in(h.hit.entry.body, languages) {
        return None;
    }
    let query = found.query_of(h);
    let analyzer = Analyzer::for_version(query.tokenizer_version());
    let mut title: Vec<String> = Vec::new();
    analyzer.tokens(h.hit.entry.title, |t, _| title.push(t.to_string()));
    let mut every = true;
    for w in words {
        analyzer.tokens(w, |t, _| {
            let df = found.stats.df(t);
            every &= df > 0 && df <= MAX_NAMED_DF && title.iter().any(|x| x == t);
        });
    }
    every.then(|| Verdict {
        pass: true,
        points: 0.0,
        signal: Signal::NameLanguage,
        evidence: Evidence::of(query, &found.stats, &scores(found), 0),
    })
}

/// Whether `body` has a fenced code block in one of `languages` (its info string's first
/// word, any case).
fn shows_code_in(body: &str, languages: &[&str]) -> bool {
    !languages.is_empty()
        && body.lines().any(|line| {
            let line = line.trim_start();
            let info = line
                .strip_prefix("```")
                .or_else(|| line.strip_prefix("~~~"))
                .map(|rest| rest.trim_start_matches(['`', '~']).trim());
            info.and_then(|i| i.split([' ', '{', ',']).next())
                .is_some_and(|lang| languages.iter().any(|l| lang.eq_ignore_ascii_case(l)))
        })
}

/// Ambient, for a user-level configuration file (`~/.ssh/config`): whether hit `at` of a
/// search for the tool and the file's name words (`ssh config`) contains every one of them
/// and its title or topic names the tool. Such a file's name is too generic to be searched
/// alone, and its tool is in the path, not the name.
pub fn about_tool(found: &Found<'_>, at: usize, tools: &[String]) -> Option<Verdict> {
    let h = found.hits.get(at)?;
    let evidence = Evidence::of(found.query_of(h), &found.stats, &scores(found), at);
    let whole = evidence.required >= 2 && evidence.matched == evidence.required;
    (whole && title_says(h.hit.entry.title, h.hit.entry.topic, tools)).then_some(Verdict {
        pass: true,
        points: 0.0,
        signal: Signal::ToolFile,
        evidence,
    })
}

/// Ambient: the hits of a search for a project path (`src/content/config.ts`, or a folder
/// `test/mailers/previews/`) that write it out literally, at the start of a path (not
/// inside a longer name: `latest/mailers/…` is not `test/mailers/…`). None when more than
/// [`MAX_NAME_DF`] of the searched hits do: a path many entries show is an example, not
/// their subject.
pub fn writes_path(found: &Found<'_>, path: &str) -> Vec<(usize, Verdict)> {
    few(found, Signal::FilePath, |h, _| writes_out(h, path))
}

/// Ambient: whether any hit of a search for `path` writes it out, as [`writes_path`] reads
/// it: then the knowledge shows that path as an example, whatever else it shares with it.
pub fn any_writes_path(found: &Found<'_>, path: &str) -> bool {
    found.hits.iter().any(|h| writes_out(h, path))
}

/// Whether hit `h` writes out `path` in its body or title, where a path starts.
fn writes_out(h: &ProjectHit<'_>, path: &str) -> bool {
    literal_path(h.hit.entry.body, path) || literal_path(h.hit.entry.title, path)
}

/// Ambient, for a configuration file whose name nothing writes out (`honeybadger.yml`,
/// `~/.gitconfig`): the hits of a search for its name's `words` that contain all of them
/// and whose title or topic says every one. None when more than [`MAX_NAME_DF`] do: the
/// name is then a common word of titles, not one tool's.
pub fn titles_config(found: &Found<'_>, words: &[String]) -> Vec<(usize, Verdict)> {
    few(found, Signal::ConfigTitle, |h, evidence| {
        let (title, topic) = (h.hit.entry.title, h.hit.entry.topic);
        evidence.matched == evidence.required
            && words
                .iter()
                .all(|w| title_says(title, topic, std::slice::from_ref(w)))
    })
}

/// Whether `text` contains `path` where a path starts: after nothing, or after a character
/// that cannot be part of a file name (`./` and a leading `/` are fine).
fn literal_path(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(i, _)| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '@')))
    })
}

/// Whether a title or topic has one of `words` as a word (or its plural, or its singular).
pub fn title_says(title: &str, topic: &str, words: &[String]) -> bool {
    let same = |w: &str, x: &str| {
        w == x || w.strip_suffix('s') == Some(x) || x.strip_suffix('s') == Some(w)
    };
    title
        .split(|c: char| !c.is_alphanumeric())
        .chain(std::iter::once(topic))
        .filter(|w| !w.is_empty())
        .any(|w| {
            let w = w.to_lowercase();
            words.iter().any(|x| same(&w, x))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_in_a_language_is_a_fenced_block_of_it() {
        let rb = &["ruby", "rb"];
        assert!(shows_code_in(
            "Set it:\n\n```ruby\nFlipper.enable(:x)\n```\n",
            rb
        ));
        assert!(shows_code_in("  ~~~ Ruby title=x\n", rb));
        assert!(!shows_code_in("```elixir\nProcess.info(self())\n```", rb));
        assert!(!shows_code_in("I use ruby daily: `ruby -v`", rb));
        assert!(!shows_code_in("```ruby\n```", &[]));
    }

    #[test]
    fn a_path_counts_where_a_path_starts() {
        let p = "test/mailers/previews/";
        assert!(literal_path("put it in test/mailers/previews/base.rb", p));
        assert!(literal_path("`./test/mailers/previews/a.rb`", p));
        assert!(literal_path("/app/test/mailers/previews/a.rb", p));
        assert!(!literal_path("see latest/mailers/previews/a.rb", p));
        assert!(!literal_path("my-test/mailers/previews/a.rb", p));
        assert!(!literal_path("test/mailers/preview.rb", p));
    }

    #[test]
    fn titles_that_say_what_a_file_is() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(title_says("Enabling Vi Mode", "tmux", &words(&["tmux"])));
        assert!(title_says(
            "Install From Nonstandard Brewfile",
            "brew",
            &words(&["brewfile"])
        ));
        assert!(title_says(
            "Inspect Configuration Of Database Connection",
            "rails",
            &words(&["database"])
        ));
        assert!(title_says(
            "List Running Ruby Versions",
            "ruby",
            &words(&["version"])
        ));
        assert!(!title_says(
            "View The Current File In GitHub",
            "git",
            &words(&["user"])
        ));
        assert!(!title_says("Anything", "vim", &[]));
    }
}
