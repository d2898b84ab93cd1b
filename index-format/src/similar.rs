//! Near-duplicate entries: a similarity over title, body and sources with the index's own
//! tokenizer and idf, and the search of artifacts for entries too close to a new one.
//! Used by every write path (client store, MCP, server POST) and by `helix check`.

use std::collections::HashMap;

use crate::error::FormatError;
use crate::query::{Query, Stats, idf};
use crate::read::{EntryRef, Index};
use crate::search::{Mode, SearchOptions};
use crate::tokenize::{Analyzer, TokenKind};

/// The score from which two entries are near-duplicates. Chosen for precision on the tune
/// half of the labelled til pairs of `benches/duplicates/pairs.jsonl` and reported on the
/// held-out half (docs/benchmarks.md, "Duplicates"): a wrong refusal costs the user more than
/// a missed duplicate, which `helix check` and review still catch.
pub const DUPLICATE_THRESHOLD: f32 = 0.48;

/// Exponents of the geometric mean of [`Parts`]: the body carries most of the evidence, the
/// title must ask the same question, and each title must be found in the other entry.
const COVER_EXP: f32 = 0.3;
const BODY_EXP: f32 = 0.7;
const CROSS_EXP: f32 = 0.4;
/// Weight of the sources overlap against the text score, when both entries name sources.
const SOURCES_WEIGHT: f32 = 0.25;

/// Candidates looked at per check: the best BM25 hits for the new entry's heaviest terms.
const CANDIDATES: usize = 24;
/// Terms of the new entry used to find candidates.
const QUERY_TERMS: usize = 24;

/// The terms of one entry as the similarity reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fingerprint {
    /// Distinct title terms.
    title: Vec<String>,
    /// Body terms with their counts.
    body: Vec<(String, u32)>,
    /// Sources as written (already normalised by the entry parser).
    sources: Vec<String>,
}

impl Fingerprint {
    /// Terms of `title` and `body` as `analyzer` gives them (identifier parts left out:
    /// the whole identifier is enough to compare), sources as given.
    pub fn new<S: AsRef<str>>(
        analyzer: Analyzer,
        title: &str,
        body: &str,
        sources: &[S],
    ) -> Fingerprint {
        let mut t: Vec<String> = Vec::new();
        analyzer.tokens(title, |tok, kind| {
            if kind != TokenKind::Part && !t.iter().any(|x| x == tok) {
                t.push(tok.to_owned());
            }
        });
        let mut b: HashMap<String, u32> = HashMap::new();
        analyzer.tokens(body, |tok, kind| {
            if kind != TokenKind::Part {
                *b.entry(tok.to_owned()).or_default() += 1;
            }
        });
        let mut body: Vec<(String, u32)> = b.into_iter().collect();
        body.sort();
        t.sort();
        let mut sources: Vec<String> = sources.iter().map(|s| s.as_ref().to_owned()).collect();
        sources.sort();
        sources.dedup();
        Fingerprint {
            title: t,
            body,
            sources,
        }
    }

    fn of_entry(analyzer: Analyzer, e: &EntryRef<'_>) -> Fingerprint {
        Fingerprint::new(analyzer, e.title, e.body, &e.sources)
    }

    /// The `n` body and title terms with the largest tf·idf weight, heaviest first.
    fn heaviest(&self, n: usize, idf: &impl Fn(&str) -> f32) -> Vec<&str> {
        let mut w: Vec<(&str, f32)> = self
            .body
            .iter()
            .map(|(t, c)| (t.as_str(), tf(*c) * idf(t)))
            .collect();
        for t in &self.title {
            match w.iter_mut().find(|(x, _)| x == t) {
                Some((_, s)) => *s += 2.0 * idf(t),
                None => w.push((t.as_str(), 2.0 * idf(t))),
            }
        }
        w.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        w.into_iter().take(n).map(|(t, _)| t).collect()
    }
}

fn tf(count: u32) -> f32 {
    1.0 + libm::logf(count.max(1) as f32)
}

/// Cosine of two sorted term lists weighted by `weight(term, count)`.
fn cosine<T: AsRef<str>>(a: &[(T, u32)], b: &[(T, u32)], weight: impl Fn(&str, u32) -> f32) -> f32 {
    let norm = |v: &[(T, u32)]| {
        v.iter()
            .map(|(t, c)| weight(t.as_ref(), *c).powi(2))
            .sum::<f32>()
            .sqrt()
    };
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    let (mut i, mut j, mut dot) = (0, 0, 0.0f32);
    while i < a.len() && j < b.len() {
        match a[i].0.as_ref().cmp(b[j].0.as_ref()) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += weight(a[i].0.as_ref(), a[i].1) * weight(b[j].0.as_ref(), b[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    (dot / (na * nb)).clamp(0.0, 1.0)
}

/// How alike two entries are, from 0 (nothing shared) to 1 (the same terms): a product of
/// three pieces of evidence that must all be there — the titles ask the same question (the
/// idf-weighted share of the shorter title found in the longer one), the bodies say the same
/// thing (idf-weighted cosine, log tf) and each title's terms appear in the other entry —
/// blended with the Jaccard overlap of the sources when both name some. A weighted sum let
/// one strong part carry a pair: neighbouring questions of one tool share most body words.
/// `idf` gives a term's weight in the collection.
pub fn similarity(a: &Fingerprint, b: &Fingerprint, idf: &impl Fn(&str) -> f32) -> f32 {
    let p = Parts::of(a, b, idf);
    let text = if p.cover > 0.0 && p.body > 0.0 && p.cross > 0.0 {
        libm::powf(p.cover, COVER_EXP)
            * libm::powf(p.body, BODY_EXP)
            * libm::powf(p.cross, CROSS_EXP)
    } else {
        0.0
    };
    match p.sources {
        Some(s) => (text + SOURCES_WEIGHT * s) / (1.0 + SOURCES_WEIGHT),
        None => text,
    }
}

/// The parts [`similarity`] combines, each from 0 to 1 (for measurement).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    /// Cosine of the idf-weighted title terms.
    pub title: f32,
    /// Share of the idf weight of the shorter title (the one better covered) that the other
    /// title holds: 1 when one title contains the other.
    pub cover: f32,
    /// Cosine of the body terms (log tf · idf).
    pub body: f32,
    /// The smaller of the two shares of a title's idf weight found anywhere in the other
    /// entry (title or body): low when one title names a tool or object the other never does.
    pub cross: f32,
    /// `None` unless both entries name sources.
    pub sources: Option<f32>,
}

impl Parts {
    pub fn of(a: &Fingerprint, b: &Fingerprint, idf: &impl Fn(&str) -> f32) -> Parts {
        let title = cosine(&ones(&a.title), &ones(&b.title), |t, _| idf(t));
        let body = cosine(&a.body, &b.body, |t, c| tf(c) * idf(t));
        let weight = |v: &[String]| v.iter().map(|t| idf(t)).sum::<f32>();
        let (wa, wb) = (weight(&a.title), weight(&b.title));
        let shared: f32 = a
            .title
            .iter()
            .filter(|t| b.title.binary_search(t).is_ok())
            .map(|t| idf(t))
            .sum();
        let cover = if wa > 0.0 && wb > 0.0 {
            (shared / wa).max(shared / wb).min(1.0)
        } else {
            0.0
        };
        let found = |x: &Fingerprint, y: &Fingerprint, w: f32| {
            if w <= 0.0 {
                return 0.0;
            }
            let hit: f32 = x
                .title
                .iter()
                .filter(|t| {
                    y.title.binary_search(t).is_ok()
                        || y.body.binary_search_by(|(u, _)| u.cmp(t)).is_ok()
                })
                .map(|t| idf(t))
                .sum();
            (hit / w).min(1.0)
        };
        let cross = found(a, b, wa).min(found(b, a, wb));
        let sources = (!a.sources.is_empty() && !b.sources.is_empty()).then(|| {
            let shared = a.sources.iter().filter(|s| b.sources.contains(s)).count();
            let union = a.sources.len() + b.sources.len() - shared;
            shared as f32 / union as f32
        });
        Parts {
            title,
            cover,
            body,
            cross,
            sources,
        }
    }
}

fn ones(v: &[String]) -> Vec<(&str, u32)> {
    v.iter().map(|t| (t.as_str(), 1)).collect()
}

/// An entry too close to another one.
#[derive(Debug, Clone)]
pub struct Similar<'a> {
    /// Which of the searched artifacts holds it (its position in the slice given).
    pub artifact: usize,
    pub entry: EntryRef<'a>,
    pub score: f32,
}

/// Document frequencies summed over several artifacts (a project's artifact and its
/// pending overlay), as the idf of [`similarity`].
#[derive(Debug)]
pub struct Collection<'i, B> {
    indexes: &'i [&'i Index<B>],
    docs: f32,
}

impl<'i, B: AsRef<[u8]>> Collection<'i, B> {
    pub fn new(indexes: &'i [&'i Index<B>]) -> Self {
        let docs = indexes.iter().map(|i| i.len() as f32).sum();
        Collection { indexes, docs }
    }

    /// Lucene's BM25 idf of `term` over every artifact (the largest for a term none has).
    pub fn idf(&self, term: &str) -> f32 {
        let df: u32 = self
            .indexes
            .iter()
            .map(|i| {
                i.find_term(term)
                    .ok()
                    .flatten()
                    .map_or(0, |r| r.doc_freq.get())
            })
            .sum();
        idf(self.docs, df as f32)
    }

    /// Entries of every artifact whose similarity to (`title`, `body`, `sources`) is at
    /// least `threshold`, most similar first. Candidates are the BM25 hits for the new
    /// entry's heaviest terms plus the entries that share a source with it, so the cost
    /// does not grow with the number of entries beyond one search.
    pub fn near_duplicates<S: AsRef<str>>(
        &self,
        title: &str,
        body: &str,
        sources: &[S],
        threshold: f32,
    ) -> Result<Vec<Similar<'i>>, FormatError> {
        self.near(title, body, sources, threshold, None)
    }

    fn near<S: AsRef<str>>(
        &self,
        title: &str,
        body: &str,
        sources: &[S],
        threshold: f32,
        skip: Option<(usize, u32)>,
    ) -> Result<Vec<Similar<'i>>, FormatError> {
        let idf = |t: &str| self.idf(t);
        let mut out: Vec<Similar<'i>> = Vec::new();
        let mut prints: HashMap<u32, Fingerprint> = HashMap::new();
        for (n, index) in self.indexes.iter().enumerate() {
            let analyzer = Analyzer::for_version(index.tokenizer_version());
            let new = prints
                .entry(index.tokenizer_version())
                .or_insert_with(|| Fingerprint::new(analyzer, title, body, sources))
                .clone();
            let text = new.heaviest(QUERY_TERMS, &idf).join(" ");
            let query = Query::for_index(&text, *index);
            let mut candidates: Vec<EntryRef<'i>> = Vec::new();
            if !query.is_empty() {
                let stats = Stats::of(*index, &query)?;
                let opts = SearchOptions {
                    limit: CANDIDATES,
                    mode: Mode::Or,
                    snippet_chars: 0,
                    ..SearchOptions::default()
                };
                candidates.extend(
                    index
                        .search_with(&query, &stats, &opts)?
                        .into_iter()
                        .map(|h| h.entry),
                );
            }
            for s in sources {
                for e in index.by_source(s.as_ref())? {
                    if !candidates.iter().any(|c| c.doc == e.doc) {
                        candidates.push(e);
                    }
                }
            }
            for e in candidates {
                if skip == Some((n, e.doc)) {
                    continue;
                }
                let score = similarity(&new, &Fingerprint::of_entry(analyzer, &e), &idf);
                if score >= threshold {
                    out.push(Similar {
                        artifact: n,
                        entry: e,
                        score,
                    });
                }
            }
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry.id.cmp(b.entry.id)));
        Ok(out)
    }

    /// Every pair of entries of one artifact at least `threshold` alike, each pair once
    /// (`(a, b, score)` with `a.id < b.id`), most similar first.
    pub fn pairs(
        &self,
        threshold: f32,
    ) -> Result<Vec<(EntryRef<'i>, EntryRef<'i>, f32)>, FormatError> {
        let mut out = Vec::new();
        for (n, index) in self.indexes.iter().enumerate() {
            for doc in 0..index.len() {
                let e = index.entry(doc)?;
                for s in self.near(e.title, e.body, &e.sources, threshold, Some((n, doc)))? {
                    if s.artifact == n && e.id < s.entry.id {
                        out.push((e.clone(), s.entry, s.score));
                    }
                }
            }
        }
        out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.id.cmp(b.0.id)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildInfo, build, parse_entry};

    fn artifact(files: &[(&str, &str)]) -> Vec<u8> {
        let entries: Vec<_> = files
            .iter()
            .map(|(p, t)| parse_entry(p, t.as_bytes(), None).unwrap())
            .collect();
        build(&entries, &BuildInfo::default()).unwrap()
    }

    const NOTES: &[(&str, &str)] = &[
        (
            "postgres/clear-screen.md",
            "# Clear the screen in psql\n\nUse `\\! clear` to run the shell's clear command from psql.\n",
        ),
        (
            "postgres/count.md",
            "# Count records by type\n\nGroup by the type column and count(*) each group.\n",
        ),
        (
            "git/rebase.md",
            "---\nsources: [src/lib.rs]\n---\n# Rebase onto main\n\nUse git rebase --onto to move a branch.\n",
        ),
        (
            "vim/clear.md",
            "# Clear search highlighting in vim\n\nRun :noh to clear the highlight.\n",
        ),
    ];

    #[test]
    fn a_restated_entry_is_found_and_an_unrelated_one_is_not() {
        let bytes = artifact(NOTES);
        let index = Index::open(&bytes[..]).unwrap();
        let refs = [&index];
        let c = Collection::new(&refs);
        let none: [&str; 0] = [];
        let hits = c
            .near_duplicates(
                "Clearing the screen in psql",
                "In psql, `\\! clear` runs the clear command of the shell and clears the screen.",
                &none,
                DUPLICATE_THRESHOLD,
            )
            .unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].entry.id, "postgres/clear-screen.md");
        let hits = c
            .near_duplicates(
                "Clear the terminal in tmux",
                "Press prefix then C-l to clear the pane.",
                &none,
                DUPLICATE_THRESHOLD,
            )
            .unwrap();
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn sources_count_when_both_name_some() {
        let a = Fingerprint::new(Analyzer::CURRENT, "x", "alpha beta", &["src/a.rs"]);
        let b = Fingerprint::new(Analyzer::CURRENT, "x", "alpha beta", &["src/a.rs"]);
        let c = Fingerprint::new(Analyzer::CURRENT, "x", "alpha beta", &["src/b.rs"]);
        let one = |_: &str| 1.0;
        assert!((similarity(&a, &b, &one) - 1.0).abs() < 1e-5);
        assert!(similarity(&a, &c, &one) < 0.85);
        let none: [&str; 0] = [];
        let d = Fingerprint::new(Analyzer::CURRENT, "y", "gamma", &none);
        assert_eq!(similarity(&a, &d, &one), 0.0);
    }

    #[test]
    fn every_piece_of_evidence_is_needed() {
        let one = |_: &str| 1.0;
        let none: [&str; 0] = [];
        let body = "Run `\\! clear` from psql to clear the screen with the shell's command.";
        let a = Fingerprint::new(Analyzer::CURRENT, "Clear the screen in psql", body, &none);
        // The same body under a title asking something else: no title cover, no duplicate
        // (a weighted sum of the cosines gave this pair 0.55).
        let b = Fingerprint::new(Analyzer::CURRENT, "Count records by type", body, &none);
        assert_eq!(similarity(&a, &b, &one), 0.0);
        let p = Parts::of(&a, &b, &one);
        assert!((p.body - 1.0).abs() < 1e-5 && p.cover == 0.0, "{p:?}");
        // A title that contains the other one covers it fully; a title word the other entry
        // never uses lowers the cross share.
        let c = Fingerprint::new(
            Analyzer::CURRENT,
            "Clear the screen",
            "Hit ctrl-l in the terminal.",
            &none,
        );
        let p = Parts::of(&a, &c, &one);
        assert!((p.cover - 1.0).abs() < 1e-5, "{p:?}");
        assert!(p.cross < 0.7, "psql is not in the other entry: {p:?}");
    }

    #[test]
    fn pairs_lists_each_pair_once() {
        let mut files = NOTES.to_vec();
        files.push((
            "postgres/clear-screen-2.md",
            "# Clear the screen in psql (2)\n\nRun `\\! clear` from psql: the shell's clear command clears it.\n",
        ));
        let bytes = artifact(&files);
        let index = Index::open(&bytes[..]).unwrap();
        let refs = [&index];
        let c = Collection::new(&refs);
        let pairs = c.pairs(DUPLICATE_THRESHOLD).unwrap();
        let ids: Vec<_> = pairs.iter().map(|(a, b, _)| (a.id, b.id)).collect();
        assert_eq!(
            ids,
            [("postgres/clear-screen-2.md", "postgres/clear-screen.md")]
        );
    }
}
