//! Reading a project: the project list, the index download (ETag/304, codings, patches
//! from kept artifacts) and the status.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::caller::{Caller, authenticate, authorize};
use crate::config::Scope;
use crate::error::AppError;
use crate::state::AppState;
use crate::store::Served;
use crate::transfer::{self, Coding};

/// Media type of artifact downloads.
pub const INDEX_CONTENT_TYPE: &str = "application/vnd.helix.index";

pub(super) async fn list_projects(
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
pub(super) struct IndexQuery {
    commit: Option<String>,
    /// Content hash of the artifact the client holds: a patch from it is wanted.
    from: Option<String>,
}

/// Whether an `If-None-Match` value matches `etag` (a quoted hash).
pub(super) fn etag_matches(header: &HeaderValue, etag: &str) -> bool {
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

pub(super) async fn get_index(
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

pub(super) async fn get_status(
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
