//! Review mode on the worker: a write becomes a proposal (a commit on its own branch, pushed),
//! and proposals are listed, approved (landed with the write path's compare-and-swap and
//! push) or rejected (branch deleted), each decided exactly once.

use std::time::Instant;

use gix::ObjectId;
use helix_index_format::wire::{Landed, ProposalAck, ProposalInfo, ProposalState, WriteAck};

use super::jobs::{EditTarget, ProposalError, ProposalJob, ProposalOp, Proposed, WriteError};
use super::lane::Lane;
use super::proposals::{ProposedEdit, Record, branch_name};
use crate::git::PushOutcome;
use crate::sys::{lock, now_secs};

/// The write answer of a proposal.
fn proposal_ack(r: &Record) -> WriteAck {
    WriteAck {
        id: r.info.entry_id.clone(),
        path: r.path.clone(),
        commit: r.info.commit.clone(),
        generation: 0,
        proposal: Some(ProposalAck {
            id: r.info.id.clone(),
            branch: r.info.branch.clone(),
            forge: r.info.forge.clone(),
        }),
        blob: None,
    }
}

/// Names tried for a proposal branch before giving up (another replica or a person may
/// have pushed a branch of the same name).
const MAX_BRANCH_TRIES: usize = 8;

impl Lane<'_> {
    /// The edit an edit proposal at `path` makes, as the write path takes it (its checks
    /// against the entry's current blob run again when it lands).
    fn edit_target(&self, path: &str, e: &ProposedEdit) -> Result<EditTarget, WriteError> {
        let id = self.id_of(path);
        let parsed = helix_index_format::validate_edit(&id, &e.content)?;
        Ok(EditTarget {
            retired: parsed.is_retired(),
            supersedes: parsed.supersedes().into_iter().map(String::from).collect(),
            id,
            base: e.base.clone(),
            content: e.content.clone(),
        })
    }

    /// Commits `file` at `path` on top of `base` onto a new proposal branch, pushes it, and
    /// records the proposal. The project's branch is not touched.
    pub(super) fn propose(
        &mut self,
        write: Proposed<'_>,
        base: Option<ObjectId>,
        path: String,
        file: Vec<u8>,
    ) -> Result<WriteAck, WriteError> {
        let Proposed {
            entry,
            author,
            key,
            fingerprint,
            edit,
        } = write;
        let id_of_entry = self.id_of(&path);
        let slug = helix_index_format::slugify(&entry.title);
        let book = self.project.proposals.clone();
        let mut last = String::new();
        for n in 1..=MAX_BRANCH_TRIES * 4 {
            let branch = branch_name(author, &slug, n);
            if self.repo.tip(&branch)?.is_some() || lock(&book).uses_branch(&branch) {
                continue;
            }
            let msg = format!(
                "Propose {id_of_entry}\n\n- {id_of_entry} ({author})\n\nHelix-Proposal-Branch: {branch}\n"
            );
            let commit = self.repo.commit_files(
                &branch,
                base,
                &[(path.clone(), file.clone())],
                author,
                &msg,
            )?;
            let blob = self
                .repo
                .blob_at(commit, &path)?
                .map(|b| b.to_string())
                .unwrap_or_default();
            // Recorded before the push: a crash after it leaves a record that the retry of
            // the same key finds (`recover_proposal`), never a second proposal.
            let id = {
                let mut book = lock(&book);
                let id = book.next_id();
                book.insert(Record {
                    info: ProposalInfo {
                        id: id.clone(),
                        state: ProposalState::Open,
                        branch: branch.clone(),
                        commit: commit.to_string(),
                        author: author.to_string(),
                        topic: entry.topic.clone(),
                        title: entry.title.trim().to_string(),
                        entry_id: id_of_entry.clone(),
                        created: now_secs(),
                        forge: None,
                        decided_by: None,
                        reason: None,
                        landed: None,
                        entry: None,
                    },
                    path: path.clone(),
                    blob,
                    base: base.map(|b| b.to_string()),
                    entry: entry.clone(),
                    key: key.map(str::to_string),
                    fingerprint: fingerprint.to_string(),
                    edit: edit.map(|e| ProposedEdit {
                        base: e.base.clone(),
                        content: e.content.clone(),
                    }),
                });
                book.save();
                id
            };
            let forget = |lane: &Self, why: &str| {
                let mut b = lock(&book);
                b.remove(&id);
                b.save();
                let _ = lane.repo.move_branch(&branch, commit, None, why);
            };
            match self.repo.push(&branch, commit) {
                Ok(PushOutcome::Pushed) => {}
                Ok(PushOutcome::Rejected(reason)) => {
                    // The name is taken on the upstream: try the next one.
                    forget(self, "helix: name taken");
                    last = reason;
                    if n >= MAX_BRANCH_TRIES {
                        break;
                    }
                    continue;
                }
                Err(e) => {
                    forget(self, "helix: push failed");
                    return Err(WriteError::Push(std::sync::Arc::new(e)));
                }
            }
            tracing::info!(project = %self.name(), proposal = %id, %branch, "proposal pushed");
            let r = lock(&book).get(&id).cloned();
            return Ok(proposal_ack(&r.expect("recorded above")));
        }
        Err(WriteError::PushRejected {
            reason: format!("no free proposal branch name for {slug:?}: {last}"),
        })
    }

    /// The proposal an earlier run made for this write (same key and fingerprint) when its
    /// answer was lost before the key log was saved: pushed again (a no-op when the upstream
    /// has it) and answered as new, so its pull request is opened if it was not.
    pub(super) fn recover_proposal(
        &mut self,
        key: &str,
        fingerprint: &str,
    ) -> Option<Result<WriteAck, WriteError>> {
        let r = lock(&self.project.proposals)
            .by_key(key, fingerprint)
            .cloned()?;
        let commit = ObjectId::from_hex(r.info.commit.as_bytes()).ok()?;
        if r.info.state == ProposalState::Open {
            match self.repo.push(&r.info.branch, commit) {
                Ok(PushOutcome::Pushed) => {}
                Ok(PushOutcome::Rejected(reason)) => {
                    return Some(Err(WriteError::PushRejected { reason }));
                }
                Err(e) => return Some(Err(WriteError::Push(std::sync::Arc::new(e)))),
            }
        }
        tracing::info!(project = %self.name(), proposal = %r.info.id, "write answered from its recorded proposal");
        Some(Ok(proposal_ack(&r)))
    }

    /// Answers a question or decision about the proposals.
    pub(super) fn proposal_job(&mut self, job: ProposalJob) {
        let result = if self.project.cfg.writes.is_direct() {
            Err(ProposalError::NotReviewed)
        } else {
            self.mark_merged();
            match job.op {
                ProposalOp::List { all } => Ok(lock(&self.project.proposals)
                    .all()
                    .filter(|r| all || r.info.state == ProposalState::Open)
                    .map(|r| r.info.clone())
                    .collect()),
                ProposalOp::Get { id } => self.record(&id).map(|r| vec![r.info]),
                ProposalOp::Shared if !self.project.cfg.show_proposals => {
                    Err(ProposalError::NotShared)
                }
                ProposalOp::Shared => Ok(lock(&self.project.proposals)
                    .all()
                    .filter(|r| r.info.state == ProposalState::Open)
                    .map(|r| ProposalInfo {
                        entry: Some(r.entry.clone()),
                        ..r.info.clone()
                    })
                    .collect()),
                ProposalOp::Approve { id, by } => self.approve(&id, &by).map(|i| vec![i]),
                ProposalOp::Reject { id, by, reason } => {
                    self.reject(&id, &by, reason).map(|i| vec![i])
                }
            }
        };
        if let Err(e) = &result {
            tracing::info!(project = %self.name(), error = %e, "proposal request refused");
        }
        let _ = job.reply.send(result);
    }

    fn record(&self, id: &str) -> Result<Record, ProposalError> {
        lock(&self.project.proposals)
            .get(id)
            .cloned()
            .ok_or_else(|| ProposalError::NotFound { id: id.to_string() })
    }

    /// An open proposal, or why it cannot be decided.
    fn open_record(&self, id: &str) -> Result<Record, ProposalError> {
        let r = self.record(id)?;
        if r.info.state != ProposalState::Open {
            return Err(ProposalError::Decided {
                id: id.to_string(),
                state: r.info.state,
                by: r.info.decided_by.clone(),
            });
        }
        Ok(r)
    }

    /// Open proposals whose entry file the served commit holds as proposed were merged on
    /// the forge (or by hand): they are decided, and their local branch goes.
    fn mark_merged(&mut self) {
        let Some(served) = self.project.current() else {
            return;
        };
        let Ok(commit) = ObjectId::from_hex(served.info.commit.as_bytes()) else {
            return;
        };
        let open: Vec<Record> = lock(&self.project.proposals)
            .all()
            .filter(|r| r.info.state == ProposalState::Open)
            .cloned()
            .collect();
        for r in open {
            let Ok(proposed) = ObjectId::from_hex(r.info.commit.as_bytes()) else {
                continue;
            };
            // Its file as proposed (a merge, rebase or squash merge), or its commit in the
            // history (merged with the reviewer's edits on top).
            let at = self.repo.blob_at(commit, &r.path).ok().flatten();
            let merged = at.is_some_and(|b| r.blob.parse::<ObjectId>().is_ok_and(|x| x == b))
                || self.repo.is_ancestor(proposed, commit).unwrap_or(false);
            if !merged {
                continue;
            }
            let _ = self
                .repo
                .move_branch(&r.info.branch, proposed, None, "helix: proposal merged");
            let mut book = lock(&self.project.proposals);
            if let Some(rec) = book.get_mut(&r.info.id) {
                rec.info.state = ProposalState::Merged;
                rec.info.landed = Some(Landed {
                    id: self.id_of(&r.path),
                    commit: served.info.commit.clone(),
                    generation: served.info.generation,
                });
                tracing::info!(project = %self.name(), proposal = %r.info.id, "proposal found merged on the branch");
            }
            book.save();
        }
    }

    /// Whether the upstream's proposal branch is still what the server pushed.
    fn check_upstream(&self, r: &Record, commit: ObjectId) -> Result<bool, ProposalError> {
        if self.repo.upstream.is_none() {
            return Ok(true);
        }
        let found = self
            .repo
            .remote_tip(&r.info.branch)
            .map_err(|e| ProposalError::Upstream(std::sync::Arc::new(e)))?;
        match found {
            None => Ok(false),
            Some(f) if f == commit => Ok(true),
            Some(f) => Err(ProposalError::BranchMoved {
                id: r.info.id.clone(),
                branch: r.info.branch.clone(),
                pushed: r.info.commit.clone(),
                found: f.to_string(),
            }),
        }
    }

    fn approve(&mut self, id: &str, by: &str) -> Result<ProposalInfo, ProposalError> {
        let started = Instant::now();
        let r = self.open_record(id)?;
        let commit = ObjectId::from_hex(r.info.commit.as_bytes())
            .map_err(|_| ProposalError::NotFound { id: id.to_string() })?;
        if !self.check_upstream(&r, commit)? {
            return Err(ProposalError::BranchGone {
                id: id.to_string(),
                branch: r.info.branch.clone(),
            });
        }
        let land_err = |error: WriteError| ProposalError::Land {
            id: id.to_string(),
            error,
        };
        let branch = self.branch();
        let tip = self.tip()?;
        let base = r
            .base
            .as_deref()
            .and_then(|b| ObjectId::from_hex(b.as_bytes()).ok());
        // The branch has not moved: the proposal's own commit lands as it is (a forge then
        // shows its pull request merged). Otherwise its entry is written again on the tip.
        let mut landed = None;
        if let (Some(tip), Some(base)) = (tip, base)
            && tip == base
        {
            self.repo
                .move_branch(&branch, tip, Some(commit), "helix: approve proposal")?;
            match self.repo.push(&branch, commit) {
                Ok(PushOutcome::Pushed) => landed = Some((commit, r.path.clone())),
                Ok(PushOutcome::Rejected(_)) => {
                    self.repo.reset_branch(&branch, commit, Some(tip))?;
                    self.repo
                        .fetch()
                        .map_err(|e| land_err(WriteError::Refetch(std::sync::Arc::new(e))))?;
                }
                Err(e) => {
                    self.repo.reset_branch(&branch, commit, Some(tip))?;
                    return Err(land_err(WriteError::Push(std::sync::Arc::new(e))));
                }
            }
        }
        let (landed_commit, path) = match landed {
            Some(l) => l,
            None => {
                let edit = match &r.edit {
                    Some(e) => Some(self.edit_target(&r.path, e).map_err(land_err)?),
                    None => None,
                };
                self.land(&r.entry, &r.info.author, edit)
                    .map_err(land_err)?
            }
        };
        let generation = match self.ingest(Some(landed_commit), started) {
            Ok(Some(info)) => info.generation,
            Ok(None) => self.generation,
            Err(e) => {
                tracing::error!(project = %self.name(), error = %e, "compile after approval failed");
                self.generation + 1
            }
        };
        self.remove_branch(&r, commit, true);
        let landed = Landed {
            id: self.id_of(&path),
            commit: landed_commit.to_string(),
            generation,
        };
        let info = self.decide(&r, ProposalState::Approved, by, None, |i| {
            i.landed = Some(landed)
        });
        tracing::info!(project = %self.name(), proposal = %id, commit = %landed_commit, by, "proposal approved");
        Ok(info)
    }

    fn reject(
        &mut self,
        id: &str,
        by: &str,
        reason: Option<String>,
    ) -> Result<ProposalInfo, ProposalError> {
        let r = self.open_record(id)?;
        let commit = ObjectId::from_hex(r.info.commit.as_bytes())
            .map_err(|_| ProposalError::NotFound { id: id.to_string() })?;
        // A branch someone changed upstream is theirs now: refuse rather than delete it.
        let upstream_has_it = self.check_upstream(&r, commit)?;
        self.remove_branch(&r, commit, upstream_has_it);
        let info = self.decide(&r, ProposalState::Rejected, by, reason, |_| {});
        tracing::info!(project = %self.name(), proposal = %id, by, "proposal rejected");
        Ok(info)
    }

    /// Deletes the proposal branch upstream (only if still at the commit pushed) and here;
    /// a failure upstream is logged: the decision stands.
    fn remove_branch(&self, r: &Record, commit: ObjectId, upstream: bool) {
        let pushed = if upstream {
            self.repo.push_delete(&r.info.branch, commit)
        } else {
            Ok(PushOutcome::Pushed)
        };
        match pushed {
            Ok(PushOutcome::Pushed) => {}
            Ok(PushOutcome::Rejected(why)) => {
                tracing::warn!(branch = %r.info.branch, why = %why, "proposal branch changed upstream; left there")
            }
            Err(e) => {
                tracing::warn!(branch = %r.info.branch, error = %e, "cannot delete the proposal branch upstream")
            }
        }
        if let Err(e) =
            self.repo
                .move_branch(&r.info.branch, commit, None, "helix: proposal decided")
        {
            tracing::warn!(branch = %r.info.branch, error = %e, "cannot delete the local proposal branch");
        }
    }

    /// Records the decision (saved before anyone is told) and returns the proposal.
    fn decide(
        &self,
        r: &Record,
        state: ProposalState,
        by: &str,
        reason: Option<String>,
        more: impl FnOnce(&mut ProposalInfo),
    ) -> ProposalInfo {
        let mut book = lock(&self.project.proposals);
        if book.get(&r.info.id).is_none() {
            book.insert(r.clone());
        }
        let rec = book.get_mut(&r.info.id).expect("inserted above");
        rec.info.state = state;
        rec.info.decided_by = Some(by.to_string());
        rec.info.reason = reason;
        more(&mut rec.info);
        let info = rec.info.clone();
        book.save();
        info
    }
}
