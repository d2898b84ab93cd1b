//! Per-session hook state: a tiny `key=value` file per Claude Code session under
//! `$XDG_CACHE_HOME/helix/sessions/`, so `stop` knows whether a failure went unrecorded.

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

/// Deletes session files not touched for [`KEEP`].
pub fn prune() {
    prune_dir(&dir(), KEEP);
}

fn prune_dir(dir: &Path, keep: Duration) {
    for old in crate::sys::entries_older_than(dir, keep) {
        let _ = std::fs::remove_file(old);
    }
}
