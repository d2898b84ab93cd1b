//! The one error type of the HTTP layer: a status, a stable snake_case code and a clear
//! message, rendered as `{"error": {"code", "message"}}`. Every status and code is chosen here.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use helix_index_format::ValidationError;

use crate::project::{JobError, PinError, WriteError};

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl AppError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
        AppError {
            status,
            code,
            message: message.into(),
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
            WriteError::Fetch(_)
            | WriteError::Refetch(_)
            | WriteError::PushRejected { .. }
            | WriteError::Push(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            WriteError::Repository(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            WriteError::Job(e) => return e.clone().into(),
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
            },
        };
        (self.status, Json(body)).into_response()
    }
}
