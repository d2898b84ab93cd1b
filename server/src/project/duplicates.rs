//! The near-duplicate check of the write path: a new entry against the served artifact and
//! the writes before it in the same batch (docs/http-api.md, `409 duplicate_entry`).

use helix_index_format::similar::{Collection, Fingerprint};
use helix_index_format::tokenize::Analyzer;
use helix_index_format::{DUPLICATE_THRESHOLD, Index, NewEntry, similarity};

use super::jobs::WriteError;

/// The refusal of `entry` when `served` (the project's artifact bytes) or an `earlier` write
/// of its batch says nearly the same; `None` when it may be written. An unreadable artifact
/// refuses nothing: the check is advice, the write path's rules are elsewhere.
pub(super) fn check(
    served: Option<&[u8]>,
    earlier: &[&NewEntry],
    entry: &NewEntry,
) -> Option<WriteError> {
    if entry.force {
        return None;
    }
    let index = served.and_then(|b| Index::open(b).ok());
    let refs: Vec<&Index<&[u8]>> = index.iter().collect();
    let c = Collection::new(&refs);
    if let Some(s) = c
        .near_duplicates(
            &entry.title,
            &entry.body,
            &entry.sources,
            DUPLICATE_THRESHOLD,
        )
        .ok()
        .and_then(|v| v.into_iter().next())
    {
        return Some(WriteError::Duplicate {
            id: s.entry.id.to_string(),
            title: s.entry.title.to_string(),
            score: s.score,
        });
    }
    let idf = |t: &str| c.idf(t);
    let new = Fingerprint::new(Analyzer::CURRENT, &entry.title, &entry.body, &entry.sources);
    earlier.iter().find_map(|e| {
        let score = similarity(
            &new,
            &Fingerprint::new(Analyzer::CURRENT, &e.title, &e.body, &e.sources),
            &idf,
        );
        (score >= DUPLICATE_THRESHOLD).then(|| WriteError::Duplicate {
            id: format!("{}/{}.md", e.topic, helix_index_format::slugify(&e.title)),
            title: e.title.clone(),
            score,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(title: &str, body: &str) -> NewEntry {
        NewEntry {
            topic: "db".into(),
            title: title.into(),
            body: body.into(),
            ..NewEntry::default()
        }
    }

    #[test]
    fn a_write_is_refused_for_an_earlier_one_of_its_batch_unless_forced() {
        let first = entry(
            "Connection pool exhausted in tests",
            "Integration tests hang when max_connections is below the test thread count.",
        );
        let again = entry(
            "Tests exhaust the connection pool",
            "The integration tests hang: max_connections is below the thread count of the tests.",
        );
        let other = entry(
            "Vacuum nightly",
            "Run VACUUM ANALYZE nightly or the planner misestimates.",
        );
        match check(None, &[&first], &again) {
            Some(WriteError::Duplicate { id, score, .. }) => {
                assert_eq!(id, "db/connection-pool-exhausted-in-tests.md");
                assert!(score >= DUPLICATE_THRESHOLD);
            }
            other => panic!("expected a duplicate, got {other:?}"),
        }
        assert!(check(None, &[&first], &other).is_none());
        let forced = NewEntry {
            force: true,
            ..again
        };
        assert!(check(None, &[&first], &forced).is_none());
        // An unreadable artifact refuses nothing.
        assert!(check(Some(b"not an artifact"), &[], &other).is_none());
    }
}
