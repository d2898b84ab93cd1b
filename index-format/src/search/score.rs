//! Scoring: the query's postings merged window by window into BM25 scores (with MaxScore
//! pruning in OR mode), streamed out as `Candidate`s with their one-integer sort key.

use std::cell::Cell;

use crate::error::FormatError;
use crate::layout::{HiddenRecord, TermRecord};
use crate::postings::Postings;
use crate::query::{B, K1};
use crate::read::Index;

/// Documents scored per window. Postings are merged window by window into accumulators of
/// this size, as Lucene's BooleanScorer does, instead of into arrays sized by the entry
/// count: in a fresh hook process every new heap page is a page fault, and at 100k entries
/// entry-count-sized arrays were most of a query's cost.
pub(super) const WINDOW: u32 = 1024;

pub(super) struct ScoredTerm<'a> {
    pub(super) row: &'a TermRecord,
    /// `idf * (K1 + 1) * query term frequency`.
    pub(super) weight: f32,
    /// The most one posting can add: BM25's term-frequency part stays below `K1 + 1`
    /// (slack for float rounding).
    pub(super) bound: f32,
    /// This term's bit in a document's mask of matched query terms.
    pub(super) bit: u32,
}

/// Scores the query's postings and streams the matching documents as candidates.
pub(super) struct Scorer<'a, B> {
    pub(super) terms: Vec<ScoredTerm<'a>>,
    pub(super) index: &'a Index<B>,
    pub(super) avgdl: f32,
    /// AND mode: the bits of the required terms, which a full match has all of.
    pub(super) and_required: Option<u32>,
    pub(super) topic: Option<u32>,
    /// Documents left out (retired or superseded), sorted; empty in most artifacts.
    pub(super) hidden: &'a [HiddenRecord],
    pub(super) window: u32,
    /// MaxScore term pruning (off only to test that it changes nothing).
    pub(super) prune: bool,
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
    pub(super) fn each(
        &self,
        floor: &Cell<f32>,
        f: &mut dyn FnMut(Candidate),
    ) -> Result<bool, FormatError> {
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
                PRUNED.with(|p| p.set(p.get() + 1));
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

pub(super) fn corrupt(doc: u32) -> FormatError {
    FormatError::Corrupt {
        what: "posting document",
        offset: u64::from(doc),
    }
}

/// A scored document with a sort key that orders AND hits before OR-only hits, then by
/// score, then by document number: one integer compare instead of a three-way comparator.
#[derive(Clone, Copy)]
pub(super) struct Candidate {
    pub(super) key: u64,
    pub(super) score: f32,
    /// The query terms the document contains.
    pub(super) mask: u32,
}

impl Candidate {
    pub(super) fn new(score: f32, doc: u32, full: bool, mask: u32) -> Self {
        // Scores are finite and non-negative, so their bit patterns order like the values.
        let bits = u64::from(score.max(0.0).to_bits());
        let key = (u64::from(full) << 63) | (bits << 31) | u64::from(!doc & 0x7fff_ffff);
        Candidate { key, score, mask }
    }

    pub(super) fn doc(self) -> u32 {
        !(self.key as u32) & 0x7fff_ffff
    }

    pub(super) fn full(self) -> bool {
        self.key >> 63 == 1
    }
}

#[cfg(test)]
thread_local! {
    /// Postings stepped over by MaxScore, so a test can tell that pruning happened.
    pub(super) static PRUNED: Cell<usize> = const { Cell::new(0) };
}
