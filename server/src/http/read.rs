//! Reading entries from the served artifact, for scripts, bots and other agents: search
//! (`GET …/search`) ranked as `helix search` ranks, and one entry (`GET …/entries/{id}`).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use helix_index_format::Index;
use serde::Deserialize;
use serde_json::json;

use super::caller::{Caller, authorize};
use super::write::is_set;
use crate::config::Scope;
use crate::error::AppError;
use crate::knowledge::{self, Search};
use crate::state::AppState;
use crate::store::Served;

/// Most hits one search answers.
pub const MAX_LIMIT: usize = 100;

#[derive(Debug, Deserialize)]
pub(super) struct SearchQuery {
    q: Option<String>,
    limit: Option<String>,
    topic: Option<String>,
    all: Option<String>,
}

/// The served artifact of a project, or `503` while it has none.
pub(super) fn served(p: &crate::project::Project) -> Result<std::sync::Arc<Served>, AppError> {
    p.current().ok_or_else(|| {
        AppError::unavailable(format!(
            "project {:?} has no artifact yet; it is being fetched and compiled",
            p.name()
        ))
    })
}

fn open(s: &Served) -> Result<Index<&[u8]>, AppError> {
    Index::open(&s.bytes[..]).map_err(|e| AppError::internal(format!("served artifact: {e}")))
}

pub(super) async fn search(
    State(state): State<AppState>,
    Path(project): Path<String>,
    caller: Caller,
    query: Result<Query<SearchQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let Query(q) = query.map_err(|e| AppError::bad_request(format!("invalid query: {e}")))?;
    let text = q.q.as_deref().map(str::trim).unwrap_or("");
    if text.is_empty() {
        return Err(AppError::bad_request("q= (the search words) is required"));
    }
    let limit = match q.limit.as_deref() {
        None => 10,
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                AppError::bad_request(format!(
                    "limit={l:?} must be a number from 1 to {MAX_LIMIT}"
                ))
            })?,
    };
    let s = served(&p)?;
    // Fused with a vector search when the artifact holds vectors of the loaded model.
    let query_vector = match &state.model {
        Some(m) if m.serves(&open(&s)?) => m.embed_query(text).await,
        _ => None,
    };
    let index = open(&s)?;
    let search = Search {
        query: text,
        topic: knowledge::topic_filter(&project, q.topic.as_deref()),
        limit,
        all: is_set(q.all),
        now: crate::sys::now_secs(),
    };
    let hits = match &query_vector {
        Some(v) => knowledge::search_fused(&index, &search, v),
        None => knowledge::search(&index, &search),
    }
    .map_err(|e| AppError::internal(format!("search: {e}")))?;
    let mut body = json!({
        "project": project,
        "commit": s.info.commit,
        "query": text,
        "hits": hits,
    });
    if state.model.is_some() {
        body["semantic"] = json!(query_vector.is_some());
    }
    Ok(Json(body).into_response())
}

pub(super) async fn get_entry(
    State(state): State<AppState>,
    Path((project, id)): Path<(String, String)>,
    caller: Caller,
) -> Result<Response, AppError> {
    let (_, p) = authorize(&state, &caller, &project, Scope::Read)?;
    let s = served(&p)?;
    let index = open(&s)?;
    let today = helix_index_format::format_day(crate::sys::now_secs());
    let Some(view) = knowledge::entry(&index, &id, &today)
        .map_err(|e| AppError::internal(format!("entry {id:?}: {e}")))?
    else {
        return Err(AppError::new(
            StatusCode::NOT_FOUND,
            "no_such_entry",
            format!(
                "project {project} has no entry {id:?} at commit {}",
                s.info.commit
            ),
        ));
    };
    let mut v = serde_json::to_value(&view).map_err(|e| AppError::internal(e.to_string()))?;
    v["project"] = json!(project);
    v["commit"] = json!(s.info.commit);
    Ok(Json(v).into_response())
}
