//! Ingest: fetch the upstream (when there is one) and compile the branch tip into a new
//! artifact, reparsing only files whose blob changed since the last compile.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use gix::ObjectId;
use helix_index_format::{BuildError, BuildInfo, Diagnostic};

use super::{Cached, Worker};
use crate::git::GitError;
use crate::store::{ArtifactInfo, DiagnosticInfo, StoreError};
use crate::sys::{lock, now_secs, write};

/// Why a refresh or a compile failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum IngestError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot compile {project}: {error}")]
    Compile { project: String, error: BuildError },
    /// The upstream could not be fetched; the local branch was compiled all the same.
    #[error("fetching the upstream failed; still serving the last good artifact: {0}")]
    Fetch(GitError),
}

impl Worker {
    /// Fetches (when there is an upstream) and compiles the branch tip if it is new.
    pub(super) fn refresh(&mut self) -> Result<Option<ArtifactInfo>, IngestError> {
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
                    let msg = e.to_string();
                    tracing::warn!(project = %self.project.cfg.name, error = %msg, "fetch failed");
                    st.error = Some(msg);
                    drop(st);
                    self.metrics.fetch_error(&self.project.cfg.name);
                    // Whatever the local branch holds is still served; the caller (a refresh
                    // that waits) hears that the fetch failed.
                    let tip = self.repo.tip()?;
                    self.ingest(tip, started)?;
                    return Err(IngestError::Fetch(e));
                }
            }
        } else {
            lock(&self.project.fetch).at = Some(now_secs());
            self.repo.tip()?
        };
        self.ingest(tip, started)
    }

    /// Compiles commit `tip` into a new artifact unless it is already the served one.
    pub(super) fn ingest(
        &mut self,
        tip: Option<ObjectId>,
        started: Instant,
    ) -> Result<Option<ArtifactInfo>, IngestError> {
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
        // Replicas of a project compile the same commit into the same bytes, hence the same
        // ETag: the generation is the commit's first-parent depth and the build time its
        // commit time. Only a history rewritten below the served generation counts on from it.
        let (depth, committed) = self.repo.depth(tip, self.depth)?;
        self.depth = Some((tip, depth));
        let generation = depth.max(self.generation + 1);
        let info = BuildInfo {
            project: self.project.cfg.name.clone(),
            commit: hex.clone(),
            generation,
            build_time: committed,
        };
        let t_build = Instant::now();
        let built = helix_index_format::build(&entries, &info);
        let entry_count = entries.len() as u64;
        for (e, path) in entries.into_iter().zip(order) {
            if let Some(c) = self.cache.get_mut(path) {
                c.parsed = Ok(e);
            }
        }
        let bytes = built.map_err(|error| IngestError::Compile {
            project: self.project.cfg.name.clone(),
            error,
        })?;
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
}
