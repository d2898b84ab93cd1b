//! The word machinery the hooks' queries share: which words are worth searching and how
//! a text's candidate terms are found and trimmed to a budget.

use helix_index_format::tokenize::{Analyzer, TokenKind, is_stop_word};

/// Words that say how a request is phrased, not what it is about, and function words the
/// tokenizer's deliberately small stop list keeps (common, so costly and uninformative).
const META_WORDS: &[&str] = &[
    "actually",
    "after",
    "again",
    "also",
    "always",
    "another",
    "any",
    "anything",
    "appreciate",
    "basically",
    "because",
    "before",
    "being",
    "best",
    "better",
    "between",
    "cannot",
    "could",
    "currently",
    "doing",
    "done",
    "each",
    "else",
    "even",
    "ever",
    "every",
    "everything",
    "explain",
    "fine",
    "get",
    "getting",
    "give",
    "going",
    "good",
    "got",
    "having",
    "help",
    "here",
    "hey",
    "hi",
    "hmm",
    "idea",
    "instead",
    "just",
    "kind",
    "know",
    "let",
    "lets",
    "like",
    "look",
    "lot",
    "lots",
    "make",
    "maybe",
    "might",
    "more",
    "much",
    "must",
    "need",
    "needs",
    "never",
    "now",
    "ok",
    "okay",
    "one",
    "only",
    "other",
    "please",
    "pls",
    "plz",
    "question",
    "quick",
    "quickly",
    "really",
    "right",
    "said",
    "same",
    "say",
    "see",
    "should",
    "since",
    "some",
    "something",
    "sort",
    "still",
    "stuff",
    "such",
    "sure",
    "take",
    "tell",
    "thank",
    "thanks",
    "these",
    "thing",
    "things",
    "think",
    "through",
    "thx",
    "try",
    "trying",
    "understand",
    "until",
    "very",
    "wanna",
    "want",
    "wants",
    "way",
    "ways",
    "well",
    "whether",
    "while",
    "why",
    "within",
    "without",
    "wonder",
    "yeah",
    "yes",
    "yet",
];

pub(super) fn sorted_contains(list: &[&str], word: &str) -> bool {
    list.contains(&word)
}

/// Whether `w` (lowercase) is worth searching for.
pub(super) fn useful(w: &str) -> bool {
    w.chars().count() >= 2 && !is_stop_word(w) && !sorted_contains(META_WORDS, w)
}

/// Candidate terms of `text` in order of appearance, deduplicated, filtered by `keep` (which
/// sees the lowercase token): plain words lowercased, and whole identifiers as written
/// (`re-parent`, `parse_invoice`), so that the search splits them into parts as it does
/// when indexing. Flagged when an identifier.
pub(super) fn candidates(text: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    Analyzer::SURFACE.spans_until(text, |t, kind, span| {
        if kind == TokenKind::Part || !keep(t) || seen.iter().any(|o| o == t) {
            return true;
        }
        seen.push(t.to_string());
        let compound = kind == TokenKind::Compound;
        let term = if compound { &text[span] } else { t };
        out.push((term.to_string(), compound));
        true
    });
    out
}

/// Keeps at most `max` terms, preferring identifiers and longer words, in original order.
pub(super) fn pick(mut cands: Vec<(String, bool)>, max: usize) -> Vec<String> {
    if cands.len() > max {
        let mut ranked: Vec<usize> = (0..cands.len()).collect();
        let weight = |(w, compound): &(String, bool)| -> usize {
            if *compound {
                3
            } else if w.chars().count() >= 5 {
                2
            } else {
                1
            }
        };
        ranked.sort_by_key(|&i| std::cmp::Reverse(weight(&cands[i])));
        let mut keep: Vec<usize> = ranked.into_iter().take(max).collect();
        keep.sort_unstable();
        cands = keep
            .into_iter()
            .map(|i| std::mem::take(&mut cands[i]))
            .collect();
    }
    cands.into_iter().map(|(w, _)| w).collect()
}
