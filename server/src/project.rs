//! One project at run time: the served artifact, and a single worker thread that owns the
//! repository and does every git operation (fetch, ingest, batched writes, push) in order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use gix::ObjectId;
use helix_index_format::{BuildInfo, Diagnostic, Entry, NewEntry};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::config::ProjectConfig;
use crate::error::AppError;
use crate::fsutil::write_atomic;
use crate::git::{Folder, Kind, PushOutcome, Repo};
use crate::metrics::Metrics;
use crate::store::{ArtifactInfo, ArtifactStore, DiagnosticInfo, Pointer, Served};

/// How often a write is re-applied after the upstream moved under it.
const MAX_PUSH_ATTEMPTS: usize = 8;
/// Commit messages scanned at start-up to recover idempotency keys not yet persisted.
const IDEMPOTENCY_SCAN: usize = 2000;
/// Idempotency keys remembered per project.
const MAX_IDEMPOTENCY_KEYS: usize = 100_000;
/// Write batches between two `git gc --auto` runs on the server's repository.
const GC_EVERY_BATCHES: u32 = 200;
/// Commit-message trailer recording an idempotency key and the path it created.
const KEY_TRAILER: &str = "Helix-Idempotency-Key:";

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/examples.rs"));
}
pub use embedded::EXAMPLES;

pub use helix_index_format::wire::WriteAck;

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
    pub entry: NewEntry,
    pub reply: oneshot::Sender<Result<WriteReply, AppError>>,
}

/// Where a write's answer goes.
pub type ReplyTx = oneshot::Sender<Result<WriteReply, AppError>>;
/// A write, its fingerprint, and the replies of same-key repeats that share its result.
#[derive(Debug)]
struct Group {
    job: WriteJob,
    fingerprint: String,
    repeats: Vec<ReplyTx>,
}

impl Group {
    /// Sends the result to the write and (as a replay) to its repeats.
    fn answer(self, result: Result<WriteReply, AppError>) {
        for r in self.repeats {
            let _ = r.send(result.clone().map(|w| WriteReply {
                created: false,
                ..w
            }));
        }
        let _ = self.job.reply.send(result);
    }
}

/// A recorded idempotency key: its order, the answer it got and the fingerprint of the
/// entry it was first used for (`None` for keys recorded before fingerprints existed).
#[derive(Debug, Clone)]
struct Known {
    seq: u64,
    ack: WriteAck,
    fingerprint: Option<String>,
}

/// Work for a project's worker thread.
#[derive(Debug)]
pub enum Job {
    Write(WriteJob),
    Refresh(Option<oneshot::Sender<Result<Option<ArtifactInfo>, String>>>),
    Shutdown,
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

/// Why a batch was not committed.
#[derive(Debug)]
enum BatchError {
    /// Some keys of the batch turned out to be in git already; filter and try again.
    KeysAppeared,
    Failed(AppError),
}

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

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}
fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Opens (or creates) the project's bare repository; seeds the embedded examples into
/// an empty server-owned one when configured to.
fn open_repo(project: &Project) -> anyhow::Result<Repo> {
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
    ) -> anyhow::Result<Arc<Project>> {
        let dir = data_dir.join("projects").join(&cfg.name);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
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
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let p2 = project.clone();
        let handle = std::thread::Builder::new()
            .name(format!("helix-{}", project.cfg.name))
            .spawn(move || {
                let opened = open_repo(&p2).and_then(|repo| Worker::new(p2, repo, metrics));
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
            .context("cannot start worker thread")?;
        ready_rx
            .recv()
            .context("worker thread died while opening the repository")??;
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
    pub fn pinned(&self, commit: &str) -> Result<Option<Arc<Served>>, AppError> {
        let commit = commit.to_ascii_lowercase();
        if commit.len() < 4 || commit.len() > 64 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(AppError::bad_request(format!(
                "commit {commit:?} must be 4 to 64 hex digits"
            )));
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
            [one] => self
                .store
                .load(one)
                .map(|s| Some(Arc::new(s)))
                .map_err(|e| AppError::internal(format!("{e:#}"))),
            _ => Err(AppError::bad_request(format!(
                "commit prefix {commit:?} is ambiguous"
            ))),
        }
    }

    /// Queues a job for the worker.
    pub fn send(&self, job: Job) -> Result<(), AppError> {
        let g = lock(&self.tx);
        match g.as_ref() {
            Some(tx) => tx
                .send(job)
                .map_err(|_| AppError::unavailable("the project worker has stopped")),
            None => Err(AppError::unavailable("the server is shutting down")),
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
    idem: BTreeMap<String, Known>,
    idem_seq: u64,
    idem_path: PathBuf,
    /// Keys added since the last append to the idempotency log.
    idem_unsaved: Vec<String>,
    /// Whether commit messages were scanned for idempotency keys (after the first fetch).
    scanned: bool,
    /// Branch tip up to which commit messages were scanned for keys.
    scanned_tip: Option<ObjectId>,
    /// Write batches committed since the last `git gc --auto`.
    batches_since_gc: u32,
}

impl Worker {
    fn new(project: Arc<Project>, repo: Repo, metrics: Arc<Metrics>) -> anyhow::Result<Worker> {
        let generation = read(&project.pointer)
            .kept
            .iter()
            .map(|k| k.generation)
            .max()
            .unwrap_or(0);
        let idem_path = project.dir.join("idempotency.jsonl");
        let mut w = Worker {
            project,
            repo,
            metrics,
            cache: HashMap::new(),
            generation,
            idem: BTreeMap::new(),
            idem_seq: 0,
            idem_path,
            idem_unsaved: Vec::new(),
            scanned: false,
            scanned_tip: None,
            batches_since_gc: 0,
        };
        w.load_idempotency();
        if w.repo.upstream.is_none() {
            w.scan_commit_keys();
        }
        Ok(w)
    }

    fn name(&self) -> String {
        self.project.cfg.name.clone()
    }

    fn prefix(&self) -> Option<String> {
        self.project.cfg.subdir_prefix()
    }

    /// Loads the persisted keys (written before any write is acknowledged).
    fn load_idempotency(&mut self) {
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
    fn scan_commit_keys(&mut self) {
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
    fn save_idempotency(&mut self) {
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

    fn id_of(&self, repo_path: &str) -> String {
        match self.prefix() {
            Some(p) => repo_path
                .strip_prefix(&format!("{p}/"))
                .unwrap_or(repo_path)
                .to_string(),
            None => repo_path.to_string(),
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
                self.guarded("write", |w| {
                    w.process_writes(writes);
                    Ok(())
                });
            }
            if !refreshes.is_empty() {
                let mut result = Err("refresh failed".to_string());
                self.guarded("refresh", |w| {
                    result = w.refresh().map_err(|e| format!("{e:#}"));
                    Ok(())
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
    fn guarded(&mut self, what: &str, f: impl FnOnce(&mut Worker) -> anyhow::Result<()>) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(project = %self.name(), error = %format!("{e:#}"), "{what} failed")
            }
            Err(_) => {
                // A panic may have left entries moved out of the cache: start it afresh.
                self.cache.clear();
                tracing::error!(project = %self.name(), "{what} panicked");
            }
        }
    }

    /// Fetches (when there is an upstream) and compiles the branch tip if it is new.
    fn refresh(&mut self) -> anyhow::Result<Option<ArtifactInfo>> {
        let started = Instant::now();
        let tip = if self.repo.upstream.is_some() {
            let r = self.repo.fetch();
            let mut st = lock(&self.project.fetch);
            st.at = Some(now_secs());
            match r {
                Ok(t) => {
                    st.error = None;
                    drop(st);
                    // Incremental: only commits new since the last scan are read.
                    self.scan_commit_keys();
                    t
                }
                Err(e) => {
                    let msg = format!("{e:#}");
                    tracing::warn!(project = %self.project.cfg.name, error = %msg, "fetch failed");
                    st.error = Some(msg);
                    drop(st);
                    self.metrics.fetch_error(&self.project.cfg.name);
                    // Whatever the local branch holds is still served; the caller (a refresh
                    // that waits) hears that the fetch failed.
                    let tip = self.repo.tip()?;
                    self.ingest(tip, started)?;
                    return Err(e.context(
                        "fetching the upstream failed; still serving the last good artifact",
                    ));
                }
            }
        } else {
            lock(&self.project.fetch).at = Some(now_secs());
            self.repo.tip()?
        };
        self.ingest(tip, started)
    }

    /// Compiles commit `tip` into a new artifact unless it is already the served one.
    fn ingest(
        &mut self,
        tip: Option<ObjectId>,
        started: Instant,
    ) -> anyhow::Result<Option<ArtifactInfo>> {
        let Some(tip) = tip else {
            return Ok(None);
        };
        let hex = tip.to_string();
        if let Some(c) = self.project.current().filter(|c| c.info.commit == hex) {
            return Ok(Some(c.info.clone()));
        }
        let prefix = self.prefix();
        let t_list = Instant::now();
        let files = self.repo.list_files(tip, prefix.as_deref())?;
        let files: Vec<(String, String, ObjectId)> = files
            .into_iter()
            .filter_map(|(path, blob)| {
                let rel = self.id_of(&path);
                helix_index_format::is_entry_path(&rel).then_some((path, rel, blob))
            })
            .collect();
        let changed: HashSet<String> = files
            .iter()
            .filter(|(path, _, blob)| self.cache.get(path).is_none_or(|c| c.blob != *blob))
            .map(|(path, _, _)| path.clone())
            .collect();
        let metas = if changed.is_empty() {
            HashMap::new()
        } else {
            self.repo.last_changes(tip, &changed)?
        };
        for (path, rel, blob) in &files {
            if !changed.contains(path) {
                continue;
            }
            let meta = metas.get(path).cloned();
            // A huge file is reported without loading it into memory.
            let size = self.repo.object_size(*blob)?;
            let parsed = if size > helix_index_format::MAX_ENTRY_BYTES as u64 {
                Err(Diagnostic {
                    path: rel.clone(),
                    line: 1,
                    reason: format!(
                        "file is {size} bytes; entries may be at most {} bytes",
                        helix_index_format::MAX_ENTRY_BYTES
                    ),
                })
            } else {
                let bytes = self.repo.read_blob(*blob)?;
                helix_index_format::parse_entry(rel, &bytes, meta.as_ref())
            };
            self.cache.insert(
                path.clone(),
                Cached {
                    blob: *blob,
                    parsed,
                },
            );
        }
        let live: HashSet<&str> = files.iter().map(|(p, _, _)| p.as_str()).collect();
        self.cache.retain(|k, _| live.contains(k.as_str()));
        // Entries are moved out of the cache for the build and put back after it: no copies
        // of 10k bodies per compile.
        let mut entries = Vec::with_capacity(files.len());
        let mut order = Vec::with_capacity(files.len());
        let mut diags = Vec::new();
        for (path, _, _) in &files {
            match self.cache.get_mut(path).map(|c| &mut c.parsed) {
                Some(Ok(e)) => {
                    entries.push(std::mem::take(e));
                    order.push(path.as_str());
                }
                Some(Err(d)) => diags.push(DiagnosticInfo {
                    path: d.path.clone(),
                    line: d.line,
                    reason: d.reason.clone(),
                }),
                None => {}
            }
        }
        let generation = self.generation + 1;
        let info = BuildInfo {
            project: self.project.cfg.name.clone(),
            commit: hex.clone(),
            generation,
            build_time: now_secs(),
        };
        let t_build = Instant::now();
        let built = helix_index_format::build(&entries, &info);
        let entry_count = entries.len() as u64;
        for (e, path) in entries.into_iter().zip(order) {
            if let Some(c) = self.cache.get_mut(path) {
                c.parsed = Ok(e);
            }
        }
        let bytes =
            built.map_err(|e| anyhow::anyhow!("cannot compile {}: {e}", self.project.cfg.name))?;
        let t_save = Instant::now();
        let (served, ptr) = self.project.store.save(
            bytes,
            &hex,
            generation,
            entry_count,
            info.build_time,
            diags,
        )?;
        self.generation = generation;
        let ai = served.info.clone();
        *write(&self.project.pointer) = ptr;
        *write(&self.project.current) = Some(served);
        let secs = started.elapsed().as_secs_f64();
        self.metrics.ingest(&self.project.cfg.name, secs);
        self.metrics
            .artifact(&self.project.cfg.name, ai.bytes, ai.entries, ai.generation);
        tracing::info!(
            project = %self.project.cfg.name,
            commit = %hex,
            generation,
            entries = ai.entries,
            bytes = ai.bytes,
            seconds = secs,
            fetch_ms = (t_list - started).as_millis() as u64,
            parse_ms = (t_build - t_list).as_millis() as u64,
            build_ms = (t_save - t_build).as_millis() as u64,
            save_ms = t_save.elapsed().as_millis() as u64,
            "compiled new artifact"
        );
        Ok(Some(ai))
    }

    /// The recorded answer for `key`, if it is known: a replay of the first write, or a
    /// refusal when the key was first used for another entry.
    fn replay(&self, key: &str, fingerprint: &str) -> Option<Result<WriteReply, AppError>> {
        let known = self.idem.get(key)?;
        if known
            .fingerprint
            .as_deref()
            .is_some_and(|f| f != fingerprint)
        {
            return Some(Err(key_reused(key, &known.ack.id)));
        }
        Some(Ok(WriteReply {
            created: false,
            ack: known.ack.clone(),
        }))
    }

    fn process_writes(&mut self, jobs: Vec<WriteJob>) {
        let project = self.name();
        // Replays of known keys answer at once; repeats of a key inside this batch share
        // the first one's commit (or are refused when they carry another entry).
        let mut groups: Vec<Group> = Vec::new();
        for job in jobs {
            let fingerprint = fingerprint(&job.author, &job.entry);
            if let Some(k) = &job.key {
                if let Some(answer) = self.replay(k, &fingerprint) {
                    let outcome = if answer.is_ok() {
                        "replayed"
                    } else {
                        "rejected"
                    };
                    self.metrics.write(&project, outcome, 1);
                    let _ = job.reply.send(answer);
                    continue;
                }
                if let Some(g) = groups
                    .iter_mut()
                    .find(|g| g.job.key.as_deref() == Some(k.as_str()))
                {
                    if g.fingerprint == fingerprint {
                        g.repeats.push(job.reply);
                    } else {
                        self.metrics.write(&project, "rejected", 1);
                        let _ = job
                            .reply
                            .send(Err(key_reused(k, "another entry of this batch")));
                    }
                    continue;
                }
            }
            groups.push(Group {
                job,
                fingerprint,
                repeats: Vec::new(),
            });
        }
        if groups.is_empty() {
            return;
        }
        if !self.scanned {
            // Keys of writes pushed just before a crash are only known after a fetch.
            if let Err(e) = self.repo.fetch() {
                let err = AppError::unavailable(format!("cannot fetch the upstream: {e:#}"));
                self.metrics.write(&project, "failed", groups.len() as u64);
                for g in groups {
                    g.answer(Err(err.clone()));
                }
                return;
            }
            self.scan_commit_keys();
        }
        let started = Instant::now();
        let result = loop {
            // Replays whose key appeared in git (recovered after a crash, or pushed by an
            // earlier run whose push finished late) are answered from it, not re-applied.
            groups = self.answer_known(groups);
            if groups.is_empty() {
                // Compile the recovered commits (a no-op if already served).
                let tip = self.repo.tip().ok().flatten();
                if let Err(e) = self.ingest(tip, started) {
                    tracing::error!(project = %project, error = %format!("{e:#}"), "compile failed");
                }
                return;
            }
            match self.commit_batch(&groups) {
                Err(BatchError::KeysAppeared) => continue,
                Err(BatchError::Failed(e)) => break Err(e),
                Ok(done) => break Ok(done),
            }
        };
        let (commit, placed) = match result {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(project = %project, error = %format!("{e:#}"), "write failed");
                self.metrics.write(&project, "failed", groups.len() as u64);
                for g in groups {
                    g.answer(Err(e.clone()));
                }
                return;
            }
        };
        if let Some(commit) = commit
            && let Err(e) = self.ingest(Some(commit), started)
        {
            // The entries are safely in git; the next refresh compiles them.
            tracing::error!(project = %project, error = %format!("{e:#}"), "compile after write failed");
        }
        let mut answers = Vec::with_capacity(groups.len());
        for (g, placed) in groups.iter().zip(placed) {
            let answer = match (placed, commit) {
                (Ok(path), Some(commit)) => {
                    let ack = WriteAck {
                        id: self.id_of(&path),
                        path,
                        commit: commit.to_string(),
                        generation: self.generation,
                    };
                    if let Some(k) = &g.job.key {
                        self.idem_seq += 1;
                        self.idem.insert(
                            k.clone(),
                            Known {
                                seq: self.idem_seq,
                                ack: ack.clone(),
                                fingerprint: Some(g.fingerprint.clone()),
                            },
                        );
                        self.idem_unsaved.push(k.clone());
                    }
                    Ok(WriteReply { created: true, ack })
                }
                (Ok(_), None) => Err(AppError::internal("placed without a commit")),
                (Err(e), _) => Err(e),
            };
            answers.push(answer);
        }
        // Keys are durable before anyone is told the write succeeded.
        self.save_idempotency();
        let created = answers.iter().filter(|a| a.is_ok()).count() as u64;
        self.metrics.write(&project, "created", created);
        self.metrics
            .write(&project, "rejected", answers.len() as u64 - created);
        for (g, answer) in groups.into_iter().zip(answers) {
            g.answer(answer);
        }
    }

    /// Answers groups whose idempotency key is already recorded; returns the others.
    fn answer_known(&mut self, groups: Vec<Group>) -> Vec<Group> {
        let mut rest = Vec::with_capacity(groups.len());
        for g in groups {
            let known = g
                .job
                .key
                .as_ref()
                .and_then(|k| self.replay(k, &g.fingerprint));
            match known {
                Some(answer) => {
                    let outcome = if answer.is_ok() {
                        "replayed"
                    } else {
                        "rejected"
                    };
                    self.metrics.write(&self.project.cfg.name, outcome, 1);
                    g.answer(answer);
                }
                None => rest.push(g),
            }
        }
        rest
    }

    /// Chooses the path of each write in the tree of `parent`: the topic's folder must be a
    /// folder (or not exist yet), and the file name must not exist there in any case or
    /// kind, nor be chosen by an earlier write of the batch. The write path never replaces
    /// or deletes what is there. Refusals are per write.
    fn place(
        &self,
        parent: Option<ObjectId>,
        groups: &[Group],
    ) -> anyhow::Result<Vec<Result<String, AppError>>> {
        let prefix = self.prefix();
        let mut folders: HashMap<String, Folder> = HashMap::new();
        // Lower-cased paths this batch creates: files, and the folders above them.
        let mut files: HashSet<String> = HashSet::new();
        let mut dirs: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            let topic = &g.job.entry.topic;
            let topic_dir = match &prefix {
                Some(p) => format!("{p}/{topic}"),
                None => topic.clone(),
            };
            if !folders.contains_key(&topic_dir) {
                let f = self.repo.folder(parent, &topic_dir)?;
                folders.insert(topic_dir.clone(), f);
            }
            let existing = match &folders[&topic_dir] {
                Folder::Blocked { existing, kind } => {
                    let why = match kind {
                        Kind::Folder => format!(
                            "the folder `{existing}` differs from it only in case (a case-insensitive checkout cannot hold both)"
                        ),
                        _ => format!("`{existing}` is {} in the repository", kind.describe()),
                    };
                    out.push(Err(topic_conflict(format!(
                        "topic `{topic}` needs the folder `{topic_dir}`, but {why}; choose another topic"
                    ))));
                    continue;
                }
                Folder::Present(names) => Some(names),
                Folder::Absent => None,
            };
            let lower_dir = topic_dir.to_ascii_lowercase();
            if let Some(clash) = ancestors(&lower_dir).find(|a| files.contains(*a)) {
                out.push(Err(topic_conflict(format!(
                    "topic `{topic}` needs the folder `{topic_dir}`, but an earlier entry of the same batch is the file `{clash}`; send it again"
                ))));
                continue;
            }
            let slug = helix_index_format::slugify(&g.job.entry.title);
            let mut n = 1;
            let path = loop {
                let name = if n == 1 {
                    format!("{slug}.md")
                } else {
                    format!("{slug}-{n}.md")
                };
                let lower = format!("{lower_dir}/{}", name.to_ascii_lowercase());
                let taken_here = existing
                    .is_some_and(|names| names.keys().any(|k| k.eq_ignore_ascii_case(&name)));
                if !taken_here && !files.contains(&lower) && !dirs.contains(&lower) {
                    files.insert(lower);
                    dirs.extend(ancestors(&lower_dir).map(str::to_string));
                    break format!("{topic_dir}/{name}");
                }
                n += 1;
            };
            out.push(Ok(path));
        }
        Ok(out)
    }

    /// Commits the batch onto the branch tip and pushes it; on a moved upstream, fetches and
    /// re-applies (choosing paths again) a bounded number of times. Returns the commit (none
    /// when every write was refused) and each write's path or refusal.
    #[allow(clippy::type_complexity)]
    fn commit_batch(
        &mut self,
        groups: &[Group],
    ) -> Result<(Option<ObjectId>, Vec<Result<String, AppError>>), BatchError> {
        let internal = |e: anyhow::Error| BatchError::Failed(AppError::internal(format!("{e:#}")));
        let mut last_reason = String::new();
        for attempt in 0..MAX_PUSH_ATTEMPTS {
            let parent = self.repo.tip().map_err(internal)?;
            let placed = self.place(parent, groups).map_err(internal)?;
            let mut files = Vec::with_capacity(groups.len());
            let mut listed = Vec::new();
            for (g, path) in groups.iter().zip(&placed) {
                let Ok(path) = path else { continue };
                let entry = Entry {
                    id: self.id_of(path),
                    topic: g.job.entry.topic.clone(),
                    title: g.job.entry.title.trim().to_string(),
                    tags: g.job.entry.tags.clone(),
                    sources: g.job.entry.sources.clone(),
                    date: None,
                    author: Some(g.job.author.clone()),
                    body: g.job.entry.body.clone(),
                    extra: Default::default(),
                };
                files.push((
                    path.clone(),
                    helix_index_format::render_entry(&entry).into_bytes(),
                ));
                listed.push((g, path));
            }
            if listed.is_empty() {
                return Ok((None, placed));
            }
            let authors: HashSet<&str> =
                listed.iter().map(|(g, _)| g.job.author.as_str()).collect();
            let author = if authors.len() == 1 {
                listed[0].0.job.author.as_str()
            } else {
                "helix-server"
            };
            let mut msg = if listed.len() == 1 {
                format!("Add {}\n\n", self.id_of(listed[0].1))
            } else {
                format!("Add {} entries\n\n", listed.len())
            };
            for (g, path) in &listed {
                msg.push_str(&format!("- {} ({})\n", self.id_of(path), g.job.author));
            }
            let keyed: Vec<String> = listed
                .iter()
                .filter_map(|(g, p)| {
                    g.job
                        .key
                        .as_ref()
                        .map(|k| format!("{KEY_TRAILER} {k} {p} {}", g.fingerprint))
                })
                .collect();
            if !keyed.is_empty() {
                msg.push('\n');
                msg.push_str(&keyed.join("\n"));
                msg.push('\n');
            }
            let commit = match self.repo.commit_files(parent, &files, author, &msg) {
                Ok(c) => c,
                Err(e) => {
                    // The branch moved under us (compare-and-swap); look again.
                    last_reason = format!("{e:#}");
                    tracing::warn!(attempt, error = %last_reason, "commit failed; retrying");
                    continue;
                }
            };
            match self.repo.push(commit) {
                Ok(PushOutcome::Pushed) => {
                    self.batches_since_gc += 1;
                    if self.batches_since_gc >= GC_EVERY_BATCHES {
                        // Each write adds loose objects; let git pack them now and then.
                        self.batches_since_gc = 0;
                        self.repo.maintain();
                    }
                    return Ok((Some(commit), placed));
                }
                Ok(PushOutcome::Rejected(reason)) => {
                    tracing::info!(project = %self.name(), attempt, "upstream moved; fetching and re-applying");
                    last_reason = reason;
                    let _ = self.repo.reset_branch(commit, parent);
                    match self.repo.fetch() {
                        Err(e) => {
                            return Err(BatchError::Failed(AppError::unavailable(format!(
                                "push was rejected and fetching the upstream failed: {e:#}"
                            ))));
                        }
                        Ok(t) if t == parent => {
                            // Not moved: retrying would be refused the same way.
                            return Err(BatchError::Failed(AppError::unavailable(format!(
                                "push to the upstream was rejected: {last_reason}"
                            ))));
                        }
                        Ok(_) => {}
                    }
                    // What moved the upstream may be one of these very writes (a push from
                    // before a crash that completed late): look before re-applying.
                    let known = self.idem.len();
                    self.scan_commit_keys();
                    if self.idem.len() != known
                        && groups.iter().any(|g| {
                            g.job
                                .key
                                .as_ref()
                                .is_some_and(|k| self.idem.contains_key(k))
                        })
                    {
                        return Err(BatchError::KeysAppeared);
                    }
                }
                Err(e) => {
                    let _ = self.repo.reset_branch(commit, parent);
                    return Err(BatchError::Failed(AppError::unavailable(format!("{e:#}"))));
                }
            }
        }
        Err(BatchError::Failed(AppError::conflict(format!(
            "the upstream branch kept moving; gave up after {MAX_PUSH_ATTEMPTS} attempts: {last_reason}"
        ))))
    }
}

/// `a/b/c` → `a/b/c`, `a/b`, `a`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut cur = Some(path);
    std::iter::from_fn(move || {
        let p = cur?;
        cur = p.rfind('/').map(|i| &p[..i]);
        Some(p)
    })
}

fn topic_conflict(message: String) -> AppError {
    AppError::new(axum::http::StatusCode::CONFLICT, "topic_conflict", message)
}

fn key_reused(key: &str, first: &str) -> AppError {
    AppError::new(
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        "idempotency_key_reused",
        format!(
            "Idempotency-Key {key:?} was first used for {first}, with a different entry; a key names one entry: send this one with a new key"
        ),
    )
}

/// What makes two writes the same write: who sent it and every field of the entry.
fn fingerprint(author: &str, e: &NewEntry) -> String {
    use sha2::Digest;
    let canonical = serde_json::json!([author, e.topic, e.title, e.body, e.tags, e.sources]);
    let digest = sha2::Sha256::digest(canonical.to_string().as_bytes());
    hex::encode(&digest[..16])
}
