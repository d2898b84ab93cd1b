//! The relevance gate: which search hits a hook may inject. A hit passes only with evidence
//! that it is about this prompt, error or file; otherwise the hook says nothing.
//! docs/hooks.md explains the rules; benches/relevance.py measures them.

use crate::knowledge::{Found, ProjectHit};
use helix_index_format::relevance::Evidence;

/// Points a prompt or error hit needs (see [`points`]). Chosen on the `tune` split of
/// benches/relevance/judgements.jsonl as the lowest value that keeps everyday prompts
/// injecting anything at or under 10%.
pub const MIN_POINTS: f32 = 3.2;
/// A second or third hit is injected only when it also passes and scores at least this
/// share of the first: close runners-up, not the tail.
pub const FOLLOW_RATIO: f32 = 0.8;
/// Ambient: a file's name (or a removed symbol, or a searched pattern) must be in at most
/// this many entries for a literal mention alone to count as being about it.
pub const MAX_NAME_DF: u64 = 3;
/// Ambient: a file's name in at most this many entries still counts for the entries whose
/// title or topic says what the file is (`tmux` for `.tmux.conf`, `tsconfig` for
/// `tsconfig.json`): tool configuration files are named by a handful of notes about the
/// tool, while an app's own `user.rb` is named in passing by notes about something else.
pub const MAX_NAMED_DF: u64 = 10;

/// What let a hit through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// It stands out from the other hits.
    Separation,
    /// It covers most of the query's informative words.
    Coverage,
    /// It contains many of the query's words.
    Matched,
    /// The prompt asks a question (and the hit answers enough of it).
    Question,
    /// It names the file by its whole, rare name (ambient).
    FileName,
    /// It names the file, and its title or topic says what the file is (ambient).
    FileTitle,
    /// It names a symbol the edit removes (ambient).
    Symbol,
    /// It lists the file among its sources (ambient; needs no search).
    Source,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Separation => "separation",
            Signal::Coverage => "coverage",
            Signal::Matched => "matched-terms",
            Signal::Question => "question",
            Signal::FileName => "file-name",
            Signal::FileTitle => "file-title",
            Signal::Symbol => "symbol",
            Signal::Source => "source",
        }
    }
}

/// The gate's judgement of one hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    pub pass: bool,
    pub points: f32,
    /// The largest contribution to `points`.
    pub signal: Signal,
    pub evidence: Evidence,
}

/// Most points separation can give: a 3.4× lead. Beyond it, standing out says little more
/// (in a small knowledge base the only entry sharing a word stands out without bound).
pub const MAX_SEPARATION_POINTS: f32 = 3.0;

/// Evidence points of a prompt or error hit: separation counts one point per 1.5× lead
/// over the mean of the other top ten (at most [`MAX_SEPARATION_POINTS`]), coverage of the
/// query's idf mass up to two, each
/// matched word beyond two a quarter, each word the knowledge has never seen minus a
/// quarter (it names something of the user's own, not of the knowledge), and a question
/// two (a request for knowledge rather than for work on the code).
pub fn points(e: &Evidence, question: bool) -> (f32, Signal) {
    let separation = if e.separation.is_finite() {
        // libm's, not the C library's: a hook process then maps no libm.so (docs/benchmarks.md).
        (libm::logf(e.separation.max(1e-6)) / libm::logf(1.5)).min(MAX_SEPARATION_POINTS)
    } else {
        MAX_SEPARATION_POINTS
    };
    let parts = [
        (separation, Signal::Separation),
        (2.0 * e.coverage, Signal::Coverage),
        (0.25 * (e.matched as f32 - 2.0), Signal::Matched),
        (if question { 2.0 } else { 0.0 }, Signal::Question),
    ];
    let total = parts.iter().map(|p| p.0).sum::<f32>() - 0.25 * e.unknown as f32;
    let signal = parts
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(Signal::Separation, |p| p.1);
    (total, signal)
}

/// Judges hit `at` of `found` (a prompt or error search); `None` past the hits.
pub fn judge(found: &Found<'_>, at: usize, question: bool) -> Option<Verdict> {
    let h = found.hits.get(at)?;
    let evidence = Evidence::of(found.query_of(h), &found.stats, &scores(found), at);
    let (points, signal) = points(&evidence, question);
    Some(Verdict {
        pass: points >= MIN_POINTS,
        points,
        signal,
        evidence,
    })
}

fn scores(found: &Found<'_>) -> Vec<(f32, u32)> {
    found
        .hits
        .iter()
        .map(|h| (h.hit.score, h.hit.matched))
        .collect()
}

/// The hits of a prompt or error search that may be injected, at most `limit`, with their
/// verdicts: the first when it passes, then runners-up that pass and score within
/// [`FOLLOW_RATIO`] of it.
pub fn passing<'f, 'k>(
    found: &'f Found<'k>,
    question: bool,
    limit: usize,
) -> Vec<(&'f ProjectHit<'k>, Verdict)> {
    let mut out = Vec::new();
    let Some(first) = found.hits.first() else {
        return out;
    };
    for (at, h) in found.hits.iter().enumerate().take(limit) {
        if at > 0 && h.hit.score < FOLLOW_RATIO * first.hit.score {
            break;
        }
        let Some(v) = judge(found, at, question) else {
            break;
        };
        if !v.pass {
            if at == 0 {
                break;
            }
            continue;
        }
        out.push((h, v));
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

    fn ev(matched: u32, unknown: u32, coverage: f32, separation: f32) -> Evidence {
        Evidence {
            matched,
            required: matched + unknown + 2,
            unknown,
            coverage,
            separation,
        }
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

    #[test]
    fn points_add_up_and_name_the_largest_signal() {
        // 1.5^2 lead = 2 points, coverage 0.5 = 1, 4 matched = +0.5, no unknown.
        let (p, s) = points(&ev(4, 0, 0.5, 2.25), false);
        assert!(
            (p - 3.5).abs() < 1e-4 && s == Signal::Separation,
            "{p} {s:?}"
        );
        assert!(p >= MIN_POINTS);
        // The same hit with two unknown words and no lead fails.
        let (p, _) = points(&ev(4, 2, 0.5, 1.0), false);
        assert!(p < MIN_POINTS, "{p}");
        // A question lifts a moderately good hit over the line.
        let (p, s) = points(&ev(3, 0, 0.6, 1.3), true);
        assert!(p >= MIN_POINTS && s == Signal::Question, "{p} {s:?}");
        let (p, _) = points(&ev(3, 0, 0.6, 1.3), false);
        assert!(p < MIN_POINTS, "{p}");
        // A hit with no competitors stands out, but that alone is not enough: the only
        // entry sharing one word of a prompt about the user's own code stays out.
        let (p, s) = points(&ev(1, 5, 0.1, f32::INFINITY), false);
        assert!(p < MIN_POINTS && s == Signal::Separation, "{p} {s:?}");
        let (p, _) = points(&ev(3, 0, 0.5, f32::INFINITY), false);
        assert!(p >= MIN_POINTS, "{p}");
    }
}
