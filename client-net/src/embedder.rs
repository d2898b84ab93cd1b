//! `helix-net embedder`: the warm embedder. Loads the model once and answers the hooks'
//! and searches' queries over a per-user Unix socket (`helix_client::semantic` has the
//! socket's place and the protocol), so that no `helix` process ever loads a model.
//!
//! One instance per user: an exclusive lock beside the socket (a second instance exits
//! quietly, status 0), which also makes replacing a stale socket file safe. The socket's
//! directory is 0700 and the socket 0600. One thread per connection, at most
//! [`MAX_CONNECTIONS`] at once; requests are bounded ([`semantic::MAX_REQUEST`]) and read
//! under a deadline. Exits after `--idle-secs` without a request.

use anyhow::{Context, Result};
use helix_client::semantic::{self, EmbedderArgs};
use helix_embed::{Embedder, MODEL_FILES, Options};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Connections served at once; more are closed unanswered (the client falls back).
pub const MAX_CONNECTIONS: usize = 16;
/// How long a connection may take to send its request.
const READ_DEADLINE: Duration = Duration::from_secs(5);

/// The model directory: `--model`, else `HELIX_MODEL_DIR`, else the newest complete model
/// synced into the cache (`model/<id>/` holding every file of [`MODEL_FILES`]).
pub fn model_dir(arg: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = arg {
        return Some(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("HELIX_MODEL_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    newest_complete(&semantic::models_dir())
}

/// The newest (by modification time) subdirectory of `root` holding every model file.
pub fn newest_complete(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| MODEL_FILES.iter().all(|f| p.join(f).is_file()))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

pub fn run(a: EmbedderArgs) -> Result<ExitCode> {
    if !a.foreground {
        // Its own session: no terminal, no signal from the hook's process group.
        // SAFETY: setsid has no memory-safety preconditions; failing (already a leader) is fine.
        #[allow(unsafe_code)]
        unsafe {
            libc::setsid();
        }
    }
    let socket = semantic::socket_path();
    let dir = socket
        .parent()
        .context("the embedder's socket has no directory")?
        .to_path_buf();
    semantic::create_private_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("embed.lock"))
        .with_context(|| format!("opening {}", dir.join("embed.lock").display()))?;
    // std's advisory file lock (flock): needs Rust 1.89; the toolchain here is newer.
    #[allow(clippy::incompatible_msrv)]
    if lock.try_lock().is_err() {
        // Another embedder runs: nothing to do.
        return Ok(ExitCode::SUCCESS);
    }
    let model = model_dir(a.model.as_deref())
        .context("no embedding model: none synced (`helix sync`) and HELIX_MODEL_DIR is not set")?;
    // 8-bit weights: a query reads every weight once, and reading them, not the arithmetic,
    // is most of its time when they have left the caches (docs/hooks.md, "8-bit weights, and a pause").
    let options = Options {
        threads: 1,
        int8_weights: true,
        ..Options::default()
    };
    let embedder = Embedder::load_with(&model, options)
        .with_context(|| format!("loading the model in {}", model.display()))?;
    // The lock is held: a socket file left here belongs to an embedder that is gone.
    match std::fs::remove_file(&socket) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", socket.display())),
    }
    let listener =
        UnixListener::bind(&socket).with_context(|| format!("binding {}", socket.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    }
    serve(listener, Arc::new(embedder), a.idle(), &socket);
    drop(lock);
    Ok(ExitCode::SUCCESS)
}

/// Answers connections until idle for `idle`, then removes the socket and returns.
fn serve(listener: UnixListener, embedder: Arc<Embedder>, idle: Duration, socket: &Path) {
    let start = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let busy = Arc::new(AtomicUsize::new(0));
    {
        let (last, busy, socket) = (last.clone(), busy.clone(), socket.to_path_buf());
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(250).min(idle));
                let since = (start.elapsed().as_millis() as u64)
                    .saturating_sub(last.load(Ordering::Relaxed));
                if busy.load(Ordering::Relaxed) == 0 && since >= idle.as_millis() as u64 {
                    let _ = std::fs::remove_file(&socket);
                    std::process::exit(0);
                }
            }
        });
    }
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        last.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
        if busy.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            busy.fetch_sub(1, Ordering::AcqRel);
            continue;
        }
        let (embedder, done, last) = (embedder.clone(), busy.clone(), last.clone());
        let spawned = std::thread::Builder::new().spawn(move || {
            let _ = answer(stream, &embedder);
            last.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
            done.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            busy.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// One request: length, text; the answer, or status 1 for a request refused.
fn answer(mut stream: UnixStream, embedder: &Embedder) -> std::io::Result<()> {
    stream.set_read_timeout(Some(READ_DEADLINE))?;
    stream.set_write_timeout(Some(READ_DEADLINE))?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > semantic::MAX_REQUEST {
        return stream.write_all(&[1]);
    }
    let mut text = vec![0u8; len];
    stream.read_exact(&mut text)?;
    let text = String::from_utf8_lossy(&text);
    match embedder.embed_one(&text) {
        Ok(v) if v.len() == embedder.dim() => {
            stream.write_all(&semantic::encode_answer(embedder.id(), &v))
        }
        _ => stream.write_all(&[1]),
    }
}

/// Embeds a local-mode compile's entries with the model the warm embedder would load
/// (`HELIX_MODEL_DIR`, else the newest synced), on every core.
#[derive(Debug)]
pub struct LocalEmbedder(Embedder);

impl LocalEmbedder {
    /// The model when there is one; an error when one is there but does not load.
    pub fn find() -> Result<Option<LocalEmbedder>> {
        if !semantic::enabled() {
            return Ok(None);
        }
        let Some(dir) = model_dir(None) else {
            return Ok(None);
        };
        let embedder = Embedder::load_with(&dir, Options::default())
            .with_context(|| format!("loading the embedding model in {}", dir.display()))?;
        Ok(Some(LocalEmbedder(embedder)))
    }
}

impl helix_client::cache::EmbedEntries for LocalEmbedder {
    fn model(&self) -> (&str, usize) {
        (self.0.id(), self.0.dim())
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(self.0.embed(texts)?)
    }
}
