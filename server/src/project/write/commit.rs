//! A batch's one commit onto the branch tip, pushed; on a moved upstream, fetched and
//! re-applied (its paths chosen again), a bounded number of times.

use std::collections::HashSet;
use std::sync::Arc;

use helix_index_format::{Entry, NewEntry};

use super::{Batch, BatchError, Group};
use crate::git::PushOutcome;
use crate::project::idempotency::IdempotencyLog;
use crate::project::jobs::WriteError;
use crate::project::lane::Lane;

/// How often a write is re-applied after the upstream moved under it.
const MAX_PUSH_ATTEMPTS: usize = 8;
/// Write batches between two `git gc --auto` runs on the server's repository.
const GC_EVERY_BATCHES: u32 = 200;

impl Lane<'_> {
    /// The entry file a write commits at `path`.
    pub(super) fn entry_file(&self, new: &NewEntry, author: &str, path: &str) -> Vec<u8> {
        let entry = Entry {
            id: self.id_of(path),
            topic: new.topic.clone(),
            title: new.title.trim().to_string(),
            tags: new.tags.clone(),
            sources: new.sources.clone(),
            date: None,
            author: Some(author.to_string()),
            body: new.body.clone(),
            extra: Default::default(),
            blob: String::new(),
        };
        helix_index_format::render_entry(&entry).into_bytes()
    }

    /// Commits the batch onto the branch tip and pushes it; on a moved upstream, fetches and
    /// re-applies (choosing paths again) a bounded number of times.
    pub(super) fn commit_batch(&mut self, groups: &[Group]) -> Result<Batch, BatchError> {
        let mut last_reason = String::new();
        for attempt in 0..MAX_PUSH_ATTEMPTS {
            let parent = self.tip()?;
            let placed = self.place(parent, groups)?;
            let mut files = Vec::with_capacity(groups.len());
            let mut listed = Vec::new();
            for (g, path) in groups.iter().zip(&placed) {
                let Ok(path) = path else { continue };
                if let Some(edit) = &g.job.edit {
                    files.push((path.clone(), edit.content.clone().into_bytes()));
                    listed.push((g, path));
                    continue;
                }
                files.push((
                    path.clone(),
                    self.entry_file(&g.job.entry, &g.job.author, path),
                ));
                listed.push((g, path));
            }
            if listed.is_empty() {
                return Ok(Batch::Refused(
                    placed.into_iter().filter_map(Result::err).collect(),
                ));
            }
            let authors: HashSet<&str> =
                listed.iter().map(|(g, _)| g.job.author.as_str()).collect();
            let author = if authors.len() == 1 {
                listed[0].0.job.author.as_str()
            } else {
                "helix-server"
            };
            let edits = listed.iter().filter(|(g, _)| g.job.edit.is_some()).count();
            let mut msg = match (listed.len(), edits) {
                (1, 1) => format!("Edit {}\n\n", self.id_of(listed[0].1)),
                (1, _) => format!("Add {}\n\n", self.id_of(listed[0].1)),
                (n, 0) => format!("Add {n} entries\n\n"),
                (n, _) => format!("Write {n} entries\n\n"),
            };
            for (g, path) in &listed {
                let what = match &g.job.edit {
                    Some(e) => format!(", edit of blob {}", e.base),
                    None => String::new(),
                };
                msg.push_str(&format!(
                    "- {} ({}{what})\n",
                    self.id_of(path),
                    g.job.author
                ));
            }
            let keyed: Vec<String> = listed
                .iter()
                .filter_map(|(g, p)| {
                    g.job
                        .key
                        .as_ref()
                        .map(|k| IdempotencyLog::trailer(k, p, &g.fingerprint))
                })
                .collect();
            if !keyed.is_empty() {
                msg.push('\n');
                msg.push_str(&keyed.join("\n"));
                msg.push('\n');
            }
            let branch = self.branch();
            let commit = match self
                .repo
                .commit_files(&branch, parent, &files, author, &msg)
            {
                Ok(c) => c,
                Err(e) => {
                    // The branch moved under us (compare-and-swap); look again.
                    last_reason = e.to_string();
                    tracing::warn!(attempt, error = %last_reason, "commit failed; retrying");
                    continue;
                }
            };
            match self.repo.push(&branch, commit) {
                Ok(PushOutcome::Pushed) => {
                    *self.batches_since_gc += 1;
                    if *self.batches_since_gc >= GC_EVERY_BATCHES {
                        // Each write adds loose objects; let git pack them now and then.
                        *self.batches_since_gc = 0;
                        self.repo.maintain();
                    }
                    return Ok(Batch::Committed(commit, placed));
                }
                Ok(PushOutcome::Rejected(reason)) => {
                    tracing::info!(project = %self.name(), attempt, "upstream moved; fetching and re-applying");
                    last_reason = reason;
                    let _ = self.repo.reset_branch(&branch, commit, parent);
                    match self.repo.fetch().and_then(|()| self.tip()) {
                        Err(e) => {
                            return Err(BatchError::Failed(WriteError::Refetch(Arc::new(e))));
                        }
                        Ok(t) if t == parent => {
                            // Not moved: retrying would be refused the same way.
                            return Err(BatchError::Failed(WriteError::PushRejected {
                                reason: last_reason,
                            }));
                        }
                        Ok(_) => {}
                    }
                    // What moved the upstream may be one of these very writes (a push from
                    // before a crash that completed late): look before re-applying.
                    let known = self.idem.len();
                    self.scan_commit_keys();
                    if self.idem.len() != known
                        && groups
                            .iter()
                            .any(|g| g.job.key.as_ref().is_some_and(|k| self.idem.contains(k)))
                    {
                        return Err(BatchError::KeysAppeared);
                    }
                }
                Err(e) => {
                    let _ = self.repo.reset_branch(&branch, commit, parent);
                    return Err(BatchError::Failed(WriteError::Push(Arc::new(e))));
                }
            }
        }
        Err(BatchError::Failed(WriteError::KeptMoving {
            attempts: MAX_PUSH_ATTEMPTS,
            reason: last_reason,
        }))
    }
}
