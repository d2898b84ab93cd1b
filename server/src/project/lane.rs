//! A project's lane in its worker: its state (parse cache, generation, idempotency log), the
//! `Lane` view of the shared repository that ingest, writes and review extend, the key scan.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Instant;

use gix::ObjectId;
use helix_index_format::{Diagnostic, Entry};

use super::Project;
use super::idempotency::IdempotencyLog;
use crate::git::{GitError, Repo};
use crate::metrics::Metrics;

/// Commit messages scanned at start-up to recover idempotency keys not yet persisted.
const IDEMPOTENCY_SCAN: usize = 2000;

/// A parsed file, reused while its blob and last-change metadata stay the same.
#[derive(Debug)]
pub(super) struct Cached {
    pub(super) blob: ObjectId,
    pub(super) parsed: Result<Entry, Diagnostic>,
    /// The entry's embedding by the `[semantic]` model, once computed (or taken from the
    /// served artifact's row of the same entry and blob).
    pub(super) vector: Option<Vec<f32>>,
    /// Embedding this blob's text failed: not tried again until the file changes.
    pub(super) unembeddable: bool,
}

/// One project's part of a worker: what it compiled, and the keys it answered.
#[derive(Debug)]
pub(super) struct LaneState {
    pub(super) project: Arc<Project>,
    pub(super) cache: HashMap<String, Cached>,
    pub(super) generation: u64,
    pub(super) idem: IdempotencyLog,
    /// Whether commit messages were scanned for idempotency keys (after the first fetch).
    pub(super) scanned: bool,
    /// Branch tip up to which commit messages were scanned for keys.
    pub(super) scanned_tip: Option<ObjectId>,
    /// The last compiled commit of its branch and its first-parent depth (its generation's
    /// source; per lane, since lanes may follow different branches).
    pub(super) depth: Option<(ObjectId, u64)>,
    /// The entries (path, blob) a background job is embedding, while one runs (ingest.rs).
    pub(super) embedding: Option<HashMap<String, ObjectId>>,
    /// Vectors arrived that the served artifact lacks: it is compiled again.
    pub(super) vectors_unserved: bool,
    /// When the last artifact was compiled: bounds recompiles for vectors alone.
    pub(super) compiled_at: Instant,
}

/// One project's view of its worker: its own state, and the repository and counters it
/// shares with the other projects there. Ingest and the write path are its methods.
#[derive(Debug)]
pub(super) struct Lane<'w> {
    pub(super) repo: &'w mut Repo,
    pub(super) metrics: &'w Metrics,
    pub(super) batches_since_gc: &'w mut u32,
    pub(super) state: &'w mut LaneState,
}

impl Deref for Lane<'_> {
    type Target = LaneState;
    fn deref(&self) -> &LaneState {
        self.state
    }
}

impl DerefMut for Lane<'_> {
    fn deref_mut(&mut self) -> &mut LaneState {
        self.state
    }
}

impl Lane<'_> {
    pub(super) fn name(&self) -> String {
        self.project.cfg.name.clone()
    }

    pub(super) fn branch(&self) -> String {
        self.project.cfg.branch.clone()
    }

    /// The tip of the project's branch.
    pub(super) fn tip(&self) -> Result<Option<ObjectId>, GitError> {
        self.repo.tip(&self.project.cfg.branch)
    }

    pub(super) fn prefix(&self) -> Option<String> {
        self.project.cfg.subdir_prefix()
    }

    pub(super) fn id_of(&self, repo_path: &str) -> String {
        id_of(self.prefix().as_deref(), repo_path)
    }

    /// Adds keys found in recent commit messages of the branch: a write committed (and
    /// pushed) just before a crash is still recognised when the client retries it. For an
    /// upstream project this runs after the first successful fetch, so a local commit that
    /// never reached the upstream (and is dropped by the fetch) does not count.
    pub(super) fn scan_commit_keys(&mut self) {
        self.scanned = true;
        let Ok(Some(tip)) = self.tip() else {
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
        let next = if built_tip {
            self.generation
        } else {
            self.generation + 1
        };
        // Generations are first-parent depths (ingest.rs): a key is answered with the
        // generation its commit got on the replica that wrote it, as that replica did. A
        // numbering ahead of the depths (an older data directory) answers with the next one.
        let depth = self.repo.depth(tip, self.depth).map(|d| d.0).unwrap_or(0);
        let generation = |i: usize| {
            if depth >= next {
                depth.saturating_sub(i as u64)
            } else {
                next
            }
        };
        let prefix = self.prefix();
        let added = self
            .idem
            .recover(msgs, generation, |path| id_of(prefix.as_deref(), path));
        if added > 0 {
            tracing::info!(project = %self.name(), added, "recovered idempotency keys from git history");
            self.idem.save();
        }
    }
}

/// The entry id of repository path `repo_path`: the path below the project's subdirectory
/// `prefix`, if there is one.
fn id_of(prefix: Option<&str>, repo_path: &str) -> String {
    match prefix {
        Some(p) => repo_path
            .strip_prefix(&format!("{p}/"))
            .unwrap_or(repo_path)
            .to_string(),
        None => repo_path.to_string(),
    }
}
