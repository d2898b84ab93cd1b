//! BM25 search over an open artifact: Lucene-style scoring, AND-mode with OR fallback,
//! topic filter, per-topic cap, recency boost and query-relevant snippets.

use crate::error::FormatError;
use crate::layout::{EntryRecord, TermRecord};
use crate::read::{EntryRef, Index};
use crate::tokenize::{TokenKind, tokenize_with};

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

/// Lucene's BM25 defaults.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// More query terms than this are ignored (the rest of a pasted log adds noise, not recall).
const MAX_QUERY_TERMS: usize = 32;

struct QueryTerm<'a> {
    text: String,
    /// Words and identifier parts are required in AND mode; whole identifiers only add score.
    required: bool,
    row: Option<&'a TermRecord>,
}

pub(crate) fn search<'a, B: AsRef<[u8]>>(
    index: &'a Index<B>,
    query: &str,
    opts: &SearchOptions,
) -> Result<Vec<Hit<'a>>, FormatError> {
    let n = index.len();
    if n == 0 || opts.limit == 0 {
        return Ok(Vec::new());
    }
    let mut terms: Vec<QueryTerm<'a>> = Vec::new();
    tokenize_with(query, |t, kind| {
        if terms.len() >= MAX_QUERY_TERMS {
            return;
        }
        let required = kind != TokenKind::Compound;
        match terms.iter_mut().find(|q| q.text == t) {
            Some(q) => q.required |= required,
            None => terms.push(QueryTerm {
                text: t.to_owned(),
                required,
                row: None,
            }),
        }
    });
    for q in &mut terms {
        q.row = index.find_term(&q.text)?;
    }
    let topic_filter = match &opts.topic {
        Some(name) => match index.topics()?.iter().position(|t| t.topic == name) {
            Some(row) => Some(row as u32),
            None => return Ok(Vec::new()),
        },
        None => None,
    };

    // Score every document that matches any term; count required terms matched per document.
    let n_required = terms.iter().filter(|q| q.required).count();
    let avgdl = (index.total_tokens() as f32 / n as f32).max(1.0);
    let and_mode = opts.mode == Mode::AndThenOr && n_required > 0;
    // In a fresh hook process every new heap page is a page fault: size nothing by the
    // entry count that the query does not need.
    let mut scores: Vec<f32> = vec![0.0; n as usize];
    let mut matched: Vec<u8> = if and_mode {
        vec![0; n as usize]
    } else {
        Vec::new()
    };
    let postings_total: usize = terms
        .iter()
        .filter_map(|q| q.row)
        .map(|r| r.doc_freq.get() as usize)
        .sum();
    let mut touched: Vec<u32> = Vec::with_capacity(postings_total.min(n as usize));
    let lens = index.doc_lens();
    let records = index.entry_rows();
    let corrupt = |doc: u32| FormatError::Corrupt {
        what: "posting document",
        offset: u64::from(doc),
    };
    for q in &terms {
        let Some(row) = q.row else { continue };
        let df = row.doc_freq.get() as f32;
        let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
        let count_match = q.required && and_mode;
        for p in index.postings(row)? {
            let (doc, tf) = p?;
            let d = doc as usize;
            let dl = lens.get(d).ok_or_else(|| corrupt(doc))?.get() as f32;
            let tf = tf as f32;
            // Every contribution is positive (idf > 0, tf >= 1): zero means "not seen yet".
            if scores[d] == 0.0 {
                touched.push(doc);
            }
            scores[d] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl));
            if count_match {
                matched[d] = matched[d].saturating_add(1);
            }
        }
    }

    // Candidates are generated on demand from `touched` rather than collected: at 100k
    // entries a collected list is a megabyte of fresh pages. Entry rows are read only for
    // the topic filter (every row read is a page fault in a fresh process).
    let each = |f: &mut dyn FnMut(Candidate)| -> Result<(), FormatError> {
        for &doc in &touched {
            if let Some(t) = topic_filter {
                let rec = records.get(doc as usize).ok_or_else(|| corrupt(doc))?;
                if rec.topic.get() != t {
                    continue;
                }
            }
            let full = and_mode && matched[doc as usize] as usize >= n_required.min(255);
            f(Candidate::new(scores[doc as usize], doc, full));
        }
        Ok(())
    };
    // Enough candidates for the limit after the per-topic cap, in most cases; when the cap
    // throws away too many (one topic dominates), look 8 times deeper, and so on.
    let mut wanted = opts
        .limit
        .saturating_mul(opts.per_topic_cap.map_or(1, |_| 4))
        .max(opts.limit);
    let recency = Recency::new(opts, records);
    let hits = loop {
        let hits = select(records, &recency.top(&each, wanted)?, opts, corrupt)?;
        if hits.len() >= opts.limit || wanted >= touched.len() {
            break hits;
        }
        wanted = wanted.saturating_mul(8);
    };

    let snippet_terms: Vec<&str> = terms.iter().map(|q| q.text.as_str()).collect();
    let mut out = Vec::with_capacity(hits.len());
    for (score, doc) in hits {
        let entry = index.entry(doc)?;
        let snippet = snippet(entry.body, entry.title, &snippet_terms, opts.snippet_chars);
        out.push(Hit {
            entry,
            score,
            snippet,
        });
    }
    Ok(out)
}

/// A scored document with a sort key that orders AND hits before OR-only hits, then by
/// score, then by document number: one integer compare instead of a three-way comparator.
#[derive(Clone, Copy)]
struct Candidate {
    key: u64,
    score: f32,
}

impl Candidate {
    fn new(score: f32, doc: u32, full: bool) -> Self {
        // Scores are finite and non-negative, so their bit patterns order like the values.
        let bits = u64::from(score.max(0.0).to_bits());
        let key = (u64::from(full) << 63) | (bits << 31) | u64::from(!doc & 0x7fff_ffff);
        Candidate { key, score }
    }

    fn doc(self) -> u32 {
        !(self.key as u32) & 0x7fff_ffff
    }

    fn full(self) -> bool {
        self.key >> 63 == 1
    }
}

/// The recency boost, applied lazily: it multiplies a score by at most `1 + weight`, so only
/// documents whose plain score times that bound reaches the k-th best boosted score can
/// still enter the top k, and only their entry rows (for the date) need reading.
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
        let rec = self.records.get(doc as usize).ok_or(FormatError::Corrupt {
            what: "posting document",
            offset: u64::from(doc),
        })?;
        let date = rec.date.get();
        if date == crate::layout::NO_DATE {
            return Ok(c);
        }
        let age_days = now.saturating_sub(date).max(0) as f32 / 86_400.0;
        let factor = 1.0 + self.weight * (-age_days / self.half_life_days).exp2();
        Ok(Candidate::new(c.score * factor, doc, c.full()))
    }

    /// The best `k` candidates after the boost, best first.
    fn top(&self, each: &Each<'_>, k: usize) -> Result<Vec<Candidate>, FormatError> {
        let Some(now) = self.now else {
            return top(each, k);
        };
        let boosted = |cs: &[Candidate]| -> Result<Vec<Candidate>, FormatError> {
            cs.iter().map(|&c| self.boosted(c, now)).collect()
        };
        let base = top(each, k)?;
        let first = boosted(&base)?;
        let first = top(
            &|f: &mut dyn FnMut(Candidate)| {
                first.iter().for_each(|&c| f(c));
                Ok(())
            },
            k,
        )?;
        let Some(&kth) = first.last().filter(|_| first.len() == k) else {
            return Ok(first);
        };
        let bound = 1.0 + self.weight;
        let mut contenders = Vec::new();
        each(&mut |c| {
            if c.full() & !kth.full() || (c.full() == kth.full() && c.score * bound >= kth.score) {
                contenders.push(c);
            }
        })?;
        let contenders = boosted(&contenders)?;
        top(
            &|f: &mut dyn FnMut(Candidate)| {
                contenders.iter().for_each(|&c| f(c));
                Ok(())
            },
            k,
        )
    }
}

/// Calls its argument once per candidate.
type Each<'a> = dyn Fn(&mut dyn FnMut(Candidate)) -> Result<(), FormatError> + 'a;

/// Above this `k`, collecting everything and sorting beats the insertion buffer.
const SMALL_K: usize = 256;

/// The best `k` candidates, best first. For small `k`, one pass with a small sorted buffer:
/// most candidates lose a single compare against the current k-th best.
fn top(each: &Each<'_>, k: usize) -> Result<Vec<Candidate>, FormatError> {
    let by_key = |a: &Candidate, b: &Candidate| b.key.cmp(&a.key);
    if k > SMALL_K {
        let mut all = Vec::new();
        each(&mut |c| all.push(c))?;
        all.sort_unstable_by(by_key);
        all.truncate(k);
        return Ok(all);
    }
    let mut best: Vec<Candidate> = Vec::with_capacity(k + 1);
    if k == 0 {
        return Ok(best);
    }
    each(&mut |x| {
        if best.len() == k {
            if best.last().is_some_and(|last| x.key <= last.key) {
                return;
            }
            best.pop();
        }
        let at = best.partition_point(|b| b.key > x.key);
        best.insert(at, x);
    })?;
    Ok(best)
}

/// Applies the per-topic cap and the limit to ranked candidates.
fn select(
    records: &[EntryRecord],
    ranked: &[Candidate],
    opts: &SearchOptions,
    corrupt: impl Fn(u32) -> FormatError,
) -> Result<Vec<(f32, u32)>, FormatError> {
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
        out.push((c.score, doc));
    }
    Ok(out)
}

/// A short plain-text excerpt of `body` around the first query-term match outside the
/// leading title heading; the body's opening text when no term occurs in it.
pub fn snippet(body: &str, title: &str, terms: &[&str], max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    // Skip a first line that only repeats the title as a heading.
    let mut skip = 0;
    if let Some(first) = body.lines().next() {
        let trimmed = first.trim_start_matches('#').trim();
        if first.starts_with('#') || (!title.is_empty() && trimmed == title.trim()) {
            skip = first.len().min(body.len());
        }
    }
    let rest = &body[skip..];
    let mut hit: Option<usize> = None;
    crate::tokenize::tokenize_spans_until(rest, |t, _, span| {
        if terms.contains(&t) {
            hit = Some(span.start);
        }
        hit.is_none()
    });
    let start = match hit {
        Some(at) => {
            // Back up to a line start or about a third of the window, at a char boundary.
            let back = max_chars / 3;
            let mut s = at.saturating_sub(back * 2);
            if let Some(nl) = rest[..at].rfind('\n')
                && at - nl <= back * 2
            {
                s = nl + 1;
            }
            while !rest.is_char_boundary(s) {
                s += 1;
            }
            s
        }
        None => 0,
    };
    let mut out = String::with_capacity(max_chars + 8);
    if start > 0 {
        out.push('…');
    }
    let mut count = 0;
    let mut last_space = true;
    let mut truncated = false;
    for c in rest[start..].chars() {
        let c = match c {
            '\n' | '\r' | '\t' => ' ',
            '`' | '*' | '#' | '>' => continue,
            c if c.is_control() => continue,
            c => c,
        };
        if c == ' ' {
            if last_space {
                continue;
            }
            last_space = true;
        } else {
            last_space = false;
        }
        if count >= max_chars {
            truncated = true;
            break;
        }
        out.push(c);
        count += 1;
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if truncated {
        out.push('…');
    }
    out
}
