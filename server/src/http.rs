//! HTTP API v1 (docs/http-api.md): routes, authentication of each request, the index
//! download with ETag/304, status, entry writes, refresh/webhook, health and metrics.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::connect_info::ConnectInfo;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, FromRequestParts, MatchedPath, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use helix_index_format::NewEntry;
use helix_index_format::wire::{EntryEdit, ForgeOutcome, ProposalInfo};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;

use crate::auth::{self, AuthFailure, Principal};
use crate::config::Scope;
use crate::error::AppError;
use crate::project::{
    EditTarget, Job, JobError, Project, ProposalError, ProposalJob, ProposalOp, WriteError,
    WriteJob,
};
use crate::state::AppState;
use crate::store::Served;
use crate::transfer::{self, Coding};

/// Media type of artifact downloads.
pub const INDEX_CONTENT_TYPE: &str = "application/vnd.helix.index";

/// Largest webhook body accepted by `/refresh`.
pub const WEBHOOK_BODY_LIMIT: usize = 25 * 1024 * 1024;

/// The router with every route and layer.
pub fn app(state: AppState) -> Router {
    let limit = state.config.max_body_bytes;
    let timeout = Duration::from_secs(state.config.request_timeout_secs);
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/projects", get(list_projects))
        .route("/v1/projects/{project}/index", get(get_index))
        .route("/v1/projects/{project}/status", get(get_status))
        .route("/v1/projects/{project}/entries", post(post_entry))
        .route("/v1/projects/{project}/proposals", get(list_proposals))
        .route(
            "/v1/projects/{project}/proposals/shared",
            get(shared_proposals),
        )
        .route("/v1/projects/{project}/proposals/{id}", get(get_proposal))
        .route(
            "/v1/projects/{project}/proposals/{id}/approve",
            post(approve_proposal),
        )
        .route(
            "/v1/projects/{project}/proposals/{id}/reject",
            post(reject_proposal),
        )
        .route("/v1/projects/{project}/entries/{*id}", put(put_entry))
        // GitHub push payloads can be far larger than an entry.
        .route(
            "/v1/projects/{project}/refresh",
            post(refresh).layer(DefaultBodyLimit::max(WEBHOOK_BODY_LIMIT)),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), track))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(|req: &Request| {
                tracing::debug_span!(
                    "request",
                    method = %req.method(),
                    uri = %redacted_uri(req.uri()),
                    version = ?req.version(),
                )
            }),
        )
        .with_state(state)
}

/// The request target for logs, with the values of query parameters that may carry a
/// credential (`token`, `access_token`, `key`, `secret`, `password`, `sig`…) replaced:
/// helix reads tokens only from headers, but a client may still put one in a URL.
pub fn redacted_uri(uri: &axum::http::Uri) -> String {
    let Some(query) = uri.query() else {
        return uri.path().to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let lower = name.to_ascii_lowercase();
            let sensitive = [
                "token", "key", "secret", "pass", "auth", "sig", "cred", "session",
            ]
            .iter()
            .any(|w| lower.contains(w));
            if sensitive && !value.is_empty() {
                format!("{name}=[redacted]")
            } else {
                pair.to_string()
            }
        })
        .collect();
    format!("{}?{}", uri.path(), parts.join("&"))
}

async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().as_str().to_string();
    let resp = next.run(req).await;
    state
        .metrics
        .request(&route, &method, resp.status().as_u16());
    resp
}

async fn fallback() -> AppError {
    AppError::not_found("no such endpoint; see docs/http-api.md")
}

async fn method_not_allowed() -> AppError {
    AppError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed on this endpoint",
    )
}

async fn healthz() -> &'static str {
    "ok"
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(),
    )
}

/// The caller as the transport sees it: the `Authorization` header and whether the peer is
/// on loopback. Authentication itself needs the config, see [`authorize`].
#[derive(Debug, Clone)]
pub struct Caller {
    authorization: Option<Vec<u8>>,
    loopback: bool,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        // The extractor also honours `MockConnectInfo` (router tests).
        let loopback = ConnectInfo::<SocketAddr>::from_request_parts(parts, state)
            .await
            .is_ok_and(|c| c.0.ip().is_loopback());
        Ok(Caller {
            authorization: parts
                .headers
                .get(header::AUTHORIZATION)
                .map(|v| v.as_bytes().to_vec()),
            loopback,
        })
    }
}

fn authenticate(state: &AppState, caller: &Caller) -> Result<Principal, AppError> {
    auth::authenticate(&state.access(), caller.authorization.as_deref(), caller.loopback).map_err(
        |f| match f {
            AuthFailure::Missing => AppError::unauthorized(
                "missing token: send `Authorization: Bearer <token>` (create one with `helix-server token add`)",
            ),
            AuthFailure::Malformed => {
                AppError::unauthorized("malformed Authorization header: expected `Bearer <token>`")
            }
            AuthFailure::Unknown => AppError::unauthorized("unknown or revoked token"),
        },
    )
}

/// Authenticates, finds the project and checks the scope: 401, then 404, then 403.
fn authorize(
    state: &AppState,
    caller: &Caller,
    project: &str,
    scope: Scope,
) -> Result<(Principal, Arc<Project>), AppError> {
    let who = authenticate(state, caller)?;
    let p = find_project(state, project)?;
    if !who.may(project, scope) {
        return Err(AppError::forbidden(format!(
            "this token may not {} project {project:?}",
            scope.as_str()
        )));
    }
    Ok((who, p))
}

fn find_project(state: &AppState, project: &str) -> Result<Arc<Project>, AppError> {
    state
        .projects
        .get(project)
        .cloned()
        .ok_or_else(|| AppError::not_found(format!("no project named {project:?}")))
}

async fn list_projects(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Response, AppError> {
    let who = authenticate(&state, &caller)?;
    let list: Vec<_> = state
        .projects
        .values()
        .filter(|p| who.may(p.name(), Scope::Read))
        .map(|p| {
            let c = p.current();
            json!({
                "name": p.name(),
                "commit": c.as_ref().map(|c| c.info.commit.clone()),
                "generation": c.as_ref().map(|c| c.info.generation).unwrap_or(0),
                "entries": c.as_ref().map(|c| c.info.entries).unwrap_or(0),
            })
        })
        .collect();
    Ok(Json(json!({ "projects": list })).into_response())
}

#[derive(Debug, Deserialize)]
struct IndexQuery {
    commit: Option<String>,
    /// Content hash of the artifact the client holds: a patch from it is wanted.
    from: Option<String>,
}

/// Whether an `If-None-Match` value matches `etag` (a quoted hash).
fn etag_matches(header: &HeaderValue, etag: &str) -> bool {
    let Ok(s) = header.to_str() else { return false };
    s.split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
}

/// Headers of every index answer. The ETag names the artifact itself: strong on the plain
/// artifact, weak (`W/`) when the body is a coding of it or a patch to it, so that no cache
/// combines byte ranges of different bodies under one strong validator.
fn artifact_headers(s: &Served, weak: bool) -> [(header::HeaderName, HeaderValue); 5] {
    let v = |x: String| HeaderValue::from_str(&x).unwrap_or_else(|_| HeaderValue::from_static(""));
    let w = if weak { "W/" } else { "" };
    [
        (header::ETAG, v(format!("{w}\"{}\"", s.info.hash))),
        (
            header::HeaderName::from_static("x-helix-commit"),
            v(s.info.commit.clone()),
        ),
        (
            header::HeaderName::from_static("x-helix-generation"),
            v(s.info.generation.to_string()),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (header::VARY, HeaderValue::from_static("accept-encoding")),
    ]
}

/// Response header of the index (200 and 304) of a project that shares its open proposals
/// (`show_proposals`): the client then fetches them (`GET …/proposals/shared`).
pub const PROPOSALS_HEADER: &str = "x-helix-proposals";

async fn get_index(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<IndexQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let shares = state
        .projects
        .get(&project)
        .is_some_and(|p| p.cfg.show_proposals);
    let mut resp = index(State(state), Path(project), caller, query, headers).await?;
    if shares {
        resp.headers_mut()
            .insert(PROPOSALS_HEADER, HeaderValue::from_static("shared"));
    }
    Ok(resp)
}

async fn index(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<IndexQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let Query(q) = query.map_err(|e| AppError::bad_request(format!("invalid query: {e}")))?;
    let served = match &q.commit {
        Some(c) => p.pinned(c)?.ok_or_else(|| {
            AppError::not_found(format!(
                "no kept artifact of project {project:?} for commit {c:?}"
            ))
        })?,
        None => p.current().ok_or_else(|| {
            AppError::unavailable(format!(
                "project {project:?} has no artifact yet; it is being fetched and compiled"
            ))
        })?,
    };
    let coding = transfer::negotiate(
        headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok()),
    );
    let etag = format!("\"{}\"", served.info.hash);
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|h| etag_matches(h, &etag))
    {
        let hdrs = artifact_headers(&served, coding != Coding::Identity);
        return Ok((StatusCode::NOT_MODIFIED, hdrs).into_response());
    }
    if let Some(from) = q.from.as_deref() {
        if from.len() != 64 || !from.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(AppError::bad_request(format!(
                "from={from:?} must be the content hash (64 lower-case hex digits) of an artifact"
            )));
        }
        // Patches lead to the current artifact only; an unknown base gets the artifact.
        let base = p
            .kept(from)
            .filter(|_| q.commit.is_none() && from != served.info.hash);
        if let Some(base) = base {
            let p2 = p.clone();
            let load = move || p2.load(&base).map(|s| s.bytes).map_err(|e| e.to_string());
            match served.coded.patch(&served.bytes, from, load).await {
                Ok(patch) => {
                    state
                        .metrics
                        .transfer(&project, "patch", patch.len() as u64);
                    let base = HeaderValue::from_str(&format!("\"{from}\""))
                        .map_err(|_| AppError::bad_request("from"))?;
                    return Ok((
                        StatusCode::OK,
                        artifact_headers(&served, true),
                        [
                            (
                                header::CONTENT_TYPE,
                                HeaderValue::from_static(transfer::PATCH_CONTENT_TYPE),
                            ),
                            (header::HeaderName::from_static("x-helix-patch-from"), base),
                            (
                                header::HeaderName::from_static("x-helix-artifact-length"),
                                HeaderValue::from(served.info.bytes),
                            ),
                        ],
                        Body::from(patch),
                    )
                        .into_response());
                }
                Err(e) => {
                    tracing::warn!(project, from, error = %e, "no patch; sending the artifact")
                }
            }
        }
    }
    let (coding, body) = match served.coded.coded(&served.bytes, coding).await {
        Ok(body) => (coding, body),
        Err(e) => {
            tracing::warn!(project, ?coding, error = %e, "sending the artifact uncoded");
            (Coding::Identity, served.bytes.clone())
        }
    };
    let name = coding.header().unwrap_or("identity");
    state.metrics.transfer(&project, name, body.len() as u64);
    let mut resp = (
        StatusCode::OK,
        artifact_headers(&served, coding != Coding::Identity),
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(INDEX_CONTENT_TYPE),
        )],
        Body::from(body),
    )
        .into_response();
    if let Some(c) = coding.header() {
        resp.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static(c));
    }
    Ok(resp)
}

async fn get_status(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let c = p.current();
    let f = p.fetch_status();
    let census = p.census();
    Ok(Json(json!({
        "project": project,
        "commit": c.as_ref().map(|c| c.info.commit.clone()),
        "generation": c.as_ref().map(|c| c.info.generation).unwrap_or(0),
        "entries": c.as_ref().map(|c| c.info.entries).unwrap_or(0),
        "artifact_bytes": c.as_ref().map(|c| c.info.bytes).unwrap_or(0),
        "diagnostics": p.diagnostics(),
        "skipped": census.skipped_by_key(),
        "warnings": census.warning().into_iter().collect::<Vec<_>>(),
        "last_fetch": {"at": f.at, "error": f.error},
    }))
    .into_response())
}

fn body_error(e: BytesRejection, limit: usize) -> AppError {
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
    Ok((body, idempotency_key(headers)?))
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

async fn post_entry(
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
    helix_index_format::validate_new_entry(&entry)
        .map_err(|e| reject(WriteError::from(e).into()))?;
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
    let (tx, rx) = oneshot::channel();
    p.send(Job::Proposal(ProposalJob { op, reply: tx }))?;
    Ok(rx.await.map_err(|_| JobError::Unanswered)??)
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
fn is_set(flag: Option<String>) -> bool {
    flag.is_some_and(|w| w != "0" && w != "false")
}

#[derive(Debug, Deserialize)]
struct ProposalsQuery {
    #[serde(default)]
    all: Option<String>,
}

async fn list_proposals(
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
async fn shared_proposals(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let list = proposal_job(&p, ProposalOp::Shared).await?;
    Ok(Json(json!({ "proposals": list })).into_response())
}

/// One proposal: readable with the read scope, so the author's client can follow its own.
async fn get_proposal(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let id = proposal_id(&id)?;
    let mut one = proposal_job(&p, ProposalOp::Get { id }).await?;
    Ok(Json(one.pop()).into_response())
}

async fn approve_proposal(
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

async fn reject_proposal(
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
async fn put_entry(
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
    let parsed = helix_index_format::validate_edit(&id, &edit.content)
        .map_err(|e| reject(WriteError::from(e).into()))?;
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

#[derive(Debug, Deserialize)]
struct RefreshQuery {
    #[serde(default)]
    wait: Option<String>,
}

async fn refresh(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<RefreshQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let body = body.map_err(|e| body_error(e, WEBHOOK_BODY_LIMIT))?;
    let access = state.access();
    let webhook_secret = |p: &Project| {
        let secret = access
            .project(&p.cfg.name)
            .and_then(|c| c.webhook_secret.clone());
        secret.ok_or_else(|| {
            AppError::unauthorized(format!(
                "project {project:?} has no webhook secret configured"
            ))
        })
    };
    let (p, hook) = if let Some(sig) = headers.get("x-hub-signature-256") {
        let p = find_project(&state, &project)?;
        if !auth::verify_signature(&webhook_secret(&p)?, sig.to_str().unwrap_or(""), &body) {
            return Err(AppError::unauthorized(
                "X-Hub-Signature-256 does not match the body under the project's webhook secret",
            ));
        }
        (p, true)
    } else if let Some(token) = headers.get("x-gitlab-token") {
        // GitLab sends its "secret token" as is rather than signing the body.
        let p = find_project(&state, &project)?;
        if !auth::secret_matches(&webhook_secret(&p)?, token.as_bytes()) {
            return Err(AppError::unauthorized(
                "X-Gitlab-Token is not the project's webhook secret",
            ));
        }
        (p, true)
    } else {
        (authorize(&state, &caller, &project, Scope::Write)?.1, false)
    };
    // A push event names its branch (GitHub and GitLab: `"ref": "refs/heads/<branch>"`);
    // pushes to other branches and tags change nothing here.
    if hook && let Some(pushed) = pushed_ref(&body) {
        let ours = format!("refs/heads/{}", p.cfg.branch);
        if pushed != ours {
            return Ok((
                StatusCode::ACCEPTED,
                Json(json!({
                    "status": "ignored",
                    "reason": format!("the push is to {pushed}; this project follows {ours}"),
                })),
            )
                .into_response());
        }
    }
    let wait = is_set(query.ok().and_then(|q| q.0.wait));
    if !wait {
        p.send(Job::Refresh(None))?;
        return Ok((StatusCode::ACCEPTED, Json(json!({"status": "refreshing"}))).into_response());
    }
    let (tx, rx) = oneshot::channel();
    p.send(Job::Refresh(Some(tx)))?;
    let done = rx
        .await
        .map_err(|_| JobError::Unanswered)?
        .map_err(|e| AppError::unavailable(format!("refresh failed: {e}")))?;
    Ok(Json(json!({
        "status": "done",
        "commit": done.as_ref().map(|d| d.commit.clone()),
        "generation": done.as_ref().map(|d| d.generation).unwrap_or(0),
    }))
    .into_response())
}

/// The `ref` of a webhook's push payload; `None` for other events and bodies that are not
/// JSON objects.
fn pushed_ref(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Push {
        #[serde(rename = "ref")]
        pushed: Option<String>,
    }
    serde_json::from_slice::<Push>(body).ok()?.pushed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::tokens::hash_token;
    use crate::config::{Config, ProjectConfig, TokenConfig};
    use axum::extract::connect_info::MockConnectInfo;
    use tower::ServiceExt;

    #[test]
    fn pushed_ref_reads_push_payloads_only() {
        assert_eq!(
            pushed_ref(br#"{"ref":"refs/heads/main","after":"abc"}"#).as_deref(),
            Some("refs/heads/main")
        );
        for other in [
            &b"{}"[..],
            br#"{"zen":"ping"}"#,
            b"not json",
            br#"{"ref":7}"#,
            b"[]",
        ] {
            assert_eq!(pushed_ref(other), None, "{other:?}");
        }
    }

    async fn state(dir: &std::path::Path, anonymous: bool) -> AppState {
        let mut cfg = Config::embedded_default();
        cfg.data_dir = dir.to_path_buf();
        cfg.anonymous_loopback = anonymous;
        let base = cfg.projects[0].clone();
        cfg.projects = vec![
            ProjectConfig {
                name: "a".into(),
                seed_examples: false,
                writes: Default::default(),
                show_proposals: false,
                forge: None,
                tokens: vec![
                    TokenConfig {
                        name: "alice".into(),
                        sha256: hash_token("tok-a-rw"),
                        scopes: vec![Scope::Read, Scope::Write],
                    },
                    TokenConfig {
                        name: "reader".into(),
                        sha256: hash_token("tok-a-r"),
                        scopes: vec![Scope::Read],
                    },
                ],
                ..base.clone()
            },
            ProjectConfig {
                name: "b".into(),
                seed_examples: false,
                writes: Default::default(),
                show_proposals: false,
                forge: None,
                tokens: vec![TokenConfig {
                    name: "bob".into(),
                    sha256: hash_token("tok-b"),
                    scopes: vec![Scope::Read, Scope::Write],
                }],
                ..base
            },
        ];
        AppState::start(cfg).await.expect("state")
    }

    /// A reload puts new tokens in force at once and says which other changes wait for a
    /// restart.
    #[tokio::test]
    async fn reload_swaps_credentials_and_warns_about_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = state(dir.path(), false).await;
        let app = app(s.clone());
        let status = |tok: &'static str| {
            let app = app.clone();
            async move {
                call(app, req("GET", "/v1/projects/b/status", Some(tok), ""))
                    .await
                    .0
            }
        };
        assert_eq!(status("tok-b").await, StatusCode::OK);
        assert_eq!(status("tok-b2").await, StatusCode::UNAUTHORIZED);
        let mut new = s.config.clone();
        new.projects[1].tokens[0].sha256 = hash_token("tok-b2");
        new.projects[0].branch = "trunk".into();
        new.projects.push(ProjectConfig {
            name: "c".into(),
            ..new.projects[1].clone()
        });
        let warnings = s.reload(new);
        assert_eq!(status("tok-b").await, StatusCode::UNAUTHORIZED);
        assert_eq!(status("tok-b2").await, StatusCode::OK);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("\"a\"") && warnings[0].contains("restart"),
            "{warnings:?}"
        );
        assert!(warnings[1].contains("\"c\" is new"), "{warnings:?}");
        s.shutdown().await;
    }

    async fn call(app: Router, req: Request) -> (StatusCode, HeaderMap, Vec<u8>) {
        let resp = app.oneshot(req).await.expect("infallible");
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, headers, body.to_vec())
    }

    fn req(method: &str, uri: &str, token: Option<&str>, body: &str) -> Request {
        let mut b = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json");
        if let Some(t) = token {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        b.body(Body::from(body.to_string())).expect("request")
    }

    fn code(body: &[u8]) -> String {
        let v: serde_json::Value = serde_json::from_slice(body).expect("json error body");
        v["error"]["code"].as_str().expect("code").to_string()
    }

    #[tokio::test]
    async fn health_metrics_and_unknown_routes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = state(dir.path(), false).await;
        let app = app(s.clone());
        let (st, _, body) = call(app.clone(), req("GET", "/healthz", None, "")).await;
        assert_eq!((st, body.as_slice()), (StatusCode::OK, &b"ok"[..]));
        let (st, _, body) = call(app.clone(), req("GET", "/nope", None, "")).await;
        assert_eq!(st, StatusCode::NOT_FOUND);
        assert_eq!(code(&body), "not_found");
        let (st, _, body) = call(app.clone(), req("DELETE", "/healthz", None, "")).await;
        assert_eq!(st, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(code(&body), "method_not_allowed");
        let (_, _, body) = call(app, req("GET", "/metrics", None, "")).await;
        let text = String::from_utf8(body).expect("utf8");
        assert!(
            text.contains(
                "helix_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"
            ),
            "{text}"
        );
        s.shutdown().await;
    }

    #[tokio::test]
    async fn auth_is_checked_per_project_and_scope() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = state(dir.path(), false).await;
        let app = app(s.clone());
        let entry = r#"{"topic":"ops","title":"t","body":"b"}"#;
        // Webhook payloads may exceed the entry body limit; entries may not.
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(400 * 1024));
        // A table reads better than rustfmt's one field per line.
        #[rustfmt::skip]
        let refusals = [
            ("GET /v1/projects/a/status",    None,             "",    401, "unauthorized"),
            ("GET /v1/projects/a/status",    Some("wrong"),    "",    401, "unauthorized"),
            ("GET /v1/projects/a/status",    Some("tok-b"),    "",    403, "forbidden"),
            ("GET /v1/projects/zz/status",   Some("tok-b"),    "",    404, "not_found"),
            // No artifact yet: 503 with the stable error shape.
            ("GET /v1/projects/a/index",     Some("tok-a-r"),  "",    503, "unavailable"),
            ("POST /v1/projects/a/entries",  Some("tok-a-r"),  entry, 403, "forbidden"),
            ("POST /v1/projects/a/refresh",  Some("tok-a-r"),  "",    403, "forbidden"),
            ("POST /v1/projects/a/entries",  Some("tok-a-rw"), &big,  413, "payload_too_large"),
        ];
        for (target, token, body, status, error) in refusals {
            let (method, uri) = target.split_once(' ').expect("method and path");
            let (st, _, answer) = call(app.clone(), req(method, uri, token, body)).await;
            assert_eq!(
                (st.as_u16(), code(&answer).as_str()),
                (status, error),
                "{target} with {token:?}"
            );
        }
        let (st, _, _) = call(
            app.clone(),
            req("POST", "/v1/projects/a/refresh", Some("tok-a-rw"), &big),
        )
        .await;
        assert_eq!(st, StatusCode::ACCEPTED);
        let (st, _, body) = call(
            app.clone(),
            req("GET", "/v1/projects/a/status", Some("tok-a-r"), ""),
        )
        .await;
        assert_eq!(st, StatusCode::OK);
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["project"], "a");
        assert_eq!(v["entries"], 0);
        let (st, _, body) = call(app, req("GET", "/v1/projects", Some("tok-a-r"), "")).await;
        assert_eq!(st, StatusCode::OK);
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["projects"].as_array().map(Vec::len), Some(1));
        s.shutdown().await;
    }

    #[tokio::test]
    async fn write_then_download_with_etag_and_loopback_default() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = state(dir.path(), true).await;
        let loopback = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
        let remote = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([10, 0, 0, 1], 9))));
        let e = r#"{"topic":"ops","title":"Deploy freeze","body":"No deploys on Friday.","tags":["ops"]}"#;
        let (st, _, body) = call(remote, req("POST", "/v1/projects/b/entries", None, e)).await;
        assert_eq!(
            (st, code(&body).as_str()),
            (StatusCode::UNAUTHORIZED, "unauthorized")
        );
        let mut r = req("POST", "/v1/projects/b/entries", None, e);
        r.headers_mut()
            .insert("idempotency-key", HeaderValue::from_static("k1"));
        let (st, _, body) = call(loopback.clone(), r).await;
        assert_eq!(
            st,
            StatusCode::CREATED,
            "{}",
            String::from_utf8_lossy(&body)
        );
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["path"], "ops/deploy-freeze.md");
        assert_eq!(v["generation"], 1);
        let mut r = req("POST", "/v1/projects/b/entries", None, e);
        r.headers_mut()
            .insert("idempotency-key", HeaderValue::from_static("k1"));
        let (st, _, again) = call(loopback.clone(), r).await;
        assert_eq!(st, StatusCode::OK);
        assert_eq!(again, body);
        let (st, h, bytes) = call(
            loopback.clone(),
            req("GET", "/v1/projects/b/index", None, ""),
        )
        .await;
        assert_eq!(st, StatusCode::OK);
        assert_eq!(h["content-type"], INDEX_CONTENT_TYPE);
        assert_eq!(h["x-helix-generation"], "1");
        assert_eq!(h["x-helix-commit"], v["commit"].as_str().expect("commit"));
        let etag = h["etag"].clone();
        assert_eq!(
            etag.to_str().expect("ascii"),
            format!("\"{}\"", crate::store::content_hash(&bytes))
        );
        let mut r = req("GET", "/v1/projects/b/index", None, "");
        r.headers_mut().insert("if-none-match", etag.clone());
        let (st, h, body) = call(loopback.clone(), r).await;
        assert_eq!(st, StatusCode::NOT_MODIFIED);
        assert_eq!(h["etag"], etag);
        assert!(body.is_empty());
        let (st, _, body) = call(
            loopback,
            req("POST", "/v1/projects/b/entries", None, "{not json"),
        )
        .await;
        assert_eq!(
            (st, code(&body).as_str()),
            (StatusCode::BAD_REQUEST, "bad_request")
        );
        s.shutdown().await;
        // The key is in the append-only log, and a restarted server still knows it.
        let log = std::fs::read_to_string(dir.path().join("projects/b/idempotency.jsonl"))
            .expect("idempotency log");
        assert_eq!(log.lines().count(), 1);
        assert!(
            log.contains("\"key\":\"k1\"") && log.contains("ops/deploy-freeze.md"),
            "{log}"
        );
        let s = state(dir.path(), true).await;
        let loopback = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
        let mut r = req("POST", "/v1/projects/b/entries", None, e);
        r.headers_mut()
            .insert("idempotency-key", HeaderValue::from_static("k1"));
        let (st, _, again) = call(loopback, r).await;
        assert_eq!(st, StatusCode::OK);
        let v2: serde_json::Value = serde_json::from_slice(&again).expect("json");
        assert_eq!(v2["path"], v["path"]);
        s.shutdown().await;
    }

    /// Codings and patches of the index: each decodes to the artifact the ETag names.
    #[tokio::test]
    async fn index_codings_and_patches_name_the_same_artifact() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = state(dir.path(), true).await;
        let app = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
        let store = |title: &str| {
            let body =
                format!(r#"{{"topic":"ops","title":"{title}","body":"Words about {title}."}}"#);
            call(
                app.clone(),
                req("POST", "/v1/projects/b/entries", None, &body),
            )
        };
        let get = |uri: String, hdrs: Vec<(&'static str, String)>| {
            let mut r = req("GET", &uri, None, "");
            for (k, v) in hdrs {
                r.headers_mut()
                    .insert(k, HeaderValue::from_str(&v).expect("value"));
            }
            call(app.clone(), r)
        };
        assert_eq!(store("First note").await.0, StatusCode::CREATED);
        let (_, h1, old) = get("/v1/projects/b/index".into(), vec![]).await;
        let old_hash = crate::store::content_hash(&old);
        assert_eq!(h1["etag"], format!("\"{old_hash}\""));
        assert_eq!(h1["vary"], "accept-encoding");
        assert!(h1.get("content-encoding").is_none());
        assert_eq!(store("Second note").await.0, StatusCode::CREATED);
        let (st, _, new) = get("/v1/projects/b/index".into(), vec![]).await;
        assert_eq!(st, StatusCode::OK);
        let new_hash = crate::store::content_hash(&new);
        let weak = format!("W/\"{new_hash}\"");

        let (st, h, z) = get(
            "/v1/projects/b/index".into(),
            vec![("accept-encoding", "gzip, zstd".into())],
        )
        .await;
        assert_eq!(
            (st, &h["content-encoding"], &h["etag"]),
            (
                StatusCode::OK,
                &HeaderValue::from_static("zstd"),
                &HeaderValue::from_str(&weak).expect("etag")
            )
        );
        assert_eq!(h["content-type"], INDEX_CONTENT_TYPE);
        assert_eq!(zstd::decode_all(&z[..]).expect("zstd body"), new);
        let (_, h, g) = get(
            "/v1/projects/b/index".into(),
            vec![("accept-encoding", "gzip".into())],
        )
        .await;
        assert_eq!(h["content-encoding"], "gzip");
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&g[..]), &mut out)
            .expect("gunzip");
        assert_eq!(out, new);
        // A weak or strong validator of the artifact matches whatever the coding.
        let (st, h, body) = get(
            "/v1/projects/b/index".into(),
            vec![
                ("accept-encoding", "zstd".into()),
                ("if-none-match", weak.clone()),
            ],
        )
        .await;
        assert_eq!((st, body.len()), (StatusCode::NOT_MODIFIED, 0));
        assert_eq!(
            (h["etag"].to_str().expect("etag"), &h["vary"]),
            (weak.as_str(), &HeaderValue::from_static("accept-encoding"))
        );

        // A patch from the artifact the client holds.
        let (st, h, patch) = get(
            format!("/v1/projects/b/index?from={old_hash}"),
            vec![
                ("accept-encoding", "zstd".into()),
                ("if-none-match", format!("\"{old_hash}\"")),
            ],
        )
        .await;
        assert_eq!(st, StatusCode::OK);
        assert_eq!(h["content-type"], transfer::PATCH_CONTENT_TYPE);
        assert!(h.get("content-encoding").is_none());
        assert_eq!(h["etag"].to_str().expect("etag"), weak);
        assert_eq!(
            h["x-helix-patch-from"].to_str().expect("base"),
            format!("\"{old_hash}\"")
        );
        assert_eq!(
            h["x-helix-artifact-length"].to_str().expect("len"),
            new.len().to_string()
        );
        let mut prefix = old.clone();
        helix_index_format::delta::to_delta_form(&mut prefix);
        let mut d = zstd::zstd_safe::DCtx::create();
        d.ref_prefix(&prefix).expect("prefix");
        let mut rebuilt = Vec::with_capacity(new.len());
        d.decompress(&mut rebuilt, &patch[..])
            .expect("patch decodes");
        helix_index_format::delta::from_delta_form(&mut rebuilt);
        assert_eq!(rebuilt, new);

        // An unknown base gets the artifact; a malformed one is refused.
        let unknown = "0".repeat(64);
        let (st, h, body) = get(format!("/v1/projects/b/index?from={unknown}"), vec![]).await;
        assert_eq!(
            (st, &h["content-type"]),
            (
                StatusCode::OK,
                &HeaderValue::from_static(INDEX_CONTENT_TYPE)
            )
        );
        assert_eq!(body, new);
        let (st, _, body) = get("/v1/projects/b/index?from=abc".into(), vec![]).await;
        assert_eq!(
            (st, code(&body).as_str()),
            (StatusCode::BAD_REQUEST, "bad_request")
        );
        let (_, _, m) = call(app.clone(), req("GET", "/metrics", None, "")).await;
        let m = String::from_utf8(m).expect("utf8");
        assert!(
            m.contains(&format!(
                "helix_index_response_bytes_total{{project=\"b\",form=\"patch\"}} {}",
                patch.len()
            )),
            "{m}"
        );
        s.shutdown().await;
    }
}
