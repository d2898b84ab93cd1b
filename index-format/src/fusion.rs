//! Fusion of lexical (BM25) and semantic (vector) candidates into one ranking: what the
//! hooks, `helix search`, MCP `search`, the server's search API and the web view rank by
//! when an artifact has vectors. Pure: two ranked lists in, one list out.
//!
//! Each list is best first; an item is `(key, score)`, the key whatever names an entry
//! across the artifacts searched together (a document number, or `(artifact, doc)`). Two
//! ways to fuse, chosen by [`FusionOptions::fusion`]:
//!
//! - [`Fusion::Rrf`], reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009):
//!   `Σ weight / (k + rank)`, rank 1 for a list's best. Only the ranks count, so BM25's
//!   unbounded scores and cosines need no common scale.
//! - [`Fusion::ScoreSum`], a convex combination of scores normalised on fixed bounds (as
//!   "TM2C2" in Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid
//!   Retrieval", TOIS 2023): `w_lex · bm25 / best_bm25 + w_sem · (cos − min_cosine) / (1 −
//!   min_cosine)`, each part in 0..=1.
//!
//! Semantic candidates below [`FusionOptions::min_cosine`] add nothing and are not hits on
//! their own (a vector search returns `k` rows whether or not anything is related), but
//! their cosine is still recorded on a lexical hit. Every hit keeps its lexical rank and
//! score and its cosine: the relevance gate reads them as evidence. A weight of 0 turns a
//! list off (hits scoring 0 are dropped). Ties are broken by key, so the output depends
//! only on the two lists and the options.

use std::collections::BTreeMap;

/// How the two lists' scores combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with constant `k` (60 in the paper and most systems).
    Rrf { k: f32 },
    /// Weighted sum of scores normalised to 0..=1 (lexical: by the list's best score;
    /// semantic: `(cos − min_cosine) / (1 − min_cosine)`).
    ScoreSum,
}

/// Fusion parameters. `Default`: RRF with k = 60, both weights 1, no cosine floor,
/// limit 10. The weights and the floor are what an evaluation on judged queries tunes.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionOptions {
    pub fusion: Fusion,
    pub lexical_weight: f32,
    pub semantic_weight: f32,
    /// Semantic candidates below this cosine add nothing.
    pub min_cosine: f32,
    /// At most this many hits; 0 for all.
    pub limit: usize,
}

impl Default for FusionOptions {
    fn default() -> Self {
        FusionOptions {
            fusion: Fusion::Rrf { k: 60.0 },
            lexical_weight: 1.0,
            semantic_weight: 1.0,
            min_cosine: 0.0,
            limit: 10,
        }
    }
}

/// One fused result, best first, with the evidence of each list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedHit<K> {
    pub key: K,
    /// The fused score the list is sorted by.
    pub score: f32,
    /// Rank in the lexical list (1 = its best) and the score given with it, when the
    /// lexical search found the entry.
    pub lexical_rank: Option<u32>,
    pub lexical_score: Option<f32>,
    /// Rank among the semantic candidates at or above `min_cosine` (1 = the best).
    pub semantic_rank: Option<u32>,
    /// The cosine from the semantic list, when it holds the entry (also below
    /// `min_cosine`, which then adds nothing to the score).
    pub cosine: Option<f32>,
}

impl<K> FusedHit<K> {
    fn new(key: K) -> Self {
        FusedHit {
            key,
            score: 0.0,
            lexical_rank: None,
            lexical_score: None,
            semantic_rank: None,
            cosine: None,
        }
    }
}

/// Fuses `lexical` and `semantic` (each best first, `(key, score)`; a key's later repeats in
/// one list are ignored) into one ranking: fused score descending, then key ascending, at
/// most `opts.limit` hits.
pub fn fuse<K: Ord + Copy>(
    lexical: impl IntoIterator<Item = (K, f32)>,
    semantic: impl IntoIterator<Item = (K, f32)>,
    opts: &FusionOptions,
) -> Vec<FusedHit<K>> {
    let lexical = first_of_each(lexical);
    let semantic = first_of_each(semantic);
    let mut hits: BTreeMap<K, FusedHit<K>> = BTreeMap::new();

    let best_lexical = lexical
        .iter()
        .map(|&(_, s)| s)
        .filter(|s| s.is_finite())
        .fold(0.0f32, f32::max);
    for (i, &(key, score)) in lexical.iter().enumerate() {
        let rank = i as u32 + 1;
        let part = match opts.fusion {
            Fusion::Rrf { k } => opts.lexical_weight / (k + rank as f32),
            Fusion::ScoreSum if best_lexical > 0.0 => {
                opts.lexical_weight * (score / best_lexical).clamp(0.0, 1.0)
            }
            Fusion::ScoreSum => 0.0,
        };
        let hit = hits.entry(key).or_insert_with(|| FusedHit::new(key));
        hit.lexical_rank = Some(rank);
        hit.lexical_score = Some(score);
        hit.score += part;
    }

    let floor = opts.min_cosine;
    let mut rank = 0u32;
    for &(key, cosine) in &semantic {
        if cosine.is_nan() || cosine < floor {
            if let Some(hit) = hits.get_mut(&key) {
                hit.cosine = Some(cosine);
            }
            continue;
        }
        rank += 1;
        let part = match opts.fusion {
            Fusion::Rrf { k } => opts.semantic_weight / (k + rank as f32),
            Fusion::ScoreSum if floor < 1.0 => {
                opts.semantic_weight * ((cosine - floor) / (1.0 - floor)).clamp(0.0, 1.0)
            }
            Fusion::ScoreSum => opts.semantic_weight,
        };
        let hit = hits.entry(key).or_insert_with(|| FusedHit::new(key));
        hit.semantic_rank = Some(rank);
        hit.cosine = Some(cosine);
        hit.score += part;
    }

    let mut out: Vec<FusedHit<K>> = hits.into_values().filter(|h| h.score > 0.0).collect();
    // The map gave key order; a stable sort by score keeps it among equal scores.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    if opts.limit > 0 {
        out.truncate(opts.limit);
    }
    out
}

/// The list with each key's first (best) item only, in order.
fn first_of_each<K: Ord + Copy>(list: impl IntoIterator<Item = (K, f32)>) -> Vec<(K, f32)> {
    let mut seen = std::collections::BTreeSet::new();
    list.into_iter().filter(|(k, _)| seen.insert(*k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<K: Copy>(hits: &[FusedHit<K>]) -> Vec<K> {
        hits.iter().map(|h| h.key).collect()
    }

    fn rrf() -> FusionOptions {
        FusionOptions::default()
    }

    #[test]
    fn rrf_scores_are_reciprocal_ranks_summed() {
        let lexical = [(7u32, 12.5), (3, 9.0), (5, 4.0)];
        let semantic = [(3u32, 0.71), (9, 0.64), (7, 0.30)];
        let hits = fuse(lexical, semantic, &rrf());
        // 3: 1/62 + 1/61; 7: 1/61 + 1/63; 9: 1/62; 5: 1/63.
        assert_eq!(keys(&hits), [3, 7, 9, 5]);
        let want = [
            1.0 / 62.0 + 1.0 / 61.0,
            1.0 / 61.0 + 1.0 / 63.0,
            1.0 / 62.0,
            1.0 / 63.0,
        ];
        for (h, w) in hits.iter().zip(want) {
            assert!((h.score - w).abs() < 1e-7, "{h:?} {w}");
        }
        // The evidence of both lists stays on each hit.
        assert_eq!(
            (hits[0].lexical_rank, hits[0].lexical_score),
            (Some(2), Some(9.0))
        );
        assert_eq!(
            (hits[0].semantic_rank, hits[0].cosine),
            (Some(1), Some(0.71))
        );
        assert_eq!((hits[2].lexical_rank, hits[2].cosine), (None, Some(0.64)));
        assert_eq!((hits[3].semantic_rank, hits[3].cosine), (None, None));
    }

    #[test]
    fn ties_are_broken_by_key_whatever_the_input_order() {
        // 4 is first lexically, 2 first semantically: equal RRF scores.
        let a = fuse([(4u32, 3.0)], [(2u32, 0.9)], &rrf());
        assert_eq!(keys(&a), [2, 4]);
        assert_eq!(a[0].score, a[1].score);
        let b = fuse([(2u32, 3.0)], [(4u32, 0.9)], &rrf());
        assert_eq!(keys(&b), [2, 4]);
        // Keys of several artifacts: (artifact, doc).
        let c = fuse([((1u8, 0u32), 3.0)], [((0u8, 9u32), 0.5)], &rrf());
        assert_eq!(keys(&c), [(0, 9), (1, 0)]);
    }

    #[test]
    fn the_cosine_floor_drops_weak_semantic_candidates_but_keeps_their_evidence() {
        let opts = FusionOptions {
            min_cosine: 0.5,
            ..rrf()
        };
        let hits = fuse(
            [(1u32, 2.0)],
            [(8u32, 0.8), (1, 0.2), (6, 0.1), (4, 0.6)],
            &opts,
        );
        // 6 is below the floor and only semantic: gone. 1 is lexical, so its low cosine is
        // recorded without a rank or a share of the score; 4 ranks second among the kept.
        assert_eq!(keys(&hits), [1, 8, 4]);
        assert_eq!((hits[0].cosine, hits[0].semantic_rank), (Some(0.2), None));
        assert!((hits[0].score - 1.0 / 61.0).abs() < 1e-7);
        assert_eq!(hits[2].semantic_rank, Some(2));
        // A NaN cosine is below any floor.
        let hits = fuse([], [(3u32, f32::NAN), (2, 0.6)], &opts);
        assert_eq!(keys(&hits), [2]);
    }

    #[test]
    fn weights_and_limit() {
        let lexical = [(1u32, 5.0), (2, 4.0), (3, 3.0)];
        let semantic = [(9u32, 0.9), (3, 0.8)];
        let off = FusionOptions {
            semantic_weight: 0.0,
            ..rrf()
        };
        // Without the semantic list: the lexical order, nothing else.
        assert_eq!(keys(&fuse(lexical, semantic, &off)), [1, 2, 3]);
        let off = FusionOptions {
            lexical_weight: 0.0,
            ..rrf()
        };
        assert_eq!(keys(&fuse(lexical, semantic, &off)), [9, 3]);
        let heavy = FusionOptions {
            semantic_weight: 3.0,
            limit: 2,
            ..rrf()
        };
        assert_eq!(keys(&fuse(lexical, semantic, &heavy)), [3, 9]);
        let all = FusionOptions { limit: 0, ..rrf() };
        assert_eq!(fuse(lexical, semantic, &all).len(), 4);
        assert!(fuse::<u32>([], [], &rrf()).is_empty());
    }

    #[test]
    fn repeated_keys_count_once_at_their_best_rank() {
        let hits = fuse(
            [(1u32, 5.0), (2, 4.0), (1, 1.0)],
            [(2u32, 0.9), (2, 0.1)],
            &rrf(),
        );
        assert_eq!(keys(&hits), [2, 1]);
        assert_eq!(
            (hits[1].lexical_rank, hits[1].lexical_score),
            (Some(1), Some(5.0))
        );
        assert_eq!(
            (hits[0].semantic_rank, hits[0].cosine),
            (Some(1), Some(0.9))
        );
    }

    #[test]
    fn score_sum_normalises_on_fixed_bounds() {
        let opts = FusionOptions {
            fusion: Fusion::ScoreSum,
            ..rrf()
        };
        let lexical = [(1u32, 10.0), (2, 5.0)];
        let semantic = [(2u32, 0.75), (3, 0.5)];
        let hits = fuse(lexical, semantic, &opts);
        // 1: 10/10; 2: 5/10 + 0.75; 3: 0.5.
        assert_eq!(keys(&hits), [2, 1, 3]);
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        assert_eq!(scores, [1.25, 1.0, 0.5]);
        // With a floor of 0.5, a cosine of 0.75 is half way: 2 ties with 1 (by key), and
        // 3, at the floor, adds nothing.
        let opts = FusionOptions {
            min_cosine: 0.5,
            ..opts
        };
        let hits = fuse(lexical, semantic, &opts);
        assert_eq!(keys(&hits), [1, 2]);
        assert_eq!((hits[0].score, hits[1].score), (1.0, 1.0));
        // A list whose best is 0 (or NaN) adds nothing; nothing panics.
        let hits = fuse([(1u32, 0.0), (2, f32::NAN)], [(3u32, 0.75)], &opts);
        assert_eq!(keys(&hits), [3]);
        let lexical_only = FusionOptions {
            semantic_weight: 0.0,
            ..opts
        };
        let hits = fuse([(4u32, 2.0), (5, 8.0)], [(6u32, 0.9)], &lexical_only);
        assert_eq!(keys(&hits), [5, 4]);
        assert!((hits[1].score - 0.25).abs() < 1e-6);
    }
}
