//! The sync's HTTP side: the client (redirects only within the origin, none for writes), a
//! project's request context, and short texts for transport errors and error answers.

use crate::download::NetLimits;
use anyhow::{Context, Result};
use helix_index_format::wire::ErrorBody;

/// The blocking HTTP client for `server`. `limits.stall` bounds the wait for a response head
/// and every read; redirects are followed only within the same origin (a token is never
/// sent elsewhere) and, for `writes`, not at all: an entry is only ever posted to the
/// configured server.
pub fn http_client(
    server: &str,
    limits: &NetLimits,
    writes: bool,
) -> Result<reqwest::blocking::Client> {
    let origin = reqwest::Url::parse(server)
        .with_context(|| format!("server URL `{server}`"))?
        .origin();
    let policy = if writes {
        reqwest::redirect::Policy::none()
    } else {
        reqwest::redirect::Policy::custom(move |a| {
            if a.previous().len() >= 5 || a.url().origin() != origin {
                a.stop()
            } else {
                a.follow()
            }
        })
    };
    // reqwest needs rustls's provider chosen first (ring: helix builds without aws-lc).
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut b = reqwest::blocking::Client::builder()
        .connect_timeout(limits.connect)
        .timeout(limits.stall)
        .redirect(policy)
        .user_agent(concat!("helix/", env!("CARGO_PKG_VERSION")));
    if server.starts_with("http://") {
        // Plain HTTP never needs the system's root certificates; loading them costs
        // ~15 ms, most of a `helix sync` that finds nothing new.
        b = b.tls_certs_only(std::iter::empty());
    }
    b.build().context("creating the HTTP client")
}

/// A short reason for a transport error: `connection refused`, `timed out`, ….
pub fn transport_reason(e: &reqwest::Error) -> String {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
                std::io::ErrorKind::TimedOut => "timed out".into(),
                std::io::ErrorKind::ConnectionReset => "connection reset".into(),
                _ => io.to_string(),
            };
        }
        src = s.source();
    }
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    msg
}

/// The `code` and `message` of a JSON error body (`{"error": {"code", "message"}}`).
pub(super) fn error_body(body: &str) -> Option<(String, String)> {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .map(|b| (b.error.code, b.error.message))
}

/// The server's current text of an entry from a `409 edit_conflict` body.
pub(super) fn conflict_text(body: &str) -> Option<String> {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .and_then(|b| b.error.conflict)
        .map(|c| c.current_content)
}

/// `code: message` from a JSON error body, or the status line.
pub(super) fn http_error(status: reqwest::StatusCode, body: &str) -> String {
    match error_body(body) {
        Some((code, message)) => format!("server answered {} {code}: {message}", status.as_u16()),
        None => format!("server answered {status}{}", excerpt(body)),
    }
}

/// `: <the start of body>` on one line, or nothing for an empty body.
pub(super) fn excerpt(body: &str) -> String {
    let one_line: String = body
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(120)
        .collect();
    if one_line.is_empty() {
        String::new()
    } else {
        format!(": {one_line}")
    }
}

pub(super) enum Failure {
    Offline(String),
    Other(String),
}

pub(super) struct Ctx<'a> {
    pub(super) http: &'a reqwest::blocking::Client,
    pub(super) server: &'a str,
    pub(super) token: Option<&'a str>,
    pub(super) limits: &'a NetLimits,
}

impl Ctx<'_> {
    /// A transport failure, saying which bound gave up when it was a timeout.
    pub(super) fn offline(&self, e: &reqwest::Error) -> Failure {
        let why = if e.is_timeout() && e.is_connect() {
            format!(
                "could not connect within {} s (`connect_timeout_secs`)",
                self.limits.connect.as_secs()
            )
        } else if e.is_timeout() {
            format!(
                "timed out: no answer within {} s (`stall_timeout_secs`)",
                self.limits.stall.as_secs()
            )
        } else {
            transport_reason(e)
        };
        Failure::Offline(why)
    }

    pub(super) fn req(
        &self,
        rb: reqwest::blocking::RequestBuilder,
    ) -> reqwest::blocking::RequestBuilder {
        match self.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }
}
