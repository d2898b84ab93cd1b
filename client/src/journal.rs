//! The injection log: one JSON line per hook call that added context (time, session, hook,
//! where, the characters added, and per entry its score and the signal that let it
//! through), so anyone can see afterwards what the model was shown and why. Written by the
//! hooks, read by `helix log`. Per user, bounded: `$XDG_CACHE_HOME/helix/injections.log`
//! plus the previous `injections.log.1`, each at most [`MAX_BYTES`].
//!
//! Writing must never slow or break a hook: one `O_APPEND` write to a file opened once, no
//! fsync, every error ignored (the record is dropped).

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A log file is rotated (to `.1`, replacing the older one) once it passes this size.
pub const MAX_BYTES: u64 = 512 * 1024;

/// One hook call that added context (or whose context the session budget kept back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Unix milliseconds.
    pub t: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The hook's name (`prompt`, `error`, `ambient`).
    pub hook: String,
    /// The agent that ran it (`claude`, `codex`, …); records written before agents were
    /// named have none, and were Claude Code's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The session's working directory, for prompt and error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The file read or edited, for ambient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub entries: Vec<Injected>,
    /// Characters of context this call added (the text the agent was given, its entries
    /// and every other line); 0 in records written before they were counted.
    #[serde(default)]
    pub chars: u64,
    /// Characters of context the session's budget kept back: the call printed nothing
    /// (`chars` is 0, `entries` empty). 0 for a call that spoke.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub withheld: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One injected entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Injected {
    /// `project:id`.
    pub id: String,
    pub score: f32,
    /// What let it through (`separation`, `coverage`, `file-name`, `source`, …).
    pub signal: String,
    /// Gate points (prompt and error hooks; 0 where no points are counted).
    #[serde(default)]
    pub points: f32,
}

/// The current log file.
pub fn path() -> PathBuf {
    crate::paths::cache_dir().join("injections.log")
}

fn previous(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}

/// Appends `record` to the log (best effort: any error drops it).
pub fn append(record: &Record) {
    let _ = append_to(&path(), record);
}

/// Appends a `read` record (`usage::READ_HOOK`): an agent read `entry` (`project:id`) in full
/// with `helix read` or MCP `read`, in `cwd`, as `agent` when known. No session: neither
/// knows the agent's; usage reports attribute the read to an injection (`usage::build`).
/// Best effort, as every append.
pub fn append_read(entry: &str, cwd: Option<&Path>, agent: Option<&str>) {
    // Built from JSON, so the record's other fields keep their defaults.
    let record = serde_json::json!({
        "t": crate::sys::now_ms(),
        "hook": crate::usage::READ_HOOK,
        "agent": agent,
        "cwd": cwd.map(|c| c.to_string_lossy()),
        "entries": [{"id": entry, "score": 0.0, "signal": "read"}],
    });
    if let Ok(r) = serde_json::from_value::<Record>(record) {
        append(&r);
    }
}

fn append_to(path: &Path, record: &Record) -> std::io::Result<()> {
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    };
    let mut file = match open() {
        Ok(f) => f,
        Err(_) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            open()?
        }
    };
    if file.metadata()?.len() > MAX_BYTES {
        // Another hook may rotate at the same moment: at worst a few records land in the
        // older file, none is torn.
        std::fs::rename(path, previous(path))?;
        file = open()?;
    }
    // One write call: appends of a line never interleave with another process's.
    file.write_all(line.as_bytes())
}

/// When the log was last written, Unix milliseconds (the newer of its two files); `None`
/// when there is none. No record is newer: each is stamped before it is written.
pub fn last_write_ms() -> Option<i64> {
    let path = path();
    [previous(&path), path]
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .max()
}

/// Every record of the log, oldest first (unparseable lines skipped), optionally only
/// `session`'s.
pub fn read(session: Option<&str>) -> Vec<Record> {
    read_from(&path(), session)
}

fn read_from(path: &Path, session: Option<&str>) -> Vec<Record> {
    let mut out = Vec::new();
    for p in [previous(path), path.to_path_buf()] {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for line in text.lines() {
            let Ok(r) = serde_json::from_str::<Record>(line) else {
                continue;
            };
            if session.is_none_or(|s| r.session.as_deref() == Some(s)) {
                out.push(r);
            }
        }
    }
    out.sort_by_key(|r| r.t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: i64, session: &str) -> Record {
        Record {
            t: i,
            session: Some(session.into()),
            hook: "prompt".into(),
            agent: Some("codex".into()),
            cwd: Some("/repo".into()),
            file: None,
            entries: vec![Injected {
                id: format!("p:t/e{i}.md"),
                score: 1.5,
                signal: "separation".into(),
                points: 4.0,
            }],
            chars: 120,
            withheld: 0,
        }
    }

    /// However much is written, the log holds at most two files of about MAX_BYTES, and
    /// the newest records survive.
    #[test]
    fn the_log_stays_bounded_and_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("injections.log");
        let n = 20_000;
        for i in 0..n {
            append_to(&path, &record(i, if i % 2 == 0 { "a" } else { "b" })).unwrap();
        }
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let one = serde_json::to_string(&record(n, "a")).unwrap().len() as u64 + 1;
        assert!(size(&path) <= MAX_BYTES + one, "{}", size(&path));
        assert!(size(&previous(&path)) <= MAX_BYTES + one);
        assert!(size(&path) + size(&previous(&path)) > MAX_BYTES);
        let all = read_from(&path, None);
        assert_eq!(all.last().unwrap().t, n - 1);
        assert!(all.len() < n as usize && all.len() > 1000);
        let b = read_from(&path, Some("b"));
        assert!(b.iter().all(|r| r.session.as_deref() == Some("b")) && !b.is_empty());
        // Records are whole JSON lines: every line of both files parses.
        for p in [&path, &previous(&path)] {
            let text = std::fs::read_to_string(p).unwrap();
            assert!(
                text.lines()
                    .all(|l| serde_json::from_str::<Record>(l).is_ok())
            );
        }
    }

    /// Records written before characters were counted still read, with none.
    #[test]
    fn older_records_read_with_no_characters() {
        let r: Record = serde_json::from_str(
            r#"{"t":1,"session":"s","hook":"prompt","entries":[{"id":"p:a.md","score":1.0,"signal":"source"}]}"#,
        )
        .unwrap();
        assert_eq!((r.chars, r.withheld, r.entries.len()), (0, 0, 1));
        let line = serde_json::to_string(&record(2, "s")).unwrap();
        assert!(
            line.contains(r#""chars":120"#) && !line.contains("withheld"),
            "{line}"
        );
    }

    #[test]
    fn an_unwritable_log_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be.
        let path = dir.path().join("injections.log");
        std::fs::create_dir(&path).unwrap();
        assert!(append_to(&path, &record(1, "a")).is_err());
        assert!(read_from(&path, None).is_empty());
    }
}
