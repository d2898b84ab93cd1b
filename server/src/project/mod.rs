//! Projects at run time: each one's served artifact, and one worker thread per repository
//! that owns it and does every git operation of its projects (fetch, ingest, writes, push).

mod duplicates;
mod edit;
mod idempotency;
mod ingest;
mod jobs;
mod placement;
mod proposals;
mod review;
mod write;

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use gix::ObjectId;
use helix_index_format::{Census, Diagnostic, Entry};

use crate::config::ProjectConfig;
use crate::git::{GitError, Repo};
use crate::metrics::Metrics;
use crate::store::{ArtifactInfo, ArtifactStore, DiagnosticInfo, Pointer, Served, StoreError};
use crate::sys::{lock, now_secs, read};

use idempotency::IdempotencyLog;
pub use jobs::{
    EditTarget, Job, JobError, ProposalError, ProposalJob, ProposalOp, ReplyTx, WriteError,
    WriteJob, WriteReply,
};
use placement::Group;

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
    /// The project's lane in its worker: jobs go to the worker tagged with it.
    lane: usize,
    tx: Mutex<Option<Sender<(usize, Job)>>>,
    /// The worker thread, shared by the projects on its repository.
    worker: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// Review mode: the proposals (decided by the worker; the forge outcome is recorded by
    /// the handler that opened the request).
    proposals: Arc<Mutex<proposals::Book>>,
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
) -> Result<Vec<Arc<Project>>, StartError> {
    let mut out = Vec::with_capacity(configs.len());
    for group in placement::groups(data_dir, configs) {
        placement::adopt_old_mirrors(data_dir, &group);
        out.extend(start_group(group, data_dir, keep, metrics)?);
    }
    Ok(out)
}

fn start_group(
    group: Group,
    data_dir: &Path,
    keep: usize,
    metrics: &Arc<Metrics>,
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
        if let Some(c) = &current {
            tracing::info!(project = %cfg.name, commit = %c.info.commit, generation = c.info.generation, "serving last good artifact");
            metrics.artifact(&cfg.name, c.info.bytes, c.info.entries, c.info.generation);
        }
        projects.push(Arc::new(Project {
            cfg: cfg.clone(),
            dir,
            current: RwLock::new(current),
            pointer: RwLock::new(pointer),
            fetch: Mutex::new(FetchStatus::default()),
            store,
            lane,
            tx: Mutex::new(Some(tx.clone())),
            worker: worker.clone(),
            proposals: Arc::new(Mutex::new(book)),
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

/// A parsed file, reused while its blob and last-change metadata stay the same.
#[derive(Debug)]
struct Cached {
    blob: ObjectId,
    parsed: Result<Entry, Diagnostic>,
}

/// One project's part of a worker: what it compiled, and the keys it answered.
#[derive(Debug)]
struct LaneState {
    project: Arc<Project>,
    cache: HashMap<String, Cached>,
    generation: u64,
    idem: IdempotencyLog,
    /// Whether commit messages were scanned for idempotency keys (after the first fetch).
    scanned: bool,
    /// Branch tip up to which commit messages were scanned for keys.
    scanned_tip: Option<ObjectId>,
    /// The last compiled commit of its branch and its first-parent depth (its generation's
    /// source; per lane, since lanes may follow different branches).
    depth: Option<(ObjectId, u64)>,
}

/// Owns a repository and serves every project on it; runs on its own thread, so only it
/// ever touches the repository.
#[derive(Debug)]
struct Worker {
    repo: Repo,
    metrics: Arc<Metrics>,
    lanes: Vec<LaneState>,
    /// Write batches committed since the last `git gc --auto`.
    batches_since_gc: u32,
}

/// One project's view of its worker: its own state, and the repository and counters it
/// shares with the other projects there. Ingest and the write path are its methods.
#[derive(Debug)]
struct Lane<'w> {
    repo: &'w mut Repo,
    metrics: &'w Metrics,
    batches_since_gc: &'w mut u32,
    state: &'w mut LaneState,
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

impl Worker {
    fn new(projects: Vec<Arc<Project>>, repo: Repo, metrics: Arc<Metrics>) -> Worker {
        let lanes = projects
            .into_iter()
            .map(|project| {
                let generation = read(&project.pointer)
                    .kept
                    .iter()
                    .map(|k| k.generation)
                    .max()
                    .unwrap_or(0);
                let idem = IdempotencyLog::open(project.dir.join("idempotency.jsonl"));
                LaneState {
                    project,
                    cache: HashMap::new(),
                    generation,
                    idem,
                    scanned: false,
                    scanned_tip: None,
                    depth: None,
                }
            })
            .collect();
        let mut w = Worker {
            repo,
            metrics,
            lanes,
            batches_since_gc: 0,
        };
        if w.repo.upstream.is_none() {
            for i in 0..w.lanes.len() {
                w.lane(i).scan_commit_keys();
            }
        }
        w
    }

    fn lane(&mut self, i: usize) -> Lane<'_> {
        Lane {
            repo: &mut self.repo,
            metrics: &self.metrics,
            batches_since_gc: &mut self.batches_since_gc,
            state: &mut self.lanes[i],
        }
    }

    fn label(&self) -> String {
        let names: Vec<&str> = self.lanes.iter().map(|l| l.project.name()).collect();
        names.join("+")
    }

    fn run(&mut self, rx: Receiver<(usize, Job)>) {
        // Projects sharing a repository are fetched together, as often as the most eager.
        let poll = self
            .lanes
            .iter()
            .map(|l| l.project.cfg.poll_interval_secs)
            .min()
            .map_or(Duration::from_secs(60), Duration::from_secs);
        let mut next_poll = Instant::now() + poll;
        let n = self.lanes.len();
        loop {
            let wait = next_poll.saturating_duration_since(Instant::now());
            let mut jobs = Vec::new();
            match rx.recv_timeout(wait) {
                Ok(j) => jobs.push(j),
                Err(RecvTimeoutError::Timeout) => jobs.push((0, Job::Refresh(None))),
                Err(RecvTimeoutError::Disconnected) => break,
            }
            // Everything already waiting joins this round: concurrent stores become one commit.
            while let Ok(j) = rx.try_recv() {
                jobs.push(j);
            }
            let mut writes: Vec<Vec<WriteJob>> = (0..n).map(|_| Vec::new()).collect();
            let mut refreshes = Vec::new();
            let mut proposal_jobs = Vec::new();
            let mut shutdown = false;
            for (lane, j) in jobs {
                match j {
                    Job::Write(w) => writes[lane].push(w),
                    Job::Proposal(p) => proposal_jobs.push((lane, p)),
                    Job::Refresh(r) => refreshes.push((lane, r)),
                    Job::Shutdown => shutdown = true,
                }
            }
            let mut moved: Vec<String> = Vec::new();
            for (i, batch) in writes.into_iter().enumerate() {
                if !batch.is_empty() {
                    self.guarded(i, "write", |l| l.process_writes(batch));
                    moved.push(self.lanes[i].project.cfg.branch.clone());
                }
            }
            // One at a time, after the writes: two approvals of one proposal land it once.
            for (i, job) in proposal_jobs {
                self.guarded(i, "proposal", |l| l.proposal_job(job));
                moved.push(self.lanes[i].project.cfg.branch.clone());
            }
            // The other projects on a branch that writes moved (a subdir and the whole
            // repository) compile it now too, not at the next poll.
            for i in 0..n {
                if moved.contains(&self.lanes[i].project.cfg.branch) {
                    self.guarded(i, "ingest", |l| {
                        let tip = l.tip().ok().flatten();
                        if let Err(e) = l.ingest(tip, Instant::now()) {
                            tracing::error!(project = %l.name(), error = %e, "compile failed");
                        }
                    });
                }
            }
            if !refreshes.is_empty() {
                // One fetch for the repository, then every project compiles its branch.
                let started = Instant::now();
                let fetched = self.fetch_upstream();
                let mut results = Vec::with_capacity(n);
                for i in 0..n {
                    let mut result = Err("refresh failed".to_string());
                    self.guarded(i, "refresh", |l| {
                        result = l
                            .refresh(started, fetched.as_ref().err())
                            .map_err(|e| e.to_string());
                    });
                    results.push(result);
                }
                for (lane, r) in refreshes {
                    if let (Some(r), Some(result)) = (r, results.get(lane)) {
                        let _ = r.send(result.clone());
                    }
                }
                next_poll = Instant::now() + poll;
            }
            if shutdown {
                break;
            }
        }
        tracing::info!(projects = %self.label(), "worker stopped");
    }

    /// Fetches the upstream (when there is one) and records when, and how it went, in
    /// every project's fetch status; then the projects on it scan new commits for keys.
    fn fetch_upstream(&mut self) -> Result<(), GitError> {
        if self.repo.upstream.is_none() {
            for l in &self.lanes {
                lock(&l.project.fetch).at = Some(now_secs());
            }
            return Ok(());
        }
        let r = self.repo.fetch();
        for l in &self.lanes {
            let mut st = lock(&l.project.fetch);
            st.at = Some(now_secs());
            st.error = r.as_ref().err().map(|e| e.to_string());
        }
        match &r {
            Ok(()) => {
                for i in 0..self.lanes.len() {
                    // Incremental: only commits new since the last scan are read.
                    self.lane(i).scan_commit_keys();
                }
            }
            Err(e) => {
                tracing::warn!(projects = %self.label(), error = %e, "fetch failed");
                for l in &self.lanes {
                    self.metrics.fetch_error(l.project.name());
                }
            }
        }
        r
    }

    /// Runs `f` on lane `i`, turning a panic (a bug, or an unfinished library in
    /// development) into a log line instead of a dead worker.
    fn guarded(&mut self, i: usize, what: &str, f: impl FnOnce(&mut Lane<'_>)) {
        let mut lane = self.lane(i);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut lane)));
        if r.is_err() {
            // A panic may have left entries moved out of the cache: start it afresh.
            lane.cache.clear();
            tracing::error!(project = %lane.project.name(), "{what} panicked");
        }
    }
}

impl Lane<'_> {
    fn name(&self) -> String {
        self.project.cfg.name.clone()
    }

    fn branch(&self) -> String {
        self.project.cfg.branch.clone()
    }

    /// The tip of the project's branch.
    fn tip(&self) -> Result<Option<ObjectId>, GitError> {
        self.repo.tip(&self.project.cfg.branch)
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
