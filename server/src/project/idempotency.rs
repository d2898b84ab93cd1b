//! The idempotency log of a project: keys already answered, persisted in
//! `idempotency.jsonl` and recovered from commit-message trailers after a crash.

use serde::{Deserialize, Serialize};

use super::{Worker, WriteAck};
use crate::sys::write_atomic;

/// Commit messages scanned at start-up to recover idempotency keys not yet persisted.
pub(super) const IDEMPOTENCY_SCAN: usize = 2000;
/// Idempotency keys remembered per project.
const MAX_IDEMPOTENCY_KEYS: usize = 100_000;
/// Commit-message trailer recording an idempotency key and the path it created.
pub(super) const KEY_TRAILER: &str = "Helix-Idempotency-Key:";

/// A recorded idempotency key: its order, the answer it got and the fingerprint of the
/// entry it was first used for (`None` for keys recorded before fingerprints existed).
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub(super) seq: u64,
    pub(super) ack: WriteAck,
    pub(super) fingerprint: Option<String>,
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

impl Worker {
    /// Loads the persisted keys (written before any write is acknowledged).
    pub(super) fn load_idempotency(&mut self) {
        let Ok(bytes) = std::fs::read(&self.idem_path) else {
            return;
        };
        let mut lines = 0usize;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            lines += 1;
            // A torn last line (crash mid-append) is skipped; that key is still in git.
            match serde_json::from_slice::<IdemRecord>(line) {
                Ok(r) => {
                    self.idem.insert(
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
        self.idem_seq = self.idem.values().map(|v| v.seq).max().unwrap_or(0);
        if self.idem.len() > MAX_IDEMPOTENCY_KEYS || lines > self.idem.len() + 1000 {
            self.compact_idempotency();
        }
    }

    /// Rewrites the log with one record per key, the newest `MAX_IDEMPOTENCY_KEYS`.
    fn compact_idempotency(&mut self) {
        if self.idem.len() > MAX_IDEMPOTENCY_KEYS {
            let mut seqs: Vec<u64> = self.idem.values().map(|v| v.seq).collect();
            seqs.sort_unstable();
            let cut = seqs[self.idem.len() - MAX_IDEMPOTENCY_KEYS];
            self.idem.retain(|_, v| v.seq >= cut);
        }
        let mut out = Vec::new();
        for (key, known) in &self.idem {
            if let Ok(line) = serde_json::to_vec(&IdemRecordRef {
                key,
                seq: known.seq,
                ack: &known.ack,
                fingerprint: known.fingerprint.as_deref(),
            }) {
                out.extend_from_slice(&line);
                out.push(b'\n');
            }
        }
        if let Err(e) = write_atomic(&self.idem_path, &out) {
            tracing::error!(error = %e, "cannot compact idempotency log");
        }
    }

    /// Adds keys found in recent commit messages of the branch: a write committed (and
    /// pushed) just before a crash is still recognised when the client retries it. For an
    /// upstream project this runs after the first successful fetch, so a local commit that
    /// never reached the upstream (and is dropped by the fetch) does not count.
    pub(super) fn scan_commit_keys(&mut self) {
        self.scanned = true;
        let Ok(Some(tip)) = self.repo.tip() else {
            return;
        };
        if self.scanned_tip == Some(tip) {
            return;
        }
        let Ok(msgs) = self
            .repo
            .recent_messages(tip, self.scanned_tip, IDEMPOTENCY_SCAN)
        else {
            return;
        };
        self.scanned_tip = Some(tip);
        // The artifact that contains these commits: the served one if it is of the tip,
        // else the next one, which the refresh right after this scan compiles.
        let tip_hex = tip.to_string();
        let built_tip = self
            .project
            .current()
            .is_some_and(|c| c.info.commit == tip_hex);
        let generation = if built_tip {
            self.generation
        } else {
            self.generation + 1
        };
        let mut added = 0;
        for (commit, msg) in msgs.into_iter().rev() {
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
                if self.idem.contains_key(key) {
                    continue;
                }
                self.idem_seq += 1;
                let ack = WriteAck {
                    id: self.id_of(path),
                    path: path.to_string(),
                    commit: commit.to_string(),
                    generation,
                };
                self.idem.insert(
                    key.to_string(),
                    Known {
                        seq: self.idem_seq,
                        ack,
                        fingerprint,
                    },
                );
                self.idem_unsaved.push(key.to_string());
                added += 1;
            }
        }
        if added > 0 {
            tracing::info!(project = %self.name(), added, "recovered idempotency keys from git history");
            self.save_idempotency();
        }
    }

    /// Appends the new keys to the log and syncs it (before any of them is answered).
    pub(super) fn save_idempotency(&mut self) {
        use std::io::Write as _;
        let mut out = Vec::new();
        for key in std::mem::take(&mut self.idem_unsaved) {
            let Some(known) = self.idem.get(&key) else {
                continue;
            };
            let record = IdemRecordRef {
                key: &key,
                seq: known.seq,
                ack: &known.ack,
                fingerprint: known.fingerprint.as_deref(),
            };
            if let Ok(line) = serde_json::to_vec(&record) {
                out.extend_from_slice(&line);
                out.push(b'\n');
            }
        }
        if out.is_empty() {
            return;
        }
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.idem_path)
            .and_then(|mut f| {
                f.write_all(&out)?;
                f.sync_data()
            });
        if let Err(e) = r {
            // The keys are also in the commit messages, where a restart finds them.
            tracing::error!(error = %e, "cannot persist idempotency keys");
        }
    }
}
