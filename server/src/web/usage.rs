//! How a project's knowledge is used (`/p/{p}/usage`), from the counts its clients report:
//! the entries agents are given most, those given but never read in full, and those no
//! agent was given in 90 days — the candidates to improve or retire.

use std::fmt::Write as _;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use helix_index_format::wire::{EntryUsage, UnusedEntry};
use serde::Deserialize;

use super::browse::derived;
use super::html::{self, Page, Tab, enc_path, esc};
use super::{Viewer, WebState};
use crate::usage::people;

/// The window of the entry page's line and of the lists of use.
pub const RECENT_DAYS: u32 = 30;
/// The window of the list of entries no agent was given.
pub const QUIET_DAYS: u32 = 90;
/// Rows of the lists of use.
const TOP: usize = 50;
/// Entries per page of the list no agent was given.
const QUIET_PAGE: usize = 100;

#[derive(Debug, Default, Deserialize)]
pub struct UsageQuery {
    page: Option<usize>,
}

pub async fn page(
    State(web): State<WebState>,
    viewer: Viewer,
    Path(name): Path<String>,
    uri: Uri,
    query: Result<Query<UsageQuery>, QueryRejection>,
) -> Response {
    let at = query.map(|q| q.0.page.unwrap_or(0)).unwrap_or(0);
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    if !p.cfg.usage {
        let mut page = Page::new(format!("Usage of {name}"), &viewer).in_project(&name, Tab::Usage);
        page.push("<h1>Usage</h1><p>This project takes no usage reports: its server configuration says <code>usage = false</code>.</p>");
        return page.render();
    }
    let d = match derived(&web, &viewer, &p).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let usage = &web.app.usage;
    let recent_days = RECENT_DAYS.min(usage.retention());
    let quiet_days = QUIET_DAYS.min(usage.retention());
    let (recent, quiet) = match (
        usage.figures(&name, recent_days, d.served.clone()).await,
        usage.figures(&name, quiet_days, d.served.clone()).await,
    ) {
        (Ok(r), Ok(q)) => (r, q),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(project = %name, error = %e, "no usage figures");
            return viewer.error(
                StatusCode::SERVICE_UNAVAILABLE,
                "Usage unavailable",
                "The usage figures cannot be read right now; see the server log.",
            );
        }
    };
    let mut page = Page::new(format!("Usage of {name}"), &viewer).in_project(&name, Tab::Usage);
    let s = &recent.summary;
    let _ = write!(
        page.body,
        "<h1>Usage</h1><p class=\"lede\">Reported by {} in the last {recent_days} days (since {}). \
         Clients send counts with <code>helix sync</code> — which entries their hooks gave an \
         agent, and whether the agent then read one in full — never a prompt or any text.</p>",
        people(s.people),
        esc(&s.since),
    );
    let used: Vec<&EntryUsage> = s.entries.iter().filter(|e| e.injections > 0).collect();
    let _ = write!(
        page.body,
        "<section aria-labelledby=\"u-most\"><h2 id=\"u-most\">Most used (last {recent_days} days)</h2>"
    );
    if used.is_empty() {
        page.push("<p>No entry was injected in this window.</p>");
    } else {
        page.push("<p>The entries agents were given most, with how many people's agents and how often an agent then read the entry in full.</p>");
        used_table(&mut page.body, &name, &used);
    }
    page.push("</section>");
    let unread: Vec<&EntryUsage> = used.iter().copied().filter(|e| e.reads == 0).collect();
    let _ = write!(
        page.body,
        "<section aria-labelledby=\"u-unread\"><h2 id=\"u-unread\">Injected but never read in full (last {recent_days} days)</h2>"
    );
    if unread.is_empty() {
        page.push("<p>None.</p>");
    } else {
        page.push("<p>Given to agents that never opened them in full: what the hook showed was enough, or it did not earn the read. Candidates to improve: a clearer title, a first line that says it.</p>");
        used_table(&mut page.body, &name, &unread);
    }
    page.push("</section>");
    let mut unused: Vec<&UnusedEntry> = quiet.summary.not_injected.iter().collect();
    // Oldest first: the likeliest to retire.
    unused.sort_by(|a, b| {
        (a.date.is_empty(), &a.date, &a.id).cmp(&(b.date.is_empty(), &b.date, &b.id))
    });
    let _ = write!(
        page.body,
        "<section aria-labelledby=\"u-quiet\"><h2 id=\"u-quiet\">Not injected in the last {quiet_days} days ({})</h2>",
        unused.len()
    );
    if unused.is_empty() {
        page.push("<p>None: every entry in default results was given to an agent.</p>");
    } else {
        page.push("<p>Entries in default results that no agent was given, oldest first: candidates to improve (title, tags, sources) or to retire. A recent entry has had less time.</p>\
             <table><thead><tr><th scope=\"col\">Entry</th><th scope=\"col\">Date</th></tr></thead><tbody>");
        for e in unused
            .iter()
            .skip(at.saturating_mul(QUIET_PAGE))
            .take(QUIET_PAGE)
        {
            let _ = write!(
                page.body,
                "<tr><td>{}</td><td>{}</td></tr>",
                link(&name, &e.id, &e.title),
                if e.date.is_empty() {
                    "—".to_string()
                } else {
                    esc(&e.date)
                }
            );
        }
        page.push("</tbody></table>");
        let more = unused.len() > (at + 1).saturating_mul(QUIET_PAGE);
        page.push(html::pager(
            &format!("/p/{}/usage", enc_path(&name)),
            at,
            more,
        ));
    }
    page.push("</section>");
    page.render()
}

fn link(project: &str, id: &str, title: &str) -> String {
    format!(
        "<a href=\"/p/{}/e/{}\">{}</a>",
        enc_path(project),
        enc_path(id),
        esc(title)
    )
}

/// The first [`TOP`] of `rows` as a table.
fn used_table(out: &mut String, project: &str, rows: &[&EntryUsage]) {
    out.push_str(
        "<table><thead><tr><th scope=\"col\">Entry</th><th scope=\"col\">Injected</th>\
         <th scope=\"col\">People</th><th scope=\"col\">Sessions</th>\
         <th scope=\"col\">Read in full</th><th scope=\"col\">Last injected</th></tr></thead><tbody>",
    );
    for e in rows.iter().take(TOP) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            link(project, &e.id, &e.title),
            e.injections,
            e.people,
            e.sessions,
            e.reads,
            esc(&e.last_injected)
        );
    }
    out.push_str("</tbody></table>");
    if rows.len() > TOP {
        let _ = write!(
            out,
            "<p class=\"help\">The first {TOP} of {} (the API has them all: <code>GET /v1/projects/{}/usage</code>).</p>",
            rows.len(),
            esc(project)
        );
    }
}
