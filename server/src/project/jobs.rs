//! What the project handle sends its worker and what comes back: the jobs, a write's
//! reply, and the errors they carry (`WriteError` for the write path, `JobError`).

use std::sync::Arc;

use helix_index_format::wire::{EditConflict, ProposalInfo, ProposalState, WriteAck};
use helix_index_format::{NewEntry, ValidationError};
use tokio::sync::oneshot;

use crate::git::{GitError, Kind};
use crate::store::ArtifactInfo;

/// Work for a project's worker thread.
#[derive(Debug)]
pub enum Job {
    Write(WriteJob),
    Refresh(Option<oneshot::Sender<Result<Option<ArtifactInfo>, String>>>),
    Proposal(ProposalJob),
    /// Entries' vectors, embedded off the worker thread (ingest.rs).
    Vectors(Vectors),
    Shutdown,
}

/// Vectors of entries embedded in the background, each for the blob it was computed from.
#[derive(Debug)]
pub struct Vectors {
    /// Repository path, blob, vector (`None`: the text could not be embedded).
    pub(crate) rows: Vec<(String, gix::ObjectId, Option<Vec<f32>>)>,
    /// The last of its job: the entries left out of it can be embedded now.
    pub(crate) done: bool,
}

/// A question or decision about a project's proposals (review mode).
#[derive(Debug)]
pub struct ProposalJob {
    pub op: ProposalOp,
    /// The proposals listed, or the one asked about or decided.
    pub reply: oneshot::Sender<Result<Vec<ProposalInfo>, ProposalError>>,
}

#[derive(Debug, Clone)]
pub enum ProposalOp {
    /// The open proposals (and, with `all`, the decided ones too).
    List {
        all: bool,
    },
    Get {
        id: String,
    },
    /// The open proposals with their entries, for every client (`show_proposals`).
    Shared,
    Approve {
        id: String,
        by: String,
    },
    Reject {
        id: String,
        by: String,
        reason: Option<String>,
    },
}

/// Why a proposal could not be shown or decided; the HTTP status of each is in `error.rs`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProposalError {
    #[error("no proposal {id:?} in this project (list them with `helix review list`)")]
    NotFound { id: String },
    #[error("proposal {id} is already {} ({})", .state.as_str(), .by.as_deref().unwrap_or("found on the branch"))]
    Decided {
        id: String,
        state: ProposalState,
        by: Option<String>,
    },
    #[error(
        "proposal {id}: its branch {branch} no longer exists on the upstream (deleted there); reject it to forget it"
    )]
    BranchGone { id: String, branch: String },
    #[error(
        "proposal {id}: its branch {branch} was changed on the upstream (it is at {found}, the server pushed {pushed}); nothing was landed; review the branch on the forge"
    )]
    BranchMoved {
        id: String,
        branch: String,
        pushed: String,
        found: String,
    },
    /// Landing the entry on the branch failed; nothing of it is on the branch.
    #[error("proposal {id} was not landed: {error}")]
    Land { id: String, error: WriteError },
    #[error("cannot reach the upstream: {0}")]
    Upstream(Arc<GitError>),
    #[error("the project does not review writes (writes = \"direct\"): it has no proposals")]
    NotReviewed,
    #[error("the project does not share its proposals (show_proposals is off)")]
    NotShared,
    /// The worker did not take or answer the job.
    #[error(transparent)]
    Worker(#[from] JobError),
    #[error(transparent)]
    Repository(Arc<GitError>),
}

impl From<GitError> for ProposalError {
    fn from(e: GitError) -> ProposalError {
        ProposalError::Repository(Arc::new(e))
    }
}

/// A write's result: `created` is false for a replay of an idempotency key.
#[derive(Debug, Clone)]
pub struct WriteReply {
    pub created: bool,
    pub ack: WriteAck,
}

/// A validated entry waiting for the worker.
#[derive(Debug)]
pub struct WriteJob {
    pub key: Option<String>,
    pub author: String,
    /// The entry's fields (for an edit: as parsed from its new text).
    pub entry: NewEntry,
    /// Set when the write replaces an existing entry instead of adding one.
    pub edit: Option<Box<EditTarget>>,
    pub reply: ReplyTx,
}

/// A write to propose (review mode): the entry, who sent it, its idempotency key and
/// fingerprint (kept with the proposal, so that a retry finds it).
#[derive(Debug, Clone, Copy)]
pub struct Proposed<'a> {
    pub entry: &'a NewEntry,
    pub author: &'a str,
    pub key: Option<&'a str>,
    pub fingerprint: &'a str,
    /// An edit of an existing entry (its file is the edit's content).
    pub edit: Option<&'a EditTarget>,
}

/// What an edit replaces, the version it starts from and the file it writes.
#[derive(Debug, Clone)]
pub struct EditTarget {
    /// Entry id (relative to the project's subdirectory).
    pub id: String,
    /// The blob id the edit was written from.
    pub base: String,
    /// The whole new file.
    pub content: String,
    /// The new text says `status: retired`.
    pub retired: bool,
    /// The new text's `supersedes`.
    pub supersedes: Vec<String>,
}

/// Where a write's answer goes.
pub type ReplyTx = oneshot::Sender<Result<WriteReply, WriteError>>;

/// Why a write was refused or failed, with the facts to say so. Cloned to the same-key
/// repeats of a write, hence the `Arc`s; the HTTP status of each is chosen in `error.rs`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WriteError {
    /// The entry breaks a write rule or holds a secret.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    #[error(
        "topic `{topic}` needs the folder `{folder}`, but the folder `{existing}` differs from it only in case (a case-insensitive checkout cannot hold both); choose another topic"
    )]
    TopicCase {
        topic: String,
        folder: String,
        existing: String,
    },
    #[error(
        "topic `{topic}` needs the folder `{folder}`, but `{existing}` is {} in the repository; choose another topic",
        .kind.describe()
    )]
    TopicTaken {
        topic: String,
        folder: String,
        existing: String,
        kind: Kind,
    },
    #[error(
        "topic `{topic}` needs the folder `{folder}`, but an earlier entry of the same batch is the file `{file}`; send it again"
    )]
    TopicInBatch {
        topic: String,
        folder: String,
        file: String,
    },
    /// An edit started from another version of the entry than the current one.
    #[error(
        "entry {} changed since this edit started: the edit is based on blob {}, the entry is now blob {}; merge the change into the current text and send it again with base {}",
        .0.id, .0.base, .0.current, .0.current
    )]
    EditConflict(Box<EditConflict>),
    #[error("no entry {id} in this project (never, or deleted since)")]
    NoSuchEntry { id: String },
    #[error(
        "entry {id} is superseded by {by}; edit {by} instead (or remove its `supersedes: {id}` first)"
    )]
    Superseded { id: String, by: String },
    #[error(
        "entry {id} is retired (`status: retired`); an edit may only bring it back (set `status: active` or remove `status`)"
    )]
    Retired { id: String },
    /// The new text's `supersedes` names a missing entry or closes a cycle.
    #[error("entry {id}: {reason}")]
    Supersedes { id: String, reason: String },
    /// The project already holds an entry that says nearly the same.
    #[error(
        "{id} ({title:?}) says nearly the same (similarity {score:.2}); edit it instead, or send this entry again with \"force\": true"
    )]
    Duplicate {
        id: String,
        title: String,
        score: f32,
    },
    /// The idempotency key was first used for another entry (`first`: its id).
    #[error(
        "Idempotency-Key {key:?} was first used for {first}, with a different entry; a key names one entry: send this one with a new key"
    )]
    KeyReused { key: String, first: String },
    #[error("cannot fetch the upstream: {0}")]
    Fetch(Arc<GitError>),
    #[error("push was rejected and fetching the upstream failed: {0}")]
    Refetch(Arc<GitError>),
    /// The push was refused although the upstream did not move: retrying cannot help.
    #[error("push to the upstream was rejected: {reason}")]
    PushRejected { reason: String },
    #[error(transparent)]
    Push(Arc<GitError>),
    #[error("the upstream branch kept moving; gave up after {attempts} attempts: {reason}")]
    KeptMoving { attempts: usize, reason: String },
    /// Reading the repository failed (a bug or a broken repository).
    #[error(transparent)]
    Repository(Arc<GitError>),
}

impl WriteError {
    /// Whether the write itself is refused (the entry, its topic or its key), as opposed
    /// to failing on the way to git; the metrics count the two apart.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            WriteError::Invalid(_)
                | WriteError::TopicCase { .. }
                | WriteError::TopicTaken { .. }
                | WriteError::TopicInBatch { .. }
                | WriteError::KeyReused { .. }
                | WriteError::EditConflict(_)
                | WriteError::NoSuchEntry { .. }
                | WriteError::Superseded { .. }
                | WriteError::Retired { .. }
                | WriteError::Supersedes { .. }
                | WriteError::Duplicate { .. }
        )
    }
}

impl From<GitError> for WriteError {
    fn from(e: GitError) -> WriteError {
        WriteError::Repository(Arc::new(e))
    }
}

/// Why a job for the worker was not done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("the project worker has stopped")]
    Stopped,
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The worker took the job and dropped it unanswered (it stopped).
    #[error("the project worker stopped before answering")]
    Unanswered,
}
