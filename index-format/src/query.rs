//! A query tokenized once, and the collection statistics BM25 scores it with. Statistics
//! may be summed over several artifacts searched together (followed projects, pending
//! overlays), so that a score does not depend on which artifact an entry sits in.

use crate::error::FormatError;
use crate::read::Index;
use crate::tokenize::{Analyzer, TokenKind};

/// More distinct query terms than this are ignored (the rest of a pasted log adds noise,
/// not recall); repeats of the kept terms still count.
pub const MAX_QUERY_TERMS: usize = 32;

/// Lucene's BM25 defaults.
pub(crate) const K1: f32 = 1.2;
pub(crate) const B: f32 = 0.75;

/// One distinct term of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    pub text: String,
    /// Words and identifier parts are required in AND mode; whole identifiers only add score.
    pub required: bool,
    /// How often the query says it (query term frequency): a paragraph-long query that
    /// repeats a word is about that word, as in Lucene.
    pub count: u32,
}

/// A tokenized query, for artifacts of one tokenizer version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    tokenizer_version: u32,
    terms: Vec<QueryTerm>,
}

impl Query {
    /// `text` tokenized as artifacts of `tokenizer_version` were (the current rules for a
    /// version newer than this code knows).
    pub fn new(text: &str, tokenizer_version: u32) -> Query {
        let mut terms: Vec<QueryTerm> = Vec::new();
        Analyzer::for_version(tokenizer_version).tokens(text, |t, kind| {
            let required = kind != TokenKind::Compound;
            if let Some(q) = terms.iter_mut().find(|q| q.text == t) {
                q.required |= required;
                q.count = q.count.saturating_add(1);
            } else if terms.len() < MAX_QUERY_TERMS {
                terms.push(QueryTerm {
                    text: t.to_owned(),
                    required,
                    count: 1,
                });
            }
        });
        Query {
            tokenizer_version,
            terms,
        }
    }

    /// `text` tokenized for searching `index`.
    pub fn for_index<B: AsRef<[u8]>>(text: &str, index: &Index<B>) -> Query {
        Query::new(text, index.tokenizer_version())
    }

    pub fn terms(&self) -> &[QueryTerm] {
        &self.terms
    }

    pub fn tokenizer_version(&self) -> u32 {
        self.tokenizer_version
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Keeps only the first term: for a query that is one identifier (`merge_base`), its
    /// whole-identifier token, without the parts (which match far more, and cost more).
    pub fn keep_first(&mut self) {
        self.terms.truncate(1);
    }

    /// Keeps at most `max` of the terms found in more than `limit` entries (the commonest
    /// go first), and every rarer term. A common term adds little to a score (its idf is
    /// low) but costs the most: its posting list is long. Returns how many were dropped.
    pub fn drop_common(&mut self, stats: &Stats, max: usize, limit: u64) -> usize {
        let mut common: Vec<(u64, usize)> = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| (stats.df(&t.text), i))
            .filter(|&(df, _)| df > limit)
            .collect();
        if common.len() <= max {
            return 0;
        }
        common.sort_unstable_by(|a, b| b.cmp(a));
        let drop: Vec<usize> = common[..common.len() - max]
            .iter()
            .map(|&(_, i)| i)
            .collect();
        let mut i = 0;
        self.terms.retain(|_| {
            let keep = !drop.contains(&i);
            i += 1;
            keep
        });
        drop.len()
    }

    /// For a search whose hits must contain every term (a path written out): keeps the `n`
    /// rarest terms, which already narrow the candidates to a few, at the cost of their
    /// short posting lists; keeps none when some term is in no entry (nothing can contain
    /// them all).
    pub fn keep_rarest(&mut self, stats: &Stats, n: usize) {
        let mut by_df: Vec<(u64, usize)> = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| (stats.df(&t.text), i))
            .collect();
        by_df.sort_unstable();
        if by_df.first().is_some_and(|&(df, _)| df == 0) {
            self.terms.clear();
            return;
        }
        let keep: Vec<usize> = by_df.iter().take(n).map(|&(_, i)| i).collect();
        let mut i = 0;
        self.terms.retain(|_| {
            let kept = keep.contains(&i);
            i += 1;
            kept
        });
    }
}

/// Collection statistics: entries, indexed tokens and each query term's document frequency,
/// summed over every artifact searched together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub docs: u64,
    pub tokens: u64,
    /// (term, entries containing it). Keyed by the term's text: artifacts of different
    /// tokenizer versions contribute to the form their own queries use.
    df: Vec<(String, u64)>,
}

impl Stats {
    /// The statistics of `index` alone for `query`.
    pub fn of<B: AsRef<[u8]>>(index: &Index<B>, query: &Query) -> Result<Stats, FormatError> {
        let mut s = Stats::default();
        s.add(index, query)?;
        Ok(s)
    }

    /// Adds the entries, tokens and document frequencies of `index` (queried with `query`,
    /// tokenized for it).
    pub fn add<B: AsRef<[u8]>>(
        &mut self,
        index: &Index<B>,
        query: &Query,
    ) -> Result<(), FormatError> {
        self.docs += u64::from(index.len());
        self.tokens += index.total_tokens();
        for q in &query.terms {
            let df = index.find_term(&q.text)?.map_or(0, |r| r.doc_freq.get());
            match self.df.iter_mut().find(|(t, _)| *t == q.text) {
                Some((_, n)) => *n += u64::from(df),
                None => self.df.push((q.text.clone(), u64::from(df))),
            }
        }
        Ok(())
    }

    /// Entries containing `term` (0 when no artifact has it).
    pub fn df(&self, term: &str) -> u64 {
        self.df
            .iter()
            .find(|(t, _)| t == term)
            .map_or(0, |(_, n)| *n)
    }

    /// Lucene's BM25 idf of `term`: `ln(1 + (N − df + 0.5) / (df + 0.5))`. A term no entry
    /// has gets the largest idf (it is informative; it just matches nothing).
    pub fn idf(&self, term: &str) -> f32 {
        idf(self.docs as f32, self.df(term) as f32)
    }

    /// Average indexed tokens per entry (at least 1).
    pub fn avgdl(&self) -> f32 {
        if self.docs == 0 {
            return 1.0;
        }
        (self.tokens as f32 / self.docs as f32).max(1.0)
    }
}

pub(crate) fn idf(n: f32, df: f32) -> f32 {
    // libm's, not the C library's: a hook process then maps no libm.so.
    libm::logf(1.0 + (n - df + 0.5) / (df + 0.5))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildInfo, Entry, build};

    /// 100 entries: "w{i}" is in the first i * 10 of them; "rare" in one.
    fn spread_index() -> Vec<u8> {
        let entries: Vec<Entry> = (0..100)
            .map(|d| Entry {
                id: format!("t/e{d:03}.md"),
                topic: "t".into(),
                title: "x".into(),
                body: (1..=9)
                    .filter(|i| d < i * 10)
                    .map(|i| format!("w{i}"))
                    .chain((d == 0).then(|| "rare".to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
                ..Entry::default()
            })
            .collect();
        build(&entries, &BuildInfo::default()).unwrap()
    }

    #[test]
    fn drop_common_keeps_rare_terms_and_the_least_common_of_the_rest() {
        let bytes = spread_index();
        let index = Index::open(&bytes[..]).unwrap();
        let mut q = Query::for_index("w9 rare w1 w5 w3 nosuch", &index);
        let stats = Stats::of(&index, &q).unwrap();
        // Common: in more than 5 entries: w1 (10), w3 (30), w5 (50), w9 (90).
        assert_eq!(q.drop_common(&stats, 2, 5), 2);
        let kept: Vec<&str> = q.terms().iter().map(|t| t.text.as_str()).collect();
        assert_eq!(kept, ["rare", "w1", "w3", "nosuch"]);
        assert_eq!(q.drop_common(&stats, 2, 5), 0);
    }

    #[test]
    fn keep_rarest_keeps_the_rarest_terms_or_none_when_one_is_in_no_entry() {
        let index_bytes = spread_index();
        let index = Index::open(&index_bytes[..]).unwrap();
        let mut q = Query::for_index("w9 w3 rare w5", &index);
        let stats = Stats::of(&index, &q).unwrap();
        q.keep_rarest(&stats, 2);
        let kept: Vec<&str> = q.terms().iter().map(|t| t.text.as_str()).collect();
        assert_eq!(kept, ["w3", "rare"], "the two rarest, in query order");
        let mut q = Query::for_index("rare w1 nosuch", &index);
        let stats = Stats::of(&index, &q).unwrap();
        q.keep_rarest(&stats, 2);
        assert!(q.is_empty(), "no entry has every term");
    }
}
