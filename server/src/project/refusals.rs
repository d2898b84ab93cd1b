//! Writes refused because they held what looks like a credential: counted by provider and
//! kind, and the last few with who sent them and where in the entry — never the value —
//! for the health page. Kept in `refusals.json` (written atomically, best effort).

use std::collections::VecDeque;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::sys::write_atomic;

/// Refusals remembered one by one (the counts cover every one).
const KEEP: usize = 50;

/// How many refusals of one provider and kind, and when the last was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCount {
    pub provider: String,
    pub kind: String,
    pub count: u64,
    pub last: i64,
}

/// One refused write: when, whose token, the field and line that held the credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub at: i64,
    pub by: String,
    pub field: String,
    pub line: u32,
    pub provider: String,
    pub kind: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Refusals {
    pub counts: Vec<KindCount>,
    pub recent: VecDeque<Refusal>,
}

/// [`Refusals`] and the file that keeps them.
#[derive(Debug)]
pub(super) struct Book {
    path: PathBuf,
    pub(super) refusals: Refusals,
}

impl Book {
    /// Reads the file; a missing or unreadable one starts empty (these are statistics).
    pub(super) fn open(path: PathBuf) -> Book {
        let refusals = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Book { path, refusals }
    }

    pub(super) fn record(&mut self, r: Refusal) {
        let c = &mut self.refusals.counts;
        match c
            .iter_mut()
            .find(|k| k.provider == r.provider && k.kind == r.kind)
        {
            Some(k) => {
                k.count += 1;
                k.last = r.at;
            }
            None => c.push(KindCount {
                provider: r.provider.clone(),
                kind: r.kind.clone(),
                count: 1,
                last: r.at,
            }),
        }
        c.sort_by(|a, b| b.count.cmp(&a.count).then(b.last.cmp(&a.last)));
        self.refusals.recent.push_front(r);
        self.refusals.recent.truncate(KEEP);
        match serde_json::to_vec_pretty(&self.refusals) {
            Ok(bytes) => {
                if let Err(e) = write_atomic(&self.path, &bytes) {
                    tracing::warn!(path = %self.path.display(), error = %e, "cannot save the refusals");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot encode the refusals"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(at: i64, provider: &str, kind: &str) -> Refusal {
        Refusal {
            at,
            by: "alice".into(),
            field: "body".into(),
            line: 3,
            provider: provider.into(),
            kind: kind.into(),
        }
    }

    #[test]
    fn refusals_are_counted_by_kind_and_kept_across_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("refusals.json");
        let mut b = Book::open(path.clone());
        b.record(refusal(1, "GitHub", "personal access token"));
        b.record(refusal(2, "AWS", "access key id"));
        b.record(refusal(3, "AWS", "access key id"));
        let again = Book::open(path);
        let counts: Vec<(&str, u64, i64)> = again
            .refusals
            .counts
            .iter()
            .map(|k| (k.provider.as_str(), k.count, k.last))
            .collect();
        assert_eq!(counts, [("AWS", 2, 3), ("GitHub", 1, 1)]);
        assert_eq!(again.refusals.recent.len(), 3);
        assert_eq!(again.refusals.recent[0].at, 3);
    }

    #[test]
    fn only_the_last_few_are_kept_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = Book::open(dir.path().join("r.json"));
        for at in 0..(KEEP as i64 + 10) {
            b.record(refusal(at, "", "hard-coded password"));
        }
        assert_eq!(b.refusals.recent.len(), KEEP);
        assert_eq!(b.refusals.counts[0].count, KEEP as u64 + 10);
    }
}
