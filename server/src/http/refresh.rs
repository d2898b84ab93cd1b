//! `POST …/refresh`: a fetch on demand, or on a GitHub or GitLab push webhook (signature or
//! token checked against the project's secret; pushes to other branches ignored).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;

use super::caller::{Caller, authorize, find_project};
use super::write::{body_error, is_set};
use crate::auth;
use crate::config::Scope;
use crate::error::AppError;
use crate::project::{Job, JobError, Project};
use crate::state::AppState;

/// Largest webhook body accepted by `/refresh`.
pub const WEBHOOK_BODY_LIMIT: usize = 25 * 1024 * 1024;

#[derive(Debug, Deserialize)]
pub(super) struct RefreshQuery {
    #[serde(default)]
    wait: Option<String>,
}

pub(super) async fn refresh(
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
}
