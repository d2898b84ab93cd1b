//! Once per input: a hook that Claude Code starts twice for the same event — from user and
//! project settings, or a plugin next to `helix hooks install` — answers only the first time.
//!
//! Decided in dispatch, before any handler runs: the first process to create
//! `$XDG_CACHE_HOME/helix/claims/<session>/<hook>.<xxh3 of stdin>` (`O_EXCL`, atomic on
//! every local file system) answers; a second one that finds that claim fresh prints nothing.
//! Duplicates get byte-identical stdin and start together, so "fresh" is a few seconds; the
//! same input again later (a second compaction's `SessionStart`) takes the next free
//! generation (`….1`, `….2`) and is answered. One `open` per hook call in the common case.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A claim younger than this marks a call as a duplicate of one in flight. Claude Code starts
/// every matching handler at once, each with a timeout of seconds, so duplicates arrive within
/// milliseconds; a repeat of the same input after this is a new event.
pub const FRESH: Duration = Duration::from_secs(10);

/// Past this many generations of one input in one session, calls are answered unclaimed.
const MAX_GENERATIONS: u32 = 32;

/// Claim directories of sessions older than this are deleted when a session starts.
const KEEP: Duration = Duration::from_secs(3 * 24 * 3600);

fn root() -> PathBuf {
    crate::paths::cache_dir().join("claims")
}

/// Whether this call of `hook` with stdin `input` in `session` is the first: `false` means a
/// duplicate of a call made moments ago, which must print nothing. Any problem (an unwritable
/// cache) answers `true`: a lost claim can at worst repeat a context, never silence one.
pub fn first_call(session: &str, hook: &str, input: &[u8]) -> bool {
    let dir = root().join(session);
    let hash = xxhash_rust::xxh3::xxh3_64(input);
    claim(&dir, &format!("{hook}.{hash:016x}"), SystemTime::now())
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

/// Deletes the claim directories of sessions not active for three days.
pub fn prune() {
    let Ok(rd) = std::fs::read_dir(root()) else {
        return;
    };
    let now = SystemTime::now();
    for e in rd.flatten().take(10_000) {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > KEEP);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
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
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
