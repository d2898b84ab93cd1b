//! Usage reports (docs/usage.md): what a client tells the server about how its hooks used
//! a project's entries — counts only, never a prompt, path, command or error text — and the
//! summary the server gives back. `POST /v1/projects/{p}/usage` takes a [`UsageReport`] and
//! answers a [`UsageAck`]; `GET /v1/projects/{p}/usage?days=N` answers a [`UsageSummary`].

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most rows one report may carry; a client with more sends several reports.
pub const MAX_USAGE_ROWS: usize = 5_000;

/// Longest hook or agent name a row may name (they are helix's own short names).
pub const MAX_USAGE_NAME: usize = 32;

/// One client's report for one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageReport {
    /// Makes the report idempotent: the server counts a key once, and answers a repeat
    /// with the first answer (`duplicate: true`). [`super::is_valid_idempotency_key`].
    pub key: String,
    pub rows: Vec<UsageRow>,
}

/// What happened to one entry on one day (UTC) on the reporting machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRow {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    /// The entry id (its path in the project, `topic/slug.md`).
    pub id: String,
    /// Injections of the entry by hook and agent; each (hook, agent) pair at most once.
    #[serde(default)]
    pub injections: Vec<UsageCount>,
    /// Distinct agent sessions that were given the entry that day.
    #[serde(default)]
    pub sessions: u32,
    /// Times an agent then read the entry in full (MCP `read`, `helix read`) after it was
    /// injected in the same session.
    #[serde(default)]
    pub reads: u32,
}

/// Injections by one hook (`prompt`, `error`, `ambient`) for one agent (`claude`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageCount {
    pub hook: String,
    pub agent: String,
    pub n: u32,
}

/// The answer to a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageAck {
    pub key: String,
    /// Rows counted (the first time the key was seen).
    pub rows: u32,
    /// True when the key had been counted before: nothing was added this time.
    #[serde(default)]
    pub duplicate: bool,
}

/// A project's usage over the last `days` days (`GET /v1/projects/{p}/usage?days=N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageSummary {
    pub project: String,
    pub days: u32,
    /// The first day counted, `YYYY-MM-DD` (UTC); today is the last.
    pub since: String,
    /// Distinct reporting token names over the window.
    pub people: u32,
    /// Every entry of the served artifact injected or read in the window, most injected
    /// first (then by id).
    pub entries: Vec<EntryUsage>,
    /// Entries of the served artifact (retired and superseded ones left out) with no
    /// injection in the window, by id: the candidates to improve or retire.
    pub not_injected: Vec<UnusedEntry>,
}

/// One entry's usage over the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryUsage {
    pub id: String,
    pub title: String,
    pub injections: u64,
    /// Distinct reporting token names it was injected for.
    pub people: u32,
    pub sessions: u64,
    pub reads: u64,
    /// The last day with an injection, `YYYY-MM-DD`; empty when only read.
    pub last_injected: String,
    pub by_hook: BTreeMap<String, u64>,
    pub by_agent: BTreeMap<String, u64>,
}

/// An entry nobody was given in the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnusedEntry {
    pub id: String,
    pub title: String,
    /// The entry's date, `YYYY-MM-DD` (a new entry is not yet a candidate to retire).
    pub date: String,
}
