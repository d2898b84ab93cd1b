//! The idempotency log of a project: the keys already answered, kept in memory, appended to
//! `idempotency.jsonl` before any answer, recovered from commit-message trailers, and the
//! fingerprint of a write that tells a retry from a different write under the same key.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gix::ObjectId;
use helix_index_format::NewEntry;
use helix_index_format::wire::WriteAck;
use serde::{Deserialize, Serialize};

use super::jobs::EditTarget;
use crate::sys::write_atomic;

/// Idempotency keys remembered per project.
const MAX_IDEMPOTENCY_KEYS: usize = 100_000;
/// Surplus lines (a key recorded again, unreadable lines) that make opening compact the file.
const COMPACT_SURPLUS_LINES: usize = 1000;
/// Commit-message trailer recording an idempotency key and the path it created.
const KEY_TRAILER: &str = "Helix-Idempotency-Key:";

/// A recorded idempotency key: its order, the answer it got and the fingerprint of the
/// entry it was first used for (`None` for keys recorded before fingerprints existed).
#[derive(Debug, Clone)]
struct Known {
    seq: u64,
    ack: WriteAck,
    fingerprint: Option<String>,
}

/// One line of `idempotency.jsonl`.
#[derive(Debug, Deserialize)]
struct IdemRecord {
    key: String,
    seq: u64,
    ack: WriteAck,
    #[serde(default)]
    fingerprint: Option<String>,
}

#[derive(Debug, Serialize)]
struct IdemRecordRef<'a> {
    key: &'a str,
    seq: u64,
    ack: &'a WriteAck,
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<&'a str>,
}

/// What the log says about a key offered with an entry's fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen<'a> {
    /// The same write again: the answer it got.
    Same(&'a WriteAck),
    /// The key was first used for another entry, whose id this is.
    Other { first: &'a str },
}

/// Every idempotency key a project answered, and the append-only file that keeps them
/// across restarts (one JSON record per line; the newest record of a key wins).
#[derive(Debug)]
pub(super) struct IdempotencyLog {
    keys: BTreeMap<String, Known>,
    /// The order of the newest record; compaction keeps the newest keys.
    seq: u64,
    path: PathBuf,
    /// Keys recorded since the last append to the file.
    unsaved: Vec<String>,
    max_keys: usize,
}

impl IdempotencyLog {
    /// Loads the persisted keys (written before any write was acknowledged), compacting
    /// the file when it holds too many keys or lines.
    pub(super) fn open(path: PathBuf) -> IdempotencyLog {
        IdempotencyLog::open_with_limit(path, MAX_IDEMPOTENCY_KEYS)
    }

    fn open_with_limit(path: PathBuf, max_keys: usize) -> IdempotencyLog {
        let mut log = IdempotencyLog {
            keys: BTreeMap::new(),
            seq: 0,
            path,
            unsaved: Vec::new(),
            max_keys,
        };
        let Ok(bytes) = std::fs::read(&log.path) else {
            return log;
        };
        let mut lines = 0usize;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            lines += 1;
            // A torn last line (crash mid-append) is skipped; that key is still in git.
            match serde_json::from_slice::<IdemRecord>(line) {
                Ok(r) => {
                    log.keys.insert(
                        r.key,
                        Known {
                            seq: r.seq,
                            ack: r.ack,
                            fingerprint: r.fingerprint,
                        },
                    );
                }
                Err(e) => tracing::warn!(error = %e, "skipping unreadable idempotency record"),
            }
        }
        log.seq = log.keys.values().map(|v| v.seq).max().unwrap_or(0);
        if log.keys.len() > log.max_keys || lines > log.keys.len() + COMPACT_SURPLUS_LINES {
            log.compact();
        }
        log
    }

    /// How many keys are known.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// What is known about `key` for an entry with `fingerprint`; `None` for a new key. A
    /// key recorded without a fingerprint matches any entry.
    pub(super) fn seen(&self, key: &str, fingerprint: &str) -> Option<Seen<'_>> {
        let known = self.keys.get(key)?;
        if known
            .fingerprint
            .as_deref()
            .is_some_and(|f| f != fingerprint)
        {
            return Some(Seen::Other {
                first: &known.ack.id,
            });
        }
        Some(Seen::Same(&known.ack))
    }

    /// Records the answer `key` got; it reaches the file at the next [`save`](Self::save).
    pub(super) fn record(&mut self, key: &str, ack: WriteAck, fingerprint: Option<String>) {
        self.seq += 1;
        self.keys.insert(
            key.to_string(),
            Known {
                seq: self.seq,
                ack,
                fingerprint,
            },
        );
        self.unsaved.push(key.to_string());
    }

    /// Appends the keys recorded since the last save to the file and syncs it (before any
    /// of them is answered).
    pub(super) fn save(&mut self) {
        use std::io::Write as _;
        let mut out = Vec::new();
        for key in std::mem::take(&mut self.unsaved) {
            if let Some(known) = self.keys.get(&key) {
                push_record(&mut out, &key, known);
            }
        }
        if out.is_empty() {
            return;
        }
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| {
                f.write_all(&out)?;
                f.sync_data()
            });
        if let Err(e) = r {
            // The keys are also in the commit messages, where a restart finds them.
            tracing::error!(error = %e, "cannot persist idempotency keys");
        }
    }

    /// Rewrites the file with one record per key, the newest `max_keys`.
    fn compact(&mut self) {
        if self.keys.len() > self.max_keys {
            let mut seqs: Vec<u64> = self.keys.values().map(|v| v.seq).collect();
            seqs.sort_unstable();
            let cut = seqs[self.keys.len() - self.max_keys];
            self.keys.retain(|_, v| v.seq >= cut);
        }
        let mut out = Vec::new();
        for (key, known) in &self.keys {
            push_record(&mut out, key, known);
        }
        if let Err(e) = write_atomic(&self.path, &out) {
            tracing::error!(error = %e, "cannot compact idempotency log");
        }
    }

    /// The commit-message trailer that records `key` for the write that created `path`.
    pub(super) fn trailer(key: &str, path: &str, fingerprint: &str) -> String {
        format!("{KEY_TRAILER} {key} {path} {fingerprint}")
    }

    /// Records the keys of the trailers in `messages` (commit and message, newest first)
    /// that are not known yet, answered as written at `generation(i)` for the `i`-th
    /// message; `id_of` turns a repository path into an entry id. Returns how many keys
    /// were added (not yet saved).
    pub(super) fn recover(
        &mut self,
        messages: Vec<(ObjectId, String)>,
        generation: impl Fn(usize) -> u64,
        id_of: impl Fn(&str) -> String,
    ) -> usize {
        let mut added = 0;
        for (i, (commit, msg)) in messages.into_iter().enumerate().rev() {
            let generation = generation(i);
            for line in msg.lines() {
                let Some(rest) = line.strip_prefix(KEY_TRAILER) else {
                    continue;
                };
                let mut parts = rest.split_whitespace();
                let (Some(key), Some(path)) = (parts.next(), parts.next()) else {
                    continue;
                };
                // Trailers written before fingerprints existed have none.
                let fingerprint = parts.next().map(str::to_string);
                if self.contains(key) {
                    continue;
                }
                let ack = WriteAck {
                    id: id_of(path),
                    path: path.to_string(),
                    commit: commit.to_string(),
                    generation,
                    proposal: None,
                    blob: None,
                };
                self.record(key, ack, fingerprint);
                added += 1;
            }
        }
        added
    }
}

/// Appends `key`'s record and a newline to `out`.
fn push_record(out: &mut Vec<u8>, key: &str, known: &Known) {
    let record = IdemRecordRef {
        key,
        seq: known.seq,
        ack: &known.ack,
        fingerprint: known.fingerprint.as_deref(),
    };
    if let Ok(line) = serde_json::to_vec(&record) {
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
}

/// What makes two writes the same write: who sent it and every field of the entry (and,
/// for an edit, what it edits, from which version, and the whole new file).
pub(super) fn fingerprint(author: &str, e: &NewEntry, edit: Option<&EditTarget>) -> String {
    use sha2::Digest;
    let mut canonical = serde_json::json!([author, e.topic, e.title, e.body, e.tags, e.sources]);
    if let (Some(edit), Some(parts)) = (edit, canonical.as_array_mut()) {
        parts.extend([
            edit.id.clone().into(),
            edit.base.clone().into(),
            edit.content.clone().into(),
        ]);
    }
    let digest = sha2::Sha256::digest(canonical.to_string().as_bytes());
    hex::encode(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(path: &str, generation: u64) -> WriteAck {
        WriteAck {
            id: path.to_string(),
            path: path.to_string(),
            commit: "c0ffee".into(),
            generation,
            proposal: None,
            blob: None,
        }
    }

    fn commit(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    #[test]
    fn recorded_keys_survive_a_reopen_and_fingerprints_tell_entries_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("idempotency.jsonl");
        let mut log = IdempotencyLog::open(path.clone());
        assert_eq!(log.len(), 0);
        log.record("k1", ack("ops/a.md", 1), Some("f1".into()));
        log.record("k2", ack("ops/b.md", 1), None);
        // Nothing reaches the file before `save`.
        assert!(!path.exists());
        log.save();
        log.save();
        assert_eq!(
            std::fs::read_to_string(&path).expect("log").lines().count(),
            2
        );
        let log = IdempotencyLog::open(path);
        assert_eq!(log.len(), 2);
        assert_eq!(log.seen("k1", "f1"), Some(Seen::Same(&ack("ops/a.md", 1))));
        assert_eq!(
            log.seen("k1", "f2"),
            Some(Seen::Other { first: "ops/a.md" })
        );
        // Recorded before fingerprints existed: any entry replays.
        assert_eq!(log.seen("k2", "fx"), Some(Seen::Same(&ack("ops/b.md", 1))));
        assert_eq!(log.seen("k3", "f1"), None);
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("idempotency.jsonl");
        let mut log = IdempotencyLog::open(path.clone());
        log.record("k1", ack("ops/a.md", 1), Some("f1".into()));
        log.save();
        let mut bytes = std::fs::read(&path).expect("log");
        bytes.extend_from_slice(b"{\"key\":\"k2\",\"se");
        std::fs::write(&path, bytes).expect("tear");
        let mut log = IdempotencyLog::open(path.clone());
        assert_eq!(log.len(), 1);
        assert!(log.contains("k1") && !log.contains("k2"));
        // New records still follow the old ones in order.
        log.record("k3", ack("ops/c.md", 2), None);
        assert_eq!(log.seq, 2);
    }

    #[test]
    fn opening_compacts_to_the_newest_keys_and_drops_repeated_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("idempotency.jsonl");
        let mut log = IdempotencyLog::open(path.clone());
        for i in 0..5 {
            log.record(&format!("k{i}"), ack(&format!("ops/{i}.md"), 1), None);
        }
        log.save();
        let log = IdempotencyLog::open_with_limit(path.clone(), 3);
        assert_eq!(log.len(), 3);
        assert!(!log.contains("k0") && !log.contains("k1") && log.contains("k4"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("log").lines().count(),
            3
        );

        // The same key recorded again and again: one line after the next open.
        let mut log = IdempotencyLog::open(path.clone());
        for _ in 0..=COMPACT_SURPLUS_LINES {
            log.record("k4", ack("ops/4.md", 2), None);
        }
        log.save();
        let log = IdempotencyLog::open(path.clone());
        assert_eq!(log.len(), 3);
        assert_eq!(log.seen("k4", "f"), Some(Seen::Same(&ack("ops/4.md", 2))));
        assert_eq!(
            std::fs::read_to_string(&path).expect("log").lines().count(),
            3
        );
    }

    #[test]
    fn trailers_are_recovered_once_with_or_without_a_fingerprint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = IdempotencyLog::open(dir.path().join("idempotency.jsonl"));
        log.record("known", ack("kb/ops/old.md", 1), None);
        let newest = format!(
            "Add 2 entries\n\n- ops/a.md (alice)\n\n{}\n{}\n",
            IdempotencyLog::trailer("ka", "kb/ops/a.md", "fa"),
            IdempotencyLog::trailer("known", "kb/ops/x.md", "fx"),
        );
        let older = format!("Add ops/b.md\n\n{KEY_TRAILER} kb kb/ops/b.md\n");
        let messages = vec![
            (commit(2), newest),
            (commit(1), older),
            (commit(0), format!("{KEY_TRAILER} broken\n")),
        ];
        let id_of = |p: &str| p.strip_prefix("kb/").unwrap_or(p).to_string();
        assert_eq!(log.recover(messages.clone(), |_| 7, id_of), 2);
        let a = WriteAck {
            id: "ops/a.md".into(),
            path: "kb/ops/a.md".into(),
            commit: commit(2).to_string(),
            generation: 7,
            proposal: None,
            blob: None,
        };
        assert_eq!(log.seen("ka", "fa"), Some(Seen::Same(&a)));
        assert_eq!(
            log.seen("ka", "fb"),
            Some(Seen::Other { first: "ops/a.md" })
        );
        let b = match log.seen("kb", "any") {
            Some(Seen::Same(b)) => b.clone(),
            other => panic!("kb: {other:?}"),
        };
        assert_eq!(
            (b.path.as_str(), b.commit),
            ("kb/ops/b.md", commit(1).to_string())
        );
        assert_eq!(
            log.seen("known", "fx"),
            Some(Seen::Same(&ack("kb/ops/old.md", 1)))
        );
        // Oldest first, so the order of the recovered keys is the order of the commits.
        assert!(log.keys["kb"].seq < log.keys["ka"].seq);
        assert_eq!(log.recover(messages, |_| 7, id_of), 0);
    }
}
