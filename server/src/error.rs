//! The one error type of the HTTP layer: a status, a stable snake_case code and a clear
//! message, rendered as `{"error": {"code", "message"}}`. Every status and code is chosen here.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use helix_index_format::ValidationError;
use helix_index_format::wire::EditConflict;

use crate::project::{JobError, PinError, ProposalError, WriteError};
use crate::usage::UsageError;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Both versions, on `409 edit_conflict`.
    pub conflict: Option<Box<EditConflict>>,
}

impl AppError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
        AppError {
            status,
            code,
            message: message.into(),
            conflict: None,
        }
    }
    pub fn bad_request(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::BAD_REQUEST, "bad_request", m)
    }
    pub fn invalid_entry(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_entry", m)
    }
    pub fn unauthorized(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::UNAUTHORIZED, "unauthorized", m)
    }
    pub fn forbidden(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::FORBIDDEN, "forbidden", m)
    }
    pub fn not_found(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::NOT_FOUND, "not_found", m)
    }
    pub fn too_large(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", m)
    }
    pub fn unavailable(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", m)
    }
    pub fn internal(m: impl Into<String>) -> AppError {
        AppError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", m)
    }
    /// The project's configuration says `usage = false`: the client stops reporting.
    pub fn usage_disabled(project: &str) -> AppError {
        AppError::new(
            StatusCode::FORBIDDEN,
            "usage_disabled",
            format!("project {project:?} takes no usage reports (usage = false on the server)"),
        )
    }
}

// The library errors the handlers meet, each to its status and code (docs/http-api.md), so
// that a handler's `?` answers them. Their messages are their `Display`.

impl From<WriteError> for AppError {
    fn from(e: WriteError) -> AppError {
        let (status, code) = match &e {
            WriteError::Invalid(ValidationError::Invalid { .. }) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_entry")
            }
            WriteError::Invalid(ValidationError::Secret { .. }) => {
                (StatusCode::UNPROCESSABLE_ENTITY, "secret_detected")
            }
            WriteError::TopicCase { .. }
            | WriteError::TopicTaken { .. }
            | WriteError::TopicInBatch { .. } => (StatusCode::CONFLICT, "topic_conflict"),
            WriteError::KeyReused { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused")
            }
            WriteError::KeptMoving { .. } => (StatusCode::CONFLICT, "conflict"),
            WriteError::EditConflict(_) => (StatusCode::CONFLICT, "edit_conflict"),
            WriteError::NoSuchEntry { .. } => (StatusCode::NOT_FOUND, "no_such_entry"),
            WriteError::Superseded { .. } => (StatusCode::CONFLICT, "superseded"),
            WriteError::Retired { .. } => (StatusCode::CONFLICT, "retired"),
            WriteError::Supersedes { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_entry"),
            WriteError::Duplicate { .. } => (StatusCode::CONFLICT, "duplicate_entry"),
            WriteError::Fetch(_)
            | WriteError::Refetch(_)
            | WriteError::PushRejected { .. }
            | WriteError::Push(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            WriteError::Repository(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        let mut err = AppError::new(status, code, e.to_string());
        if let WriteError::EditConflict(c) = e {
            err.conflict = Some(c);
        }
        err
    }
}

impl From<ProposalError> for AppError {
    fn from(e: ProposalError) -> AppError {
        let (status, code) = match &e {
            ProposalError::NotFound { .. } => (StatusCode::NOT_FOUND, "proposal_not_found"),
            ProposalError::NotReviewed => (StatusCode::NOT_FOUND, "not_reviewed"),
            ProposalError::NotShared => (StatusCode::NOT_FOUND, "not_shared"),
            ProposalError::Decided { .. } => (StatusCode::CONFLICT, "proposal_decided"),
            ProposalError::BranchGone { .. } => (StatusCode::CONFLICT, "proposal_branch_gone"),
            ProposalError::BranchMoved { .. } => (StatusCode::CONFLICT, "proposal_branch_moved"),
            ProposalError::Land { error, .. } => {
                let inner = AppError::from(error.clone());
                return AppError::new(inner.status, inner.code, e.to_string());
            }
            ProposalError::Upstream(_) | ProposalError::Worker(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            ProposalError::Repository(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        AppError::new(status, code, e.to_string())
    }
}

impl From<UsageError> for AppError {
    fn from(e: UsageError) -> AppError {
        let (status, code) = match &e {
            UsageError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_usage"),
            UsageError::KeyReused { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused")
            }
            UsageError::Unavailable(_) | UsageError::Db(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            UsageError::Artifact(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        AppError::new(status, code, e.to_string())
    }
}

impl From<JobError> for AppError {
    fn from(e: JobError) -> AppError {
        AppError::unavailable(e.to_string())
    }
}

impl From<PinError> for AppError {
    fn from(e: PinError) -> AppError {
        match e {
            PinError::NotHex(_) | PinError::Ambiguous(_) => AppError::bad_request(e.to_string()),
            PinError::Store(_) => AppError::internal(e.to_string()),
        }
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for AppError {}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let body = helix_index_format::wire::ErrorBody {
            error: helix_index_format::wire::ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
                conflict: self.conflict.map(|c| *c),
            },
        };
        (self.status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::git::{GitError, Kind};

    /// The statuses and codes docs/http-api.md promises, one per kind of write error.
    #[test]
    fn write_errors_keep_their_documented_status_and_code() {
        let git = || {
            Arc::new(GitError::Push {
                url: "/srv/kb.git".into(),
                output: "hook declined".into(),
            })
        };
        let s = String::from;
        let cases = [
            (
                WriteError::Invalid(ValidationError::Invalid {
                    field: s("title"),
                    reason: s("is empty"),
                }),
                422,
                "invalid_entry",
            ),
            (
                WriteError::Invalid(ValidationError::Secret {
                    field: s("body"),
                    line: 2,
                    provider: "GitLab",
                    kind: "personal access token",
                }),
                422,
                "secret_detected",
            ),
            (
                WriteError::TopicCase {
                    topic: s("ops"),
                    folder: s("ops"),
                    existing: s("Ops"),
                },
                409,
                "topic_conflict",
            ),
            (
                WriteError::TopicTaken {
                    topic: s("ops"),
                    folder: s("ops"),
                    existing: s("ops"),
                    kind: Kind::File,
                },
                409,
                "topic_conflict",
            ),
            (
                WriteError::TopicInBatch {
                    topic: s("ops/a"),
                    folder: s("ops/a"),
                    file: s("ops/a"),
                },
                409,
                "topic_conflict",
            ),
            (
                WriteError::KeyReused {
                    key: s("k"),
                    first: s("ops/a.md"),
                },
                422,
                "idempotency_key_reused",
            ),
            (
                WriteError::KeptMoving {
                    attempts: 8,
                    reason: s("rejected"),
                },
                409,
                "conflict",
            ),
            (WriteError::Fetch(git()), 503, "unavailable"),
            (WriteError::Refetch(git()), 503, "unavailable"),
            (
                WriteError::PushRejected {
                    reason: s("rejected"),
                },
                503,
                "unavailable",
            ),
            (WriteError::Push(git()), 503, "unavailable"),
            (WriteError::Repository(git()), 500, "internal"),
            (
                WriteError::EditConflict(Box::new(EditConflict {
                    id: s("ops/a.md"),
                    base: s("aaaa"),
                    current: s("bbbb"),
                    current_content: s("now"),
                })),
                409,
                "edit_conflict",
            ),
            (
                WriteError::NoSuchEntry { id: s("ops/a.md") },
                404,
                "no_such_entry",
            ),
            (
                WriteError::Superseded {
                    id: s("ops/a.md"),
                    by: s("ops/b.md"),
                },
                409,
                "superseded",
            ),
            (WriteError::Retired { id: s("ops/a.md") }, 409, "retired"),
            (
                WriteError::Supersedes {
                    id: s("ops/a.md"),
                    reason: s("cycle"),
                },
                422,
                "invalid_entry",
            ),
        ];
        for (e, status, code) in cases {
            let message = e.to_string();
            let answer = AppError::from(e);
            assert_eq!(
                (answer.status.as_u16(), answer.code),
                (status, code),
                "{message}"
            );
            assert_eq!(answer.message, message);
        }
        let stopped = AppError::from(JobError::Unanswered);
        assert_eq!(
            (stopped.status.as_u16(), stopped.code),
            (503, "unavailable")
        );
        let pin = AppError::from(PinError::Ambiguous(s("abcd")));
        assert_eq!((pin.status.as_u16(), pin.code), (400, "bad_request"));
    }

    /// The usage errors' statuses and codes (docs/http-api.md, `POST …/usage`).
    #[test]
    fn usage_errors_keep_their_documented_status_and_code() {
        let s = String::from;
        let cases = [
            (
                UsageError::Invalid(crate::usage::Invalid(s("rows[0].day \"x\" is not a day"))),
                422,
                "invalid_usage",
            ),
            (
                UsageError::KeyReused { key: s("k") },
                422,
                "idempotency_key_reused",
            ),
            (UsageError::Unavailable(s("disk")), 503, "unavailable"),
            (
                UsageError::Artifact(helix_index_format::FormatError::BadMagic { got: [0; 8] }),
                500,
                "internal",
            ),
        ];
        for (e, status, code) in cases {
            let message = e.to_string();
            let answer = AppError::from(e);
            assert_eq!((answer.status.as_u16(), answer.code), (status, code));
            assert_eq!(answer.message, message);
        }
        let off = AppError::usage_disabled("kb");
        assert_eq!((off.status.as_u16(), off.code), (403, "usage_disabled"));
    }

    /// The proposal errors' statuses and codes (docs/http-api.md); a landing failure keeps
    /// the status of the write error inside it, with the proposal named.
    #[test]
    fn proposal_errors_keep_their_documented_status_and_code() {
        use helix_index_format::wire::ProposalState;
        let s = String::from;
        let git = Arc::new(GitError::Fetch {
            url: s("/srv/kb.git"),
            stderr: s("no route"),
        });
        let cases = [
            (
                ProposalError::NotFound { id: s("9") },
                404,
                "proposal_not_found",
            ),
            (ProposalError::NotReviewed, 404, "not_reviewed"),
            (ProposalError::NotShared, 404, "not_shared"),
            (
                ProposalError::Decided {
                    id: s("1"),
                    state: ProposalState::Approved,
                    by: Some(s("rita")),
                },
                409,
                "proposal_decided",
            ),
            (
                ProposalError::BranchGone {
                    id: s("1"),
                    branch: s("helix/proposals/a/b"),
                },
                409,
                "proposal_branch_gone",
            ),
            (
                ProposalError::BranchMoved {
                    id: s("1"),
                    branch: s("helix/proposals/a/b"),
                    pushed: s("aaaa"),
                    found: s("bbbb"),
                },
                409,
                "proposal_branch_moved",
            ),
            (
                ProposalError::Land {
                    id: s("1"),
                    error: WriteError::KeptMoving {
                        attempts: 8,
                        reason: s("rejected"),
                    },
                },
                409,
                "conflict",
            ),
            (ProposalError::Upstream(git.clone()), 503, "unavailable"),
            (ProposalError::Repository(git), 500, "internal"),
        ];
        for (e, status, code) in cases {
            let message = e.to_string();
            let answer = AppError::from(e);
            assert_eq!(
                (answer.status.as_u16(), answer.code),
                (status, code),
                "{message}"
            );
            assert_eq!(answer.message, message);
        }
        let decided = ProposalError::Decided {
            id: s("1"),
            state: ProposalState::Merged,
            by: None,
        };
        assert_eq!(
            decided.to_string(),
            "proposal 1 is already merged (found on the branch)"
        );
    }
}
