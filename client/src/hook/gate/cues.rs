//! What a hook saw besides the searched words, and what it says of each hit: the topic a
//! prompt names, the tool a failed command ran, code no entry has, and how much of a
//! failure's match an entry says outside its code blocks. `points` in `mod.rs` weighs them.

use crate::knowledge::{Found, ProjectHit};
use helix_index_format::tokenize::Analyzer;
use helix_index_format::{Query, Stats, TokenKind};

/// What a hook saw besides the searched words, the same for every hit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen<'a> {
    /// The prompt names code no searched entry contains ([`names_own_code`]).
    pub own_code: bool,
    /// The tools the failed command ran (`keywords::FailedCommand`).
    pub tools: &'a [String],
    /// The text is a failure's output (the error hook): a hit met in its code blocks rather
    /// than its prose weighs less ([`super::CODE_ONLY_PENALTY`]).
    pub failure: bool,
}

/// What the text says of one hit besides its words' evidence.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cues {
    /// The prompt names the hit's topic ([`names_topic`]); prompts only.
    pub topic: bool,
    /// The prompt names code no searched entry contains ([`names_own_code`]); prompts only.
    pub own_code: bool,
    /// The failed command ran the tool of the hit's topic ([`runs_topic`]); errors only.
    pub tool: bool,
    /// The share of the hit's matched idf mass its title, tags or prose say
    /// ([`prose_share`]); weighed for failures only ([`Seen::failure`]).
    pub prose: Option<f32>,
    /// The cosine of the hit's vector with the query's, when the search was fused with
    /// the warm embedder's query vector ([`super::COSINE_POINTS`]).
    pub cosine: Option<f32>,
}

/// The share of hit `h`'s matched idf mass (terms of `query`) that its title, tags or prose
/// outside fenced code blocks say; 1 when it matched nothing.
pub fn prose_share(query: &Query, stats: &Stats, h: &ProjectHit<'_>) -> f32 {
    let matched: Vec<(&str, f32)> = query
        .terms()
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < 32 && h.hit.matched & (1 << i) != 0)
        .map(|(_, t)| (t.text.as_str(), stats.idf(&t.text)))
        .collect();
    let total: f32 = matched.iter().map(|m| m.1).sum();
    if total <= 0.0 {
        return 1.0;
    }
    let mut said = vec![false; matched.len()];
    let analyzer = Analyzer::for_version(query.tokenizer_version());
    let mut read = |text: &str| {
        analyzer.tokens(text, |t, _| {
            if let Some(at) = matched.iter().position(|m| m.0 == t) {
                said[at] = true;
            }
        })
    };
    read(h.hit.entry.title);
    for tag in &h.hit.entry.tags {
        read(tag);
    }
    let mut fenced = false;
    for line in h.hit.entry.body.lines() {
        let l = line.trim_start();
        if l.starts_with("```") || l.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced {
            read(line);
        }
    }
    let prose: f32 = matched
        .iter()
        .zip(&said)
        .filter(|(_, s)| **s)
        .map(|(m, _)| m.1)
        .sum();
    prose / total
}

/// Whether a required term of `query` is the first word of `topic` (`react` for
/// `react-testing-library`), as the query's tokenizer reads it.
pub fn names_topic(query: &Query, topic: &str) -> bool {
    let mut named = false;
    Analyzer::for_version(query.tokenizer_version()).spans_until(topic, |t, kind, _| {
        // A compound topic's whole (`reacttestinglibrary`) is not its first word.
        if kind != TokenKind::Compound {
            named = query.terms().iter().any(|q| q.required && q.text == t);
            return false;
        }
        true
    });
    named
}

/// Whether `tools` (lowercase, from `keywords::FailedCommand`) hold the first word of
/// `topic` (`github` for `github-actions`).
pub fn runs_topic(tools: &[String], topic: &str) -> bool {
    let first = topic
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    !first.is_empty() && tools.iter().any(|t| t.eq_ignore_ascii_case(first))
}

/// Whether `prompt` names code that no searched entry contains: a `camelCase`, multi-hump
/// `PascalCase` or `snake_case` name (`applyDiscount`, `LoginForm.tsx`, `parse_invoice`)
/// whose whole (as the search saw it) is a term of the query with no entry.
pub fn names_own_code(found: &Found<'_>, prompt: &str) -> bool {
    let Some(h) = found.hits.first() else {
        return false;
    };
    let query = found.query_of(h);
    crate::hook::keywords::code_names(prompt).any(|name| {
        let mut unknown = false;
        Analyzer::for_version(query.tokenizer_version()).tokens(name, |t, kind| {
            unknown |= kind == TokenKind::Compound
                && found.stats.df(t) == 0
                && query.terms().iter().any(|q| q.text == t);
        });
        unknown
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_a_topic_by_its_first_word() {
        let tools = ["postgres".to_string(), "psql".to_string()];
        assert!(runs_topic(&tools, "postgres"));
        assert!(!runs_topic(&tools, "mysql"));
        assert!(runs_topic(&["github".to_string()], "github-actions"));
        assert!(!runs_topic(&[], "git"));
        assert!(!runs_topic(&["git".to_string()], "github"));
    }

    #[test]
    fn a_prompt_names_a_topic_by_its_first_word() {
        let q = |text: &str| Query::new(text, helix_index_format::TOKENIZER_VERSION);
        assert!(names_topic(&q("in vim, delete every matching line"), "vim"));
        assert!(names_topic(
            &q("react test for a portal"),
            "react-testing-library"
        ));
        assert!(!names_topic(
            &q("testing library portal"),
            "react-testing-library"
        ));
        assert!(names_topic(&q("github actions cache"), "github-actions"));
        assert!(!names_topic(&q("rename the vimrc loader"), "vim"));
    }
}
