//! One project at run time: the served artifact, and a single worker thread that owns the
//! repository and does every git operation (fetch, ingest, batched writes, push) in order.

mod idempotency;
mod ingest;
mod jobs;
mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use gix::ObjectId;
use helix_index_format::{Diagnostic, Entry};

use crate::config::ProjectConfig;
use crate::git::{GitError, Repo};
use crate::metrics::Metrics;
use crate::store::{ArtifactInfo, ArtifactStore, DiagnosticInfo, Pointer, Served, StoreError};
use crate::sys::{lock, read};

use idempotency::IdempotencyLog;
pub use jobs::{Job, JobError, ReplyTx, WriteError, WriteJob, WriteReply};

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

/// Commit messages scanned at start-up to recover idempotency keys not yet persisted.
const IDEMPOTENCY_SCAN: usize = 2000;

/// Last fetch time and error, for `/status`.
#[derive(Debug, Clone, Default)]
pub struct FetchStatus {
    pub at: Option<i64>,
    pub error: Option<String>,
}

/// Shared, read-mostly state of a project.
#[derive(Debug)]
pub struct Project {
    pub cfg: ProjectConfig,
    pub dir: PathBuf,
    current: RwLock<Option<Arc<Served>>>,
    pointer: RwLock<Pointer>,
    fetch: Mutex<FetchStatus>,
    store: ArtifactStore,
    tx: Mutex<Option<Sender<Job>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Opens (or creates) the project's bare repository; seeds the embedded examples into
/// an empty server-owned one when configured to.
fn open_repo(project: &Project) -> Result<Repo, GitError> {
    let cfg = &project.cfg;
    let repo = Repo::open_or_init(
        &project.dir.join("repo.git"),
        cfg.upstream.clone(),
        &cfg.branch,
    )?;
    if cfg.seed_examples && cfg.upstream.is_none() && repo.tip()?.is_none() {
        let files: Vec<(String, Vec<u8>)> = EXAMPLES
            .iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect();
        if !files.is_empty() {
            repo.commit_files(None, &files, "helix-server", "Seed example entries\n")?;
            tracing::info!(project = %cfg.name, entries = files.len(), "seeded repository with example entries");
        }
    }
    Ok(repo)
}

impl Project {
    /// Opens the project's data, loads the last good artifact (served at once, before any
    /// fetch) and starts the worker, whose first job is a refresh.
    pub fn start(
        cfg: ProjectConfig,
        data_dir: &Path,
        keep: usize,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Project>, StartError> {
        let dir = data_dir.join("projects").join(&cfg.name);
        std::fs::create_dir_all(&dir).map_err(|error| StartError::CreateDir {
            path: dir.clone(),
            error,
        })?;
        let store = ArtifactStore::new(&dir, keep)?;
        let (current, pointer) = store.last_good();
        if let Some(c) = &current {
            tracing::info!(project = %cfg.name, commit = %c.info.commit, generation = c.info.generation, "serving last good artifact");
            metrics.artifact(&cfg.name, c.info.bytes, c.info.entries, c.info.generation);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let project = Arc::new(Project {
            cfg,
            dir: dir.clone(),
            current: RwLock::new(current),
            pointer: RwLock::new(pointer),
            fetch: Mutex::new(FetchStatus::default()),
            store,
            tx: Mutex::new(Some(tx.clone())),
            worker: Mutex::new(None),
        });
        // gix repositories are not `Send`: the worker thread opens its own and reports
        // whether that worked before the server starts listening.
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), GitError>>();
        let p2 = project.clone();
        let handle = std::thread::Builder::new()
            .name(format!("helix-{}", project.cfg.name))
            .spawn(move || {
                let opened = open_repo(&p2).map(|repo| Worker::new(p2, repo, metrics));
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
        let _ = tx.send(Job::Refresh(None));
        *lock(&project.worker) = Some(handle);
        Ok(project)
    }

    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    pub fn current(&self) -> Option<Arc<Served>> {
        read(&self.current).clone()
    }

    pub fn diagnostics(&self) -> Vec<DiagnosticInfo> {
        read(&self.pointer).diagnostics.clone()
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

    /// Queues a job for the worker.
    pub fn send(&self, job: Job) -> Result<(), JobError> {
        let g = lock(&self.tx);
        match g.as_ref() {
            Some(tx) => tx.send(job).map_err(|_| JobError::Stopped),
            None => Err(JobError::ShuttingDown),
        }
    }

    /// Stops the worker after it has finished every queued job.
    pub fn shutdown(&self) {
        if let Some(tx) = lock(&self.tx).take() {
            let _ = tx.send(Job::Shutdown);
        }
        if let Some(h) = lock(&self.worker).take() {
            let _ = h.join();
        }
    }
}

/// A parsed file, reused while its blob and last-change metadata stay the same.
#[derive(Debug)]
struct Cached {
    blob: ObjectId,
    parsed: Result<Entry, Diagnostic>,
}

/// Owns the repository; runs on its own thread.
#[derive(Debug)]
struct Worker {
    project: Arc<Project>,
    repo: Repo,
    metrics: Arc<Metrics>,
    cache: HashMap<String, Cached>,
    generation: u64,
    idem: IdempotencyLog,
    /// Whether commit messages were scanned for idempotency keys (after the first fetch).
    scanned: bool,
    /// Branch tip up to which commit messages were scanned for keys.
    scanned_tip: Option<ObjectId>,
    /// Write batches committed since the last `git gc --auto`.
    batches_since_gc: u32,
    /// The last compiled commit and its first-parent depth (its generation's source).
    depth: Option<(ObjectId, u64)>,
}

impl Worker {
    fn new(project: Arc<Project>, repo: Repo, metrics: Arc<Metrics>) -> Worker {
        let generation = read(&project.pointer)
            .kept
            .iter()
            .map(|k| k.generation)
            .max()
            .unwrap_or(0);
        let idem = IdempotencyLog::open(project.dir.join("idempotency.jsonl"));
        let mut w = Worker {
            project,
            repo,
            metrics,
            cache: HashMap::new(),
            generation,
            idem,
            scanned: false,
            scanned_tip: None,
            batches_since_gc: 0,
            depth: None,
        };
        if w.repo.upstream.is_none() {
            w.scan_commit_keys();
        }
        w
    }

    fn name(&self) -> String {
        self.project.cfg.name.clone()
    }

    fn prefix(&self) -> Option<String> {
        self.project.cfg.subdir_prefix()
    }

    fn id_of(&self, repo_path: &str) -> String {
        id_of(self.prefix().as_deref(), repo_path)
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

    fn run(&mut self, rx: Receiver<Job>) {
        let poll = Duration::from_secs(self.project.cfg.poll_interval_secs);
        let mut next_poll = Instant::now() + poll;
        loop {
            let wait = next_poll.saturating_duration_since(Instant::now());
            let mut jobs = Vec::new();
            match rx.recv_timeout(wait) {
                Ok(j) => jobs.push(j),
                Err(RecvTimeoutError::Timeout) => jobs.push(Job::Refresh(None)),
                Err(RecvTimeoutError::Disconnected) => break,
            }
            // Everything already waiting joins this round: concurrent stores become one commit.
            while let Ok(j) = rx.try_recv() {
                jobs.push(j);
            }
            let mut writes = Vec::new();
            let mut refreshes = Vec::new();
            let mut shutdown = false;
            for j in jobs {
                match j {
                    Job::Write(w) => writes.push(w),
                    Job::Refresh(r) => refreshes.push(r),
                    Job::Shutdown => shutdown = true,
                }
            }
            if !writes.is_empty() {
                self.guarded("write", |w| w.process_writes(writes));
            }
            if !refreshes.is_empty() {
                let mut result = Err("refresh failed".to_string());
                self.guarded("refresh", |w| {
                    result = w.refresh().map_err(|e| e.to_string());
                });
                for r in refreshes.into_iter().flatten() {
                    let _ = r.send(result.clone());
                }
                next_poll = Instant::now() + poll;
            }
            if shutdown {
                break;
            }
        }
        tracing::info!(project = %self.name(), "worker stopped");
    }

    /// Runs `f`, turning a panic (a bug, or an unfinished library in development) into a log
    /// line instead of a dead worker.
    fn guarded(&mut self, what: &str, f: impl FnOnce(&mut Worker)) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        match r {
            Ok(()) => {}
            Err(_) => {
                // A panic may have left entries moved out of the cache: start it afresh.
                self.cache.clear();
                tracing::error!(project = %self.name(), "{what} panicked");
            }
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
