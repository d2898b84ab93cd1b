//! HTTP API v1 (docs/http-api.md): routes, authentication of each request, the index
//! download with ETag/304, status, entry writes, refresh/webhook, health and metrics.
//!
//! This module wires the routes and layers and answers health, metrics and unknown routes;
//! the handlers live in one module per concern: `caller` (who is asking), `index` (the
//! project list, the index download and status), `read` (search and one entry), `write`
//! (entries and proposals), `refresh` (refresh and webhooks) and `usage` (usage reports
//! and summaries). The web view's pages are `crate::web`, merged in here.

use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::error::AppError;
use crate::state::AppState;

mod caller;
mod index;
mod model;
mod read;
mod refresh;
#[cfg(test)]
mod tests;
mod usage;
mod write;

pub use caller::Caller;
pub use index::{INDEX_CONTENT_TYPE, PROPOSALS_HEADER};
pub use read::MAX_LIMIT;
pub use refresh::WEBHOOK_BODY_LIMIT;
pub use usage::USAGE_BODY_LIMIT;

use index::{get_index, get_status, list_projects};
use model::{get_model, get_model_file};
use read::{get_entry, search};
use refresh::refresh;
use usage::{get_usage, post_usage, usage_body_limit};
use write::{
    approve_proposal, get_proposal, list_proposals, post_entry, put_entry, reject_proposal,
    shared_proposals,
};

/// The router with every route and layer.
pub fn app(state: AppState) -> Router {
    let limit = state.config.max_body_bytes;
    let usage_limit = usage_body_limit(&state);
    let timeout = Duration::from_secs(state.config.request_timeout_secs);
    let pages = if state.config.web {
        crate::web::routes(state.clone())
    } else {
        Router::new()
    };
    Router::new()
        .merge(pages)
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/projects", get(list_projects))
        .route("/v1/model", get(get_model))
        .route("/v1/model/{file}", get(get_model_file))
        .route("/v1/projects/{project}/index", get(get_index))
        .route("/v1/projects/{project}/status", get(get_status))
        .route("/v1/projects/{project}/search", get(search))
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
        // A report of many rows is larger than an entry.
        .route(
            "/v1/projects/{project}/usage",
            get(get_usage)
                .post(post_usage)
                .layer(DefaultBodyLimit::max(usage_limit)),
        )
        .route(
            "/v1/projects/{project}/entries/{*id}",
            get(get_entry).put(put_entry),
        )
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
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    tracing::debug_span!(
                        "request",
                        method = %req.method(),
                        uri = %redacted_uri(req.uri()),
                        version = ?req.version(),
                    )
                })
                // A 503 is a state the client is told to wait out (a project still being
                // fetched), not a server fault: one ERROR line per poll would drown real ones.
                .on_failure(
                    |class: tower_http::classify::ServerErrorsFailureClass,
                     latency: Duration,
                     _: &tracing::Span| {
                        use tower_http::classify::ServerErrorsFailureClass::StatusCode as Status;
                        match class {
                            Status(code) if code == StatusCode::SERVICE_UNAVAILABLE => {
                                tracing::debug!(?latency, "answered 503")
                            }
                            class => tracing::error!(?latency, %class, "response failed"),
                        }
                    },
                ),
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
