//! BM25 search over an open artifact: Lucene-style scoring with shared collection
//! statistics ([`Stats`]), AND-mode with OR fallback, topic filter, per-topic cap, recency
//! boost and query-relevant snippets.

mod recency;
mod score;
mod topk;

use recency::Recency;
use score::{ScoredTerm, Scorer, WINDOW};
use topk::select;

use crate::error::FormatError;
use crate::query::K1;
pub use crate::query::{MAX_QUERY_TERMS, Query, QueryTerm, Stats};
use crate::read::{EntryRef, Index};
use crate::tokenize::Analyzer;

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
    /// Also entries out of default results: retired or superseded (`helix search --all`).
    pub include_hidden: bool,
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
            include_hidden: false,
        }
    }
}

/// One search result, best first.
#[derive(Debug, Clone)]
pub struct Hit<'a> {
    pub entry: EntryRef<'a>,
    pub score: f32,
    /// The query terms the entry contains: bit `i` for `Query::terms()[i]`.
    pub matched: u32,
    /// It contains every required query term (AND mode ranks these first).
    pub full: bool,
    /// Short plain-text excerpt around the first query match.
    pub snippet: String,
}

impl<B: AsRef<[u8]>> Index<B> {
    /// BM25 search of this artifact alone; hits best first.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit<'_>>, FormatError> {
        let query = Query::for_index(query, self);
        let stats = Stats::of(self, &query)?;
        self.search_with(&query, &stats, opts)
    }

    /// BM25 search with collection statistics `stats` (this artifact's, or summed over
    /// every artifact searched together): the same entry gets the same score whichever
    /// artifact holds it. `query` must be tokenized for this artifact
    /// ([`Query::for_index`]).
    pub fn search_with(
        &self,
        query: &Query,
        stats: &Stats,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit<'_>>, FormatError> {
        search_windowed(self, query, stats, opts, WINDOW, true)
    }
}

fn search_windowed<'a, B: AsRef<[u8]>>(
    index: &'a Index<B>,
    query: &Query,
    stats: &Stats,
    opts: &SearchOptions,
    window: u32,
    prune: bool,
) -> Result<Vec<Hit<'a>>, FormatError> {
    if index.is_empty() || opts.limit == 0 || stats.docs == 0 {
        return Ok(Vec::new());
    }
    let topic_filter = match &opts.topic {
        Some(name) => match index.topics()?.iter().position(|t| t.topic == name) {
            Some(row) => Some(row as u32),
            None => return Ok(Vec::new()),
        },
        None => None,
    };

    let terms = query.terms();
    let n = stats.docs as f32;
    let mut required_mask = 0u32;
    let mut scored: Vec<ScoredTerm<'a>> = Vec::with_capacity(terms.len());
    for (i, q) in terms.iter().enumerate() {
        let bit = 1u32 << i;
        if q.required {
            required_mask |= bit;
        }
        let Some(row) = index.find_term(&q.text)? else {
            continue;
        };
        let idf = crate::query::idf(n, stats.df(&q.text) as f32);
        let qtf = q.count as f32;
        scored.push(ScoredTerm {
            row,
            weight: idf * (K1 + 1.0) * qtf,
            bound: idf.max(0.0) * (K1 + 1.0) * qtf * 1.001,
            bit,
        });
    }
    scored.sort_by(|a, b| b.bound.total_cmp(&a.bound));
    let scorer = Scorer {
        terms: scored,
        index,
        avgdl: stats.avgdl(),
        and_required: (opts.mode == Mode::AndThenOr && required_mask != 0).then_some(required_mask),
        topic: topic_filter,
        hidden: if opts.include_hidden {
            &[]
        } else {
            index.hidden_rows()
        },
        window,
        prune,
    };
    let records = index.entry_rows();
    // Enough candidates for the limit after the per-topic cap, in most cases; when the cap
    // throws away too many (one topic dominates), look 8 times deeper, and so on. Each look
    // scores the postings again: cheaper than keeping every candidate of a large index.
    let mut wanted = opts
        .limit
        .saturating_mul(opts.per_topic_cap.map_or(1, |_| 4))
        .max(opts.limit);
    let recency = Recency::new(
        opts.now,
        opts.recency_weight,
        opts.recency_half_life_days,
        records,
    );
    let hits = loop {
        let ranked = recency.top(&scorer, wanted)?;
        let hits = select(records, &ranked.best, opts.limit, opts.per_topic_cap)?;
        if hits.len() >= opts.limit || ranked.exhausted {
            break hits;
        }
        wanted = wanted.saturating_mul(8);
    };

    let snippet_terms: Vec<&str> = terms.iter().map(|q| q.text.as_str()).collect();
    let analyzer = Analyzer::for_version(index.tokenizer_version());
    let mut out = Vec::with_capacity(hits.len());
    for c in hits {
        let entry = index.entry(c.doc())?;
        let snippet = crate::snippet::snippet_with(
            analyzer,
            entry.body,
            entry.title,
            &snippet_terms,
            opts.snippet_chars,
        );
        out.push(Hit {
            entry,
            score: c.score,
            matched: c.mask,
            full: c.full(),
            snippet,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
