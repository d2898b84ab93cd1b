//! The worker thread of a repository: it owns the repository and serialises fetch, ingest,
//! batched writes, proposals and push for every project on it, one round of jobs at a time.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::idempotency::IdempotencyLog;
use super::lane::{Lane, LaneState};
use super::{Job, Project, WriteJob};
use crate::git::{GitError, Repo};
use crate::metrics::Metrics;
use crate::sys::{lock, now_secs, read};

/// Owns a repository and serves every project on it; runs on its own thread, so only it
/// ever touches the repository.
#[derive(Debug)]
pub(super) struct Worker {
    repo: Repo,
    metrics: Arc<Metrics>,
    lanes: Vec<LaneState>,
    /// Write batches committed since the last `git gc --auto`.
    batches_since_gc: u32,
}

impl Worker {
    pub(super) fn new(projects: Vec<Arc<Project>>, repo: Repo, metrics: Arc<Metrics>) -> Worker {
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
                    embedding: None,
                    vectors_unserved: false,
                    compiled_at: Instant::now(),
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

    pub(super) fn run(&mut self, rx: Receiver<(usize, Job)>) {
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
            let mut vectors = Vec::new();
            let mut shutdown = false;
            for (lane, j) in jobs {
                match j {
                    Job::Write(w) => writes[lane].push(w),
                    Job::Proposal(p) => proposal_jobs.push((lane, p)),
                    Job::Refresh(r) => refreshes.push((lane, r)),
                    Job::Vectors(v) => vectors.push((lane, v)),
                    Job::Shutdown => shutdown = true,
                }
            }
            // Before the writes, whose compile then takes them in.
            for (i, v) in vectors {
                self.guarded(i, "vectors", |l| l.take_vectors(v));
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
            // repository) compile it now too, not at the next poll; so does a project whose
            // background embedding brought vectors.
            for i in 0..n {
                if moved.contains(&self.lanes[i].project.cfg.branch) || self.lanes[i].vectors_due()
                {
                    self.guarded(i, "ingest", |l| {
                        let tip = l.tip().ok().flatten();
                        let r = l.ingest(tip, Instant::now());
                        l.note_compile(r.as_ref().err());
                        if let Err(e) = r {
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
                        let r = l.refresh(started, fetched.as_ref().err());
                        l.note_compile(r.as_ref().err());
                        result = r.map_err(|e| e.to_string());
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
