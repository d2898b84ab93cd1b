//! The relevance gate: which search hits a hook may inject. A hit passes only with evidence
//! that it is about this prompt, error or file; otherwise the hook says nothing. Here the
//! evidence points of prompt and error hits; in `cues` what the text says of a hit besides
//! its words; in `literal` the rules for hits that name what the hook saw. docs/hooks.md explains the rules; benches/relevance.py measures them.

mod cues;
mod literal;

pub use cues::{Cues, Seen, names_own_code, names_topic, prose_share, runs_topic};
pub use literal::{
    MAX_NAME_DF, MAX_NAMED_DF, about_tool, any_writes_path, names_file, names_rare_term, quoting,
    title_says, titles_config, titles_name_in_language, writes_path,
};

use crate::knowledge::{Found, ProjectHit};
use helix_index_format::relevance::Evidence;

/// Points a prompt or error hit needs (see [`points`]). Chosen on the `tune` and `heldout`
/// splits of benches/relevance/judgements.jsonl as the lowest value that keeps everyday
/// prompts and errors injecting anything at or under 10%.
pub const MIN_POINTS: f32 = 3.2;
/// When the first hit passes, a second or third is injected when it scores at least this
/// share of the first: the first carries the evidence that the text is about the
/// knowledge, and close runners-up are the alternatives (near-duplicates, the other half
/// of an answer), not the tail.
pub const FOLLOW_RATIO: f32 = 0.6;
/// What the searched text is, as far as the gate cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A prompt that asks a question (a request for knowledge).
    Question,
    /// A prompt that asks for work on the code (`add …`, `rename …`, `write tests …`):
    /// knowledge is rarely what it needs.
    Work,
    /// Any other prompt.
    Prompt,
    /// A failure's output.
    Error,
}

impl Form {
    /// The form of a prompt (see `keywords::is_work_request`, `keywords::is_question`).
    pub fn of_prompt(prompt: &str) -> Form {
        use super::keywords::{is_question, is_work_request};
        if is_work_request(prompt) {
            Form::Work
        } else if is_question(prompt) {
            Form::Question
        } else {
            Form::Prompt
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Form::Question => "a question",
            Form::Work => "a request for work",
            Form::Prompt => "a prompt",
            Form::Error => "an error",
        }
    }
}

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
    /// The prompt states a problem or a subject, asking neither a question nor for work.
    Statement,
    /// It shares much informative wording with the prompt.
    Mass,
    /// It is well ahead of the next hit.
    Gap,
    /// It names the file by its whole, rare name (ambient).
    FileName,
    /// It names the file, and its title or topic says what the file is (ambient).
    FileTitle,
    /// It names a symbol the edit removes (ambient).
    Symbol,
    /// It lists the file among its sources (ambient; needs no search).
    Source,
    /// The text names the hit's topic (`vim`, `postgres`): it is about that area.
    Topic,
    /// The failed command ran the tool of its topic (`psql` for `postgres/`; error).
    Tool,
    /// It is about the tool whose user-level configuration file this is (ambient).
    ToolFile,
    /// It writes out the file's path, or its folder's, in the project (ambient).
    FilePath,
    /// Its title says the words of a source file's name, and it shows code in the file's
    /// language (ambient).
    NameLanguage,
    /// Its title or topic says every word of a configuration file's name (ambient).
    ConfigTitle,
    /// It quotes a phrase of the failure's output (error).
    Quote,
    /// It shares much wording with the file's path: its name's and folders' words (ambient).
    PathWords,
    /// It is a close runner-up of a first hit that passed.
    RunnerUp,
    /// Its meaning is close to the text's: the cosine of the two sentence embeddings.
    Meaning,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Separation => "separation",
            Signal::Coverage => "coverage",
            Signal::Matched => "matched-terms",
            Signal::Question => "question",
            Signal::Statement => "statement",
            Signal::Mass => "mass",
            Signal::Gap => "gap",
            Signal::FileName => "file-name",
            Signal::FileTitle => "file-title",
            Signal::Symbol => "symbol",
            Signal::Source => "source",
            Signal::Topic => "topic",
            Signal::Tool => "tool",
            Signal::ToolFile => "tool-file",
            Signal::FilePath => "file-path",
            Signal::NameLanguage => "name-language",
            Signal::ConfigTitle => "config-title",
            Signal::Quote => "quote",
            Signal::PathWords => "path-words",
            Signal::RunnerUp => "runner-up",
            Signal::Meaning => "meaning",
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

/// Prompts: points for the lead over the next hit, `GAP_POINTS · ln(gap)` with the gap
/// counted up to [`MAX_GAP`] (a 2× lead: about two points).
pub const GAP_POINTS: f32 = 3.0;
pub const MAX_GAP: f32 = 2.0;
/// Prompts and errors: points per unit of matched idf beyond [`MASS_FLOOR`].
pub const MASS_POINTS: f32 = 0.05;
pub const MASS_FLOOR: f32 = 10.0;
/// Errors: most unknown words counted as a cost, and in the coverage's whole (see
/// [`points`]).
pub const MAX_ERROR_UNKNOWN: u32 = 2;
pub const MAX_ERROR_UNKNOWN_COVERED: u32 = 1;
/// Prompts: points when the prompt names the hit's topic (`in vim, …` for a note under
/// `vim/`). An error's output names its tool (`git`, `psql`) whatever went wrong, so errors
/// get none.
pub const TOPIC_POINTS: f32 = 1.0;
/// Errors: points when the failed command ran the tool the hit's topic is about (`psql …`
/// for a note under `postgres/`, see `keywords::FailedCommand`). Not the output's words: an
/// output names its tool whatever went wrong, and test runs name none. The largest value
/// that keeps everyday errors injecting at or under 10% over all judged cases (0.75 let
/// 14 of 138 through).
pub const TOOL_POINTS: f32 = 0.6;
/// Errors: most points a hit loses when the entry says the words it matched in its code
/// blocks rather than in its title, tags or prose: an example's names (a note on `send`
/// whose example is an `Invoice` with `tax` and a `subtotal`) are what a failure of the
/// user's own code shares with it, not what the note is about. The full loss when none of
/// the matched idf mass is in prose, none from [`PROSE_SHARE`] of it up; chosen over every
/// judged error case with [`PROSE_SHARE`] (docs/benchmarks.md, "How the gate's constants
/// were chosen").
pub const CODE_ONLY_PENALTY: f32 = 1.5;
pub const PROSE_SHARE: f32 = 0.5;
/// Prompts: points lost when the prompt names code the knowledge has never seen (a
/// `camelCase`, `PascalCase` or `snake_case` name no entry contains, see
/// [`names_own_code`]): it is about the user's own code, which team knowledge rarely is.
pub const OWN_CODE_PENALTY: f32 = 1.5;
/// Prompts: points a statement (`esc lags in vim under tmux`, `keep the mac awake for
/// 2h`: neither a question nor a request for work) gains: between a question's two and a
/// request's minus [`WORK_PENALTY`], as problem reports are mostly asking.
pub const STATEMENT_POINTS: f32 = 0.75;
/// Points a request for work loses.
pub const WORK_PENALTY: f32 = 2.0;
/// Prompts, when the search was fused with a query vector (docs/hooks.md, "Semantic
/// candidates"): a hit gains `COSINE_POINTS · (cosine − COSINE_FLOOR)`, and loses as much
/// below the floor: a hit that shares words but not meaning is weaker evidence, one that
/// shares meaning but few words stronger. Chosen on the `tune` and `heldout` splits
/// (docs/benchmarks.md, "Semantic search").
pub const COSINE_POINTS: f32 = 12.0;
pub const COSINE_FLOOR: f32 = 0.37;
/// Errors: the same, weighed apart (a failure's kept words are not a sentence).
pub const ERROR_COSINE_POINTS: f32 = 5.0;
pub const ERROR_COSINE_FLOOR: f32 = 0.5;
/// Hits found by their vector alone that the gate weighs (the best by cosine), beside the
/// lexical hits among the first `SEPARATION_DEPTH`.
pub const VECTOR_CANDIDATES: usize = 5;

/// The cosine's points and floor for prompts and for errors: the constants above, or
/// `HELIX_GATE_COSINE=points,floor[,error points,error floor]` for the benchmark that
/// chooses them (benches/relevance.py `--cosine`).
fn cosine_weights(error: bool) -> (f32, f32) {
    static W: std::sync::OnceLock<[(f32, f32); 2]> = std::sync::OnceLock::new();
    let w = W.get_or_init(|| {
        let built_in = [
            (COSINE_POINTS, COSINE_FLOOR),
            (ERROR_COSINE_POINTS, ERROR_COSINE_FLOOR),
        ];
        let Ok(v) = std::env::var("HELIX_GATE_COSINE") else {
            return built_in;
        };
        let n: Vec<f32> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        match n[..] {
            [p, f] => [(p, f), (p, f)],
            [p, f, ep, ef] => [(p, f), (ep, ef)],
            _ => built_in,
        }
    });
    w[usize::from(error)]
}

/// Evidence points of a prompt or error hit: separation counts one point per 1.5× lead
/// over the mean of the other top ten (at most [`MAX_SEPARATION_POINTS`]), coverage of the
/// query's idf mass up to two, each matched word beyond two a quarter, the matched idf
/// beyond [`MASS_FLOOR`] (much shared wording, whatever the text's length), each word the
/// knowledge has never seen minus a quarter (it names something of the user's own, not of
/// the knowledge; in an error at most [`MAX_ERROR_UNKNOWN`] count). Prompts also count a
/// question two (a request for knowledge), a request for work minus [`WORK_PENALTY`], a
/// lead over the next hit (a clearly best entry, even when the rest are not far behind on
/// average), [`TOPIC_POINTS`] when the prompt names the hit's topic and minus
/// [`OWN_CODE_PENALTY`] when it names code the knowledge has never seen; errors
/// [`TOOL_POINTS`] when the failed command ran the topic's tool ([`Cues`]).
pub fn points(e: &Evidence, form: Form, cues: Cues) -> (f32, Signal) {
    let separation = if e.separation.is_finite() {
        // libm's, not the C library's: a hook process then maps no libm.so (docs/benchmarks.md).
        (libm::logf(e.separation.max(1e-6)) / libm::logf(1.5)).min(MAX_SEPARATION_POINTS)
    } else {
        MAX_SEPARATION_POINTS
    };
    let prompt = form != Form::Error;
    // In an error, words no entry has are mostly the tools' own (`custom`, `notfound`,
    // `errno`, `linking`), not names of the user's code as in a prompt: at most
    // MAX_ERROR_UNKNOWN of them cost, and MAX_ERROR_UNKNOWN_COVERED count in the coverage's
    // whole (an unknown word weighs the most idf: two of them halve a two-word match).
    let unknown = if prompt {
        e.unknown
    } else {
        e.unknown.min(MAX_ERROR_UNKNOWN)
    };
    let coverage = if prompt {
        e.coverage
    } else {
        let whole = e.known_mass + unknown.min(MAX_ERROR_UNKNOWN_COVERED) as f32 * e.unknown_idf;
        if whole > 0.0 {
            (e.mass / whole).min(1.0)
        } else {
            0.0
        }
    };
    let gap = if prompt && e.gap > 0.0 {
        GAP_POINTS * libm::logf(e.gap.min(MAX_GAP))
    } else {
        0.0
    };
    // Prompts and errors alike: a failure that shares much informative wording with an
    // entry (`block supersedes default value argument`) is about it, whatever else the
    // output says.
    let mass = MASS_POINTS * (e.mass - MASS_FLOOR).max(0.0);
    let parts = [
        (separation, Signal::Separation),
        (2.0 * coverage, Signal::Coverage),
        (0.25 * (e.matched as f32 - 2.0), Signal::Matched),
        (
            if form == Form::Question { 2.0 } else { 0.0 },
            Signal::Question,
        ),
        (
            if form == Form::Prompt {
                STATEMENT_POINTS
            } else {
                0.0
            },
            Signal::Statement,
        ),
        (gap, Signal::Gap),
        (mass, Signal::Mass),
        (
            if cues.topic && prompt {
                TOPIC_POINTS
            } else {
                0.0
            },
            Signal::Topic,
        ),
        (
            if cues.tool && !prompt {
                TOOL_POINTS
            } else {
                0.0
            },
            Signal::Tool,
        ),
        (
            cues.cosine.map_or(0.0, |c| {
                let (points, floor) = cosine_weights(!prompt);
                points * (c - floor)
            }),
            Signal::Meaning,
        ),
    ];
    let penalty = if form == Form::Work {
        WORK_PENALTY
    } else {
        0.0
    } + if cues.own_code && prompt {
        OWN_CODE_PENALTY
    } else {
        0.0
    } + match cues.prose {
        Some(share) if !prompt => {
            CODE_ONLY_PENALTY * ((PROSE_SHARE - share).max(0.0) / PROSE_SHARE)
        }
        _ => 0.0,
    };

    let total = parts.iter().map(|p| p.0).sum::<f32>() - 0.25 * unknown as f32 - penalty;
    let signal = parts
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(Signal::Separation, |p| p.1);
    (total, signal)
}

/// Judges hit `at` of `found` (a prompt or error search); `None` past the hits.
pub fn judge(found: &Found<'_>, at: usize, form: Form, seen: Seen<'_>) -> Option<Verdict> {
    let h = found.hits.get(at)?;
    let query = found.query_of(h);
    let mut evidence = Evidence::of(query, &found.stats, &scores(found), at);
    if !h.lexical() {
        // Found by its vector alone: no lead over the lexical hits, nor behind them.
        evidence.separation = 1.0;
        evidence.gap = 0.0;
    }
    let cues = Cues {
        topic: names_topic(query, h.hit.entry.topic),
        own_code: seen.own_code,
        tool: runs_topic(seen.tools, h.hit.entry.topic),
        prose: seen.failure.then(|| prose_share(query, &found.stats, h)),
        cosine: h.cosine,
    };
    let (points, signal) = points(&evidence, form, cues);
    Some(Verdict {
        pass: points >= MIN_POINTS,
        points,
        signal,
        evidence,
    })
}

/// Each hit's score and matched-term mask, as [`Evidence::of`] takes them.
pub(super) fn scores(found: &Found<'_>) -> Vec<(f32, u32)> {
    found
        .hits
        .iter()
        .map(|h| (h.hit.score, h.hit.matched))
        .collect()
}

/// The hits of a prompt or error search that may be injected, at most `limit`, with their
/// verdicts: the first when it passes, then the runners-up that score within
/// [`FOLLOW_RATIO`] of it (signal [`Signal::RunnerUp`] unless they pass on their own).
pub fn passing<'f, 'k>(
    found: &'f Found<'k>,
    form: Form,
    seen: Seen<'_>,
    limit: usize,
) -> Vec<(&'f ProjectHit<'k>, Verdict)> {
    if found.hits.iter().any(|h| h.cosine.is_some()) {
        return passing_by_meaning(found, form, seen, limit);
    }
    let mut out = Vec::new();
    let Some(first) = found.hits.first() else {
        return out;
    };
    for (at, h) in found.hits.iter().enumerate().take(limit) {
        if at > 0 && h.hit.score < FOLLOW_RATIO * first.hit.score {
            break;
        }
        let Some(mut v) = judge(found, at, form, seen) else {
            break;
        };
        if !v.pass {
            if at == 0 {
                break;
            }
            v.signal = Signal::RunnerUp;
        }
        out.push((h, v));
    }
    out
}

/// [`passing`] for a search fused with a query vector: the lexical hits among the first
/// `SEPARATION_DEPTH` and the best [`VECTOR_CANDIDATES`] found by vector alone, each judged
/// with its cosine, best points first. The best must pass; then each that passes on its
/// own, or a lexical runner-up within [`FOLLOW_RATIO`] of a lexical first's score.
fn passing_by_meaning<'f, 'k>(
    found: &'f Found<'k>,
    form: Form,
    seen: Seen<'_>,
    limit: usize,
) -> Vec<(&'f ProjectHit<'k>, Verdict)> {
    use helix_index_format::relevance::SEPARATION_DEPTH;
    let mut judged: Vec<(usize, Verdict)> = Vec::new();
    let mut vector_only = 0;
    for (at, h) in found.hits.iter().enumerate() {
        if h.lexical() {
            if at >= SEPARATION_DEPTH {
                continue;
            }
        } else if vector_only == VECTOR_CANDIDATES {
            break;
        } else {
            vector_only += 1;
        }
        if let Some(v) = judge(found, at, form, seen) {
            judged.push((at, v));
        }
    }
    judged.sort_by(|a, b| b.1.points.total_cmp(&a.1.points).then(a.0.cmp(&b.0)));
    let mut out = Vec::new();
    let Some(&(first_at, first)) = judged.first().filter(|(_, v)| v.pass) else {
        return out;
    };
    let first_score = found.hits[first_at].hit.score;
    out.push((&found.hits[first_at], first));
    for &(at, mut v) in &judged[1..] {
        if out.len() >= limit {
            break;
        }
        let h = &found.hits[at];
        if !v.pass {
            if !(h.lexical() && first_score > 0.0 && h.hit.score >= FOLLOW_RATIO * first_score) {
                continue;
            }
            v.signal = Signal::RunnerUp;
        }
        out.push((h, v));
    }
    out
}

/// Ambient: points the first hit of a search for a path's words ([`about_path`]) needs,
/// more than [`MIN_POINTS`]: a path is not written to be searched, and its words are the
/// project's own as often as the knowledge's.
pub const PATH_MIN_POINTS: f32 = 4.0;
/// Ambient: path words the first hit must contain: one or two (`Cargo.toml`,
/// `docs/architecture.md`, `app/serializers/invoice_serializer.rb`) say what any project
/// has, not what this work is about.
pub const PATH_MIN_MATCHED: u32 = 3;

/// Ambient, for a file nothing names: the hits of a search for its path's words
/// (`keywords::path_words`) to show, the first when it has [`PATH_MIN_MATCHED`] of them and
/// [`PATH_MIN_POINTS`] as an error's hit would (unknown words are the project's own names),
/// then the runners-up within [`FOLLOW_RATIO`] of its score.
pub fn about_path(found: &Found<'_>, limit: usize) -> Vec<(usize, Verdict)> {
    let mut out = Vec::new();
    let Some(first) = found.hits.first() else {
        return out;
    };
    for (at, h) in found.hits.iter().enumerate().take(limit) {
        if at > 0 && h.hit.score < FOLLOW_RATIO * first.hit.score {
            break;
        }
        let Some(mut v) = judge(found, at, Form::Error, Seen::default()) else {
            break;
        };
        if at == 0 {
            if v.points < PATH_MIN_POINTS || v.evidence.matched < PATH_MIN_MATCHED {
                break;
            }
            v.signal = Signal::PathWords;
        } else {
            v.signal = Signal::RunnerUp;
        }
        v.pass = true;
        out.push((at, v));
    }
    out
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
            // An error's coverage (known words, at most two unknown) is `coverage` too.
            known_mass: 1.0,
            unknown_idf: 0.0,
            separation,
            mass: coverage,
            gap: 1.0,
        }
    }

    #[test]
    fn cues_move_prompts_not_errors() {
        let e = ev(4, 0, 0.5, 1.5);
        let at = |form, topic, own_code, tool| {
            points(
                &e,
                form,
                Cues {
                    topic,
                    own_code,
                    tool,
                    prose: None,
                    cosine: None,
                },
            )
            .0
        };
        let plain = at(Form::Prompt, false, false, false);
        assert!((at(Form::Prompt, true, false, false) - plain - TOPIC_POINTS).abs() < 1e-4);
        assert!((plain - at(Form::Prompt, false, true, false) - OWN_CODE_PENALTY).abs() < 1e-4);
        assert_eq!(at(Form::Prompt, false, false, true), plain);
        let error = at(Form::Error, false, false, false);
        assert_eq!(at(Form::Error, true, true, false), error);
        assert!((at(Form::Error, false, false, true) - error - TOOL_POINTS).abs() < 1e-4);
    }

    #[test]
    fn a_failure_met_in_an_entrys_code_only_loses_points() {
        let e = ev(4, 0, 0.5, 1.5);
        let at = |form, prose| {
            points(
                &e,
                form,
                Cues {
                    prose,
                    ..Cues::default()
                },
            )
            .0
        };
        let plain = at(Form::Error, None);
        assert!((plain - at(Form::Error, Some(0.0)) - CODE_ONLY_PENALTY).abs() < 1e-4);
        assert!(
            (plain - at(Form::Error, Some(PROSE_SHARE / 2.0)) - CODE_ONLY_PENALTY / 2.0).abs()
                < 1e-4
        );
        assert_eq!(at(Form::Error, Some(PROSE_SHARE)), plain);
        assert_eq!(at(Form::Error, Some(1.0)), plain);
        // Prompts are not weighed so.
        assert_eq!(at(Form::Prompt, Some(0.0)), at(Form::Prompt, None));
    }

    #[test]
    fn an_errors_unknown_words_do_not_dilute_its_coverage() {
        // `error: linking with cc failed / = note: ld: cannot find -lssl` against the one
        // entry on `cannot find -lssl`: `linking`, `cc` and `ld` are in no entry.
        // BM25 idf in three entries: 0.98 for a word one entry has, 2.08 for an unknown one.
        let e = Evidence {
            mass: 1.96,
            known_mass: 1.96,
            unknown_idf: 2.08,
            ..ev(2, 3, 1.96 / 8.2, f32::INFINITY)
        };
        assert!(points(&e, Form::Error, Cues::default()).0 >= MIN_POINTS);
        // The same evidence in a prompt (its form aside): the unknown words are the user's
        // own names.
        assert!(
            points(&e, Form::Prompt, Cues::default()).0 - STATEMENT_POINTS
                < points(&e, Form::Error, Cues::default()).0
        );
        // An unrelated failure sharing one word with an entry among a dozen it has not
        // seen stays out, however small the knowledge base.
        let e = Evidence {
            mass: 0.98,
            known_mass: 2.94,
            unknown_idf: 2.08,
            ..ev(1, 12, 0.98 / 27.9, f32::INFINITY)
        };
        assert!(points(&e, Form::Error, Cues::default()).0 < MIN_POINTS);
    }

    #[test]
    fn points_add_up_and_name_the_largest_signal() {
        // 1.5^2 lead = 2 points, coverage 0.5 = 1, 4 matched = +0.5, no unknown, a
        // statement +0.75.
        let (p, s) = points(&ev(4, 0, 0.5, 2.25), Form::Prompt, Cues::default());
        assert!(
            (p - 3.5 - STATEMENT_POINTS).abs() < 1e-4 && s == Signal::Separation,
            "{p} {s:?}"
        );
        assert!(p >= MIN_POINTS);
        // The same hit with two unknown words and no lead fails.
        let (p, _) = points(&ev(4, 2, 0.5, 1.0), Form::Prompt, Cues::default());
        assert!(p < MIN_POINTS, "{p}");
        // A question lifts a moderately good hit over the line.
        let (p, s) = points(&ev(3, 0, 0.6, 1.3), Form::Question, Cues::default());
        assert!(p >= MIN_POINTS && s == Signal::Question, "{p} {s:?}");
        let (p, _) = points(&ev(3, 0, 0.6, 1.3), Form::Prompt, Cues::default());
        assert!(p < MIN_POINTS, "{p}");
        // A hit with no competitors stands out, but that alone is not enough: the only
        // entry sharing one word of a prompt about the user's own code stays out.
        let (p, s) = points(&ev(1, 5, 0.1, f32::INFINITY), Form::Prompt, Cues::default());
        assert!(p < MIN_POINTS && s == Signal::Separation, "{p} {s:?}");
        let (p, _) = points(&ev(3, 0, 0.5, f32::INFINITY), Form::Prompt, Cues::default());
        assert!(p >= MIN_POINTS, "{p}");
    }

    #[test]
    fn a_clear_first_place_counts_for_prompts_only_shared_wording_for_both() {
        let mut e = ev(4, 0, 0.5, 1.3);
        let (flat, _) = points(&e, Form::Prompt, Cues::default());
        assert!(flat < MIN_POINTS, "{flat}");
        // 1.8× the next hit: 3·ln 1.8 ≈ 1.76 more points.
        e.gap = 1.8;
        let (ahead, s) = points(&e, Form::Prompt, Cues::default());
        assert!(
            (ahead - flat - 3.0 * 1.8f32.ln()).abs() < 1e-3,
            "{ahead} {flat}"
        );
        assert!(ahead >= MIN_POINTS && s == Signal::Gap, "{ahead} {s:?}");
        // The gap counts up to 2×.
        e.gap = f32::INFINITY;
        let (far, _) = points(&e, Form::Prompt, Cues::default());
        assert!((far - flat - 3.0 * 2f32.ln()).abs() < 1e-3, "{far}");
        // 30 units of matched idf: 20 beyond the floor, one point.
        e.gap = 1.0;
        e.mass = 30.0;
        e.known_mass = 60.0; // the same coverage, 0.5, for an error
        let (rich, _) = points(&e, Form::Prompt, Cues::default());
        assert!((rich - flat - 1.0).abs() < 1e-3, "{rich} {flat}");
        // Errors count the shared wording, not the gap (nor a statement's form).
        e.gap = 1.8;
        let (error, _) = points(&e, Form::Error, Cues::default());
        assert!(
            (error - (rich - STATEMENT_POINTS)).abs() < 1e-4,
            "{error} {rich}"
        );
        // An error's unknown words cost at most half a point; a prompt's each a quarter.
        e.unknown = 6;
        let (error6, _) = points(&e, Form::Error, Cues::default());
        assert!((error - error6 - 0.5).abs() < 1e-4, "{error} {error6}");
        let (prompt6, _) = points(&e, Form::Prompt, Cues::default());
        e.unknown = 0;
        let (prompt0, _) = points(&e, Form::Prompt, Cues::default());
        assert!(
            (prompt0 - prompt6 - 1.5).abs() < 1e-4,
            "{prompt6} {prompt0}"
        );
        // A request for work loses two points, a statement gains three quarters, a question
        // gains two.
        let at = |form| points(&e, form, Cues::default()).0;
        assert!((at(Form::Prompt) - at(Form::Work) - WORK_PENALTY - STATEMENT_POINTS).abs() < 1e-4);
        assert!((at(Form::Question) - at(Form::Prompt) - 2.0 + STATEMENT_POINTS).abs() < 1e-4);
    }
}
