//! Ingest: compile a project's branch tip (after its worker fetched the upstream) into a new
//! artifact, reparsing only files whose blob changed since the last compile.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gix::ObjectId;
use helix_index_format::{
    BuildError, BuildInfo, Census, Diagnostic, Embeddings, FileKind, Index, Root,
};

use super::lane::{Cached, Lane, LaneState};
use super::{Job, Vectors};
use crate::git::GitError;
use crate::semantic::Model;
use crate::store::{ArtifactInfo, DiagnosticInfo, Findings, StoreError};
use crate::sys::{lock, write};
use helix_index_format::vectors::entry_text;

/// Entries embedded in one call: enough to keep every thread busy, few enough that the
/// intermediate buffers stay small and a background job hands over its vectors (and
/// notices that the server stopped) every few seconds.
const EMBED_BATCH: usize = 64;

/// Entries a compile embeds itself (on the worker thread, about 50 ms each for a
/// MiniLM): a write's or a small commit's. More are embedded on a thread of their own
/// while the worker goes on serving writes, and compiled in when they are done.
const INLINE_EMBED: usize = 16;

/// While a background job runs, its vectors are compiled in at most this often (a compile
/// of 10k entries takes about a second); its last ones at once.
const VECTORS_EVERY: Duration = Duration::from_secs(60);

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
    Fetch(String),
}

impl Lane<'_> {
    /// Records how the last compile went, for the health page: an error, or none. A failed
    /// fetch is not a compile error (the fetch status has it).
    pub(super) fn note_compile(&self, error: Option<&IngestError>) {
        if matches!(error, Some(IngestError::Fetch(_))) {
            return;
        }
        lock(&self.project.fetch).compile_error =
            error.map(|e| (crate::sys::now_secs(), e.to_string()));
    }

    /// Compiles the branch tip if it is new, after the worker's fetch (`started` before it);
    /// when that fetch failed (`fetch_failed`), whatever the local branch holds is still
    /// compiled and served, and the caller (a refresh that waits) hears of the failure.
    pub(super) fn refresh(
        &mut self,
        started: Instant,
        fetch_failed: Option<&GitError>,
    ) -> Result<Option<ArtifactInfo>, IngestError> {
        let tip = self.tip()?;
        let built = match tip {
            // The branch does not exist, and a fetch (if there is an upstream) just said so:
            // an empty project, served as one.
            None if fetch_failed.is_none() => Some(self.serve_empty()?),
            tip => self.ingest(tip, started)?,
        };
        match fetch_failed {
            Some(e) => Err(IngestError::Fetch(e.to_string())),
            None => Ok(built),
        }
    }

    /// A project whose branch has no commit yet (a new server-owned repository, an empty
    /// upstream) serves an artifact of no entries at once, so that clients sync it and see
    /// that it is empty instead of waiting on a 503. It has no commit and generation 0: the
    /// first commit's artifact (generation 1 or more) replaces it. An artifact already
    /// served stays served (a branch that went missing upstream is not taken for empty).
    fn serve_empty(&mut self) -> Result<ArtifactInfo, IngestError> {
        if let Some(c) = self.project.current() {
            return Ok(c.info.clone());
        }
        let info = BuildInfo {
            project: self.project.cfg.name.clone(),
            commit: String::new(),
            generation: 0,
            // Replicas build the same bytes, hence the same ETag.
            build_time: 0,
        };
        let bytes =
            helix_index_format::build(&[], &info).map_err(|error| IngestError::Compile {
                project: self.project.cfg.name.clone(),
                error,
            })?;
        let (served, ptr) = self
            .project
            .store
            .save(bytes, "", 0, 0, 0, Findings::default())?;
        let ai = served.info.clone();
        *write(&self.project.pointer) = ptr;
        *write(&self.project.current) = Some(served);
        self.metrics
            .artifact(&self.project.cfg.name, ai.bytes, ai.entries, ai.generation);
        tracing::info!(project = %self.project.cfg.name, branch = %self.project.cfg.branch, "the branch has no commit yet: serving an empty artifact");
        Ok(ai)
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
        // The served artifact of this commit stays, unless a `[semantic]` model was
        // configured (or changed) since it was compiled, or vectors arrived that it lacks,
        // or (first compile since start) it lacks some: then it is compiled again.
        let model = self.project.model.clone();
        let served = self.project.current().filter(|c| c.info.commit == hex);
        if let Some(c) = served.as_ref().filter(|c| {
            !self.vectors_unserved
                && model.as_ref().is_none_or(|m| {
                    Index::open(c.bytes.as_ref()).is_ok_and(|i| {
                        m.serves(&i)
                            && (!self.cache.is_empty()
                                || i.vectors().is_some_and(|v| v.count_present() == v.len()))
                    })
                })
        }) {
            return Ok(Some(c.info.clone()));
        }
        let prefix = self.prefix();
        let root = Root::of_subdir(prefix.as_deref());
        let t_list = Instant::now();
        let listed = self.repo.list_files(tip, prefix.as_deref())?;
        let mut census = Census::default();
        let mut files: Vec<(String, String, ObjectId)> = Vec::with_capacity(listed.len());
        for (path, blob) in listed {
            let rel = self.id_of(&path);
            match root.classify(&rel) {
                FileKind::Entry { .. } => files.push((path, rel, blob)),
                FileKind::Skipped(why) => census.skip(why),
                FileKind::Other => {}
            }
        }
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
                root.parse(rel, &bytes, meta.as_ref()).map(|mut e| {
                    // The version an edit of this entry starts from.
                    e.blob = blob.to_string();
                    e
                })
            };
            self.cache.insert(
                path.clone(),
                Cached {
                    blob: *blob,
                    parsed,
                    vector: None,
                    unembeddable: false,
                },
            );
        }
        let live: HashSet<&str> = files.iter().map(|(p, _, _)| p.as_str()).collect();
        self.cache.retain(|k, _| live.contains(k.as_str()));
        let t_embed = Instant::now();
        let embedded = self.embed_entries(&files);
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
        // `supersedes` naming a missing entry or closing a cycle: reported, and ignored
        // (those entries still compile, so they are not counted invalid).
        let invalid = diags.len() as u64;
        diags.extend(
            helix_index_format::lifecycle_diagnostics(&entries)
                .into_iter()
                .map(|d| DiagnosticInfo {
                    path: d.path,
                    line: d.line,
                    reason: d.reason,
                }),
        );
        // Replicas of a project compile the same commit into the same bytes, hence the same
        // ETag: the generation is the commit's first-parent depth and the build time its
        // commit time. Only a history rewritten below the served generation counts on from it.
        let (depth, committed) = self.repo.depth(tip, self.depth)?;
        self.depth = Some((tip, depth));
        // The served commit compiled again (vectors added, another model) keeps its
        // generation: once its vectors are all in, it is a replica's bytes again.
        let generation = match &served {
            Some(c) if c.info.generation > 0 => c.info.generation,
            _ => depth.max(self.generation + 1),
        };
        let info = BuildInfo {
            project: self.project.cfg.name.clone(),
            commit: hex.clone(),
            generation,
            build_time: committed,
        };
        let embeddings = self.project.model.as_ref().map(|m| Embeddings {
            model: m.id().to_string(),
            dim: m.dim(),
            vectors: order
                .iter()
                .zip(&entries)
                .filter_map(|(path, e)| {
                    let v = self.cache.get(*path)?.vector.clone()?;
                    Some((e.id.clone(), v))
                })
                .collect(),
        });
        let vectors = embeddings.as_ref().map_or(0, |e| e.vectors.len());
        let t_build = Instant::now();
        let built = helix_index_format::build_with_embeddings(&entries, &info, embeddings.as_ref());
        let entry_count = entries.len() as u64;
        census.entries = entry_count;
        census.invalid = invalid;
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
            Findings {
                diagnostics: diags,
                skipped: census.skipped_by_key(),
            },
        )?;
        self.generation = generation;
        self.vectors_unserved = false;
        self.compiled_at = Instant::now();
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
            parse_ms = (t_embed - t_list).as_millis() as u64,
            embed_ms = (t_build - t_embed).as_millis() as u64,
            embedded,
            vectors,
            embedding = self.embedding.as_ref().map_or(0, |p| p.len()),
            build_ms = (t_save - t_build).as_millis() as u64,
            save_ms = t_save.elapsed().as_millis() as u64,
            invalid = census.invalid,
            skipped = %census.skipped_line().unwrap_or_else(|| "0".to_string()),
            "compiled new artifact"
        );
        if let Some(w) = census.warning() {
            tracing::warn!(project = %self.project.cfg.name, commit = %hex, "{w}");
        }
        Ok(Some(ai))
    }
}

impl Lane<'_> {
    /// Gives every parsed entry of `files` its vector when a model is configured: the one
    /// already cached, else the served artifact's row for the same entry id and blob (its
    /// `to_f32` quantises back to the same bytes), else a new embedding: here for up to
    /// [`INLINE_EMBED`] entries, else by a background job ([`Lane::take_vectors`]), the
    /// entries compiled without a vector meanwhile. Returns how many were embedded here.
    /// An entry whose text cannot be embedded is compiled without a vector (logged once).
    fn embed_entries(&mut self, files: &[(String, String, ObjectId)]) -> usize {
        let Some(model) = self.project.model.clone() else {
            return 0;
        };
        let served = self.project.current();
        let index = served
            .as_ref()
            .and_then(|s| Index::open(s.bytes.as_ref()).ok())
            .filter(|i| model.serves(i));
        let mut todo: Vec<(String, ObjectId, String)> = Vec::new();
        let LaneState {
            cache, embedding, ..
        } = &mut **self;
        for (path, _, _) in files {
            let Some(c) = cache.get_mut(path) else {
                continue;
            };
            let Ok(e) = &c.parsed else {
                continue;
            };
            if c.vector.is_some() || c.unembeddable {
                continue;
            }
            let reused = index.as_ref().and_then(|i| {
                let doc = i.entry_by_id(&e.id).ok()??.doc;
                (i.blob(doc).ok()?? == e.blob).then_some(())?;
                Some(i.vectors()?.get(doc)?.to_f32())
            });
            if let Some(v) = reused {
                c.vector = Some(v);
            } else if embedding.as_ref().and_then(|p| p.get(path)) != Some(&c.blob) {
                todo.push((path.clone(), c.blob, entry_text(e, model.body_chars)));
            }
        }
        // One job at a time: while one runs, these wait for its end (`take_vectors`).
        if todo.len() > INLINE_EMBED
            && (self.embedding.is_some() || self.embed_in_background(&model, &mut todo))
        {
            return 0;
        }
        let mut done = 0;
        for batch in todo.chunks(EMBED_BATCH) {
            let vectors = embed_batch(&model, self.project.name(), batch);
            for ((path, _, _), v) in batch.iter().zip(vectors) {
                if let Some(c) = self.cache.get_mut(path) {
                    match v {
                        Some(v) => {
                            c.vector = Some(v);
                            done += 1;
                        }
                        None => c.unembeddable = true,
                    }
                }
            }
        }
        done
    }

    /// Starts a thread that embeds `todo` (taken) and sends its vectors to the worker a
    /// batch at a time; false (`todo` left) if no thread could be started.
    fn embed_in_background(
        &mut self,
        model: &Arc<Model>,
        todo: &mut Vec<(String, ObjectId, String)>,
    ) -> bool {
        let pending: HashMap<String, ObjectId> =
            todo.iter().map(|(p, b, _)| (p.clone(), *b)).collect();
        // Shared with the thread only to get it back if the thread cannot start.
        let texts = Arc::new(std::mem::take(todo));
        let (project, model, shared) = (self.project.clone(), model.clone(), texts.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("helix-embed-{}", project.name()))
            .spawn(move || {
                let started = Instant::now();
                for batch in shared.chunks(EMBED_BATCH) {
                    // A panic (a bug) fails its batch's entries until they change, rather
                    // than the next job meeting it again.
                    let vectors = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        embed_batch(&model, project.name(), batch)
                    }))
                    .unwrap_or_else(|_| {
                        tracing::error!(project = %project.name(), entries = batch.len(), "embedding panicked; those entries are compiled without vectors");
                        vec![None; batch.len()]
                    });
                    let rows = batch
                        .iter()
                        .zip(vectors)
                        .map(|((path, blob, _), v)| (path.clone(), *blob, v))
                        .collect();
                    if project.send(Job::Vectors(Vectors { rows, done: false })).is_err() {
                        // The worker stopped.
                        return;
                    }
                }
                let secs = started.elapsed().as_secs_f64();
                tracing::info!(
                    project = %project.name(),
                    entries = shared.len(),
                    seconds = secs,
                    per_second = shared.len() as f64 / secs.max(1e-9),
                    "embedded entries in the background"
                );
                let _ = project.send(Job::Vectors(Vectors {
                    rows: Vec::new(),
                    done: true,
                }));
            });
        match spawned {
            Ok(_) => {
                tracing::info!(project = %self.project.name(), entries = pending.len(), "embedding entries in the background; compiled without their vectors meanwhile");
                self.embedding = Some(pending);
                true
            }
            Err(e) => {
                tracing::error!(project = %self.project.name(), error = %e, "cannot start an embedding thread; embedding on the worker");
                *todo = Arc::try_unwrap(texts).unwrap_or_else(|t| t.as_ref().clone());
                false
            }
        }
    }

    /// Puts a background job's vectors in the cache, each if its entry is still of the
    /// blob it was computed from; the worker then compiles them in ([`LaneState::vectors_due`]).
    pub(super) fn take_vectors(&mut self, v: Vectors) {
        for (path, blob, vector) in v.rows {
            let Some(c) = self.cache.get_mut(&path) else {
                continue;
            };
            if c.blob != blob || c.parsed.is_err() || c.vector.is_some() {
                continue;
            }
            match vector {
                Some(v) => {
                    c.vector = Some(v);
                    self.vectors_unserved = true;
                }
                None => c.unembeddable = true,
            }
        }
        if v.done {
            self.embedding = None;
            // Entries that changed while it ran were left for a next job, which a compile
            // starts.
            if self
                .cache
                .values()
                .any(|c| c.parsed.is_ok() && c.vector.is_none() && !c.unembeddable)
            {
                self.vectors_unserved = true;
            }
        }
    }
}

impl LaneState {
    /// Whether vectors arrived that are worth a compile now: a background job's last, or
    /// [`VECTORS_EVERY`] after the last compile.
    pub(super) fn vectors_due(&self) -> bool {
        self.vectors_unserved
            && (self.embedding.is_none() || self.compiled_at.elapsed() >= VECTORS_EVERY)
    }
}

/// The vectors of `batch`'s texts (path, blob, text), in order; `None` (logged) for a
/// text that cannot be embedded.
fn embed_batch(
    model: &Model,
    project: &str,
    batch: &[(String, ObjectId, String)],
) -> Vec<Option<Vec<f32>>> {
    let texts: Vec<&str> = batch.iter().map(|(_, _, t)| t.as_str()).collect();
    match model.embedder.embed(&texts) {
        Ok(v) => v.into_iter().map(|v| Some(v).filter(|v| !v.is_empty())).collect(),
        // One text at a time, to leave out only the ones that fail.
        Err(_) => batch
            .iter()
            .map(|(path, _, text)| {
                model
                    .embedder
                    .embed_one(text)
                    .inspect_err(|e| {
                        tracing::error!(project, path, error = %e, "cannot embed entry; compiled without a vector");
                    })
                    .ok()
            })
            .collect(),
    }
}
