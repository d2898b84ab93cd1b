//! `helix usage [--project P] [--days N] [--unused] [--json]`: the server's summary of a
//! project's usage reports (`GET /v1/projects/{p}/usage?days=N`, docs/usage.md) as tables
//! for people: per entry injections, people, sessions, reads and the last day injected; the
//! entries injected but never read; with `--unused`, the entries nobody was given.

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use helix_client::commands::usage::Args;
use helix_index_format::wire::{ErrorBody, UsageSummary};

use crate::sync::{NetLimits, http_client, transport_reason};

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = helix_client::config::require(&helix_client::commands::cwd()?)?;
    let Some(server) = cfg.server.as_deref() else {
        bail!(
            "{} names no server: usage is counted by a helix server from its clients' reports",
            cfg.file.display()
        );
    };
    let project = helix_client::pending::project_for(&cfg, a.project.as_deref())?;
    let token = helix_client::config::token_for(server, project)?;
    let limits = NetLimits::load()?;
    let http = http_client(server, &limits, false)?;
    let rb = http.get(format!(
        "{server}/v1/projects/{project}/usage?days={}",
        a.days
    ));
    let rb = match &token {
        Some(t) => rb.bearer_auth(t),
        None => rb,
    };
    let resp = rb.send().map_err(|e| {
        anyhow!(
            "usage of {project}: cannot reach {server}: {}",
            transport_reason(&e)
        )
    })?;
    let status = resp.status();
    let text = resp.text().unwrap_or_default();
    if !status.is_success() {
        bail!(
            "usage of {project}: {}",
            refusal(status, &text, server, project, token.is_some())
        );
    }
    let summary: UsageSummary = serde_json::from_str(&text).with_context(|| {
        format!("usage of {project}: {server} answered {status} without a usage summary")
    })?;
    if a.json {
        // The server's own JSON, every field of it.
        let v: serde_json::Value = serde_json::from_str(&text)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if a.unused {
        print_unused(&summary);
    } else {
        print_used(&summary);
    }
    Ok(ExitCode::SUCCESS)
}

/// What an error answer means for the person who asked.
fn refusal(
    status: reqwest::StatusCode,
    body: &str,
    server: &str,
    project: &str,
    has_token: bool,
) -> String {
    let (code, message) = match serde_json::from_str::<ErrorBody>(body) {
        Ok(b) => (b.error.code, b.error.message),
        Err(_) => (String::new(), String::new()),
    };
    let answered = if code.is_empty() {
        format!("{server} answered {status}")
    } else {
        format!("{server} answered {} {code}: {message}", status.as_u16())
    };
    match (status.as_u16(), code.as_str()) {
        (403, "usage_disabled") => format!(
            "{answered} (the server keeps no usage for {project}: `usage = false` in its config)"
        ),
        (401, _) if !has_token => format!(
            "{answered} (no token is configured for {server}: add one to $XDG_CONFIG_HOME/helix/config.toml, or set HELIX_TOKEN)"
        ),
        (401, _) => format!("{answered} (the server does not know the token: is it current?)"),
        (403, _) => format!("{answered} (the token may not read {project})"),
        (404, _) => format!(
            "{answered} (is `{project}` a project of {server}? A server older than this client has no usage endpoint)"
        ),
        _ => answered,
    }
}

/// A text cut to `max` characters, with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn window(s: &UsageSummary) -> String {
    format!(
        "the last {} day{} (since {}, UTC)",
        s.days,
        if s.days == 1 { "" } else { "s" },
        s.since
    )
}

fn print_used(s: &UsageSummary) {
    if s.entries.is_empty() {
        println!(
            "{}: no injections reported in {}; `helix usage --unused` lists the entries",
            s.project,
            window(s)
        );
        return;
    }
    println!(
        "{}: {} used in {} by {} {}",
        s.project,
        helix_client::human::entries(s.entries.len() as u64),
        window(s),
        s.people,
        if s.people == 1 { "person" } else { "people" }
    );
    let width = s
        .entries
        .iter()
        .map(|e| e.id.chars().count().min(60))
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{:<width$}  {:>10}  {:>6}  {:>8}  {:>5}  {:<13}  title",
        "entry", "injections", "people", "sessions", "reads", "last injected"
    );
    for e in &s.entries {
        println!(
            "{:<width$}  {:>10}  {:>6}  {:>8}  {:>5}  {:<13}  {}",
            cut(&e.id, 60),
            e.injections,
            e.people,
            e.sessions,
            e.reads,
            if e.last_injected.is_empty() {
                "-"
            } else {
                &e.last_injected
            },
            cut(&e.title, 60)
        );
    }
    let unread: Vec<_> = s
        .entries
        .iter()
        .filter(|e| e.injections > 0 && e.reads == 0)
        .collect();
    println!();
    if unread.is_empty() {
        println!("injected but never read: none");
        return;
    }
    println!(
        "injected but never read ({}): given to agents, never opened in full",
        unread.len()
    );
    for e in unread {
        println!(
            "  {:<width$}  {:>6} injection{}  {}",
            cut(&e.id, 60),
            e.injections,
            if e.injections == 1 { " " } else { "s" },
            cut(&e.title, 60)
        );
    }
}

fn print_unused(s: &UsageSummary) {
    if s.not_injected.is_empty() {
        println!(
            "{}: every entry was given to an agent in {}",
            s.project,
            window(s)
        );
        return;
    }
    println!(
        "{}: {} no agent was given in {}",
        s.project,
        helix_client::human::entries(s.not_injected.len() as u64),
        window(s)
    );
    let width = s
        .not_injected
        .iter()
        .map(|e| e.id.chars().count().min(60))
        .max()
        .unwrap_or(5)
        .max(5);
    println!("{:<width$}  {:<10}  title", "entry", "date");
    for e in &s.not_injected {
        println!(
            "{:<width$}  {:<10}  {}",
            cut(&e.id, 60),
            if e.date.is_empty() { "-" } else { &e.date },
            cut(&e.title, 60)
        );
    }
}
