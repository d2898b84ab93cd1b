//! The usage-report state of one project on one server (`paths::usage_state_file`): the
//! cursor into the injection log, the reports written but not yet acknowledged, and a pause
//! after the server refused reports. Written crash-safely (`sys::write_atomic`) before a
//! report is sent, so a retry carries the same key and the server counts it once.

use anyhow::{Context, Result};
use helix_index_format::wire::UsageReport;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One project's state on one server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageState {
    /// `t` of the newest journal record whose counts the server acknowledged (or refused):
    /// the next report counts only newer records. `None`: nothing reported yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Reports written but not yet acknowledged: sent again, with the same keys, before a
    /// new one is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// Unix seconds before which no report is built or sent: the server refused reports
    /// (`usage_disabled`) or knows no usage endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<i64>,
    /// When the injection log had last been written as the last report was counted from it
    /// (`journal::last_write_ms`): while it still has, there is nothing new to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_written: Option<i64>,
}

/// Reports written before they are sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The cursor once every one of `reports` is acknowledged.
    pub until: i64,
    /// In order; an acknowledged one leaves the list.
    pub reports: Vec<UsageReport>,
    /// Whether a failure to send them was already told on stderr (told once, even with
    /// `--quiet`; later failures only without it).
    #[serde(default)]
    pub warned: bool,
}

impl UsageState {
    /// The state file of `project` on `server`.
    pub fn path(server: &str, project: &str) -> PathBuf {
        crate::paths::usage_state_file(server, project)
    }

    /// The state in `path`; a missing file is a project never reported. A file that does not
    /// parse is an error (the caller decides; nothing is sent on a guess).
    pub fn load(path: &Path) -> Result<UsageState> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{}: not a usage state", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UsageState::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes the state to `path`: temp file, fsync, rename.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self).context("serialising the usage state")?;
        crate::sys::write_atomic(path, &bytes)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Like [`UsageState::save`] without the fsync: for what only saves work when lost.
    pub fn save_quick(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self).context("serialising the usage state")?;
        crate::sys::write_atomic_nosync(path, &bytes)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Whether reports are paused at `now` (unix seconds).
    pub fn paused(&self, now: i64) -> bool {
        self.paused_until.is_some_and(|t| now < t)
    }

    /// Every pending report acknowledged: the cursor moves to where they end.
    pub fn settle(&mut self) {
        if let Some(p) = self.pending.take() {
            self.cursor = Some(self.cursor.map_or(p.until, |c| c.max(p.until)));
        }
    }
}

/// A fresh report key: time and randomness, `[0-9a-z-]`, a valid idempotency key.
pub fn new_key() -> String {
    let now = crate::sys::since_epoch();
    format!(
        "usage-{}-{:09}-{:016x}",
        now.as_secs(),
        now.subsec_nanos(),
        rand::random::<u64>()
    )
}

/// Takes the lock of `state` (a file beside it) without waiting: `None` when another
/// process holds it (another sync is reporting this project; it does the work). Released
/// when the returned file is dropped.
pub fn try_lock(state: &Path) -> Result<Option<std::fs::File>> {
    let mut name = state.as_os_str().to_owned();
    name.push(".lock");
    let lock = PathBuf::from(name);
    if let Some(dir) = lock.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .with_context(|| format!("opening {}", lock.display()))?;
    // std's advisory file lock (flock): needs Rust 1.89; the toolchain here is newer.
    #[allow(clippy::incompatible_msrv)]
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("locking {}", lock.display()))
        }
    }
}
