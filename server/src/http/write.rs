//! Entry writes (`POST …/entries`, `PUT …/entries/{id}`), handed to the project's worker,
//! and the proposals of review mode (list, shared, get, approve, reject).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use helix_index_format::NewEntry;
use helix_index_format::wire::{EntryEdit, ForgeOutcome, ProposalInfo};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;

use super::caller::{Caller, authorize};
use crate::auth::Principal;
use crate::config::Scope;
use crate::error::AppError;
use crate::project::{
    EditTarget, Job, JobError, Project, ProposalError, ProposalOp, WriteError, WriteJob,
};
use crate::state::AppState;

pub(super) fn body_error(e: BytesRejection, limit: usize) -> AppError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::too_large(format!("request body is larger than {limit} bytes"))
    } else {
        AppError::bad_request(format!("cannot read request body: {e}"))
    }
}

/// `Idempotency-Key`: 1..=128 characters of `[A-Za-z0-9._-]`.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let s = v.to_str().unwrap_or("");
    if !helix_index_format::wire::is_valid_idempotency_key(s) {
        return Err(AppError::bad_request(
            "Idempotency-Key must be 1 to 128 characters of [A-Za-z0-9._-]",
        ));
    }
    Ok(Some(s.to_string()))
}

/// Counts a refused write (`helix_writes_total{outcome="rejected"}`) and passes it on.
fn rejecter<'a>(
    state: &'a AppState,
    project: &'a str,
) -> impl Fn(AppError) -> AppError + Copy + 'a {
    move |e| {
        state.metrics.write(project, "rejected", 1);
        e
    }
}

/// What every write request starts with: the body within the limit, JSON, and a valid
/// `Idempotency-Key` when there is one.
fn write_request(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(Bytes, Option<String>), AppError> {
    let body = body.map_err(|e| body_error(e, state.config.max_body_bytes))?;
    require_json(headers)?;
    Ok((body, idempotency_key(headers)?))
}

/// `Content-Type: application/json`, or `400`.
pub(super) fn require_json(headers: &HeaderMap) -> Result<(), AppError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ct
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("application/json")
    {
        return Err(AppError::bad_request(format!(
            "Content-Type must be application/json (got {ct:?})"
        )));
    }
    Ok(())
}

/// A JSON body read as `T`: a wrong shape is `422 invalid_entry`, broken JSON `400`.
fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => AppError::invalid_entry(format!("invalid entry: {e}")),
        _ => AppError::bad_request(format!("malformed JSON body: {e}")),
    })
}

/// Hands a validated write to the project's worker and waits for git's answer.
async fn submit(
    p: &Project,
    key: Option<String>,
    who: &Principal,
    entry: NewEntry,
    edit: Option<Box<EditTarget>>,
) -> Result<crate::project::WriteReply, AppError> {
    // The author becomes part of a Markdown file and a commit header: keep it one line.
    let author: String = who.author().chars().filter(|c| !c.is_control()).collect();
    let (tx, rx) = oneshot::channel();
    p.send(Job::Write(WriteJob {
        key,
        author: author.clone(),
        entry: entry.clone(),
        edit,
        reply: tx,
    }))?;
    let mut reply = rx.await.map_err(|_| JobError::Unanswered)??;
    open_pull_request(p, &entry, &author, &mut reply).await;
    Ok(reply)
}

/// A new proposal gets its pull/merge request now, off the worker; a forge that fails
/// leaves the branch, and the answer and the proposal record say why.
async fn open_pull_request(
    p: &Project,
    entry: &NewEntry,
    author: &str,
    reply: &mut crate::project::WriteReply,
) {
    let (true, Some(proposal), Some(forge)) = (
        reply.created,
        reply.ack.proposal.as_mut(),
        p.cfg.forge.as_ref(),
    ) else {
        return;
    };
    let project = &p.cfg.name;
    let req = crate::forge::Request::for_proposal(entry, author, proposal, &p.cfg.branch);
    let outcome = match crate::forge::open(forge, &req).await {
        Ok(url) => {
            tracing::info!(project = %project, proposal = %proposal.id, %url, "pull request opened");
            ForgeOutcome {
                url: Some(url),
                error: None,
            }
        }
        Err(e) => {
            tracing::warn!(project = %project, proposal = %proposal.id, error = %e, "pull request not opened; the proposal branch stays");
            ForgeOutcome {
                url: None,
                error: Some(e.to_string()),
            }
        }
    };
    p.set_forge_outcome(&proposal.id, outcome.clone());
    proposal.forge = Some(outcome);
}

pub(super) async fn post_entry(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let (who, p) = authorize(&state, &caller, &project, Scope::Write)?;
    let reject = rejecter(&state, &project);
    let (body, key) = write_request(&state, &headers, body).map_err(reject)?;
    let entry: NewEntry = parse_json(&body).map_err(reject)?;
    helix_index_format::validate_new_entry(&entry).map_err(|e| {
        p.refused(who.author(), &e);
        reject(WriteError::from(e).into())
    })?;
    let reply = submit(&p, key, &who, entry, None).await?;
    let status = if reply.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(reply.ack)).into_response())
}

/// Sends a proposal job to the project's worker and waits for its answer.
async fn proposal_job(p: &Project, op: ProposalOp) -> Result<Vec<ProposalInfo>, AppError> {
    Ok(p.ask(op).await?)
}

/// A proposal id from the path: unknown unless it is one (digits).
fn proposal_id(id: &str) -> Result<String, AppError> {
    if helix_index_format::wire::is_valid_proposal_id(id) {
        Ok(id.to_string())
    } else {
        Err(ProposalError::NotFound { id: id.to_string() }.into())
    }
}

/// A query flag (`?all`, `?wait=1`): on unless absent, `0` or `false`.
pub(super) fn is_set(flag: Option<String>) -> bool {
    flag.is_some_and(|w| w != "0" && w != "false")
}

#[derive(Debug, Deserialize)]
pub(super) struct ProposalsQuery {
    #[serde(default)]
    all: Option<String>,
}

pub(super) async fn list_proposals(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<ProposalsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Review)?;
    let all = is_set(query.ok().and_then(|q| q.0.all));
    let list = proposal_job(&p, ProposalOp::List { all }).await?;
    Ok(Json(json!({ "proposals": list })).into_response())
}

/// The open proposals with their entries, for every reader (`show_proposals`).
pub(super) async fn shared_proposals(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let list = proposal_job(&p, ProposalOp::Shared).await?;
    Ok(Json(json!({ "proposals": list })).into_response())
}

/// One proposal: readable with the read scope, so the author's client can follow its own.
pub(super) async fn get_proposal(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let id = proposal_id(&id)?;
    let mut one = proposal_job(&p, ProposalOp::Get { id }).await?;
    Ok(Json(one.pop()).into_response())
}

pub(super) async fn approve_proposal(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (who, p) = authorize(&state, &caller, &project, Scope::Review)?;
    let id = proposal_id(&id)?;
    let by = who.author().chars().filter(|c| !c.is_control()).collect();
    let mut one = proposal_job(&p, ProposalOp::Approve { id, by }).await?;
    Ok(Json(one.pop()).into_response())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectBody {
    #[serde(default)]
    reason: Option<String>,
}

pub(super) async fn reject_proposal(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let (who, p) = authorize(&state, &caller, &project, Scope::Review)?;
    let id = proposal_id(&id)?;
    let body = body.map_err(|e| body_error(e, state.config.max_body_bytes))?;
    let RejectBody { reason } = if body.iter().all(u8::is_ascii_whitespace) {
        RejectBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            AppError::bad_request(format!(
                "reject body: {e} (expected {{\"reason\": \"...\"}})"
            ))
        })?
    };
    let reason = reason.map(|r| {
        r.chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .take(2000)
            .collect()
    });
    let by = who.author().chars().filter(|c| !c.is_control()).collect();
    let mut one = proposal_job(&p, ProposalOp::Reject { id, by, reason }).await?;
    Ok(Json(one.pop()).into_response())
}

/// `PUT /v1/projects/{p}/entries/{id}`: replaces an entry's file with `content` if it is
/// still at blob `base` (else `409 edit_conflict` with both versions).
pub(super) async fn put_entry(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let (who, p) = authorize(&state, &caller, &project, Scope::Write)?;
    let reject = rejecter(&state, &project);
    let (body, key) = write_request(&state, &headers, body).map_err(reject)?;
    let prefix = p.cfg.subdir_prefix();
    let is_entry = matches!(
        helix_index_format::Root::of_subdir(prefix.as_deref()).classify(&id),
        helix_index_format::FileKind::Entry { .. }
    );
    if !is_entry || id.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(reject(AppError::new(
            StatusCode::NOT_FOUND,
            "no_such_entry",
            format!("{id:?} is not an entry id of project {project}"),
        )));
    }
    let edit: EntryEdit = parse_json(&body).map_err(reject)?;
    let base = edit.base.trim();
    if !(4..=64).contains(&base.len()) || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(reject(AppError::bad_request(format!(
            "base must be the entry's git blob id in hex (got {:?})",
            edit.base
        ))));
    }
    let parsed = helix_index_format::validate_edit(&id, &edit.content).map_err(|e| {
        p.refused(who.author(), &e);
        reject(WriteError::from(e).into())
    })?;
    let target = EditTarget {
        id,
        base: base.to_ascii_lowercase(),
        retired: parsed.is_retired(),
        supersedes: parsed.supersedes().into_iter().map(String::from).collect(),
        content: edit.content,
    };
    let entry = NewEntry {
        topic: parsed.topic,
        title: parsed.title,
        body: parsed.body,
        tags: parsed.tags,
        sources: parsed.sources,
        // Not read for edits: the write path checks only new entries for near-duplicates.
        force: false,
    };
    let reply = submit(&p, key, &who, entry, Some(Box::new(target))).await?;
    Ok((StatusCode::OK, Json(reply.ack)).into_response())
}
