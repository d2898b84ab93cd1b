//! The recency boost, applied lazily: one scoring pass keeps the plain top k and the
//! contenders the boost could lift into it, and reads entry dates for those alone.

use std::cell::Cell;

use super::score::{Candidate, Scorer, corrupt};
use super::topk::{Ranked, SMALL_K, TopK};
use crate::error::FormatError;
use crate::layout::EntryRecord;

/// The recency boost, applied lazily: it multiplies a score by at most `1 + weight`, so a
/// document whose plain score times that bound cannot beat the current k-th best boosted
/// score is dropped without reading its entry row (for the date).
pub(super) struct Recency<'a> {
    records: &'a [EntryRecord],
    now: Option<i64>,
    weight: f32,
    half_life_days: f32,
}

impl<'a> Recency<'a> {
    /// The boost of [`super::SearchOptions`]' `now`, `recency_weight` and
    /// `recency_half_life_days`; off unless both of the last two are positive.
    pub(super) fn new(
        now: Option<i64>,
        weight: f32,
        half_life_days: f32,
        records: &'a [EntryRecord],
    ) -> Self {
        let on = weight > 0.0 && half_life_days > 0.0;
        Recency {
            records,
            now: now.filter(|_| on),
            weight,
            half_life_days,
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
    pub(super) fn top<B: AsRef<[u8]>>(
        &self,
        scorer: &Scorer<'_, B>,
        k: usize,
    ) -> Result<Ranked, FormatError> {
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
