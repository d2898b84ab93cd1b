//! Usage reports (docs/usage.md): what `helix sync` tells a server about how this machine's
//! agents used one project's entries, counted from the injection log (`journal.rs`) — per
//! UTC day and entry: injections by hook and agent, distinct sessions, reads in full after
//! an injection — and nothing else: no prompt, path, command or error text. `build` is pure
//! (records in, rows out); `state.rs` keeps, per server and project, the cursor into the log
//! and the reports written but not yet acknowledged. The sending is `helix-net`'s
//! (`sync/usage.rs`).

mod state;
#[cfg(test)]
mod tests;

pub use state::{Pending, UsageState, new_key, try_lock};

use crate::journal::Record;
use helix_index_format::wire::{MAX_USAGE_NAME, MAX_USAGE_ROWS, UsageCount, UsageReport, UsageRow};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The hook name of a journal record that says an agent read an entry in full (`helix read`,
/// MCP `read`): not an injection.
pub const READ_HOOK: &str = "read";

/// How long after an injection a read in the same place still counts for it.
pub const READ_WINDOW_MS: i64 = 4 * 3600 * 1000;

/// Longest entry id a row may carry, bytes (the server's rule).
const MAX_ID: usize = 512;

/// Most a count of one row may be (the server's rule; no day of one machine comes near it).
const MAX_COUNT: u32 = 1_000_000;

/// The agent a record names; records from before agents were named are Claude Code's.
fn agent_of(r: &Record) -> &str {
    r.agent.as_deref().unwrap_or("claude")
}

/// A hook or agent name as a row carries it: helix's own short names; anything else (a
/// record written by hand, a future hook) is `other`, so a row never carries free text.
fn name(s: &str) -> &str {
    let ok = !s.is_empty()
        && s.len() <= MAX_USAGE_NAME
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok { s } else { "other" }
}

/// Whether `id` can be an entry's id as the server checks it: a relative `/`-separated path
/// of a Markdown file, without control characters. Anything else is left out, so one odd
/// record never makes a whole report refused.
fn plausible_id(id: &str) -> bool {
    let ext = id.rsplit_once('.').map_or("", |(_, e)| e);
    !id.is_empty()
        && id.len() <= MAX_ID
        && !id.chars().any(|c| c.is_control() || c == '\\')
        && !id.split('/').any(|c| c.is_empty() || c == "." || c == "..")
        && ["md", "markdown", "mdc"]
            .iter()
            .any(|m| ext.eq_ignore_ascii_case(m))
}

/// What a session is for counting: the agent's session id, or, for a record without one, the
/// record itself (each counts as a session of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Session<'a> {
    Named(&'a str),
    Record(usize),
}

/// An injection of one entry, for attributing later reads to it.
struct Injection<'a> {
    t: i64,
    session: Session<'a>,
    record: &'a Record,
}

#[derive(Default)]
struct Acc {
    injections: BTreeMap<(String, String), u32>,
    sessions: u32,
    reads: u32,
}

/// The counts of one project since a cursor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Built {
    /// One row per (UTC day, entry id) with something to say, by day then id.
    pub rows: Vec<UsageRow>,
    /// `t` of the newest record after the cursor (of any project): the cursor once these
    /// rows are acknowledged. `None` when the log holds nothing after the cursor.
    pub until: Option<i64>,
}

impl Built {
    /// The rows as reports of at most [`MAX_USAGE_ROWS`] rows, each with a fresh key.
    pub fn into_reports(self) -> Vec<UsageReport> {
        let mut out = Vec::new();
        let mut rows = self.rows.into_iter().peekable();
        while rows.peek().is_some() {
            out.push(UsageReport {
                key: new_key(),
                rows: rows.by_ref().take(MAX_USAGE_ROWS).collect(),
            });
        }
        out
    }

    /// Distinct entries the rows name.
    pub fn entries(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.id.as_str())
            .collect::<HashSet<_>>()
            .len()
    }
}

/// The counts of `project` in `records` (oldest first, as `journal::read` gives them) newer
/// than `after` (a record's `t`; `None`: all of them).
///
/// - An injection record (any hook but [`READ_HOOK`]) counts once per entry of the project
///   it gave, under its hook and agent (none named: `claude`), on its UTC day.
/// - `sessions` counts the distinct sessions given the entry that day; a record without a
///   session is a session of its own. A session already counted for that day and entry
///   before the cursor is not counted again.
/// - A read counts for the latest injection of the same entry at most [`READ_WINDOW_MS`]
///   before it, in the same session when the read names one, else in the same place (the
///   injection's directory or file inside the read's directory, or the read's directory
///   inside the injection's; an ambient file relative to its repository matches any
///   place) by the same agent when the read names one; it counts once per
///   (session, entry), on the read's UTC day. A read that follows no injection counts
///   nothing.
///
/// Records at or before the cursor are looked at only so that sessions and reads are not
/// counted twice across reports.
pub fn build(records: &[Record], project: &str, after: Option<i64>) -> Built {
    let prefix = format!("{project}:");
    let mut rows: BTreeMap<(String, &str), Acc> = BTreeMap::new();
    let mut day_sessions: HashSet<(i64, &str, Session<'_>)> = HashSet::new();
    let mut read_once: HashSet<(Session<'_>, &str)> = HashSet::new();
    let mut injected: HashMap<&str, Vec<Injection<'_>>> = HashMap::new();
    let mut until: Option<i64> = None;
    let mut days: (i64, String) = (i64::MIN, String::new());
    for (i, r) in records.iter().enumerate() {
        let new = after.is_none_or(|a| r.t > a);
        if new {
            until = Some(until.map_or(r.t, |u| u.max(r.t)));
        }
        let day = r.t.div_euclid(86_400_000);
        if days.0 != day {
            days = (day, helix_index_format::format_day(day * 86_400));
        }
        let ids = r
            .entries
            .iter()
            .filter_map(|e| e.id.strip_prefix(prefix.as_str()))
            .filter(|id| plausible_id(id));
        if r.hook == READ_HOOK {
            for id in ids {
                let Some(session) = attribute(r, injected.get(id)) else {
                    continue;
                };
                if read_once.insert((session, id)) && new {
                    rows.entry((days.1.clone(), id)).or_default().reads += 1;
                }
            }
            continue;
        }
        let session = r
            .session
            .as_deref()
            .map_or(Session::Record(i), Session::Named);
        for id in ids {
            injected.entry(id).or_default().push(Injection {
                t: r.t,
                session,
                record: r,
            });
            let first = day_sessions.insert((day, id, session));
            if !new {
                continue;
            }
            let acc = rows.entry((days.1.clone(), id)).or_default();
            *acc.injections
                .entry((name(&r.hook).to_string(), name(agent_of(r)).to_string()))
                .or_default() += 1;
            if first {
                acc.sessions += 1;
            }
        }
    }
    let rows = rows
        .into_iter()
        .map(|((day, id), acc)| UsageRow {
            day,
            id: id.to_string(),
            injections: acc
                .injections
                .into_iter()
                .map(|((hook, agent), n)| UsageCount {
                    hook,
                    agent,
                    n: n.min(MAX_COUNT),
                })
                .collect(),
            sessions: acc.sessions.min(MAX_COUNT),
            reads: acc.reads.min(MAX_COUNT),
        })
        .collect();
    Built { rows, until }
}

/// The session a read counts for (see [`build`]), if any.
fn attribute<'a>(read: &Record, before: Option<&Vec<Injection<'a>>>) -> Option<Session<'a>> {
    let found = before?
        .iter()
        .rev()
        .take_while(|inj| read.t - inj.t <= READ_WINDOW_MS)
        .filter(|inj| inj.t <= read.t)
        .find(|inj| match read.session.as_deref() {
            Some(s) => inj.session == Session::Named(s),
            None => {
                same_place(read, inj.record)
                    && read
                        .agent
                        .as_deref()
                        .is_none_or(|a| a == agent_of(inj.record))
            }
        })?;
    Some(found.session)
}

/// Whether an injection happened where a read was made: its directory (prompt, error) or
/// file (ambient) inside the read's directory, or the read's directory inside its directory.
/// Ambient logs a file of the repository relative to it, which names no place: such an
/// injection matches a read anywhere.
fn same_place(read: &Record, inj: &Record) -> bool {
    let Some(dir) = read.cwd.as_deref() else {
        return false;
    };
    match (inj.cwd.as_deref(), inj.file.as_deref()) {
        (Some(c), _) => inside(c, dir) || inside(dir, c),
        (None, Some(f)) if f.starts_with('/') => inside(f, dir),
        (None, Some(_)) => true,
        (None, None) => false,
    }
}

/// Whether `path` is `dir` or below it (by the path's text; both absolute).
fn inside(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}
