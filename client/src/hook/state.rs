//! Per-session hook state under `$XDG_CACHE_HOME/helix/sessions/`: a tiny `key=value` file
//! per agent session, so `stop` knows whether a failure went unrecorded, and the session's
//! ledger (`<session>.seen`): the entries it was shown, so no hook repeats itself, and the
//! characters of context it was given, for its budget (`hook::budget`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Session files older than this are deleted when a session starts.
pub const KEEP: Duration = Duration::from_secs(3 * 24 * 3600);

/// What helix remembers about one session. Times are Unix milliseconds, 0 for never.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct State {
    /// Failures seen (Bash errors with a meaningful message).
    pub failures: u32,
    pub last_failure: i64,
    /// Last time the session stored knowledge (MCP `store` or `helix store`).
    pub last_store: i64,
    /// Last time the post-build nudge was given.
    pub last_nudge: i64,
    /// Whether the stop reminder was already given.
    pub reminded: bool,
    pub compactions: u32,
    pub last_compaction: i64,
}

fn dir() -> PathBuf {
    crate::paths::cache_dir().join("sessions")
}

fn file(session: &str) -> PathBuf {
    dir().join(session)
}

impl State {
    /// The state of `session` (a file-name-safe id); default when absent or unreadable.
    pub fn load(session: &str) -> State {
        let Ok(text) = std::fs::read_to_string(file(session)) else {
            return State::default();
        };
        let mut s = State::default();
        for line in text.lines().take(32) {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            let num = v.trim().parse::<i64>().unwrap_or(0);
            let count = u32::try_from(num).unwrap_or(0);
            match k.trim() {
                "failures" => s.failures = count,
                "last_failure" => s.last_failure = num,
                "last_store" => s.last_store = num,
                "last_nudge" => s.last_nudge = num,
                "reminded" => s.reminded = num != 0,
                "compactions" => s.compactions = count,
                "last_compaction" => s.last_compaction = num,
                _ => {}
            }
        }
        s
    }

    /// Writes the state (temp file + rename, so a concurrent hook never reads half a file).
    pub fn save(&self, session: &str) -> std::io::Result<()> {
        let text = format!(
            "failures={}\nlast_failure={}\nlast_store={}\nlast_nudge={}\nreminded={}\ncompactions={}\nlast_compaction={}\n",
            self.failures,
            self.last_failure,
            self.last_store,
            self.last_nudge,
            u8::from(self.reminded),
            self.compactions,
            self.last_compaction
        );
        crate::sys::write_atomic(&file(session), text.as_bytes())
    }

    /// Whether the session saw a failure and stored nothing since.
    pub fn failure_unrecorded(&self) -> bool {
        self.failures > 0 && self.last_store < self.last_failure
    }
}

/// Loads, changes and saves the state of `session` (best effort).
pub fn update(session: &str, f: impl FnOnce(&mut State)) -> State {
    let mut s = State::load(session);
    f(&mut s);
    let _ = s.save(session);
    s
}

/// What a session has been shown: `<session>.seen`, appended with `O_APPEND` (concurrent
/// hooks' lines never interleave) and without fsync, one write per hook call that spoke.
/// Its lines:
/// - `<scope> <entry>`, two 16-digit hex hashes, per injected entry (scope 0 for the prompt
///   and error hooks, the file's for ambient); a `compact` line starts these afresh;
/// - `chars <n>`: a call gave the session `n` characters of context (never reset);
/// - `capped`: the session budget kept a call's context back; the session stays silent.
///
/// The file is rewritten to what still counts when it passes [`MAX_SEEN_BYTES`].
#[derive(Debug, Default)]
pub struct Seen {
    /// (scope, entry) pairs since the last compaction.
    pairs: Vec<(u64, u64)>,
    /// Characters of context the session was given, compactions included.
    spent: u64,
    /// Whether the budget kept a call back.
    capped: bool,
}

/// Where a `.seen` file is cut back (about 2,000 injections).
pub const MAX_SEEN_BYTES: u64 = 64 * 1024;
const COMPACT_LINE: &str = "compact";
const CHARS_PREFIX: &str = "chars ";
const CAPPED_LINE: &str = "capped";

/// The scope of the prompt and error hooks (any entry shown anywhere counts).
pub const ANY_SCOPE: u64 = 0;

fn seen_file(session: &str) -> PathBuf {
    dir().join(format!("{session}.seen"))
}

/// A stable 64-bit key for a scope (a file path) or an entry (`project:id`).
pub fn key(text: &str) -> u64 {
    // Never 0, which is ANY_SCOPE.
    xxhash_rust::xxh3::xxh3_64(text.as_bytes()).max(1)
}

impl Seen {
    /// What `session` has been shown; empty when nothing was recorded or unreadable.
    pub fn load(session: &str) -> Seen {
        match std::fs::read_to_string(seen_file(session)) {
            Ok(text) => Seen::parse(&text),
            Err(_) => Seen::default(),
        }
    }

    fn parse(text: &str) -> Seen {
        let mut seen = Seen::default();
        for line in text.lines() {
            if line == COMPACT_LINE {
                seen.pairs.clear();
                continue;
            }
            if line == CAPPED_LINE {
                seen.capped = true;
                continue;
            }
            if let Some(n) = line.strip_prefix(CHARS_PREFIX) {
                seen.spent = seen.spent.saturating_add(n.parse().unwrap_or(0));
                continue;
            }
            let mut parts = line.split(' ');
            let (Some(scope), Some(entry), None) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if let (Ok(scope), Ok(entry)) = (
                u64::from_str_radix(scope, 16),
                u64::from_str_radix(entry, 16),
            ) {
                seen.pairs.push((scope, entry));
            }
        }
        seen
    }

    /// Whether `entry` was shown in `scope` since the last compaction; [`ANY_SCOPE`] asks
    /// whether it was shown anywhere.
    pub fn contains(&self, scope: u64, entry: u64) -> bool {
        self.pairs
            .iter()
            .any(|&(s, e)| e == entry && (scope == ANY_SCOPE || s == scope))
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Characters of context the session was given so far.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Whether the session budget kept a call of the session back.
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// The lines that carry the ledger over a cut-back: the entries kept, then the totals.
    fn lines(&self, pairs: &[(u64, u64)]) -> String {
        let mut out = String::with_capacity(pairs.len() * 34 + 32);
        for (s, e) in pairs {
            out.push_str(&format!("{s:016x} {e:016x}\n"));
        }
        if self.spent > 0 {
            out.push_str(&format!("{CHARS_PREFIX}{}\n", self.spent));
        }
        if self.capped {
            out.push_str(CAPPED_LINE);
            out.push('\n');
        }
        out
    }
}

/// Records that a call gave `session` `chars` characters of context, showing `entries` in
/// `scope` (best effort; one append).
pub fn record_shown(session: &str, scope: u64, entries: &[u64], chars: u64) {
    let mut text = String::with_capacity(entries.len() * 34 + 16);
    for e in entries {
        text.push_str(&format!("{scope:016x} {e:016x}\n"));
    }
    if chars > 0 {
        text.push_str(&format!("{CHARS_PREFIX}{chars}\n"));
    }
    if !text.is_empty() {
        append_seen(session, &text);
    }
}

/// Records that the session budget kept a call of `session` back (best effort).
pub fn record_capped(session: &str) {
    append_seen(session, &format!("{CAPPED_LINE}\n"));
}

/// Records a compaction: what was shown before it may be shown once more.
pub fn record_compaction(session: &str) {
    append_seen(session, &format!("{COMPACT_LINE}\n"));
}

fn append_seen(session: &str, text: &str) {
    append_seen_at(&seen_file(session), text);
}

/// Where a cut-back `.seen` file starts again: the newest this many lines (about 33 KiB).
const KEEP_SEEN_LINES: usize = 1000;

fn append_seen_at(path: &Path, text: &str) {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    let file = open().or_else(|_| {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
        open()
    });
    let Ok(mut file) = file else { return };
    if file.write_all(text.as_bytes()).is_err() {
        return;
    }
    if file.metadata().is_ok_and(|m| m.len() > MAX_SEEN_BYTES) {
        // Keep what still counts (since the last compaction), the newest lines of it, and
        // the totals.
        let seen = std::fs::read_to_string(path)
            .map(|t| Seen::parse(&t))
            .unwrap_or_default();
        let keep = &seen.pairs[seen.pairs.len().saturating_sub(KEEP_SEEN_LINES)..];
        let _ = crate::sys::write_atomic_nosync(path, seen.lines(keep).as_bytes());
    }
}

/// Deletes session files not touched for [`KEEP`].
pub fn prune() {
    prune_dir(&dir(), KEEP);
}

fn prune_dir(dir: &Path, keep: Duration) {
    crate::sys::sweep_older_than(dir, keep, |old| {
        let _ = std::fs::remove_file(old);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_counts_since_the_last_compaction_and_by_scope() {
        let (file, e1, e2) = (key("src/a.rs"), key("p:one.md"), key("p:two.md"));
        let text = format!(
            "0000000000000000 {e1:016x}\ncompact\n{file:016x} {e2:016x}\ngarbage line\n{e1:016x}\n"
        );
        let seen = Seen::parse(&text);
        // e1 was shown before the compaction only: it may come back.
        assert!(!seen.contains(ANY_SCOPE, e1));
        // e2 was shown for the file: ambient for that file, and prompts, skip it.
        assert!(seen.contains(file, e2));
        assert!(seen.contains(ANY_SCOPE, e2));
        assert!(!seen.contains(key("src/b.rs"), e2));
        assert_eq!(seen.len(), 1);
        assert!(Seen::parse("").is_empty());
    }

    /// The characters a session was given add up over compactions, and a cut-back of the
    /// file keeps the total and the cap.
    #[test]
    fn the_ledger_keeps_its_totals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.seen");
        append_seen_at(
            &path,
            &format!("{:016x} {:016x}\nchars 700\n", ANY_SCOPE, 5),
        );
        append_seen_at(&path, "compact\nchars 1500\ncapped\n");
        let seen = Seen::parse(&std::fs::read_to_string(&path).unwrap());
        assert_eq!((seen.spent(), seen.capped(), seen.len()), (2200, true, 0));
        for i in 0..3_000u64 {
            append_seen_at(
                &path,
                &format!("{:016x} {:016x}\nchars 1\n", ANY_SCOPE, i + 1),
            );
        }
        let seen = Seen::parse(&std::fs::read_to_string(&path).unwrap());
        assert_eq!((seen.spent(), seen.capped()), (5200, true));
        assert!(seen.contains(ANY_SCOPE, 3_000));
        assert!(std::fs::metadata(&path).unwrap().len() <= MAX_SEEN_BYTES + 64);
    }

    /// However long a session runs, its `.seen` file stays under about 64 KiB and still
    /// holds the entries shown last.
    #[test]
    fn the_seen_file_stays_small() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.seen");
        for i in 0..10_000u64 {
            append_seen_at(&path, &format!("{:016x} {:016x}\n", ANY_SCOPE, i + 1));
        }
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= MAX_SEEN_BYTES + 34, "{size}");
        let seen = Seen::parse(&std::fs::read_to_string(&path).unwrap());
        assert!(seen.contains(ANY_SCOPE, 10_000) && seen.contains(ANY_SCOPE, 9_500));
        assert!(!seen.contains(ANY_SCOPE, 1));
    }
}
