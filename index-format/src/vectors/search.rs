//! Brute-force vector search: every row's int8 codes against the query, coded once as
//! int16, in exact integer arithmetic; the best `k` kept in a small sorted buffer. The
//! filters (topic, hidden entries) are read only for the rows that would enter it.

use super::{Vectors, quantize_with};
use crate::error::FormatError;
use crate::layout::StrRef;

/// Which entries [`Vectors::top_k`] may return. `Default`: every topic, hidden entries
/// left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VectorFilter {
    /// Only entries of this topic.
    pub topic: Option<String>,
    /// Also entries out of default results: retired or superseded (`helix search --all`).
    pub include_hidden: bool,
}

/// One vector search result: an entry row and its cosine with the query, as the codes
/// give it (within 0.0014 of the exact cosine over random 384-dimension vectors;
/// docs/index-format.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    pub doc: u32,
    pub cosine: f32,
}

/// How many rows ahead of the one it scores `top_k` touches (`Vectors::touch`). Measured
/// with the rows in memory but not in the CPU's caches (`benches/vectors.rs`, `top_k_cold`):
/// the hardware prefetcher alone left the scan 1.7 times as slow as a plain read of the
/// same bytes; 2 to 6 rows ahead all do about equally well.
const TOUCH_AHEAD: usize = 4;

/// Above this `k`, keeping every candidate and sorting once beats the insertion buffer.
const SMALL_K: usize = 256;

/// The query coded for the int8 rows: int16 components, the largest ±[`query_limit`], and
/// the scale `1 / ‖codes‖₂` that makes it unit length. Finer than the rows' int8 (so the
/// query adds next to no error of its own) at the same cost: the dot product widens the
/// row's codes to 16 bits either way.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryCodes {
    pub(crate) codes: Vec<i16>,
    pub(crate) scale: f32,
}

/// The largest query code for `dim` components: small enough that a dot product with any
/// codes (|code| ≤ 128, so damaged bytes too) stays within `i32`.
pub(crate) fn query_limit(dim: usize) -> f64 {
    let bound = f64::from(i32::MAX) / (128.0 * dim.max(1) as f64);
    bound.floor().min(f64::from(i16::MAX))
}

impl QueryCodes {
    /// `None` for a query without a direction (all zero) or with a non-finite component.
    pub(crate) fn new(query: &[f32]) -> Option<Self> {
        let mut codes = vec![0i16; query.len()];
        let mut norm2 = 0.0f64;
        quantize_with(query, query_limit(query.len()), |i, c| {
            codes[i] = c as i16;
            norm2 += c * c;
        })
        .ok()?;
        Some(QueryCodes {
            codes,
            scale: (1.0 / norm2.sqrt()) as f32,
        })
    }
}

/// Lanes of the dot product: independent accumulators, so the loop vectorises.
const LANES: usize = 32;

/// `Σ q[i]·c[i]`, exact: `query_limit` keeps every partial sum within `i32` (wrapping adds
/// only so that no debug build can panic on bytes nobody checked). Written for LLVM's
/// auto-vectoriser: on baseline x86-64 (SSE2) the 32 lanes become sign extensions of the
/// codes and `pmaddwd`, 16 products per two instructions; no `unsafe`, no intrinsics.
#[inline(always)]
pub(crate) fn dot(q: &[i16], c: &[i8]) -> i32 {
    let (q_chunks, q_tail) = q.as_chunks::<LANES>();
    let (c_chunks, c_tail) = c.as_chunks::<LANES>();
    let mut acc = [0i32; LANES];
    for (qa, ca) in q_chunks.iter().zip(c_chunks) {
        for ((a, &x), &y) in acc.iter_mut().zip(qa).zip(ca) {
            *a = a.wrapping_add(i32::from(x) * i32::from(y));
        }
    }
    let tail = q_tail.iter().zip(c_tail).fold(0i32, |s, (&x, &y)| {
        s.wrapping_add(i32::from(x) * i32::from(y))
    });
    acc.iter().fold(tail, |s, &a| s.wrapping_add(a))
}

/// The best `k` (score, doc) pairs seen, best first; ties keep the lower document (rows are
/// offered in document order, and an equal score never displaces one already kept).
struct Best {
    k: usize,
    items: Vec<(f32, u32)>,
}

impl Best {
    fn new(k: usize) -> Self {
        Best {
            k,
            items: Vec::with_capacity(if k > SMALL_K { 0 } else { k + 1 }),
        }
    }

    /// Whether `score` certainly stays out.
    fn rejects(&self, score: f32) -> bool {
        !score.is_finite()
            || (self.k <= SMALL_K
                && self.items.len() == self.k
                && self.items.last().is_some_and(|last| score <= last.0))
    }

    fn offer(&mut self, score: f32, doc: u32) {
        if self.k > SMALL_K {
            self.items.push((score, doc));
            return;
        }
        let at = self.items.partition_point(|e| e.0 >= score);
        self.items.insert(at, (score, doc));
        self.items.truncate(self.k);
    }

    fn into_sorted(mut self) -> Vec<(f32, u32)> {
        if self.k > SMALL_K {
            self.items
                .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            self.items.truncate(self.k);
        }
        self.items
    }
}

impl Vectors<'_> {
    /// The `k` entries whose vectors are nearest `query` (same model, `dim` components;
    /// normalised here, so any length will do) by cosine, best first, ties by document.
    /// Entries without a vector never match; hidden ones (retired, superseded) only with
    /// `include_hidden`; a topic the artifact lacks matches nothing. A query of the wrong
    /// dimension is a [`FormatError::QueryDimension`]; one without a direction (zero or
    /// not finite) finds nothing.
    ///
    /// Every row is scanned: `dim` bytes each, about 38 MB at 100k entries × 384 dims
    /// (docs/index-format.md gives the time).
    pub fn top_k(
        &self,
        query: &[f32],
        k: usize,
        filter: &VectorFilter,
    ) -> Result<Vec<VectorHit>, FormatError> {
        if query.len() != self.dim {
            return Err(FormatError::QueryDimension {
                expected: self.dim as u32,
                got: query.len() as u64,
            });
        }
        let Some(q) = QueryCodes::new(query) else {
            return Ok(Vec::new());
        };
        if k == 0 {
            return Ok(Vec::new());
        }
        let topic = match &filter.topic {
            Some(name) => match self.topic_row(name)? {
                Some(row) => Some(row),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let hidden = if filter.include_hidden {
            &[]
        } else {
            self.hidden
        };
        let admits = |doc: u32| {
            topic.is_none_or(|t| {
                self.entries
                    .get(doc as usize)
                    .is_some_and(|e| e.topic.get() == t)
            }) && hidden.binary_search_by_key(&doc, |h| h.doc.get()).is_err()
        };
        let mut best = Best::new(k);
        let mut touched = 0u8;
        for (doc, (scale, codes)) in self.rows().enumerate() {
            touched ^= self.touch(doc + TOUCH_AHEAD);
            // No vector (0), or a damaged scale: not a candidate.
            if scale.is_nan() || scale <= 0.0 {
                continue;
            }
            let score = dot(&q.codes, codes) as f32 * scale;
            if best.rejects(score) || !admits(doc as u32) {
                continue;
            }
            best.offer(score, doc as u32);
        }
        std::hint::black_box(touched);
        Ok(best
            .into_sorted()
            .into_iter()
            .map(|(score, doc)| VectorHit {
                doc,
                cosine: score * q.scale,
            })
            .collect())
    }

    /// Reads one byte of each cache line of row `doc` (nothing past the last row): a load
    /// that starts the row's way from memory while the arithmetic of the rows before it
    /// runs. Safe Rust has no prefetch instruction; the byte is only xor-ed away.
    #[inline(always)]
    fn touch(&self, doc: usize) -> u8 {
        let start = doc.saturating_mul(self.dim);
        let row = self
            .codes
            .get(start..start.saturating_add(self.dim))
            .unwrap_or(&[]);
        row.iter().step_by(64).fold(0u8, |t, &c| t ^ c as u8)
    }

    /// The `TOPICS` row named `name` (binary search; topics are sorted by name).
    fn topic_row(&self, name: &str) -> Result<Option<u32>, FormatError> {
        let text = |r: StrRef| {
            let start = r.offset.get() as usize;
            start
                .checked_add(r.len.get() as usize)
                .and_then(|end| self.strings.get(start..end))
                .ok_or(FormatError::Corrupt {
                    what: "topic name",
                    offset: u64::from(r.offset.get()),
                })
        };
        let (mut lo, mut hi) = (0usize, self.topics.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match text(self.topics[mid].name)?.cmp(name.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid as u32)),
            }
        }
        Ok(None)
    }
}
