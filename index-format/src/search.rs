//! BM25 search over an open artifact: Lucene-style scoring, AND-mode with OR fallback,
//! topic filter, per-topic cap, recency boost and query-relevant snippets.

use crate::read::EntryRef;

/// How query terms combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Entries containing every query term first; when fewer than `limit` do, the rest are
    /// filled from OR-mode results.
    #[default]
    AndThenOr,
    /// Any query term; plain BM25 ranking.
    Or,
}

/// Search parameters. `Default` gives limit 10, AND-then-OR, no filter, no cap, no recency.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    pub limit: usize,
    pub mode: Mode,
    /// Only entries of this topic.
    pub topic: Option<String>,
    /// At most this many hits per topic.
    pub per_topic_cap: Option<usize>,
    /// Unix seconds "now" for the recency boost; `None` disables it.
    pub now: Option<i64>,
    /// Score multiplier for a brand-new entry is `1 + recency_weight`, halving every
    /// `recency_half_life_days`.
    pub recency_weight: f32,
    pub recency_half_life_days: f32,
    /// Snippet length in characters (0: no snippet).
    pub snippet_chars: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            mode: Mode::AndThenOr,
            topic: None,
            per_topic_cap: None,
            now: None,
            recency_weight: 0.1,
            recency_half_life_days: 365.0,
            snippet_chars: 160,
        }
    }
}

/// One search result, best first.
#[derive(Debug, Clone)]
pub struct Hit<'a> {
    pub entry: EntryRef<'a>,
    pub score: f32,
    /// Short plain-text excerpt around the first query match.
    pub snippet: String,
}
