//! Usage reports, after the rest of a sync (docs/usage.md): per project, the reports left
//! pending by an earlier sync are sent again with their keys; else a new one is counted
//! from the injection log after the project's cursor (`helix_client::usage::build`), written
//! to disk, then sent. The cursor moves only on the server's acknowledgement (or refusal).
//! A failure never changes the sync's exit status, its cache or its pending entries.

use super::http::{Ctx, error_body, excerpt, http_client, http_error, transport_reason};
use helix_client::journal::{self, Record};
use helix_client::usage::{self, Pending, UsageState};
use helix_index_format::wire::{UsageAck, UsageReport};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The longest a report's request may take: a report never holds a sync up for long.
pub const REPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long reports stay paused after the server refused them or had no usage endpoint.
pub const PAUSE_SECS: i64 = 24 * 3600;

/// What reporting did for one project, for one line of `helix sync`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing new to report, reports paused or turned off, or another process reporting.
    Nothing,
    /// Acknowledged: the distinct entries counted.
    Reported { entries: usize },
    /// The server refuses reports for the project: dropped, paused for [`PAUSE_SECS`].
    Refused,
    /// The server refused a report as invalid, as it would every retry: dropped.
    Dropped { why: String },
    /// Not sent, kept for the next sync. `first`: the first failure of these reports (told
    /// even with `--quiet`).
    Failed { why: String, first: bool },
}

impl Outcome {
    /// The line `helix sync` prints on stderr, and whether `--quiet` prints it too.
    pub fn line(&self, project: &str) -> Option<(String, bool)> {
        match self {
            Outcome::Nothing => None,
            Outcome::Reported { entries } => Some((
                format!(
                    "{project}: reported usage of {}",
                    helix_client::human::entries(*entries as u64)
                ),
                false,
            )),
            Outcome::Refused => Some((
                format!(
                    "{project}: the server takes no usage reports (`usage = false`); none sent for a day"
                ),
                false,
            )),
            Outcome::Dropped { why } => Some((
                format!("{project}: usage report refused ({why}); dropped"),
                true,
            )),
            Outcome::Failed { why, first } => Some((
                format!("{project}: usage report not sent ({why}); kept for the next sync"),
                *first,
            )),
        }
    }
}

/// Why one report was not acknowledged.
enum Refusal {
    /// `403 usage_disabled`.
    Disabled,
    /// `404`/`405`: a server without the usage endpoint (older than this client).
    NoEndpoint(String),
    /// `400`, `413`, `422`: the report itself is refused; a retry would be too.
    Invalid(String),
    /// Anything else: unreachable, timed out, an error answer, no acknowledgement.
    Failed(String),
}

/// The injection log as one sync sees it: when it was last written, taken first, and its
/// records, read at most once and only when a project needs them.
pub(super) struct Log {
    written: Option<i64>,
    records: Option<Vec<Record>>,
}

impl Default for Log {
    fn default() -> Log {
        Log {
            written: journal::last_write_ms(),
            records: None,
        }
    }
}

impl Log {
    fn records(&mut self) -> &[Record] {
        self.records.get_or_insert_with(|| journal::read(None))
    }
}

/// Reports the usage of `ctx`'s project `project`. `log` is the injection log, looked at
/// once per sync (`None` until a project needs it).
pub(super) fn report(
    ctx: &Ctx<'_>,
    project: &str,
    log: &mut Option<Log>,
    writer: &mut Option<reqwest::blocking::Client>,
) -> Outcome {
    let path = UsageState::path(ctx.server, project);
    match usage::try_lock(&path) {
        Ok(Some(_lock)) => report_locked(ctx, project, &path, log, writer),
        Ok(None) => Outcome::Nothing,
        Err(e) => Outcome::Failed {
            why: format!("{e:#}"),
            first: false,
        },
    }
}

fn report_locked(
    ctx: &Ctx<'_>,
    project: &str,
    path: &Path,
    log: &mut Option<Log>,
    writer: &mut Option<reqwest::blocking::Client>,
) -> Outcome {
    let failed = |why: String| Outcome::Failed { why, first: false };
    let mut state = match UsageState::load(path) {
        Ok(s) => s,
        Err(e) => return failed(format!("{e:#}; delete it to start over")),
    };
    let now = helix_client::sys::now_secs();
    if state.paused(now) {
        return Outcome::Nothing;
    }
    let mut ids: HashSet<String> = HashSet::new();
    // A report left pending by an earlier sync goes first, then one of what is new.
    for _ in 0..2 {
        if state.pending.is_none() {
            match build_pending(&mut state, path, project, log) {
                Ok(true) => {}
                Ok(false) => break,
                Err(why) => return failed(why),
            }
        }
        let client = match writer {
            Some(c) => c,
            None => match http_client(ctx.server, ctx.limits, true) {
                Ok(c) => writer.insert(c),
                Err(e) => return failed(format!("{e:#}")),
            },
        };
        if let Err(outcome) = send_pending(ctx, client, project, &mut state, path, now, &mut ids) {
            return outcome;
        }
    }
    if ids.is_empty() {
        Outcome::Nothing
    } else {
        Outcome::Reported { entries: ids.len() }
    }
}

/// Counts what the log holds for `project` after the cursor into a pending report, written
/// to disk before anything is sent. `Ok(false)`: nothing new.
fn build_pending(
    state: &mut UsageState,
    path: &Path,
    project: &str,
    log: &mut Option<Log>,
) -> Result<bool, String> {
    let log = log.get_or_insert_with(Log::default);
    if log.written.is_none() || log.written == state.log_written {
        // Not written since the last report was counted: nothing new to read.
        return Ok(false);
    }
    let built = usage::build(log.records(), project, state.cursor);
    state.log_written = log.written;
    let Some(until) = built.until.filter(|_| !built.rows.is_empty()) else {
        // Nothing of this project's: remembered, so that the next sync does not read the
        // log again while it is unchanged.
        return state
            .save_quick(path)
            .map(|()| false)
            .map_err(|e| format!("{e:#}"));
    };
    state.pending = Some(Pending {
        until,
        reports: built.into_reports(),
        warned: false,
    });
    // On disk, with its key, before it is sent: a retry then counts once.
    state
        .save(path)
        .map(|()| true)
        .map_err(|e| format!("{e:#}"))
}

/// Sends the pending reports in order; on the last acknowledgement the cursor moves to
/// their end. `ids` collects the entries acknowledged. `Err`: what to tell.
fn send_pending(
    ctx: &Ctx<'_>,
    client: &reqwest::blocking::Client,
    project: &str,
    state: &mut UsageState,
    path: &Path,
    now: i64,
    ids: &mut HashSet<String>,
) -> Result<(), Outcome> {
    let failed = |e: anyhow::Error| Outcome::Failed {
        why: format!("{e:#}"),
        first: false,
    };
    while let Some(pending) = state.pending.as_mut() {
        let Some(next) = pending.reports.first() else {
            break;
        };
        match send(ctx, client, project, next) {
            Ok(()) => {
                ids.extend(next.rows.iter().map(|r| r.id.clone()));
                pending.reports.remove(0);
                if !pending.reports.is_empty() {
                    state.save(path).map_err(failed)?;
                }
            }
            Err(Refusal::Disabled) => {
                // Dropped: the counts up to its end are never sent; the cursor moves past.
                state.settle();
                state.paused_until = Some(now + PAUSE_SECS);
                state.save(path).map_err(failed)?;
                return Err(Outcome::Refused);
            }
            Err(Refusal::Invalid(why)) => {
                // Never accepted as it is: its counts are given up, or every sync would fail.
                state.settle();
                state.save(path).map_err(failed)?;
                return Err(Outcome::Dropped { why });
            }
            Err(Refusal::NoEndpoint(why)) => {
                // Kept, and not offered again for a day: an older server would refuse each sync.
                state.paused_until = Some(now + PAUSE_SECS);
                return Err(warn(state, path, why));
            }
            Err(Refusal::Failed(why)) => return Err(warn(state, path, why)),
        }
    }
    state.settle();
    state.save(path).map_err(failed)
}

/// A failure to send the pending reports: told once even with `--quiet` (remembered in the
/// state), later only without it.
fn warn(state: &mut UsageState, path: &Path, why: String) -> Outcome {
    let first = state.pending.as_ref().is_some_and(|p| !p.warned);
    if let Some(p) = state.pending.as_mut() {
        p.warned = true;
    }
    let _ = state.save(path);
    Outcome::Failed { why, first }
}

/// Posts one report; `Ok` on the server's acknowledgement of its key.
fn send(
    ctx: &Ctx<'_>,
    client: &reqwest::blocking::Client,
    project: &str,
    report: &UsageReport,
) -> Result<(), Refusal> {
    let url = format!("{}/v1/projects/{project}/usage", ctx.server);
    let resp = ctx
        .req(client.post(&url).timeout(REPORT_TIMEOUT))
        .json(report)
        .send()
        .map_err(|e| {
            Refusal::Failed(if e.is_timeout() {
                format!("no answer within {} s", REPORT_TIMEOUT.as_secs())
            } else {
                transport_reason(&e)
            })
        })?;
    let status = resp.status();
    let text = resp.text().unwrap_or_default();
    if status.is_success() {
        return match serde_json::from_str::<UsageAck>(&text) {
            Ok(ack) if ack.key == report.key => Ok(()),
            _ => Err(Refusal::Failed(format!(
                "the server answered {status} without an acknowledgement{}",
                excerpt(&text)
            ))),
        };
    }
    let code = error_body(&text).map(|(c, _)| c);
    match (status.as_u16(), code.as_deref()) {
        (403, Some("usage_disabled")) => Err(Refusal::Disabled),
        (400 | 413 | 422, _) => Err(Refusal::Invalid(http_error(status, &text))),
        (404 | 405, _) => Err(Refusal::NoEndpoint(format!(
            "{}; a server without usage reports? Not offered again for a day",
            http_error(status, &text)
        ))),
        _ => Err(Refusal::Failed(http_error(status, &text))),
    }
}
