//! One entry's page: its Markdown rendered safely, its front matter (tags, sources, author,
//! date, status, the supersedes chain both ways, review due), how often agents were given it
//! and read it (the clients' usage reports), its history from git, and a link to edit it on
//! the project's forge.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::Response;

use super::browse::{derived, short};
use super::html::{Page, Tab, enc_path, esc, when};
use super::markdown::{self, Base};
use super::{Viewer, WebState};
use crate::git::{ChangeKind, History, Limits};
use crate::knowledge::{self, EntryView, Status};
use crate::project::Project;

/// The window of the usage line.
const USAGE_DAYS: u32 = 30;

/// How far back an entry's page looks in git.
const HISTORY: Limits = Limits {
    max_changes: 50,
    max_commits: 5000,
};

pub async fn page(
    State(web): State<WebState>,
    viewer: Viewer,
    Path((name, id)): Path<(String, String)>,
    uri: Uri,
) -> Response {
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let d = match derived(&web, &viewer, &p).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let today = helix_index_format::format_day(crate::sys::now_secs());
    let view = match knowledge::entry(&d.index(), &id, &today) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return viewer.error(
                StatusCode::NOT_FOUND,
                "No such entry",
                &format!(
                    "Project {name} has no entry {id} at commit {}: it may have been renamed or removed.",
                    short(&d.served.info.commit)
                ),
            );
        }
        Err(e) => {
            tracing::error!(project = %name, id, error = %e, "cannot read entry");
            return viewer.error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Error",
                "The entry cannot be read; see the server log.",
            );
        }
    };
    let path = repository_path(&p, &view.id);
    let history = history(&web, &p, &d.served.info.commit, &path).await;
    let mut page = Page::new(view.title.clone(), &viewer).in_project(&name, Tab::Entries);
    let link = |id: &str| {
        format!(
            "<a href=\"/p/{}/e/{}\">{}</a>",
            enc_path(&name),
            enc_path(id),
            esc(id)
        )
    };
    let _ = write!(
        page.body,
        "<article class=\"entry\"><h1>{}</h1>",
        esc(&view.title)
    );
    match view.status {
        Status::Active => {}
        Status::Retired => page.push(
            "<p class=\"banner retired\" role=\"note\"><strong>Retired.</strong> Left out of hooks and search; kept for the record.</p>",
        ),
        Status::Superseded => {
            let _ = write!(
                page.body,
                "<p class=\"banner superseded\" role=\"note\"><strong>Superseded</strong> by {}. Left out of hooks and search; read the newer entry.</p>",
                view.superseded_by
                    .first()
                    .map(|s| link(s))
                    .unwrap_or_default()
            );
        }
    }
    if view.review_due {
        let _ = write!(
            page.body,
            "<p class=\"banner due\" role=\"note\"><strong>Due for review</strong> since {}.</p>",
            esc(view.review_after.as_deref().unwrap_or(""))
        );
    }
    facts(&mut page.body, &view, &link);
    if p.cfg.usage {
        usage_line(&mut page.body, &web, &name, &view.id).await;
    }
    let _ = write!(
        page.body,
        "<div class=\"body\">{}</div>",
        markdown::render(
            &view.body,
            &Base {
                project: &name,
                entry: &view.id,
            }
        )
    );
    if let Some(url) = p
        .cfg
        .forge
        .as_ref()
        .and_then(|f| f.edit_url(&p.cfg.branch, &path))
    {
        let _ = write!(
            page.body,
            "<p class=\"edit\"><a href=\"{}\" rel=\"noopener noreferrer\">Edit on the forge</a> (a pull request reviews the change)</p>",
            esc(&url)
        );
    }
    page.push("</article>");
    history_section(&mut page.body, history.as_deref());
    page.render()
}

/// "Injected 6 times to 2 people in the last 30 days, read in full once.": the clients'
/// reports over the window, read for this entry alone.
async fn usage_line(out: &mut String, web: &WebState, project: &str, id: &str) {
    let usage = &web.app.usage;
    let days = USAGE_DAYS.min(usage.retention());
    match usage.entry(project, id, days).await {
        Ok(e) => {
            let _ = write!(
                out,
                "<p class=\"usage\"><a href=\"/p/{}/usage\">Usage</a>: {}</p>",
                enc_path(project),
                esc(&crate::usage::in_words(&e, days))
            );
        }
        Err(e) => {
            tracing::warn!(project, error = %e, "no usage figures for the entry page");
            out.push_str("<p class=\"usage\">Usage figures are unavailable right now.</p>");
        }
    }
}

/// The entry's file in the repository (ids are relative to the project's `subdir`).
fn repository_path(p: &Project, id: &str) -> String {
    match p.cfg.subdir_prefix() {
        Some(prefix) => format!("{prefix}/{id}"),
        None => id.to_string(),
    }
}

fn facts(out: &mut String, v: &EntryView, link: &dyn Fn(&str) -> String) {
    out.push_str("<dl class=\"facts\">");
    let mut row = |name: &str, value: String| {
        if !value.is_empty() {
            let _ = write!(out, "<dt>{name}</dt><dd>{value}</dd>");
        }
    };
    row("Topic", esc(&v.topic));
    row("Author", v.author.as_deref().map(esc).unwrap_or_default());
    row("Date", v.date.clone().unwrap_or_default());
    row("Status", v.status.as_str().to_string());
    row(
        "Tags",
        v.tags
            .iter()
            .map(|t| format!("<span class=\"tag\">{}</span>", esc(t)))
            .collect::<Vec<_>>()
            .join(" "),
    );
    row(
        "Sources",
        list(v.sources.iter().map(|s| format!("<code>{}</code>", esc(s)))),
    );
    row("Supersedes", list(v.supersedes.iter().map(|s| link(s))));
    row(
        "Superseded by",
        v.superseded_by
            .iter()
            .map(|s| link(s))
            .collect::<Vec<_>>()
            .join(" → "),
    );
    row(
        "Review after",
        v.review_after
            .as_deref()
            .map(|d| format!("{}{}", esc(d), if v.review_due { " (due)" } else { "" }))
            .unwrap_or_default(),
    );
    row("Id", format!("<code>{}</code>", esc(&v.id)));
    out.push_str("</dl>");
}

fn list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.map(|i| format!("<li>{i}</li>")).collect();
    if items.is_empty() {
        String::new()
    } else {
        format!("<ul>{}</ul>", items.concat())
    }
}

/// The file's history as of the served commit, from the cache or from git (off the async
/// threads); `None` when git cannot say (logged).
async fn history(
    web: &WebState,
    p: &Arc<Project>,
    commit: &str,
    path: &str,
) -> Option<Arc<History>> {
    if let Some(h) = web.derived.history(p.name(), commit, path) {
        return Some(h);
    }
    let (repo, branch, file) = (p.repo.clone(), p.cfg.branch.clone(), path.to_string());
    let found = tokio::task::spawn_blocking(move || {
        crate::git::file_history(&repo, &branch, &file, HISTORY)
    })
    .await;
    match found {
        Ok(Ok(h)) => {
            let h = Arc::new(h);
            web.derived.keep_history(p.name(), commit, path, h.clone());
            Some(h)
        }
        Ok(Err(e)) => {
            tracing::warn!(project = p.name(), path, error = %e, "no history for the entry page");
            None
        }
        Err(e) => {
            tracing::error!(project = p.name(), path, error = %e, "history task failed");
            None
        }
    }
}

fn history_section(out: &mut String, h: Option<&History>) {
    out.push_str(
        "<section class=\"history\" aria-labelledby=\"history\"><h2 id=\"history\">History</h2>",
    );
    let Some(h) = h else {
        out.push_str("<p>The history cannot be read from git right now.</p></section>");
        return;
    };
    if h.changes.is_empty() {
        out.push_str("<p>No commit of the branch shows this file yet.</p></section>");
        return;
    }
    out.push_str(
        "<table><thead><tr><th scope=\"col\">Date</th><th scope=\"col\">Author</th>\
         <th scope=\"col\">Change</th><th scope=\"col\">Commit</th></tr></thead><tbody>",
    );
    for c in &h.changes {
        let kind = match c.kind {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "changed",
            ChangeKind::Deleted => "deleted",
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{kind}: {}</td><td><code>{}</code></td></tr>",
            when(c.time),
            esc(&c.author),
            esc(&c.summary),
            esc(short(&c.commit)),
        );
    }
    out.push_str("</tbody></table>");
    if h.truncated {
        let _ = write!(
            out,
            "<p class=\"help\">Older changes are not shown (the last {} changes, or {} commits, are read).</p>",
            HISTORY.max_changes, HISTORY.max_commits
        );
    }
    out.push_str("</section>");
}
