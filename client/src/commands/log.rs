//! `helix log`: what the hooks injected, when and why, from the injection log
//! (`journal.rs`). Oldest first; `--session` for one agent session, `--agent` for one
//! agent's, `--json` for scripts; `--stats` for the context each session was given, against
//! the session budget (`hook::budget`).

use crate::journal::{self, Record};
use anyhow::Result;
use serde::Serialize;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this agent session's injections.
    #[arg(long)]
    pub session: Option<String>,
    /// Only this agent's injections (`claude`, `codex`, `copilot`, `gemini`, `cursor`).
    #[arg(long)]
    pub agent: Option<String>,
    /// At most this many (the newest) calls, or sessions with `--stats`.
    #[arg(long, short = 'n', default_value_t = 50)]
    pub limit: usize,
    /// Print `{"injections": [...]}` JSON (with `--stats`: `{"sessions": [...], "totals": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// Per session, newest first: the hook calls that injected, their entries and
    /// characters, and whether the session budget withheld any; then totals, mean and p95.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let mut records = journal::read(a.session.as_deref());
    if let Some(agent) = &a.agent {
        records.retain(|r| agent_of(r) == agent);
    }
    if a.stats {
        return stats(&records, &a);
    }
    let skip = records.len().saturating_sub(a.limit);
    records.drain(..skip);
    if a.json {
        super::print_json(&json!({ "injections": records }));
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        nothing(&a);
        return Ok(ExitCode::SUCCESS);
    }
    for r in &records {
        let place = match (&r.file, &r.cwd) {
            (Some(f), _) => format!("  file {f}"),
            (None, Some(c)) => format!("  cwd {c}"),
            (None, None) => String::new(),
        };
        let size = match (r.chars, r.withheld) {
            (_, w) if w > 0 => format!("  withheld {w} chars (session budget)"),
            (0, _) => String::new(),
            (c, _) => format!("  {c} chars"),
        };
        println!(
            "{}  {:<7} {:<7} session {}{place}{size}",
            time(r.t),
            r.hook,
            agent_of(r),
            r.session.as_deref().unwrap_or("-")
        );
        for e in &r.entries {
            let points = if e.points != 0.0 {
                format!(", {:.2} points", e.points)
            } else {
                String::new()
            };
            println!("    {}  (score {:.2}, {}{points})", e.id, e.score, e.signal);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn nothing(a: &Args) {
    eprintln!(
        "helix: nothing injected{} yet (log: {})",
        a.session
            .as_deref()
            .map(|s| format!(" in session {s}"))
            .unwrap_or_default(),
        journal::path().display()
    );
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of Unix milliseconds.
fn time(t: i64) -> String {
    let secs = t.div_euclid(1000);
    format!(
        "{} {:02}:{:02}:{:02}",
        helix_index_format::format_day(secs),
        secs.rem_euclid(86_400) / 3600,
        secs.rem_euclid(3600) / 60,
        secs.rem_euclid(60)
    )
}

/// What one session was given, from its records.
#[derive(Debug, Default, Serialize, PartialEq)]
struct Session {
    session: String,
    agent: String,
    /// Its first record, Unix milliseconds.
    start: i64,
    /// Hook calls that gave it context.
    calls: u64,
    /// Entries among them.
    entries: u64,
    /// Characters of context it was given.
    chars: u64,
    /// Characters the session budget kept back (the calls it withheld).
    withheld: u64,
    /// Whether the budget withheld anything.
    capped: bool,
}

/// Sessions, mean and p95 over them: what `--stats` prints.
#[derive(Debug, Default, Serialize, PartialEq)]
struct Totals {
    sessions: u64,
    calls: u64,
    entries: u64,
    chars: u64,
    capped: u64,
    mean_chars: f64,
    p95_chars: u64,
}

/// Every session of `records` (oldest first), newest first. Records without a session (a
/// `helix read`, an agent that sends no session id) belong to none.
fn sessions(records: &[Record]) -> Vec<Session> {
    let mut out: Vec<Session> = Vec::new();
    for r in records {
        let Some(id) = r.session.as_deref() else {
            continue;
        };
        let at = match out.iter().position(|s| s.session == id) {
            Some(at) => at,
            None => {
                out.push(Session {
                    session: id.to_string(),
                    agent: agent_of(r).to_string(),
                    start: r.t,
                    ..Session::default()
                });
                out.len() - 1
            }
        };
        let s = &mut out[at];
        s.calls += u64::from(r.chars > 0 || !r.entries.is_empty());
        s.entries += r.entries.len() as u64;
        s.chars += r.chars;
        s.withheld += r.withheld;
        s.capped |= r.withheld > 0;
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.start));
    out
}

fn totals(sessions: &[Session]) -> Totals {
    let mut chars: Vec<u64> = sessions.iter().map(|s| s.chars).collect();
    chars.sort_unstable();
    let n = sessions.len() as u64;
    let sum = chars.iter().sum::<u64>();
    Totals {
        sessions: n,
        calls: sessions.iter().map(|s| s.calls).sum(),
        entries: sessions.iter().map(|s| s.entries).sum(),
        chars: sum,
        capped: sessions.iter().filter(|s| s.capped).count() as u64,
        mean_chars: if n == 0 { 0.0 } else { sum as f64 / n as f64 },
        p95_chars: p95(&chars),
    }
}

/// The 95th percentile of sorted values, nearest rank (0 for none).
fn p95(sorted: &[u64]) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() * 95).div_ceil(100);
    sorted[rank.max(1) - 1]
}

fn stats(records: &[Record], a: &Args) -> Result<ExitCode> {
    let mut all = sessions(records);
    all.truncate(a.limit);
    let t = totals(&all);
    if a.json {
        super::print_json(&json!({ "sessions": all, "totals": t }));
        return Ok(ExitCode::SUCCESS);
    }
    if all.is_empty() {
        nothing(a);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<19}  {:<7} {:>5} {:>7} {:>7}  session",
        "start", "agent", "calls", "entries", "chars"
    );
    for s in &all {
        let capped = if s.capped {
            format!("  (budget reached: {} chars withheld)", s.withheld)
        } else {
            String::new()
        };
        println!(
            "{}  {:<7} {:>5} {:>7} {:>7}  {}{capped}",
            time(s.start),
            s.agent,
            s.calls,
            s.entries,
            s.chars,
            s.session
        );
    }
    println!(
        "{} sessions: {} calls, {} entries, {} chars; per session mean {:.0}, p95 {} chars; {} reached the budget",
        t.sessions, t.calls, t.entries, t.chars, t.mean_chars, t.p95_chars, t.capped
    );
    Ok(ExitCode::SUCCESS)
}

/// The agent of a record: records from before agents were named are Claude Code's.
fn agent_of(r: &Record) -> &str {
    r.agent.as_deref().unwrap_or("claude")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: i64, session: Option<&str>, chars: u64, entries: usize, withheld: u64) -> Record {
        serde_json::from_value(json!({
            "t": t, "session": session, "hook": "prompt", "chars": chars, "withheld": withheld,
            "entries": (0..entries)
                .map(|i| json!({"id": format!("p:e{i}.md"), "score": 1.0, "signal": "source"}))
                .collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn sessions_sum_their_calls_newest_first() {
        let records = [
            rec(1, Some("a"), 300, 1, 0),
            rec(2, Some("b"), 100, 0, 0),
            rec(3, Some("a"), 200, 2, 0),
            rec(4, Some("a"), 0, 0, 900),
            rec(5, None, 0, 1, 0),
            // Written before characters were counted: a call, its entries, no chars.
            rec(6, Some("b"), 0, 1, 0),
        ];
        let s = sessions(&records);
        assert_eq!(
            s.iter().map(|s| s.session.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        let a = &s[1];
        assert_eq!(
            (a.calls, a.entries, a.chars, a.withheld, a.capped),
            (2, 3, 500, 900, true)
        );
        assert_eq!((s[0].calls, s[0].chars, s[0].capped), (2, 100, false));
        let t = totals(&s);
        assert_eq!((t.sessions, t.calls, t.chars, t.capped), (2, 4, 600, 1));
        assert_eq!((t.mean_chars, t.p95_chars), (300.0, 500));
    }

    #[test]
    fn p95_is_the_nearest_rank() {
        assert_eq!(p95(&[]), 0);
        assert_eq!(p95(&[7]), 7);
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(p95(&v), 95);
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(p95(&v), 10);
    }
}
