//! `helix review list|approve|reject`: the proposals API (docs/http-api.md, Proposals) for a
//! reviewer, with the followed project's server and a token with the `review` scope
//! (`HELIX_REVIEW_TOKEN`, else the token `helix sync` uses).

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use helix_client::commands::review::{Action, Args};
use helix_index_format::wire::{ErrorBody, ProposalInfo};
use serde_json::Value;

use crate::sync::{NetLimits, http_client, transport_reason};

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = helix_client::config::require(&helix_client::commands::cwd()?)?;
    let Some(server) = cfg.server.as_deref() else {
        bail!(
            "{} names no server: proposals exist only on a helix server in review mode",
            cfg.file.display()
        );
    };
    let project = helix_client::pending::project_for(&cfg, a.project.as_deref())?;
    let token = match std::env::var("HELIX_REVIEW_TOKEN") {
        Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
        _ => helix_client::config::token_for(server, project)?,
    };
    let limits = NetLimits::load()?;
    let http = http_client(server, &limits, true)?;
    let base = format!("{server}/v1/projects/{project}/proposals");
    let (what, rb) = match &a.action {
        Action::List { all } => (
            "listing proposals".to_string(),
            http.get(if *all {
                format!("{base}?all=1")
            } else {
                base.clone()
            }),
        ),
        Action::Approve { id } => (
            format!("approving proposal {id}"),
            http.post(format!("{base}/{id}/approve"))
                .timeout(limits.stall.max(std::time::Duration::from_secs(60))),
        ),
        Action::Reject { id, reason } => (
            format!("rejecting proposal {id}"),
            http.post(format!("{base}/{id}/reject"))
                .json(&serde_json::json!({ "reason": reason })),
        ),
    };
    let rb = match &token {
        Some(t) => rb.bearer_auth(t),
        None => rb,
    };
    let resp = rb
        .send()
        .map_err(|e| anyhow::anyhow!("{what}: cannot reach {server}: {}", transport_reason(&e)))?;
    let status = resp.status();
    let text = resp.text().unwrap_or_default();
    if !status.is_success() {
        let why = match serde_json::from_str::<ErrorBody>(&text) {
            Ok(b) => format!("{} {}: {}", status.as_u16(), b.error.code, b.error.message),
            Err(_) => format!("{status}"),
        };
        let hint = if status == reqwest::StatusCode::FORBIDDEN {
            " (a reviewer needs a token with the `review` scope: `helix-server token add --scope review`, then HELIX_REVIEW_TOKEN or the user config)"
        } else {
            ""
        };
        bail!("{what} on {project}: {why}{hint}");
    }
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{what}: the answer is not JSON"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    match &a.action {
        Action::List { .. } => {
            let list: Vec<ProposalInfo> = serde_json::from_value(v["proposals"].clone())
                .with_context(|| format!("{what}: unexpected answer"))?;
            if list.is_empty() {
                println!("{project}: no open proposals");
            }
            for p in list {
                println!("{}", line(&p));
            }
        }
        Action::Approve { .. } | Action::Reject { .. } => {
            let p: ProposalInfo =
                serde_json::from_value(v).with_context(|| format!("{what}: unexpected answer"))?;
            println!("{}", line(&p));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One proposal for people: id, state, entry, author, and where it is.
fn line(p: &ProposalInfo) -> String {
    let mut s = format!(
        "{}  {}  {}  \"{}\"  by {}",
        p.id,
        p.state.as_str(),
        p.entry_id,
        p.title,
        p.author
    );
    match (&p.landed, &p.decided_by) {
        (Some(l), by) => s.push_str(&format!(
            "  landed as {} in {}{}",
            l.id,
            &l.commit[..l.commit.len().min(10)],
            by.as_deref()
                .map(|b| format!(", approved by {b}"))
                .unwrap_or_default()
        )),
        (None, Some(by)) => {
            s.push_str(&format!("  decided by {by}"));
            if let Some(r) = &p.reason {
                s.push_str(&format!(": {r}"));
            }
        }
        (None, None) => {
            s.push_str(&format!("  branch {}", p.branch));
            match p.forge.as_ref() {
                Some(f) if f.url.is_some() => {
                    s.push_str(&format!("  {}", f.url.as_deref().unwrap_or_default()))
                }
                Some(f) => s.push_str(&format!(
                    "  (no pull request: {})",
                    f.error.as_deref().unwrap_or("unknown")
                )),
                None => {}
            }
        }
    }
    s
}
