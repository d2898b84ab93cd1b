//! Semantic candidates: the query embedded by the warm embedder (`helix-net embedder`, a
//! separate process holding the model) and searched in the artifacts' `VECTORS`, fused with
//! the lexical hits. The one place the hooks, `helix search` and MCP `search` do this.
//!
//! Std only: a Unix socket, a deadline, no model code. Nothing here is tried unless an
//! open artifact has vectors; whatever goes wrong (no embedder, a late or garbled answer,
//! another model) leaves the lexical hits as they are.
//!
//! The protocol, one request per connection: the client sends a `u32` little-endian byte
//! length and that many bytes of UTF-8 text (at most [`MAX_REQUEST`]); the embedder answers
//! a status byte (0: a vector follows; anything else: none), a `u16` length and the model
//! id, a `u32` dimension and that many `f32`, all little-endian.

use crate::knowledge::{Found, Knowledge, ProjectHit};
use helix_index_format::fusion::{FusionOptions, fuse};
use helix_index_format::vectors::VectorFilter;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Largest request text, in bytes: a query longer than this is cut (at a character).
pub const MAX_REQUEST: usize = 16 * 1024;
/// Largest dimension an answer may declare.
pub const MAX_DIM: usize = 4096;
/// Longest model id an answer may declare.
pub const MAX_MODEL_ID: usize = 1024;
/// The hooks' whole budget for the embedder (connect, send, answer) unless
/// `HELIX_EMBED_BUDGET_MS` says otherwise.
pub const HOOK_BUDGET: Duration = Duration::from_millis(20);
/// `helix search` and MCP `search`: they may wait for an embedder they just started.
pub const SEARCH_BUDGET: Duration = Duration::from_secs(2);
/// At most one start of the embedder per this interval (the marker file's mtime).
pub const START_INTERVAL: Duration = Duration::from_secs(30);
/// Vector candidates per artifact searched.
pub const SEMANTIC_K: usize = 20;

/// The embedder's socket: `$XDG_RUNTIME_DIR/helix/embed.sock`, else under the cache
/// directory; `HELIX_EMBED_SOCKET` overrides both.
pub fn socket_path() -> PathBuf {
    if let Some(p) = std::env::var_os("HELIX_EMBED_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("helix").join("embed.sock"),
        None => crate::paths::cache_dir().join("embed").join("embed.sock"),
    }
}

/// Default idle time after which the embedder exits.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);

/// `helix-net embedder`.
#[derive(Debug, clap::Args)]
pub struct EmbedderArgs {
    /// Exit after this many seconds without a request (default: `HELIX_EMBED_IDLE_SECS`,
    /// else 1800).
    #[arg(long)]
    pub idle_secs: Option<u64>,
    /// The model directory (default: `HELIX_MODEL_DIR`, else the newest complete model
    /// synced into the cache).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Stay in the foreground (do not start a new session).
    #[arg(long)]
    pub foreground: bool,
}

impl EmbedderArgs {
    /// `--idle-secs`, else `HELIX_EMBED_IDLE_SECS`, else [`DEFAULT_IDLE`]; at least 1 s.
    pub fn idle(&self) -> Duration {
        let secs = self.idle_secs.or_else(|| {
            std::env::var("HELIX_EMBED_IDLE_SECS")
                .ok()
                .and_then(|v| v.trim().parse().ok())
        });
        secs.map_or(DEFAULT_IDLE, Duration::from_secs)
            .max(Duration::from_secs(1))
    }
}

/// The marker whose mtime says when the embedder was last started.
fn start_marker() -> PathBuf {
    socket_path().with_file_name("embed.started")
}

/// Where synced models live: `cache_dir()/model/<id>/`.
pub fn models_dir() -> PathBuf {
    crate::paths::cache_dir().join("model")
}

/// Whether an embedder would find a model: `HELIX_MODEL_DIR`, or a directory under
/// [`models_dir`] (the embedder checks it is complete).
fn model_available() -> bool {
    std::env::var_os("HELIX_MODEL_DIR").is_some_and(|d| !d.is_empty())
        || std::fs::read_dir(models_dir()).is_ok_and(|mut d| {
            d.any(|e| e.is_ok_and(|e| !e.file_name().as_encoded_bytes().starts_with(b".")))
        })
}

/// `HELIX_EMBED=off` turns semantic candidates off everywhere.
pub fn enabled() -> bool {
    std::env::var("HELIX_EMBED").map_or(true, |v| v.trim() != "off")
}

/// The hooks that ask the embedder by default: where the judged benchmark finds that the
/// cosine helps (docs/benchmarks.md, "Semantic candidates in the hooks"). For errors and a
/// file's path words it found no gain and cost a query's embedding each.
pub const DEFAULT_HOOKS: &[&str] = &["prompt"];

/// Whether `hook` (`prompt`, `error`, `ambient`) asks the embedder: `HELIX_EMBED_HOOKS`
/// (comma-separated; empty for none), else [`DEFAULT_HOOKS`].
pub fn hook_asks(hook: &str) -> bool {
    match std::env::var("HELIX_EMBED_HOOKS") {
        Ok(list) => list.split(',').any(|h| h.trim() == hook),
        Err(_) => DEFAULT_HOOKS.contains(&hook),
    }
}

/// The hooks' budget: `HELIX_EMBED_BUDGET_MS`, else [`HOOK_BUDGET`].
pub fn hook_budget() -> Duration {
    std::env::var("HELIX_EMBED_BUDGET_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(HOOK_BUDGET, Duration::from_millis)
}

/// A query's vector and the model that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryVector {
    pub model: String,
    pub vector: Vec<f32>,
}

/// Why no vector came back.
#[derive(Debug)]
pub enum AskError {
    /// No embedder listening (no socket, or refused): starting one may help.
    Absent,
    /// One answered, but late, garbled or with nothing.
    Failed,
}

/// The text of a request, cut to [`MAX_REQUEST`] bytes at a character boundary.
pub fn request_text(text: &str) -> &str {
    if text.len() <= MAX_REQUEST {
        return text;
    }
    let mut end = MAX_REQUEST;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Asks the embedder at `socket` for `text`'s vector within `budget`.
pub fn ask(socket: &Path, text: &str, budget: Duration) -> Result<QueryVector, AskError> {
    let start = Instant::now();
    let mut stream = UnixStream::connect(socket).map_err(|_| AskError::Absent)?;
    let left = |start: Instant| {
        budget
            .checked_sub(start.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or(AskError::Failed)
    };
    stream
        .set_write_timeout(Some(left(start)?))
        .map_err(|_| AskError::Failed)?;
    let text = request_text(text).as_bytes();
    let mut req = Vec::with_capacity(4 + text.len());
    req.extend_from_slice(&(text.len() as u32).to_le_bytes());
    req.extend_from_slice(text);
    stream.write_all(&req).map_err(|_| AskError::Failed)?;
    // Reads until the answer is whole or the budget is spent (each read gets what is left).
    let mut read = |buf: &mut [u8]| -> Result<(), AskError> {
        let mut at = 0;
        while at < buf.len() {
            stream
                .set_read_timeout(Some(left(start)?))
                .map_err(|_| AskError::Failed)?;
            match stream.read(&mut buf[at..]) {
                Ok(0) | Err(_) => return Err(AskError::Failed),
                Ok(n) => at += n,
            }
        }
        Ok(())
    };
    let mut head = [0u8; 3];
    read(&mut head)?;
    if head[0] != 0 {
        return Err(AskError::Failed);
    }
    let id_len = usize::from(u16::from_le_bytes([head[1], head[2]]));
    if id_len == 0 || id_len > MAX_MODEL_ID {
        return Err(AskError::Failed);
    }
    let mut id = vec![0u8; id_len];
    read(&mut id)?;
    let model = String::from_utf8(id).map_err(|_| AskError::Failed)?;
    let mut dim = [0u8; 4];
    read(&mut dim)?;
    let dim = u32::from_le_bytes(dim) as usize;
    if dim == 0 || dim > MAX_DIM {
        return Err(AskError::Failed);
    }
    let mut raw = vec![0u8; dim * 4];
    read(&mut raw)?;
    let vector: Vec<f32> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if !vector.iter().all(|x| x.is_finite()) {
        return Err(AskError::Failed);
    }
    Ok(QueryVector { model, vector })
}

/// An answer as the embedder writes it.
pub fn encode_answer(model: &str, vector: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(7 + model.len() + 4 * vector.len());
    out.push(0);
    out.extend_from_slice(&(model.len() as u16).to_le_bytes());
    out.extend_from_slice(model.as_bytes());
    out.extend_from_slice(&(vector.len() as u32).to_le_bytes());
    for x in vector {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Whether any searched artifact has vectors (the only case where anything here runs).
pub fn has_vectors(k: &Knowledge, project: Option<&str>) -> bool {
    k.sources()
        .iter()
        .filter(|s| project.is_none_or(|p| s.project == p))
        .any(|s| s.index.vectors().is_some_and(|v| !v.is_empty()))
}

/// Starts `helix-net embedder` detached when a model is there for it and none started within
/// [`START_INTERVAL`].
/// Returns whether it did.
pub fn start_embedder() -> bool {
    if !model_available() {
        return false;
    }
    let marker = start_marker();
    if let Ok(m) = std::fs::metadata(&marker).and_then(|m| m.modified())
        && SystemTime::now()
            .duration_since(m)
            .is_ok_and(|age| age < START_INTERVAL)
    {
        return false;
    }
    if let Some(dir) = marker.parent() {
        let _ = create_private_dir(dir);
    }
    // Stamp first: two hooks at once start one embedder (and a second one exits anyway).
    if std::fs::write(&marker, b"").is_err() {
        return false;
    }
    spawn()
}

/// Creates `dir` (and its parents) with mode 0700 for the last component.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(e) => Err(e),
    }
}

// Not waited for: the hook exits at once and init reaps the embedder; it calls setsid
// itself. A long-lived caller (the MCP server) reaps it on a thread.
#[allow(clippy::zombie_processes)]
fn spawn() -> bool {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let net = exe.with_file_name(crate::install::resolve::NET_BINARY);
    let child = Command::new(net)
        .arg("embedder")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match child {
        Ok(mut child) => {
            if REAP.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::spawn(move || child.wait());
            }
            true
        }
        Err(_) => false,
    }
}

static REAP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For long-lived processes (the MCP server): started embedders are waited for on a thread.
pub fn reap_children() {
    REAP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// How a caller waits for the embedder.
#[derive(Debug, Clone, Copy)]
pub struct Wait {
    /// The whole budget.
    pub budget: Duration,
    /// Whether to wait for an embedder it had to start (within the budget).
    pub for_start: bool,
}

impl Wait {
    pub fn hook() -> Wait {
        Wait {
            budget: hook_budget(),
            for_start: false,
        }
    }
    pub fn search() -> Wait {
        Wait {
            budget: SEARCH_BUDGET,
            for_start: true,
        }
    }
}

/// The query's vector when an artifact has vectors and the embedder answers in time;
/// starts the embedder when none listens.
pub fn query_vector(
    k: &Knowledge,
    project: Option<&str>,
    text: &str,
    wait: Wait,
) -> Option<QueryVector> {
    if !enabled() || text.trim().is_empty() || !has_vectors(k, project) {
        return None;
    }
    let socket = socket_path();
    let start = Instant::now();
    match ask(&socket, text, wait.budget) {
        Ok(v) => Some(v),
        Err(AskError::Failed) => None,
        Err(AskError::Absent) => {
            start_embedder();
            if !wait.for_start {
                return None;
            }
            // Started now or a moment ago by another caller: wait for it within the budget.
            loop {
                std::thread::sleep(Duration::from_millis(20));
                let left = wait.budget.checked_sub(start.elapsed())?;
                match ask(&socket, text, left) {
                    Ok(v) => return Some(v),
                    Err(AskError::Failed) => return None,
                    Err(AskError::Absent) => continue,
                }
            }
        }
    }
}

/// How semantic candidates join a search.
#[derive(Debug, Clone)]
pub struct Semantic {
    pub fusion: FusionOptions,
    pub topic: Option<String>,
    pub include_hidden: bool,
    /// Keep the lexical hits first, as they were, and only append the vector-only ones
    /// (score 0, no matched terms) in fused order: the hooks, whose relevance gate reads
    /// hits by lexical score and evidence (a zero score changes no hit's evidence).
    pub lexical_order: bool,
}

/// Fuses `found`'s lexical hits with the vector candidates of `query` in every searched
/// artifact made by the same model (and `project`'s only, when given). Vector-only hits
/// carry score 0 and no matched terms; every hit with a vector carries its cosine, which
/// the relevance gate weighs.
pub fn fuse_found<'k>(
    k: &'k Knowledge,
    found: Found<'k>,
    project: Option<&str>,
    query: &QueryVector,
    how: &Semantic,
) -> Found<'k> {
    let sources = k.sources();
    let source_of = |h: &ProjectHit<'_>| {
        sources
            .iter()
            .position(|s| s.project == h.project && s.overlay == h.pending)
    };
    let mut semantic: Vec<((usize, u32), f32)> = Vec::new();
    let filter = VectorFilter {
        topic: how.topic.clone(),
        include_hidden: how.include_hidden,
    };
    let k_each = SEMANTIC_K.max(how.fusion.limit);
    for (si, src) in sources.iter().enumerate() {
        if project.is_some_and(|p| src.project != p) {
            continue;
        }
        let Some(v) = src.index.vectors() else {
            continue;
        };
        if v.model() != query.model || v.dim() != query.vector.len() {
            continue;
        }
        let Ok(hits) = v.top_k(&query.vector, k_each, &filter) else {
            continue;
        };
        for h in hits {
            if !src.overlay
                && let Ok(e) = src.index.entry(h.doc)
                && k.shadowed_id(src, e.id)
            {
                continue;
            }
            semantic.push(((si, h.doc), h.cosine));
        }
    }
    if semantic.is_empty() {
        return found;
    }
    semantic.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let lexical: Vec<((usize, u32), f32)> = found
        .hits
        .iter()
        .filter_map(|h| Some(((source_of(h)?, h.hit.entry.doc), h.hit.score)))
        .collect();
    let cosines: std::collections::HashMap<(usize, u32), f32> = semantic.iter().copied().collect();
    let fused = fuse(lexical, semantic, &how.fusion);
    let (mut old, queries, stats) = found.into_parts();
    // Every lexical hit's cosine, not only those among the vector candidates: the gate
    // weighs it (a hit that shares words but not meaning loses points).
    for h in &mut old {
        let Some(si) = source_of(h) else { continue };
        let key = (si, h.hit.entry.doc);
        h.cosine = cosines.get(&key).copied().or_else(|| {
            let v = sources[si].index.vectors()?;
            (v.model() == query.model && v.dim() == query.vector.len())
                .then(|| v.get(key.1).map(|row| row.dot(&query.vector)))
                .flatten()
        });
    }
    let vector_only = |key: (usize, u32)| {
        let (si, doc) = key;
        let src = &sources[si];
        let entry = src.index.entry(doc).ok()?;
        let at = queries
            .iter()
            .position(|q| q.tokenizer_version() == src.index.tokenizer_version())
            .unwrap_or(0);
        let snippet = crate::hook::output::body_excerpt(entry.body, 160);
        Some(ProjectHit::vector_only(
            &src.project,
            src.overlay,
            entry,
            snippet,
            at,
            cosines.get(&key).copied().unwrap_or(0.0),
        ))
    };
    let mut seen = std::collections::HashSet::new();
    let mut hits = Vec::with_capacity(fused.len().max(old.len()));
    if how.lexical_order {
        // The lexical hits as they were, then the vector-only ones best first.
        let lexical_keys: std::collections::HashSet<(usize, u32)> = old
            .iter()
            .filter_map(|h| Some((source_of(h)?, h.hit.entry.doc)))
            .collect();
        for h in old {
            if seen.insert((h.project, h.hit.entry.id)) {
                hits.push(h);
            }
        }
        for f in fused.iter().filter(|f| !lexical_keys.contains(&f.key)) {
            if let Some(h) = vector_only(f.key)
                && seen.insert((h.project, h.hit.entry.id))
            {
                hits.push(h);
            }
        }
    } else {
        let mut by_key: std::collections::HashMap<(usize, u32), ProjectHit<'k>> = old
            .into_iter()
            .filter_map(|h| Some(((source_of(&h)?, h.hit.entry.doc), h)))
            .collect();
        for f in &fused {
            let Some(h) = by_key.remove(&f.key).or_else(|| vector_only(f.key)) else {
                continue;
            };
            if seen.insert((h.project, h.hit.entry.id)) {
                hits.push(h);
            }
        }
    }
    Found::new(hits, queries, stats)
}

/// `helix search` and MCP `search`: `found` fused with the vector candidates of `text`
/// (waiting up to [`SEARCH_BUDGET`], starting the embedder when none listens), ranked by
/// fusion; with `lexical_order`, ranked as the hooks rank (`--explain`).
pub fn search_fusion<'k>(
    k: &'k Knowledge,
    found: Found<'k>,
    project: Option<&str>,
    text: &str,
    opts: &helix_index_format::SearchOptions,
    lexical_order: bool,
) -> Found<'k> {
    let Some(v) = query_vector(k, project, text, Wait::search()) else {
        return found;
    };
    let how = Semantic {
        fusion: FusionOptions {
            limit: opts.limit,
            ..FusionOptions::default()
        },
        topic: opts.topic.clone(),
        include_hidden: opts.include_hidden,
        lexical_order,
    };
    fuse_found(k, found, project, &v, &how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_round_trip_over_a_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut text = vec![0u8; u32::from_le_bytes(len) as usize];
            s.read_exact(&mut text).unwrap();
            assert_eq!(text, b"hello");
            s.write_all(&encode_answer("m1", &[0.6, 0.8])).unwrap();
        });
        let v = ask(&path, "hello", Duration::from_secs(5)).unwrap();
        t.join().unwrap();
        assert_eq!(v.model, "m1");
        assert_eq!(v.vector, vec![0.6, 0.8]);
    }

    #[test]
    fn absent_late_and_garbled_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        assert!(matches!(
            ask(&path, "x", Duration::from_millis(50)),
            Err(AskError::Absent)
        ));
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let t = std::thread::spawn(move || {
            // Late: never answers the first; garbage for the second.
            let (_late, _) = listener.accept().unwrap();
            let (mut s, _) = listener.accept().unwrap();
            let _ = s.write_all(b"\x00\xff\xffgarbage");
            std::thread::sleep(Duration::from_millis(300));
        });
        let begin = Instant::now();
        assert!(matches!(
            ask(&path, "x", Duration::from_millis(50)),
            Err(AskError::Failed)
        ));
        assert!(begin.elapsed() < Duration::from_millis(250));
        assert!(matches!(
            ask(&path, "x", Duration::from_millis(100)),
            Err(AskError::Failed)
        ));
        t.join().unwrap();
    }

    #[test]
    fn long_requests_are_cut_at_a_character() {
        let s = "é".repeat(MAX_REQUEST);
        let cut = request_text(&s);
        assert!(cut.len() <= MAX_REQUEST && cut.len() >= MAX_REQUEST - 1);
    }
}
