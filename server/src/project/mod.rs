//! Projects at run time: each one's served artifact, and one worker thread per repository
//! that owns it and does every git operation of its projects (fetch, ingest, writes, push).

mod duplicates;
mod edit;
mod idempotency;
mod ingest;
mod jobs;
mod lane;
mod placement;
mod proposals;
mod refusals;
mod review;
mod worker;
mod write;

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, RwLock};

use helix_index_format::Census;
use helix_index_format::wire::ProposalInfo;

use crate::config::ProjectConfig;
use crate::git::{GitError, Repo};
use crate::metrics::Metrics;
use crate::semantic::Model;
use crate::store::{ArtifactInfo, ArtifactStore, DiagnosticInfo, Pointer, Served, StoreError};
use crate::sys::{lock, read};

pub use jobs::{
    EditTarget, Job, JobError, ProposalError, ProposalJob, ProposalOp, ReplyTx, Vectors,
    WriteError, WriteJob, WriteReply,
};
use placement::Group;
pub use refusals::{KindCount, Refusal, Refusals};
use worker::Worker;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}
pub use embedded::EXAMPLES;

pub use helix_index_format::wire::WriteAck;

/// Why a project could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create {}: {error}", .path.display())]
    CreateDir {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
    #[error("worker thread died while opening the repository")]
    WorkerDied,
}

/// Why `?commit=` names no artifact that can be served.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("commit {0:?} must be 4 to 64 hex digits")]
    NotHex(String),
    #[error("commit prefix {0:?} is ambiguous")]
    Ambiguous(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Last fetch time and error, for `/status`, and the last compile error (when and what;
/// cleared by a good compile), for the health page.
#[derive(Debug, Clone, Default)]
pub struct FetchStatus {
    pub at: Option<i64>,
    pub error: Option<String>,
    pub compile_error: Option<(i64, String)>,
}

/// Shared, read-mostly state of a project.
#[derive(Debug)]
pub struct Project {
    pub cfg: ProjectConfig,
    pub dir: PathBuf,
    /// The bare repository its worker keeps (shared by the projects of one upstream):
    /// readers other than the worker open it read-only (the web view's histories).
    pub repo: PathBuf,
    current: RwLock<Option<Arc<Served>>>,
    pointer: RwLock<Pointer>,
    fetch: Mutex<FetchStatus>,
    store: ArtifactStore,
    /// The project's lane in its worker: jobs go to the worker tagged with it.
    lane: usize,
    tx: Mutex<Option<Sender<(usize, Job)>>>,
    /// The worker thread, shared by the projects on its repository.
    worker: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// Review mode: the proposals (decided by the worker; the forge outcome is recorded by
    /// the handler that opened the request).
    proposals: Arc<Mutex<proposals::Book>>,
    /// Writes refused for holding a credential (the health page).
    refusals: Mutex<refusals::Book>,
    /// The `[semantic]` model its compiles embed entries with.
    pub model: Option<Arc<Model>>,
}

/// Opens (or creates) a group's bare repository; seeds the embedded examples into an empty
/// server-owned one when configured to.
fn open_repo(group: &Group) -> Result<Repo, GitError> {
    let repo = Repo::open_or_init(&group.path, group.upstream.clone(), group.branches())?;
    repo.keep_only_followed_branches()?;
    if let [cfg] = group.projects.as_slice()
        && cfg.seed_examples
        && cfg.upstream.is_none()
        && repo.tip(&cfg.branch)?.is_none()
    {
        let files: Vec<(String, Vec<u8>)> = EXAMPLES
            .iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect();
        if !files.is_empty() {
            repo.commit_files(
                &cfg.branch,
                None,
                &files,
                "helix-server",
                "Seed example entries\n",
            )?;
            tracing::info!(project = %cfg.name, entries = files.len(), "seeded repository with example entries");
        }
    }
    Ok(repo)
}

/// Opens every project's data, loads each one's last good artifact (served at once, before
/// any fetch) and starts one worker per repository, whose first job is a refresh. Projects
/// on the same upstream share its mirror and its worker: one fetch brings all of them.
pub fn start_all(
    configs: &[ProjectConfig],
    data_dir: &Path,
    keep: usize,
    metrics: &Arc<Metrics>,
    model: Option<&Arc<Model>>,
) -> Result<Vec<Arc<Project>>, StartError> {
    let mut out = Vec::with_capacity(configs.len());
    for group in placement::groups(data_dir, configs) {
        placement::adopt_old_mirrors(data_dir, &group);
        out.extend(start_group(group, data_dir, keep, metrics, model)?);
    }
    Ok(out)
}

fn start_group(
    group: Group,
    data_dir: &Path,
    keep: usize,
    metrics: &Arc<Metrics>,
    model: Option<&Arc<Model>>,
) -> Result<Vec<Arc<Project>>, StartError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = Arc::new(Mutex::new(None));
    let mut projects = Vec::with_capacity(group.projects.len());
    for (lane, cfg) in group.projects.iter().enumerate() {
        let dir = data_dir.join("projects").join(&cfg.name);
        std::fs::create_dir_all(&dir).map_err(|error| StartError::CreateDir {
            path: dir.clone(),
            error,
        })?;
        let store = ArtifactStore::new(&dir, keep)?;
        let (current, pointer) = store.last_good();
        let book = proposals::Book::open(dir.join("proposals.json"));
        let refused = refusals::Book::open(dir.join("refusals.json"));
        if let Some(c) = &current {
            tracing::info!(project = %cfg.name, commit = %c.info.commit, generation = c.info.generation, "serving last good artifact");
            metrics.artifact(&cfg.name, c.info.bytes, c.info.entries, c.info.generation);
        }
        projects.push(Arc::new(Project {
            cfg: cfg.clone(),
            dir,
            repo: group.path.clone(),
            current: RwLock::new(current),
            pointer: RwLock::new(pointer),
            fetch: Mutex::new(FetchStatus::default()),
            store,
            lane,
            tx: Mutex::new(Some(tx.clone())),
            worker: worker.clone(),
            refusals: Mutex::new(refused),
            proposals: Arc::new(Mutex::new(book)),
            model: model.cloned(),
        }));
    }
    // gix repositories are not `Send`: the worker thread opens its own and reports
    // whether that worked before the server starts listening.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), GitError>>();
    let lanes = projects.clone();
    let metrics = metrics.clone();
    let handle = std::thread::Builder::new()
        .name(format!("helix-{}", group.label()))
        .spawn(move || {
            let opened = open_repo(&group).map(|repo| Worker::new(lanes, repo, metrics));
            match opened {
                Ok(mut worker) => {
                    let _ = ready_tx.send(Ok(()));
                    worker.run(rx);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })
        .map_err(StartError::Thread)?;
    ready_rx.recv().map_err(|_| StartError::WorkerDied)??;
    // One refresh fetches once and compiles every project of the repository.
    let _ = tx.send((0, Job::Refresh(None)));
    *lock(&worker) = Some(handle);
    Ok(projects)
}

impl Project {
    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    pub fn current(&self) -> Option<Arc<Served>> {
        read(&self.current).clone()
    }

    pub fn diagnostics(&self) -> Vec<DiagnosticInfo> {
        read(&self.pointer).diagnostics.clone()
    }

    /// What became of the served commit's Markdown files: entries, invalid, skipped by reason.
    pub fn census(&self) -> Census {
        let ptr = read(&self.pointer);
        Census {
            entries: self.current().map_or(0, |c| c.info.entries),
            invalid: ptr.diagnostics.len() as u64,
            ..Census::default()
        }
        .with_skipped_keys(ptr.skipped.iter().map(|(k, n)| (k.as_str(), *n)))
    }

    /// Counts a write refused because `e` found a credential in it (other errors are not
    /// counted here); `by` is the token's name.
    pub fn refused(&self, by: &str, e: &helix_index_format::ValidationError) {
        if let helix_index_format::ValidationError::Secret {
            field,
            line,
            provider,
            kind,
        } = e
        {
            lock(&self.refusals).record(Refusal {
                at: crate::sys::now_secs(),
                by: by.to_string(),
                field: field.clone(),
                line: *line,
                provider: provider.to_string(),
                kind: kind.to_string(),
            });
        }
    }

    /// The writes refused for holding a credential.
    pub fn refusals(&self) -> Refusals {
        lock(&self.refusals).refusals.clone()
    }

    /// Records what the forge answered when a pull/merge request was opened for proposal `id`.
    pub fn set_forge_outcome(&self, id: &str, outcome: helix_index_format::wire::ForgeOutcome) {
        lock(&self.proposals).set_forge(id, outcome);
    }

    pub fn fetch_status(&self) -> FetchStatus {
        lock(&self.fetch).clone()
    }

    /// A kept artifact by commit (full id or a unique prefix of at least 4 hex digits).
    pub fn pinned(&self, commit: &str) -> Result<Option<Arc<Served>>, PinError> {
        let commit = commit.to_ascii_lowercase();
        if commit.len() < 4 || commit.len() > 64 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(PinError::NotHex(commit));
        }
        if let Some(c) = self
            .current()
            .filter(|c| c.info.commit.starts_with(&commit))
        {
            return Ok(Some(c));
        }
        let kept = read(&self.pointer).kept.clone();
        let matches: Vec<&ArtifactInfo> = kept
            .iter()
            .filter(|k| k.commit.starts_with(&commit))
            .collect();
        match matches.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(Arc::new(self.store.load(one)?))),
            _ => Err(PinError::Ambiguous(commit)),
        }
    }

    /// A kept artifact by content hash: a base that patches can start from.
    pub fn kept(&self, hash: &str) -> Option<ArtifactInfo> {
        read(&self.pointer)
            .kept
            .iter()
            .find(|k| k.hash == hash)
            .cloned()
    }

    /// Reads a kept artifact from disk, checked against its content hash.
    pub fn load(&self, info: &ArtifactInfo) -> Result<Served, StoreError> {
        self.store.load(info)
    }

    /// Asks the worker about proposals (list, get, approve, reject) and waits for its answer.
    pub async fn ask(&self, op: ProposalOp) -> Result<Vec<ProposalInfo>, ProposalError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Job::Proposal(ProposalJob { op, reply: tx }))?;
        rx.await.map_err(|_| JobError::Unanswered)?
    }

    /// The proposals with their entries, newest first: the open ones, or every one kept
    /// with `all`. Read from the book, without queueing behind the worker's git work.
    pub fn proposals(&self, all: bool) -> Vec<ProposalInfo> {
        let mut list: Vec<ProposalInfo> = lock(&self.proposals)
            .all()
            .filter(|r| all || r.info.state == helix_index_format::wire::ProposalState::Open)
            .map(|r| ProposalInfo {
                entry: Some(r.entry.clone()),
                ..r.info.clone()
            })
            .collect();
        list.reverse();
        list
    }

    /// Queues a job for the worker.
    pub fn send(&self, job: Job) -> Result<(), JobError> {
        let g = lock(&self.tx);
        match g.as_ref() {
            Some(tx) => tx.send((self.lane, job)).map_err(|_| JobError::Stopped),
            None => Err(JobError::ShuttingDown),
        }
    }

    /// Stops the worker (which serves every project on this repository) after it has
    /// finished every queued job.
    pub fn shutdown(&self) {
        if let Some(tx) = lock(&self.tx).take() {
            let _ = tx.send((self.lane, Job::Shutdown));
        }
        if let Some(h) = lock(&self.worker).take() {
            let _ = h.join();
        }
    }
}
