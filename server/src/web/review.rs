//! The review queue of a project in review mode: each open proposal with its entry
//! rendered, and approve/reject forms for holders of a `review` token. Deciding goes
//! through the project's worker exactly as `POST …/proposals/{id}/approve` does.

use std::fmt::Write as _;

use axum::Form;
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::Response;
use helix_index_format::wire::{ProposalInfo, ProposalState};
use serde::Deserialize;

use super::html::{self, Page, Tab, enc_path, esc, when};
use super::markdown::{self, Base};
use super::{Viewer, WebState};
use crate::config::{Scope, WriteMode};
use crate::error::AppError;
use crate::project::{Project, ProposalOp};

#[derive(Debug, Default, Deserialize)]
pub struct QueueQuery {
    all: Option<String>,
    done: Option<String>,
    id: Option<String>,
}

pub async fn queue(
    State(web): State<WebState>,
    viewer: Viewer,
    Path(name): Path<String>,
    uri: Uri,
    query: Result<Query<QueueQuery>, QueryRejection>,
) -> Response {
    let q = query.map(|q| q.0).unwrap_or_default();
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let flash = match (q.done.as_deref(), q.id.as_deref()) {
        (Some(d @ ("approved" | "rejected")), Some(id))
            if helix_index_format::wire::is_valid_proposal_id(id) =>
        {
            Some(format!("Proposal {id} {d}."))
        }
        _ => None,
    };
    let all = q.all.as_deref().is_some_and(|a| a != "0");
    render(&viewer, &p, all, flash.as_deref(), None)
}

fn render(
    viewer: &Viewer,
    p: &Project,
    all: bool,
    flash: Option<&str>,
    error: Option<&AppError>,
) -> Response {
    let name = p.name();
    let mut page =
        Page::new(format!("Proposals of {name}"), viewer).in_project(name, Tab::Proposals);
    if let Some(e) = error {
        page.status = e.status;
    }
    page.push("<h1>Proposals</h1>");
    if let Some(f) = flash {
        let _ = write!(
            page.body,
            "<p class=\"flash\" role=\"status\">{}</p>",
            esc(f)
        );
    }
    if let Some(e) = error {
        let _ = write!(
            page.body,
            "<p class=\"error\" role=\"alert\">{}</p>",
            esc(&e.message)
        );
    }
    if p.cfg.writes == WriteMode::Direct {
        page.push(
            "<p>Writes to this project land directly on its branch: it has no review queue.</p>",
        );
        return page.render();
    }
    let reviewer = viewer.may(name, Scope::Review);
    let list = p.proposals(all && reviewer);
    if !reviewer && !p.cfg.show_proposals {
        let open = list.len();
        let _ = write!(
            page.body,
            "<p>{} waiting for review. <a href=\"/signin?next={}\">Sign in with a review token</a> to read and decide them.</p>",
            match open {
                1 => "One proposal is".to_string(),
                n => format!("{n} proposals are"),
            },
            html::enc_query(&format!("/p/{name}/proposals"))
        );
        return page.render();
    }
    if !reviewer {
        page.push("<p>Proposals are shown to every reader of this project; deciding them takes a review token.</p>");
    } else if all {
        let _ = write!(
            page.body,
            "<p>Every proposal kept, newest first. <a href=\"/p/{}/proposals\">Only the open ones</a></p>",
            enc_path(name)
        );
    } else {
        let _ = write!(
            page.body,
            "<p><a href=\"/p/{}/proposals?all=1\">Also the decided ones</a></p>",
            enc_path(name)
        );
    }
    if list.is_empty() {
        page.push("<p role=\"status\">Nothing waits for review.</p>");
        return page.render();
    }
    for info in &list {
        proposal(&mut page.body, viewer, name, info, reviewer);
    }
    page.render()
}

fn proposal(out: &mut String, viewer: &Viewer, project: &str, info: &ProposalInfo, reviewer: bool) {
    let id = esc(&info.id);
    let _ = write!(
        out,
        "<article class=\"proposal\" aria-labelledby=\"p-{id}\"><h2 id=\"p-{id}\">{} <span class=\"badge {}\">{}</span></h2>\
         <p class=\"meta\">#{id} · topic {} · proposed by {} · {} · would be <code>{}</code></p>",
        esc(&info.title),
        info.state.as_str(),
        info.state.as_str(),
        esc(&info.topic),
        esc(&info.author),
        when(info.created),
        esc(&info.entry_id),
    );
    if let Some(url) = info
        .forge
        .as_ref()
        .and_then(|f| f.url.as_deref())
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
    {
        let _ = write!(
            out,
            "<p><a href=\"{}\" rel=\"noopener noreferrer\">Its pull request on the forge</a></p>",
            esc(url)
        );
    }
    if let Some(by) = &info.decided_by {
        let _ = write!(
            out,
            "<p class=\"meta\">{} by {}{}</p>",
            info.state.as_str(),
            esc(by),
            info.reason
                .as_deref()
                .map(|r| format!(": {}", esc(r)))
                .unwrap_or_default()
        );
    }
    if let Some(e) = &info.entry {
        if !e.tags.is_empty() || !e.sources.is_empty() {
            let _ = write!(
                out,
                "<dl class=\"facts\">{}{}</dl>",
                if e.tags.is_empty() {
                    String::new()
                } else {
                    format!("<dt>Tags</dt><dd>{}</dd>", esc(&e.tags.join(", ")))
                },
                if e.sources.is_empty() {
                    String::new()
                } else {
                    format!("<dt>Sources</dt><dd>{}</dd>", esc(&e.sources.join(", ")))
                },
            );
        }
        let _ = write!(
            out,
            "<div class=\"body\">{}</div>",
            markdown::render(
                &e.body,
                &Base {
                    project,
                    entry: &info.entry_id
                }
            )
        );
    }
    if reviewer && info.state == ProposalState::Open {
        let action = format!("/p/{}/proposals/{}", enc_path(project), enc_path(&info.id));
        let csrf = esc(&viewer.csrf);
        let _ = write!(
            out,
            "<div class=\"decide\">\
             <form method=\"post\" action=\"{action}/approve\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <button type=\"submit\" class=\"approve\">Approve #{id}</button></form>\
             <form method=\"post\" action=\"{action}/reject\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label for=\"reason-{id}\">Reason (optional)</label>\
             <input id=\"reason-{id}\" name=\"reason\" type=\"text\" maxlength=\"2000\">\
             <button type=\"submit\" class=\"reject\">Reject #{id}</button></form></div>"
        );
    }
    out.push_str("</article>");
}

#[derive(Debug, Deserialize)]
pub struct Decision {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: Option<String>,
}

pub async fn decide(
    State(web): State<WebState>,
    viewer: Viewer,
    Path((name, id, decision)): Path<(String, String, String)>,
    uri: Uri,
    form: Result<Form<Decision>, FormRejection>,
) -> Response {
    let Ok(Form(f)) = form else {
        return viewer.error(
            StatusCode::BAD_REQUEST,
            "Error",
            "The form could not be read.",
        );
    };
    if let Err(r) = viewer.check_form(&f.csrf) {
        return r;
    }
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(who) = viewer
        .who
        .as_ref()
        .filter(|_| viewer.may(&name, Scope::Review))
    else {
        return viewer.error(
            StatusCode::FORBIDDEN,
            "Refused",
            "Deciding proposals takes a token with the review scope.",
        );
    };
    if !helix_index_format::wire::is_valid_proposal_id(&id) {
        return viewer.error(StatusCode::NOT_FOUND, "Not found", "No such proposal.");
    }
    let by: String = who.author().chars().filter(|c| !c.is_control()).collect();
    let op = match decision.as_str() {
        "approve" => ProposalOp::Approve { id: id.clone(), by },
        "reject" => ProposalOp::Reject {
            id: id.clone(),
            by,
            reason: f
                .reason
                .map(|r| {
                    r.trim()
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(2000)
                        .collect::<String>()
                })
                .filter(|r| !r.is_empty()),
        },
        _ => return viewer.error(StatusCode::NOT_FOUND, "Not found", "No such action."),
    };
    match p.ask(op).await {
        Ok(_) => {
            tracing::info!(project = %name, proposal = %id, decision, by = who.author(), "decided in the web view");
            html::redirect(&format!(
                "/p/{}/proposals?done={}&id={}",
                enc_path(&name),
                if decision == "approve" {
                    "approved"
                } else {
                    "rejected"
                },
                enc_path(&id)
            ))
        }
        Err(e) => render(&viewer, &p, false, None, Some(&AppError::from(e))),
    }
}
