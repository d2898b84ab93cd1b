//! Usage (`POST …/usage`, `GET …/usage?days=N`): the counts a client reports of how its
//! hooks used the project's entries, taken by `crate::usage` once durably stored, and the
//! summary of a window joined with the served artifact. Read scope: every agent's user
//! holds a read token, and its configured name is who is counted.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use helix_index_format::wire::UsageReport;
use serde::Deserialize;

use super::caller::{Caller, authorize};
use super::read::served;
use super::write::{body_error, require_json};
use crate::config::Scope;
use crate::error::AppError;
use crate::state::AppState;
use crate::usage::UsageError;

/// Largest usage report body, bytes (or `max_body_bytes`, when larger): room for
/// `MAX_USAGE_ROWS` rows of long ids.
pub const USAGE_BODY_LIMIT: usize = 4 << 20;

/// The window `GET …/usage` answers without `?days=`.
pub const DEFAULT_DAYS: u32 = 30;

/// The body limit of `POST …/usage` on this server.
pub fn usage_body_limit(state: &AppState) -> usize {
    USAGE_BODY_LIMIT.max(state.config.max_body_bytes)
}

pub(super) async fn post_usage(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let (who, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let refuse = |e: AppError| {
        state.metrics.usage_report(&project, "refused", 0);
        e
    };
    if !p.cfg.usage {
        return Err(refuse(AppError::usage_disabled(&project)));
    }
    let body = body.map_err(|e| refuse(body_error(e, usage_body_limit(&state))))?;
    require_json(&headers).map_err(refuse)?;
    let report: UsageReport = serde_json::from_slice(&body).map_err(|e| {
        refuse(match e.classify() {
            serde_json::error::Category::Data => {
                UsageError::Invalid(crate::usage::Invalid(e.to_string())).into()
            }
            _ => AppError::bad_request(format!("malformed JSON body: {e}")),
        })
    })?;
    // The name becomes a key of the store and a line of a page: keep it one line.
    let person: String = who.author().chars().filter(|c| !c.is_control()).collect();
    let (usage, name, today) = (state.usage.clone(), project.clone(), crate::usage::today());
    let answer = tokio::task::spawn_blocking(move || usage.record(&name, &person, &report, today))
        .await
        .map_err(|e| AppError::internal(format!("usage task failed: {e}")))?;
    match answer {
        Ok(ack) => {
            let outcome = if ack.duplicate {
                "duplicate"
            } else {
                "accepted"
            };
            let rows = if ack.duplicate { 0 } else { ack.rows };
            state
                .metrics
                .usage_report(&project, outcome, u64::from(rows));
            Ok(Json(ack).into_response())
        }
        Err(e) => {
            let outcome = match e {
                UsageError::Invalid(_) | UsageError::KeyReused { .. } => "refused",
                _ => {
                    tracing::error!(project = %project, error = %e, "usage report not stored");
                    "failed"
                }
            };
            state.metrics.usage_report(&project, outcome, 0);
            Err(e.into())
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct UsageQuery {
    days: Option<String>,
}

pub(super) async fn get_usage(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    if !p.cfg.usage {
        return Err(AppError::usage_disabled(&project));
    }
    let Query(q) = query.map_err(|e| AppError::bad_request(format!("invalid query: {e}")))?;
    let most = state.usage.retention();
    let days = match q.days.as_deref() {
        None => DEFAULT_DAYS.min(most),
        Some(d) => d
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=most).contains(n))
            .ok_or_else(|| {
                AppError::bad_request(format!(
                    "days={d:?} must be a number from 1 to {most} (the days this server keeps)"
                ))
            })?,
    };
    let s = served(&p)?;
    let figures = state.usage.figures(&project, days, s).await?;
    Ok(Json(&figures.summary).into_response())
}
