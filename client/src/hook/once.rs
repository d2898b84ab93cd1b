//! Once per input: a hook that Claude Code starts twice for the same event — from user and
//! project settings, or a plugin next to `helix hooks install` — answers only the first time.
//!
//! Decided in dispatch, before any handler runs: the first process to create
//! `claims/<session>/<hook>.<xxh3 of stdin>` (`O_EXCL`, atomic) answers; a second one that
//! finds that claim fresh prints nothing. Duplicates get byte-identical stdin and start
//! together, so "fresh" is a few seconds; the same input again later (a second compaction's
//! `SessionStart`) takes the next free generation (`….1`, `….2`) and is answered.
//!
//! Claims live in memory: `$XDG_RUNTIME_DIR/helix/claims`, else a private
//! `/dev/shm/helix-<uid>/claims`, else the cache directory. Creating a file on a journaling
//! disk can wait behind a journal commit while a build writes (measured: +0.7 ms per hook on
//! ext4 under load, +25 µs on tmpfs); stale claims are swept as sessions go on.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A claim younger than this marks a call as a duplicate of one in flight. Claude Code starts
/// every matching handler at once, each with a timeout of seconds, so duplicates arrive within
/// milliseconds; a repeat of the same input after this is a new event.
pub const FRESH: Duration = Duration::from_secs(10);

/// Past this many generations of one input in one session, calls are answered unclaimed.
const MAX_GENERATIONS: u32 = 32;

/// Claim directories of sessions idle this long are deleted when a session starts.
const KEEP: Duration = Duration::from_secs(24 * 3600);

/// About one new claim in this many sweeps its session's stale claims away.
const SWEEP_EVERY: u64 = 64;

fn root() -> PathBuf {
    memory_dir()
        .unwrap_or_else(crate::paths::cache_dir)
        .join("claims")
}

/// A directory in memory that only this user can write: `$XDG_RUNTIME_DIR/helix`, else
/// `/dev/shm/helix-<uid>` (made 0700; refused unless it is a real directory owned by us and
/// closed to others, so nobody else can pre-empt or redirect the claims).
fn memory_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && d.is_absolute()
    {
        return Some(d.join("helix"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    let uid = unsafe { libc::geteuid() };
    let dir = PathBuf::from(format!("/dev/shm/helix-{uid}"));
    let private = |m: &std::fs::Metadata| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0;
    match dir.symlink_metadata() {
        Ok(m) => private(&m).then_some(dir),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let made = std::fs::DirBuilder::new().mode(0o700).create(&dir);
            (made.is_ok() || dir.symlink_metadata().is_ok_and(|m| private(&m))).then_some(dir)
        }
        Err(_) => None,
    }
}

/// Whether this call of `hook` with stdin `input` in `session` is the first: `false` means a
/// duplicate of a call made moments ago, which must print nothing. Any problem (an unwritable
/// cache) answers `true`: a lost claim can at worst repeat a context, never silence one.
pub fn first_call(session: &str, hook: &str, input: &[u8]) -> bool {
    let dir = root().join(session);
    let hash = xxhash_rust::xxh3::xxh3_64(input);
    let now = SystemTime::now();
    let first = claim(&dir, &format!("{hook}.{hash:016x}"), now);
    if first && hash.is_multiple_of(SWEEP_EVERY) {
        sweep(&dir, now);
    }
    first
}

/// Deletes a session's claims that are no longer fresh: they decide nothing any more.
fn sweep(dir: &Path, now: SystemTime) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten().take(100_000) {
        if e.metadata().is_ok_and(|m| !is_fresh(&m, now)) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn claim(dir: &Path, name: &str, now: SystemTime) -> bool {
    for generation in 0..MAX_GENERATIONS {
        let path = if generation == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{name}.{generation}"))
        };
        match create_new(&path) {
            Ok(()) => return true,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if std::fs::create_dir_all(dir).is_err() {
                    return true;
                }
                return create_new(&path).is_ok()
                    || !path.metadata().is_ok_and(|m| is_fresh(&m, now));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => match path.metadata() {
                Ok(m) if is_fresh(&m, now) => return false,
                Ok(_) => continue,
                Err(_) => return true,
            },
            Err(_) => return true,
        }
    }
    true
}

fn create_new(path: &Path) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
}

fn is_fresh(m: &std::fs::Metadata, now: SystemTime) -> bool {
    m.modified()
        .ok()
        .is_some_and(|t| now.duration_since(t).unwrap_or_default() < FRESH)
}

/// Deletes the claim directories of sessions idle for a day (looking at most once an hour).
pub fn prune() {
    crate::sys::sweep_older_than(&root(), KEEP, |old| {
        let _ = std::fs::remove_dir_all(old);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_claims_then_duplicates_are_silent_and_a_later_repeat_answers() {
        let tmp = std::env::temp_dir().join(format!("helix-once-{}", std::process::id()));
        let dir = tmp.join("sess");
        let now = SystemTime::now();
        assert!(claim(&dir, "prompt.00", now), "first call answers");
        assert!(!claim(&dir, "prompt.00", now), "a duplicate is silent");
        assert!(claim(&dir, "prompt.01", now), "another input answers");
        // Once the claim has aged, the same input is a new event: the next generation
        // answers, once.
        let aged = now - FRESH - Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(dir.join("prompt.00"))
            .and_then(|f| f.set_modified(aged))
            .expect("age the claim");
        assert!(claim(&dir, "prompt.00", now));
        assert!(dir.join("prompt.00.1").is_file());
        assert!(!claim(&dir, "prompt.00", now));
        // A sweep keeps the fresh claims only.
        let later = now + FRESH + Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(dir.join("prompt.01"))
            .and_then(|f| f.set_modified(now))
            .expect("touch");
        sweep(&dir, later - Duration::from_secs(2));
        assert!(dir.join("prompt.01").is_file() && !dir.join("prompt.00").exists());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
