//! The `[semantic]` model's files (docs/http-api.md, "Model"): a manifest and each of
//! `MODEL_FILES`, so that clients embed their queries with the model the server embedded
//! the entries with.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::caller::{Caller, authenticate};
use super::index::etag_matches;
use crate::auth::Principal;
use crate::config::Scope;
use crate::error::AppError;
use crate::semantic::Model;
use crate::state::AppState;
use crate::transfer::{self, Coding};

/// The model, for a caller that may read some project.
fn model(state: &AppState, caller: &Caller) -> Result<std::sync::Arc<Model>, AppError> {
    let who = authenticate(state, caller)?;
    let reads = match &who {
        Principal::Anonymous => true,
        Principal::Token { scopes, .. } => scopes.contains(&Scope::Read),
    };
    if !reads {
        return Err(AppError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the model is served to tokens with the read scope",
        ));
    }
    state.model.clone().ok_or_else(|| {
        AppError::new(
            StatusCode::NOT_FOUND,
            "no_model",
            "this server has no [semantic] model configured",
        )
    })
}

/// `GET /v1/model`: the model's id, dimension and files.
pub(super) async fn get_model(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Response, AppError> {
    let m = model(&state, &caller)?;
    let files: Vec<_> = m
        .files
        .iter()
        .map(|f| json!({"name": f.name, "bytes": f.bytes.len(), "sha256": f.sha256}))
        .collect();
    Ok((
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))],
        axum::Json(json!({"id": m.id(), "dim": m.dim(), "files": files})),
    )
        .into_response())
}

/// `GET /v1/model/{file}`: one of the model's files, by the sha256 of its bytes as ETag.
pub(super) async fn get_model_file(
    State(state): State<AppState>,
    Path(file): Path<String>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let m = model(&state, &caller)?;
    let f = m.file(&file).ok_or_else(|| {
        AppError::not_found(format!(
            "no model file {file:?}; the files are {}",
            helix_embed::MODEL_FILES.join(", ")
        ))
    })?;
    let coding = transfer::negotiate(
        headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok()),
    );
    let etag = format!("\"{}\"", f.sha256);
    let etag_header = |coded: bool| {
        let w = if coded { "W/" } else { "" };
        HeaderValue::from_str(&format!("{w}{etag}")).unwrap_or(HeaderValue::from_static(""))
    };
    let common = |coded: bool| {
        [
            (header::ETAG, etag_header(coded)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::VARY, HeaderValue::from_static("accept-encoding")),
        ]
    };
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|h| etag_matches(h, &etag))
    {
        return Ok((StatusCode::NOT_MODIFIED, common(coding != Coding::Identity)).into_response());
    }
    let (coding, body) = match f.coded.coded(&f.bytes, coding).await {
        Ok(body) => (coding, body),
        Err(e) => {
            tracing::warn!(file, ?coding, error = %e, "sending the model file uncoded");
            (Coding::Identity, f.bytes.clone())
        }
    };
    let mut resp = (
        StatusCode::OK,
        common(coding != Coding::Identity),
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
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
