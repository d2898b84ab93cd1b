//! Who is asking: the `Caller` extractor, and the authentication and authorization of a
//! request against the credentials in force (401, then 404, then 403).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::connect_info::ConnectInfo;
use axum::http::header;
use axum::http::request::Parts;

use crate::auth::{self, AuthFailure, Principal};
use crate::config::Scope;
use crate::error::AppError;
use crate::project::Project;
use crate::state::AppState;

/// The caller as the transport sees it: the `Authorization` header and whether the peer is
/// on loopback. Authentication itself needs the config, see `authorize`.
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

pub(super) fn authenticate(state: &AppState, caller: &Caller) -> Result<Principal, AppError> {
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
pub(super) fn authorize(
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

pub(super) fn find_project(state: &AppState, project: &str) -> Result<Arc<Project>, AppError> {
    state
        .projects
        .get(project)
        .cloned()
        .ok_or_else(|| AppError::not_found(format!("no project named {project:?}")))
}
