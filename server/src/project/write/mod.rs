//! The write path: a round's new entries, same-key repeats grouped and known keys replayed,
//! committed as one batch (or proposed, in review mode) and answered once git has them.

mod commit;
mod paths;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use gix::ObjectId;
use helix_index_format::NewEntry;

use super::WriteAck;
use super::idempotency::{Seen, fingerprint};
use super::jobs::{EditTarget, Proposed, ReplyTx, WriteError, WriteJob, WriteReply};
use super::lane::Lane;
use crate::git::GitError;

/// A write, its fingerprint, and the replies of same-key repeats that share its result.
#[derive(Debug)]
struct Group {
    job: WriteJob,
    fingerprint: String,
    repeats: Vec<ReplyTx>,
}

impl Group {
    fn new(job: WriteJob) -> Group {
        Group {
            fingerprint: fingerprint(&job.author, &job.entry, job.edit.as_deref()),
            job,
            repeats: Vec::new(),
        }
    }

    /// Sends the result to the write and (as a replay) to its repeats.
    fn send(self, result: Result<WriteReply, WriteError>) {
        for r in self.repeats {
            let _ = r.send(result.clone().map(|w| WriteReply {
                created: false,
                ..w
            }));
        }
        let _ = self.job.reply.send(result);
    }
}

/// A batch that went through: committed (and pushed), or with every write refused.
#[derive(Debug)]
enum Batch {
    /// The commit and each write's path or refusal.
    Committed(ObjectId, Vec<Result<String, WriteError>>),
    Refused(Vec<WriteError>),
}

/// Why a batch was not committed.
#[derive(Debug)]
enum BatchError {
    /// Some keys of the batch turned out to be in git already; filter and try again.
    KeysAppeared,
    Failed(WriteError),
}

impl From<GitError> for BatchError {
    fn from(e: GitError) -> BatchError {
        BatchError::Failed(e.into())
    }
}

impl Lane<'_> {
    /// The recorded answer for `key`, if it is known: a replay of the first write, or a
    /// refusal when the key was first used for another entry.
    fn replay(&self, key: &str, fingerprint: &str) -> Option<Result<WriteReply, WriteError>> {
        Some(match self.idem.seen(key, fingerprint)? {
            Seen::Same(ack) => Ok(WriteReply {
                created: false,
                ack: ack.clone(),
            }),
            Seen::Other { first } => Err(WriteError::KeyReused {
                key: key.to_string(),
                first: first.to_string(),
            }),
        })
    }

    pub(super) fn process_writes(&mut self, jobs: Vec<WriteJob>) {
        let project = self.name();
        // Replays of known keys answer at once; repeats of a key inside this batch share
        // the first one's commit (or are refused when they carry another entry).
        let mut groups: Vec<Group> = Vec::new();
        let mut at_once = Vec::new();
        for job in jobs {
            let g = Group::new(job);
            let key = g.job.key.clone();
            if let Some(k) = &key {
                if let Some(answer) = self.replay(k, &g.fingerprint) {
                    at_once.push((g, answer));
                    continue;
                }
                if let Some(first) = groups
                    .iter_mut()
                    .find(|f| f.job.key.as_deref() == Some(k.as_str()))
                {
                    if first.fingerprint == g.fingerprint {
                        first.repeats.push(g.job.reply);
                    } else {
                        let refusal = WriteError::KeyReused {
                            key: k.clone(),
                            first: "another entry of this batch".into(),
                        };
                        at_once.push((g, Err(refusal)));
                    }
                    continue;
                }
            }
            groups.push(g);
        }
        self.reply(at_once, false);
        if groups.is_empty() {
            return;
        }
        if !self.scanned {
            // Keys of writes pushed just before a crash are only known after a fetch.
            if let Err(e) = self.repo.fetch() {
                let e = WriteError::Fetch(Arc::new(e));
                self.reply(
                    groups.into_iter().map(|g| (g, Err(e.clone()))).collect(),
                    false,
                );
                return;
            }
            self.scan_commit_keys();
        }
        if !self.project.cfg.writes.is_direct() {
            self.propose_groups(groups);
            return;
        }
        let started = Instant::now();
        let result = loop {
            // Replays whose key appeared in git (recovered after a crash, or pushed by an
            // earlier run whose push finished late) are answered from it, not re-applied.
            groups = self.answer_known(groups);
            groups = self.refuse_duplicates(groups);
            if groups.is_empty() {
                // Compile the recovered commits (a no-op if already served).
                let tip = self.tip().ok().flatten();
                if let Err(e) = self.ingest(tip, started) {
                    tracing::error!(project = %project, error = %e, "compile failed");
                }
                return;
            }
            match self.commit_batch(&groups) {
                Err(BatchError::KeysAppeared) => continue,
                Err(BatchError::Failed(e)) => break Err(e),
                Ok(done) => break Ok(done),
            }
        };
        let answers = match result {
            Ok(Batch::Committed(commit, placed)) => {
                if let Err(e) = self.ingest(Some(commit), started) {
                    // The entries are safely in git; the next refresh compiles them.
                    tracing::error!(project = %project, error = %e, "compile after write failed");
                }
                let mut answers = Vec::with_capacity(groups.len());
                for (g, placed) in groups.iter().zip(placed) {
                    answers.push(placed.map(|path| {
                        // An edit's file is written verbatim: its blob is the next base.
                        let blob = g.job.edit.as_ref().and_then(|e| {
                            self.repo
                                .blob_id(e.content.as_bytes())
                                .ok()
                                .map(|b| b.to_string())
                        });
                        let ack = WriteAck {
                            id: self.id_of(&path),
                            path,
                            commit: commit.to_string(),
                            generation: self.generation,
                            proposal: None,
                            blob,
                        };
                        if let Some(k) = &g.job.key {
                            self.idem
                                .record(k, ack.clone(), Some(g.fingerprint.clone()));
                        }
                        WriteReply { created: true, ack }
                    }));
                }
                // Keys are durable before anyone is told the write succeeded.
                self.idem.save();
                answers
            }
            Ok(Batch::Refused(refusals)) => refusals.into_iter().map(Err).collect(),
            Err(e) => {
                tracing::error!(project = %project, error = %e, "write failed");
                self.reply(
                    groups.into_iter().map(|g| (g, Err(e.clone()))).collect(),
                    false,
                );
                return;
            }
        };
        self.reply(groups.into_iter().zip(answers).collect(), true);
    }

    /// Review mode: every write becomes a proposal of its own (placed on the branch tip as a
    /// direct write would be), answered and its key recorded like a direct write.
    fn propose_groups(&mut self, groups: Vec<Group>) {
        let groups = self.answer_known(groups);
        let groups = self.refuse_duplicates(groups);
        if groups.is_empty() {
            return;
        }
        let placed = match self
            .tip()
            .and_then(|tip| Ok((tip, self.place(tip, &groups)?)))
        {
            Ok(p) => p,
            Err(e) => {
                let e = WriteError::from(e);
                self.reply(
                    groups.into_iter().map(|g| (g, Err(e.clone()))).collect(),
                    false,
                );
                return;
            }
        };
        let (base, placed) = placed;
        let mut answers = Vec::with_capacity(groups.len());
        for (g, path) in groups.iter().zip(placed) {
            let recovered = g
                .job
                .key
                .as_deref()
                .and_then(|k| self.recover_proposal(k, &g.fingerprint));
            // A recovered proposal counts as new only if its pull request is still to open.
            let fresh = recovered.as_ref().is_none_or(|r| {
                r.as_ref()
                    .is_ok_and(|a| a.proposal.as_ref().is_some_and(|p| p.forge.is_none()))
            });
            let made = recovered.unwrap_or_else(|| {
                let path = path?;
                let file = match &g.job.edit {
                    Some(e) => e.content.clone().into_bytes(),
                    None => self.entry_file(&g.job.entry, &g.job.author, &path),
                };
                let write = Proposed {
                    entry: &g.job.entry,
                    author: &g.job.author,
                    key: g.job.key.as_deref(),
                    fingerprint: &g.fingerprint,
                    edit: g.job.edit.as_deref(),
                };
                self.propose(write, base, path, file)
            });
            let answer = made.map(|ack| {
                if let Some(k) = &g.job.key {
                    self.idem
                        .record(k, ack.clone(), Some(g.fingerprint.clone()));
                }
                WriteReply {
                    created: fresh,
                    ack,
                }
            });
            if let Err(e) = &answer {
                tracing::warn!(project = %self.name(), error = %e, "proposal failed");
            }
            answers.push(answer);
        }
        self.idem.save();
        self.reply(groups.into_iter().zip(answers).collect(), true);
    }

    /// Lands one entry on the branch through the write path (placement, compare-and-swap
    /// commit, push with retries): an approved proposal whose branch moved. Returns the
    /// commit and the entry's repository path.
    pub(super) fn land(
        &mut self,
        entry: &NewEntry,
        author: &str,
        edit: Option<EditTarget>,
    ) -> Result<(ObjectId, String), WriteError> {
        let (reply, _) = tokio::sync::oneshot::channel();
        let g = Group::new(WriteJob {
            key: None,
            author: author.to_string(),
            entry: entry.clone(),
            edit: edit.map(Box::new),
            reply,
        });
        let groups = [g];
        loop {
            match self.commit_batch(&groups) {
                Ok(Batch::Committed(commit, mut placed)) => {
                    let path = placed.pop().expect("one write, one placement")?;
                    return Ok((commit, path));
                }
                Ok(Batch::Refused(mut refusals)) => {
                    return Err(refusals.pop().expect("one write, one refusal"));
                }
                Err(BatchError::KeysAppeared) => continue,
                Err(BatchError::Failed(e)) => return Err(e),
            }
        }
    }

    /// Answers groups whose idempotency key is already recorded; returns the others.
    fn answer_known(&self, groups: Vec<Group>) -> Vec<Group> {
        let mut known = Vec::new();
        let mut rest = Vec::with_capacity(groups.len());
        for g in groups {
            match g
                .job
                .key
                .as_ref()
                .and_then(|k| self.replay(k, &g.fingerprint))
            {
                Some(answer) => known.push((g, answer)),
                None => rest.push(g),
            }
        }
        self.reply(known, false);
        rest
    }

    /// Answers the writes that nearly repeat an entry of the served artifact or an earlier
    /// write of the batch (unless forced; after replays, which are never refused so);
    /// returns the others.
    fn refuse_duplicates(&self, groups: Vec<Group>) -> Vec<Group> {
        let served = self.project.current();
        let mut refused = Vec::new();
        let mut rest: Vec<Group> = Vec::with_capacity(groups.len());
        for g in groups {
            // An edit replaces its own entry, which it always resembles.
            if g.job.edit.is_some() {
                rest.push(g);
                continue;
            }
            let earlier: Vec<&NewEntry> = rest.iter().map(|g| &g.job.entry).collect();
            match super::duplicates::check(
                served.as_deref().map(|s| &s.bytes[..]),
                &earlier,
                &g.job.entry,
            ) {
                Some(e) => refused.push((g, Err(e))),
                None => rest.push(g),
            }
        }
        self.reply(refused, false);
        rest
    }

    /// The one way writes are answered: counts each outcome in `helix_writes_total` first
    /// (a client that got its answer finds it counted), then sends every write its answer
    /// and its same-key repeats the same as a replay. The answers of a batch that went
    /// through `commit_batch` (`batch`) count `created` and `rejected` even when zero, as
    /// the series always have.
    fn reply(&self, answers: Vec<(Group, Result<WriteReply, WriteError>)>, batch: bool) {
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        if batch {
            counts.extend([("created", 0), ("rejected", 0)]);
        }
        for (_, answer) in &answers {
            *counts.entry(outcome(answer)).or_default() += 1;
        }
        for (outcome, n) in counts {
            self.metrics.write(&self.project.cfg.name, outcome, n);
        }
        for (g, answer) in answers {
            g.send(answer);
        }
    }
}

/// How a write ended, as `helix_writes_total` counts it.
fn outcome(answer: &Result<WriteReply, WriteError>) -> &'static str {
    match answer {
        Ok(reply) if reply.created => "created",
        Ok(_) => "replayed",
        Err(e) if e.is_refusal() => "rejected",
        Err(_) => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::paths::ancestors;
    use super::*;

    #[test]
    fn outcomes_tell_refusals_from_failures() {
        let ack = WriteAck {
            id: "ops/a.md".into(),
            path: "ops/a.md".into(),
            commit: "c0ffee".into(),
            generation: 1,
            proposal: None,
            blob: None,
        };
        let reply = |created| {
            Ok(WriteReply {
                created,
                ack: ack.clone(),
            })
        };
        let refused = WriteError::KeyReused {
            key: "k".into(),
            first: "ops/a.md".into(),
        };
        let failed = WriteError::PushRejected {
            reason: "hook declined".into(),
        };
        assert_eq!(outcome(&reply(true)), "created");
        assert_eq!(outcome(&reply(false)), "replayed");
        assert_eq!(outcome(&Err(refused)), "rejected");
        assert_eq!(outcome(&Err(failed)), "failed");
        assert_eq!(
            ancestors("a/b/c").collect::<Vec<_>>(),
            ["a/b/c", "a/b", "a"]
        );
    }
}
