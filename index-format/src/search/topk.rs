//! Top-k selection: the best `k` candidates of a scoring pass, then the per-topic cap and
//! the limit applied to them in rank order.

use super::score::{Candidate, corrupt};
use crate::error::FormatError;
use crate::layout::EntryRecord;

/// The best candidates of one scoring pass.
pub(super) struct Ranked {
    /// Best first.
    pub(super) best: Vec<Candidate>,
    /// No document beyond `best` matched: looking deeper finds nothing new.
    pub(super) exhausted: bool,
}

/// Above this `k`, collecting everything and sorting beats the insertion buffer.
pub(super) const SMALL_K: usize = 256;

/// The best `k` candidates seen. For small `k`, a small sorted buffer: most candidates lose
/// a single compare against the current k-th best.
pub(super) struct TopK {
    k: usize,
    /// Best first; unsorted (and unbounded) when `k > SMALL_K`.
    best: Vec<Candidate>,
}

impl TopK {
    pub(super) fn new(k: usize) -> Self {
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

    /// The k-th best score, once there are `k` candidates (small `k` only).
    pub(super) fn kth_score(&self) -> Option<f32> {
        if self.k <= SMALL_K && self.best.len() == self.k {
            self.best.last().map(|c| c.score)
        } else {
            None
        }
    }

    /// Whether the buffer is full and its k-th best is strictly better than `c` (a tie is
    /// `c` itself being the k-th best).
    pub(super) fn beats(&self, c: Candidate) -> bool {
        self.best.len() == self.k
            && self.k <= SMALL_K
            && self.best.last().is_some_and(|last| c.key < last.key)
    }

    pub(super) fn offer(&mut self, c: Candidate) {
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

    pub(super) fn into_sorted(mut self) -> Vec<Candidate> {
        if self.k > SMALL_K {
            self.best.sort_unstable_by_key(|c| std::cmp::Reverse(c.key));
            self.best.truncate(self.k);
        }
        self.best
    }
}

/// Applies the per-topic cap and the limit to ranked candidates.
pub(super) fn select(
    records: &[EntryRecord],
    ranked: &[Candidate],
    limit: usize,
    per_topic_cap: Option<usize>,
) -> Result<Vec<Candidate>, FormatError> {
    let mut out = Vec::with_capacity(limit);
    let mut per_topic: Vec<(u32, usize)> = Vec::new();
    for c in ranked {
        if out.len() >= limit {
            break;
        }
        let doc = c.doc();
        if let Some(cap) = per_topic_cap {
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
