//! `helix log`: what the hooks injected, when and why, from the injection log
//! (`journal.rs`). Oldest first; `--session` for one agent session, `--agent` for one
//! agent's, `--json` for scripts.

use crate::journal;
use anyhow::Result;
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
    /// At most this many (the newest) calls.
    #[arg(long, short = 'n', default_value_t = 50)]
    pub limit: usize,
    /// Print `{"injections": [...]}` JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let mut records = journal::read(a.session.as_deref());
    if let Some(agent) = &a.agent {
        records.retain(|r| agent_of(r) == agent);
    }
    let skip = records.len().saturating_sub(a.limit);
    records.drain(..skip);
    if a.json {
        super::print_json(&json!({ "injections": records }));
        return Ok(ExitCode::SUCCESS);
    }
    if records.is_empty() {
        eprintln!(
            "helix: nothing injected{} yet (log: {})",
            a.session
                .as_deref()
                .map(|s| format!(" in session {s}"))
                .unwrap_or_default(),
            journal::path().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for r in &records {
        let secs = r.t.div_euclid(1000);
        let time = format!(
            "{} {:02}:{:02}:{:02}",
            helix_index_format::format_day(secs),
            secs.rem_euclid(86_400) / 3600,
            secs.rem_euclid(3600) / 60,
            secs.rem_euclid(60)
        );
        let place = match (&r.file, &r.cwd) {
            (Some(f), _) => format!("file {f}"),
            (None, Some(c)) => format!("cwd {c}"),
            (None, None) => String::new(),
        };
        println!(
            "{time}  {:<7} {:<7} session {}  {place}",
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

/// The agent of a record: records from before agents were named are Claude Code's.
fn agent_of(r: &journal::Record) -> &str {
    r.agent.as_deref().unwrap_or("claude")
}
