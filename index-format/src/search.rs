//! BM25 search over an open artifact: Lucene-style scoring with shared collection
//! statistics ([`Stats`]), AND-mode with OR fallback, topic filter, per-topic cap, recency
//! boost and query-relevant snippets.

use std::cell::Cell;

use crate::error::FormatError;
use crate::layout::{EntryRecord, HiddenRecord, TermRecord};
use crate::postings::Postings;
use crate::query::{B, K1};
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
    let recency = Recency::new(opts, records);
    let hits = loop {
        let ranked = recency.top(&scorer, wanted)?;
        let hits = select(records, &ranked.best, opts)?;
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

/// Documents scored per window. Postings are merged window by window into accumulators of
/// this size, as Lucene's BooleanScorer does, instead of into arrays sized by the entry
/// count: in a fresh hook process every new heap page is a page fault, and at 100k entries
/// entry-count-sized arrays were most of a query's cost.
const WINDOW: u32 = 1024;

struct ScoredTerm<'a> {
    row: &'a TermRecord,
    /// `idf * (K1 + 1) * query term frequency`.
    weight: f32,
    /// The most one posting can add: BM25's term-frequency part stays below `K1 + 1`
    /// (slack for float rounding).
    bound: f32,
    /// This term's bit in a document's mask of matched query terms.
    bit: u32,
}

/// Scores the query's postings and streams the matching documents as candidates.
struct Scorer<'a, B> {
    terms: Vec<ScoredTerm<'a>>,
    index: &'a Index<B>,
    avgdl: f32,
    /// AND mode: the bits of the required terms, which a full match has all of.
    and_required: Option<u32>,
    topic: Option<u32>,
    /// Documents left out (retired or superseded), sorted; empty in most artifacts.
    hidden: &'a [HiddenRecord],
    window: u32,
    /// MaxScore term pruning (off only to test that it changes nothing).
    prune: bool,
}

impl<B: AsRef<[u8]>> Scorer<'_, B> {
    /// Calls `f` once per matching document (in no particular order) and returns whether
    /// every match was reported.
    ///
    /// Documents scoring below `floor` do not matter to the caller, which may raise it
    /// while the scan runs. In OR mode that prunes whole terms (MaxScore, Turtle and Flood
    /// 1995): once the best a document can get from the lowest-bound terms alone stays
    /// under the floor, those terms only add to documents the others matched, and their
    /// postings are stepped over without scoring.
    fn each(&self, floor: &Cell<f32>, f: &mut dyn FnMut(Candidate)) -> Result<bool, FormatError> {
        let n = self.index.len();
        let lens = self.index.doc_lens();
        let records = self.index.entry_rows();
        let window = self.window.clamp(1, n.max(1)) as usize;
        let mut cursors = Vec::with_capacity(self.terms.len());
        for t in &self.terms {
            let mut postings = self.index.postings(t.row)?;
            let next = postings.step();
            cursors.push((postings, next));
        }
        // Terms are in descending bound order, so the prunable ones are a suffix and every
        // document sums its contributions in the same order, pruned or not.
        let mut bound_of_rest = vec![0.0f32; self.terms.len() + 1];
        for (i, t) in self.terms.iter().enumerate().rev() {
            bound_of_rest[i] = bound_of_rest[i + 1] + t.bound;
        }
        let mut scores = vec![0.0f32; window];
        let mut masks = vec![0u32; window];
        let mut touched: Vec<u32> = Vec::new();
        let mut complete = true;
        let norm_base = K1 * (1.0 - B);
        let norm_per_token = K1 * B / self.avgdl;
        // Each window starts at the lowest document some posting list has not passed yet.
        while let Some(base) = cursors
            .iter()
            .filter_map(|(_, next)| next.map(|p| p.0))
            .min()
        {
            let end = base.saturating_add(window as u32);
            // AND mode ranks full matches first whatever their score: no pruning there.
            let essential = if self.and_required.is_some() || !self.prune {
                self.terms.len()
            } else {
                let floor = floor.get();
                (0..=self.terms.len())
                    .find(|&i| bound_of_rest[i] < floor)
                    .unwrap_or(self.terms.len())
            };
            let mut acc = Accumulators {
                base,
                end,
                lens,
                norm_base,
                norm_per_token,
                scores: &mut scores,
                masks: &mut masks,
            };
            for (ti, ((postings, next), t)) in cursors.iter_mut().zip(&self.terms).enumerate() {
                *next = if ti >= essential {
                    let (next, skipped) = acc.add_to_seen(postings, *next, t)?;
                    if skipped {
                        complete = false;
                    }
                    next
                } else {
                    acc.score(postings, *next, t, &mut touched)?
                };
            }
            let floor = floor.get();
            for &doc in &touched {
                let i = (doc - base) as usize;
                let score = std::mem::take(&mut scores[i]);
                let mask = std::mem::take(&mut masks[i]);
                let full = self.and_required.is_some_and(|r| mask & r == r);
                if score < floor && self.and_required.is_none() {
                    complete = false;
                    continue;
                }
                if !self.hidden.is_empty()
                    && self
                        .hidden
                        .binary_search_by_key(&doc, |r| r.doc.get())
                        .is_ok()
                {
                    continue;
                }
                if let Some(t) = self.topic {
                    // Entry rows are read only for the topic filter: every row read is a
                    // page fault in a fresh process.
                    let rec = records.get(doc as usize).ok_or_else(|| corrupt(doc))?;
                    if rec.topic.get() != t {
                        continue;
                    }
                }
                f(Candidate::new(score, doc, full, mask));
            }
            touched.clear();
        }
        match cursors.iter().find_map(|(postings, _)| postings.error()) {
            Some(e) => Err(e),
            None => Ok(complete),
        }
    }
}

/// One window's scoring loops, each kept small so that its state stays in registers: they
/// run once per posting.
struct Accumulators<'a> {
    base: u32,
    end: u32,
    lens: &'a [zerocopy::little_endian::U32],
    norm_base: f32,
    norm_per_token: f32,
    scores: &'a mut [f32],
    /// Matched query terms per document of the window.
    masks: &'a mut [u32],
}

impl Accumulators<'_> {
    /// Adds a term's postings in `base..end` to the window; returns the first posting past it.
    #[inline]
    fn score(
        &mut self,
        postings: &mut Postings<'_>,
        mut cur: Option<(u32, u32)>,
        term: &ScoredTerm<'_>,
        touched: &mut Vec<u32>,
    ) -> Result<Option<(u32, u32)>, FormatError> {
        let (weight, bit) = (term.weight, term.bit);
        while let Some((doc, tf)) = cur {
            if doc >= self.end {
                break;
            }
            let i = (doc - self.base) as usize;
            let dl = self
                .lens
                .get(doc as usize)
                .ok_or_else(|| corrupt(doc))?
                .get() as f32;
            let tf = tf as f32;
            let slot = &mut self.scores[i];
            // Every contribution is positive (idf > 0, tf >= 1): zero means unseen.
            if *slot == 0.0 {
                touched.push(doc);
            }
            // BM25: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)).
            *slot += weight * tf / (tf + self.norm_base + self.norm_per_token * dl);
            self.masks[i] |= bit;
            cur = postings.step();
        }
        Ok(cur)
    }

    /// A pruned term: adds only to documents the window has seen, steps over the rest.
    /// Also returns whether it stepped over any.
    #[inline]
    fn add_to_seen(
        &mut self,
        postings: &mut Postings<'_>,
        mut cur: Option<(u32, u32)>,
        term: &ScoredTerm<'_>,
    ) -> Result<(Option<(u32, u32)>, bool), FormatError> {
        let (weight, bit) = (term.weight, term.bit);
        let mut skipped = false;
        while let Some((doc, tf)) = cur {
            if doc >= self.end {
                break;
            }
            let i = (doc - self.base) as usize;
            let slot = &mut self.scores[i];
            if *slot == 0.0 {
                skipped = true;
                #[cfg(test)]
                tests::PRUNED.with(|p| p.set(p.get() + 1));
            } else {
                let dl = self
                    .lens
                    .get(doc as usize)
                    .ok_or_else(|| corrupt(doc))?
                    .get() as f32;
                let tf = tf as f32;
                *slot += weight * tf / (tf + self.norm_base + self.norm_per_token * dl);
                self.masks[i] |= bit;
            }
            cur = postings.step();
        }
        Ok((cur, skipped))
    }
}

fn corrupt(doc: u32) -> FormatError {
    FormatError::Corrupt {
        what: "posting document",
        offset: u64::from(doc),
    }
}

/// A scored document with a sort key that orders AND hits before OR-only hits, then by
/// score, then by document number: one integer compare instead of a three-way comparator.
#[derive(Clone, Copy)]
struct Candidate {
    key: u64,
    score: f32,
    /// The query terms the document contains.
    mask: u32,
}

impl Candidate {
    fn new(score: f32, doc: u32, full: bool, mask: u32) -> Self {
        // Scores are finite and non-negative, so their bit patterns order like the values.
        let bits = u64::from(score.max(0.0).to_bits());
        let key = (u64::from(full) << 63) | (bits << 31) | u64::from(!doc & 0x7fff_ffff);
        Candidate { key, score, mask }
    }

    fn doc(self) -> u32 {
        !(self.key as u32) & 0x7fff_ffff
    }

    fn full(self) -> bool {
        self.key >> 63 == 1
    }
}

/// The recency boost, applied lazily: it multiplies a score by at most `1 + weight`, so a
/// document whose plain score times that bound cannot beat the current k-th best boosted
/// score is dropped without reading its entry row (for the date).
struct Recency<'a> {
    records: &'a [EntryRecord],
    now: Option<i64>,
    weight: f32,
    half_life_days: f32,
}

impl<'a> Recency<'a> {
    fn new(opts: &SearchOptions, records: &'a [EntryRecord]) -> Self {
        let on = opts.recency_weight > 0.0 && opts.recency_half_life_days > 0.0;
        Recency {
            records,
            now: opts.now.filter(|_| on),
            weight: opts.recency_weight,
            half_life_days: opts.recency_half_life_days,
        }
    }

    fn boosted(&self, c: Candidate, now: i64) -> Result<Candidate, FormatError> {
        let doc = c.doc();
        let rec = self.records.get(doc as usize).ok_or_else(|| corrupt(doc))?;
        let date = rec.date.get();
        if date == crate::layout::NO_DATE {
            return Ok(c);
        }
        let age_days = now.saturating_sub(date).max(0) as f32 / 86_400.0;
        let factor = 1.0 + self.weight * libm::exp2f(-age_days / self.half_life_days);
        Ok(Candidate::new(c.score * factor, doc, c.full(), c.mask))
    }

    /// The best `k` candidates after the boost.
    ///
    /// One scoring pass keeps the plain top `k` and, aside, every contender: a candidate
    /// whose score times the largest factor reaches the plain k-th best so far. The final
    /// boosted k-th best is at least the final plain k-th best (factors are >= 1), so
    /// contenders are a superset of the answer; only they are boosted, at the end, once
    /// the threshold is known, so few entry rows are read (each is a page fault in a fresh
    /// hook process).
    fn top<B: AsRef<[u8]>>(&self, scorer: &Scorer<'_, B>, k: usize) -> Result<Ranked, FormatError> {
        let mut plain = TopK::new(k);
        let floor = Cell::new(0.0f32);
        let mut count = 0usize;
        let Some(now) = self.now else {
            let complete = scorer.each(&floor, &mut |c| {
                count += 1;
                plain.offer(c);
                if let Some(kth) = plain.kth_score() {
                    floor.set(kth);
                }
            })?;
            return Ok(Ranked {
                exhausted: complete && count <= k,
                best: plain.into_sorted(),
            });
        };
        if k > SMALL_K {
            // Deep result lists (the CLI's `--limit`): boost everything.
            let mut all = Vec::new();
            scorer.each(&floor, &mut |c| all.push(c))?;
            let exhausted = all.len() <= k;
            for c in all {
                plain.offer(self.boosted(c, now)?);
            }
            return Ok(Ranked {
                exhausted,
                best: plain.into_sorted(),
            });
        }
        // The factor is at most `bound`, and rounding is monotonic, so a candidate whose
        // bound loses to the k-th best cannot win once boosted.
        let bound = 1.0 + self.weight;
        let raised = |c: Candidate| Candidate::new(c.score * bound, c.doc(), c.full(), c.mask);
        let mut contenders: Vec<Candidate> = Vec::new();
        let mut prune_at = 4 * k;
        let complete = scorer.each(&floor, &mut |c| {
            count += 1;
            plain.offer(c);
            if let Some(kth) = plain.kth_score() {
                // Below this, even the largest boost stays under the k-th best (the slack
                // covers the division's rounding).
                floor.set(kth / bound * (1.0 - 1e-5));
            }
            if plain.beats(raised(c)) {
                return;
            }
            contenders.push(c);
            if contenders.len() >= prune_at {
                contenders.retain(|&c| !plain.beats(raised(c)));
                prune_at = (2 * contenders.len()).max(4 * k);
            }
        })?;
        let mut best = TopK::new(k);
        for c in contenders {
            if !plain.beats(raised(c)) {
                best.offer(self.boosted(c, now)?);
            }
        }
        Ok(Ranked {
            exhausted: complete && count <= k,
            best: best.into_sorted(),
        })
    }
}

/// The best candidates of one scoring pass.
struct Ranked {
    /// Best first.
    best: Vec<Candidate>,
    /// No document beyond `best` matched: looking deeper finds nothing new.
    exhausted: bool,
}

/// Above this `k`, collecting everything and sorting beats the insertion buffer.
const SMALL_K: usize = 256;

/// The best `k` candidates seen. For small `k`, a small sorted buffer: most candidates lose
/// a single compare against the current k-th best.
struct TopK {
    k: usize,
    /// Best first; unsorted (and unbounded) when `k > SMALL_K`.
    best: Vec<Candidate>,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            best: Vec::with_capacity(if k > SMALL_K { 0 } else { k + 1 }),
        }
    }

    /// Whether `c` certainly stays out.
    fn rejects(&self, c: Candidate) -> bool {
        self.k == 0
            || (self.k <= SMALL_K
                && self.best.len() == self.k
                && self.best.last().is_some_and(|last| c.key <= last.key))
    }

    /// Whether the buffer is full and its k-th best is strictly better than `c` (a tie is
    /// `c` itself being the k-th best).
    /// The k-th best score, once there are `k` candidates (small `k` only).
    fn kth_score(&self) -> Option<f32> {
        if self.k <= SMALL_K && self.best.len() == self.k {
            self.best.last().map(|c| c.score)
        } else {
            None
        }
    }

    fn beats(&self, c: Candidate) -> bool {
        self.best.len() == self.k
            && self.k <= SMALL_K
            && self.best.last().is_some_and(|last| c.key < last.key)
    }

    fn offer(&mut self, c: Candidate) {
        if self.rejects(c) {
            return;
        }
        if self.k > SMALL_K {
            self.best.push(c);
            return;
        }
        if self.best.len() == self.k {
            self.best.pop();
        }
        let at = self.best.partition_point(|b| b.key > c.key);
        self.best.insert(at, c);
    }

    fn into_sorted(mut self) -> Vec<Candidate> {
        if self.k > SMALL_K {
            self.best.sort_unstable_by_key(|c| std::cmp::Reverse(c.key));
            self.best.truncate(self.k);
        }
        self.best
    }
}

/// Applies the per-topic cap and the limit to ranked candidates.
fn select(
    records: &[EntryRecord],
    ranked: &[Candidate],
    opts: &SearchOptions,
) -> Result<Vec<Candidate>, FormatError> {
    let mut out = Vec::with_capacity(opts.limit);
    let mut per_topic: Vec<(u32, usize)> = Vec::new();
    for c in ranked {
        if out.len() >= opts.limit {
            break;
        }
        let doc = c.doc();
        if let Some(cap) = opts.per_topic_cap {
            let topic = records
                .get(doc as usize)
                .ok_or_else(|| corrupt(doc))?
                .topic
                .get();
            match per_topic.iter_mut().find(|(t, _)| *t == topic) {
                Some((_, n)) if *n >= cap => continue,
                Some((_, n)) => *n += 1,
                None => per_topic.push((topic, 1)),
            }
        }
        out.push(*c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildInfo, Entry, build};

    /// The artifact of `entries` for project `p`.
    fn built(entries: &[Entry]) -> Vec<u8> {
        let info = BuildInfo {
            project: "p".into(),
            commit: String::new(),
            generation: 1,
            build_time: 1_700_000_000,
        };
        build(entries, &info).expect("test entries build")
    }

    fn windowed<'a>(
        index: &'a Index<&[u8]>,
        text: &str,
        opts: &SearchOptions,
        window: u32,
        prune: bool,
    ) -> Result<Vec<Hit<'a>>, FormatError> {
        let query = Query::for_index(text, index);
        let stats = Stats::of(index, &query)?;
        search_windowed(index, &query, &stats, opts, window, prune)
    }

    /// The window size changes how postings are merged, never the result: the same hits,
    /// bit-identical scores, whether every document gets its own window or all share one.
    #[test]
    fn window_size_never_changes_results() {
        let words = [
            "cache", "rebase", "linker", "tokio", "rename", "postgres", "rust",
        ];
        let entries: Vec<Entry> = (0..900)
            .map(|i| Entry {
                id: format!("t{}/e{i:03}.md", i % 6),
                topic: format!("t{}", i % 6),
                title: format!("{} note {i}", words[i % 7]),
                body: format!(
                    "{} {} {} {}",
                    words[(i * 5) % 7],
                    words[(i / 7) % 7].repeat(1 + i % 3),
                    words[(i / 49) % 7],
                    "filler ".repeat(i % 13)
                ),
                date: (i % 3 != 0).then_some(1_700_000_000 - (i as i64 * 7919 % 3000) * 86_400),
                ..Entry::default()
            })
            .collect();
        let bytes = built(&entries);
        let index = Index::open(&bytes[..]).unwrap();
        let queries = [
            "cache rebase",
            "tokio",
            "rust linker rename",
            "postgres cache nosuch",
        ];
        for q in queries {
            for mode in [Mode::Or, Mode::AndThenOr] {
                for (limit, cap, topic, now) in [
                    (3, None, None, Some(1_700_000_000)),
                    (10, Some(1), None, None),
                    (400, None, Some("t2"), Some(1_700_000_000)),
                    (5, Some(2), Some("t4"), None),
                ] {
                    let opts = SearchOptions {
                        limit,
                        mode,
                        per_topic_cap: cap,
                        topic: topic.map(str::to_owned),
                        now,
                        recency_weight: 0.5,
                        ..SearchOptions::default()
                    };
                    let run = |w| -> Vec<(String, u32)> {
                        windowed(&index, q, &opts, w, true)
                            .unwrap()
                            .iter()
                            .map(|h| (h.entry.id.to_owned(), h.score.to_bits()))
                            .collect()
                    };
                    let whole = run(u32::MAX);
                    assert!(!whole.is_empty(), "{q} {opts:?}");
                    for w in [1, 2, 7, 64, 899, 4096] {
                        assert_eq!(run(w), whole, "window {w}, {q}, {opts:?}");
                    }
                }
            }
        }
    }

    thread_local! {
        /// Postings stepped over by MaxScore, so a test can tell that pruning happened.
        pub(super) static PRUNED: Cell<usize> = const { Cell::new(0) };
    }

    /// MaxScore pruning must never change a result. Word frequencies follow Zipf's law, as
    /// in real text, so queries mix rare words (high bounds) with common ones (prunable).
    #[test]
    fn max_score_pruning_never_changes_results() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let vocab: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
        // Zipf: word i drawn with weight 1/(i+1), by inverse transform on the cumulative sum.
        let cumulative: Vec<f64> = (0..vocab.len())
            .scan(0.0, |acc, i| {
                *acc += 1.0 / (i as f64 + 1.0);
                Some(*acc)
            })
            .collect();
        let total = *cumulative.last().unwrap();
        let word = |rand: &mut dyn FnMut(usize) -> usize| {
            let x = rand(1_000_000) as f64 / 1_000_000.0 * total;
            &vocab[cumulative.partition_point(|&c| c < x).min(vocab.len() - 1)]
        };
        let entries: Vec<Entry> = (0..3000)
            .map(|i| {
                let len = 5 + rand(60);
                let body: Vec<&str> = (0..len).map(|_| word(&mut rand).as_str()).collect();
                Entry {
                    id: format!("t{}/e{i:04}.md", i % 4),
                    topic: format!("t{}", i % 4),
                    title: format!("note {i}"),
                    body: body.join(" "),
                    date: (i % 5 != 0).then_some(1_700_000_000 - (i as i64 * 7919 % 900) * 86_400),
                    ..Entry::default()
                }
            })
            .collect();
        let bytes = built(&entries);
        let index = Index::open(&bytes[..]).unwrap();
        PRUNED.with(|p| p.set(0));
        for q in 0..300 {
            let n_words = 2 + q % 5;
            let query: Vec<String> = (0..n_words)
                .map(|_| {
                    // Half the query words rare, half drawn like the text.
                    if rand(2) == 0 {
                        vocab[100 + rand(200)].clone()
                    } else {
                        word(&mut rand).clone()
                    }
                })
                .collect();
            let query = query.join(" ");
            let opts = SearchOptions {
                limit: [1, 3, 10][q % 3],
                mode: Mode::Or,
                now: (q % 2 == 0).then_some(1_700_000_000),
                recency_weight: [0.1, 0.5][q % 4 / 2],
                per_topic_cap: (q % 7 == 0).then_some(1),
                ..SearchOptions::default()
            };
            let run = |window, prune| -> Vec<(String, u32)> {
                windowed(&index, &query, &opts, window, prune)
                    .unwrap()
                    .iter()
                    .map(|h| (h.entry.id.to_owned(), h.score.to_bits()))
                    .collect()
            };
            let reference = run(64, false);
            assert_eq!(run(64, true), reference, "{query} {opts:?}");
            assert_eq!(run(1024, true), reference, "{query} {opts:?}");
        }
        assert!(
            PRUNED.with(|p| p.get()) > 1000,
            "the queries should exercise pruning"
        );
    }
}
