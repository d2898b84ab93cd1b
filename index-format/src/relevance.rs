//! Evidence that a search hit is about its query, and where its score comes from: what the
//! hooks' relevance gate and `helix search --explain` read. Pure functions of a query, the
//! collection statistics it was scored with and the hits.

use crate::build::{TAG_WEIGHT, TITLE_WEIGHT, title_extras};
use crate::query::{B, K1, Query, Stats};
use crate::read::EntryRef;
use crate::tokenize::Analyzer;

/// How many of the best scores [`Evidence::separation`] compares a hit with.
pub const SEPARATION_DEPTH: usize = 10;

/// Signals that a hit is about the query rather than sharing a few words with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    /// Required query terms (words and identifier parts) the entry contains.
    pub matched: u32,
    /// Required query terms in all.
    pub required: u32,
    /// Required query terms no searched entry contains: names the knowledge does not have
    /// (a prompt about the user's own `calcTotal`).
    pub unknown: u32,
    /// Share of the required terms' idf mass that the entry contains, 0 to 1; terms no
    /// entry contains count at the largest idf.
    pub coverage: f32,
    /// The idf mass of the required terms some searched entry contains, and the idf each
    /// term no entry contains counts at: with [`mass`](Self::mass), what a caller needs to
    /// weigh the unknown terms otherwise than [`coverage`](Self::coverage) does (in an error
    /// they are mostly the tools' own words).
    pub known_mass: f32,
    pub unknown_idf: f32,
    /// The entry's score over the mean of the other scores among the best
    /// [`SEPARATION_DEPTH`] (missing ones count 0): how far it stands out from entries that
    /// merely share words with the query. 1 when all score alike.
    pub separation: f32,
    /// The idf the entry's matched required terms add up to: how much informative wording
    /// it shares with the query, whatever the query's length.
    pub mass: f32,
    /// The entry's score over the next hit's: a clear first place. Infinite when no hit
    /// follows.
    pub gap: f32,
}

impl Evidence {
    /// The evidence for the hit at `at` among `hits` (score and matched-term mask, best
    /// first, as one search returned them), scored for `query` with `stats`.
    pub fn of(query: &Query, stats: &Stats, hits: &[(f32, u32)], at: usize) -> Evidence {
        let Some(&(score, mask)) = hits.get(at) else {
            return Evidence {
                matched: 0,
                required: 0,
                unknown: 0,
                coverage: 0.0,
                known_mass: 0.0,
                unknown_idf: 0.0,
                separation: 0.0,
                mass: 0.0,
                gap: 0.0,
            };
        };
        let (mut matched, mut required, mut unknown) = (0u32, 0u32, 0u32);
        let (mut mass, mut total, mut known, mut unknown_idf) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for (i, t) in query.terms().iter().enumerate() {
            if !t.required {
                continue;
            }
            let idf = stats.idf(&t.text);
            required += 1;
            total += idf;
            if stats.df(&t.text) == 0 {
                unknown += 1;
                unknown_idf = idf;
            } else {
                known += idf;
            }
            if mask & (1 << i) != 0 {
                matched += 1;
                mass += idf;
            }
        }
        let others: f32 = hits
            .iter()
            .take(SEPARATION_DEPTH)
            .enumerate()
            .filter(|&(i, _)| i != at)
            .map(|(_, h)| h.0)
            .sum();
        let mean = others / (SEPARATION_DEPTH - 1) as f32;
        let next = hits.get(at + 1).map_or(0.0, |h| h.0);
        Evidence {
            matched,
            required,
            unknown,
            coverage: if total > 0.0 { mass / total } else { 0.0 },
            known_mass: known,
            unknown_idf,
            separation: lead(score, mean),
            mass,
            gap: lead(score, next),
        }
    }
}

/// `score` over `other`: infinite when nothing else scored, 0 when `score` is 0.
fn lead(score: f32, other: f32) -> f32 {
    if other > 0.0 {
        score / other
    } else if score > 0.0 {
        f32::INFINITY
    } else {
        0.0
    }
}

/// One query term's part in an entry's score.
#[derive(Debug, Clone, PartialEq)]
pub struct TermScore {
    pub term: String,
    pub idf: f32,
    /// Occurrences in the title field (title, `name`, `description`), the tags (with the
    /// topic, tokenizer 3 on) and the body.
    pub title: u32,
    pub tags: u32,
    pub body: u32,
    /// BM25 contribution (before the recency boost), split over the fields in proportion
    /// to their weighted term frequency.
    pub score: f32,
    pub title_score: f32,
    pub tags_score: f32,
    pub body_score: f32,
}

/// Where `entry`'s BM25 score for `query` comes from, term by term and field by field
/// (terms it does not contain are left out). Recomputed from the entry's text with the
/// tokenizer and field weights of the query's tokenizer version; the sum is the score
/// before the recency boost.
pub fn explain(entry: &EntryRef<'_>, query: &Query, stats: &Stats) -> Vec<TermScore> {
    let analyzer = Analyzer::for_version(query.tokenizer_version());
    let (title_w, tag_w) = if query.tokenizer_version() >= 2 {
        (TITLE_WEIGHT, TAG_WEIGHT)
    } else {
        (1, 1)
    };
    let extra: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(entry.extra_json).unwrap_or_default();
    let count = |texts: &mut dyn Iterator<Item = &str>, term: &str| -> u32 {
        let mut n = 0;
        for text in texts {
            analyzer.tokens(text, |t, _| n += u32::from(t == term));
        }
        n
    };
    let norm = K1 * (1.0 - B + B * entry.doc_len as f32 / stats.avgdl());
    let mut out = Vec::new();
    for q in query.terms() {
        let extras = title_extras(entry.title, |k| extra.get(k)?.as_str());
        let title = count(&mut std::iter::once(entry.title).chain(extras), &q.text);
        let topic = (query.tokenizer_version() >= 3).then_some(entry.topic);
        let tags = count(&mut entry.tags.iter().copied().chain(topic), &q.text);
        let body = count(&mut std::iter::once(entry.body), &q.text);
        let tf = (title * title_w + tags * tag_w + body) as f32;
        if tf == 0.0 {
            continue;
        }
        let idf = stats.idf(&q.text);
        let score = idf * (K1 + 1.0) * q.count as f32 * tf / (tf + norm);
        let part = |n: u32, w: u32| score * (n * w) as f32 / tf;
        out.push(TermScore {
            term: q.text.clone(),
            idf,
            title,
            tags,
            body,
            score,
            title_score: part(title, title_w),
            tags_score: part(tags, tag_w),
            body_score: part(body, 1),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildInfo, Entry, Index, SearchOptions, build};

    fn index(entries: &[Entry]) -> Vec<u8> {
        build(entries, &BuildInfo::default()).unwrap()
    }

    fn entry(id: &str, title: &str, body: &str) -> Entry {
        Entry {
            id: id.into(),
            topic: "t".into(),
            title: title.into(),
            body: body.into(),
            ..Entry::default()
        }
    }

    #[test]
    fn evidence_counts_matches_unknown_terms_and_separation() {
        let mut entries = vec![entry(
            "t/rebase.md",
            "Rebase onto another base",
            "git rebase --onto moves a branch",
        )];
        for i in 0..20 {
            entries.push(entry(
                &format!("t/n{i}.md"),
                "Note",
                "a branch of something",
            ));
        }
        let bytes = index(&entries);
        let idx = Index::open(&bytes[..]).unwrap();
        let query = Query::for_index("rebase branch calcTotal", &idx);
        let stats = Stats::of(&idx, &query).unwrap();
        let hits = idx
            .search_with(&query, &stats, &SearchOptions::default())
            .unwrap();
        assert_eq!(hits[0].entry.id, "t/rebase.md");
        let pairs: Vec<(f32, u32)> = hits.iter().map(|h| (h.score, h.matched)).collect();
        let e = Evidence::of(&query, &stats, &pairs, 0);
        // rebase, branch, calc, total are required; calctotal (whole identifier) is not.
        assert_eq!((e.matched, e.required, e.unknown), (2, 4, 2));
        assert!(e.coverage > 0.0 && e.coverage < 0.6, "{e:?}");
        assert!(e.separation > 3.0, "{e:?}");
        assert!(
            e.gap > 2.0 && e.gap == hits[0].score / hits[1].score,
            "{e:?}"
        );
        let idf: f32 = query
            .terms()
            .iter()
            .enumerate()
            .filter(|(i, t)| t.required && hits[0].matched & (1 << i) != 0)
            .map(|(_, t)| stats.idf(&t.text))
            .sum();
        assert!(idf > 0.0);
        assert!((e.mass - idf).abs() < 1e-4, "{e:?} {idf}");
        let other = Evidence::of(&query, &stats, &pairs, 1);
        assert_eq!(other.matched, 1);
        assert!(other.separation < 1.0, "{other:?}");
    }

    #[test]
    fn explain_splits_the_score_by_field_and_sums_to_it() {
        let mut e = entry(
            "design/skill.md",
            "Devils Advocate",
            "Argue the other side. Advocate for the opposite design.",
        );
        e.tags = vec!["design".into()];
        e.topic = "design".into();
        e.extra
            .insert("description".into(), "Challenge a design decision".into());
        let mut entries = vec![e];
        for i in 0..10 {
            entries.push(entry(&format!("t/n{i}.md"), "Other", "unrelated words"));
        }
        let bytes = index(&entries);
        let idx = Index::open(&bytes[..]).unwrap();
        let query = Query::for_index("advocate design decisions", &idx);
        let stats = Stats::of(&idx, &query).unwrap();
        let hit = &idx
            .search_with(&query, &stats, &SearchOptions::default())
            .unwrap()[0];
        let terms = explain(&hit.entry, &query, &stats);
        let by = |t: &str| terms.iter().find(|x| x.term == t).unwrap();
        assert_eq!((by("advocat").title, by("advocat").body), (1, 1));
        // Tagged `design`, in the `design` topic.
        assert_eq!(
            (by("design").title, by("design").tags, by("design").body),
            (1, 2, 1)
        );
        // "decisions" is found only through the description.
        assert_eq!((by("decision").title, by("decision").body), (1, 0));
        let sum: f32 = terms.iter().map(|t| t.score).sum();
        assert!(
            (sum - hit.score).abs() < 1e-4 * hit.score,
            "{sum} vs {}",
            hit.score
        );
        for t in &terms {
            let parts = t.title_score + t.tags_score + t.body_score;
            assert!((parts - t.score).abs() < 1e-4, "{t:?}");
        }
    }
}
