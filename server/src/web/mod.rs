//! The web view: server-rendered pages to browse, search, read and review a project's
//! knowledge, and to see what the server skipped or refused (docs/web.md). No script; one
//! stylesheet; every page sends a strict CSP and renders entry text as untrusted.
//!
//! This module wires the routes, finds who is looking ([`Viewer`]) and answers the pages
//! every section shares (sign-in, errors, static files); the pages live in one module per
//! section: `browse` (projects, a project, search), `entry`, `review`, `health` and `usage`. Derived
//! views of an artifact (entries newest first, near-duplicate pairs) and git histories are
//! computed once and kept in [`Web`].

// A page handler answers a `Response` either way: the refusal is a page too.
#![allow(clippy::result_large_err)]

mod browse;
mod derived;
mod entry;
mod health;
pub mod html;
pub mod markdown;
mod review;
mod sign;
mod usage;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::auth::session::{self, Sessions};
use crate::auth::{self, Principal};
use crate::config::Scope;
use crate::project::Project;
use crate::state::AppState;
use html::{Page, esc};

/// The web view's state: the server's, the browser sessions and what pages derive.
#[derive(Debug)]
pub struct Web {
    pub app: AppState,
    pub sessions: Sessions,
    pub derived: derived::Cache,
}

/// Handlers take `State<Arc<Web>>`.
pub type WebState = Arc<Web>;

impl FromRef<WebState> for AppState {
    fn from_ref(w: &WebState) -> AppState {
        w.app.clone()
    }
}

/// The pages, with their own state, for `http::app` to merge.
pub fn routes(app: AppState) -> Router<AppState> {
    let lifetime = std::time::Duration::from_secs(app.config.session_hours * 3600);
    let web = Arc::new(Web {
        app,
        sessions: Sessions::new(lifetime),
        derived: derived::Cache::default(),
    });
    Router::new()
        .route("/", get(browse::home))
        .route("/signin", get(sign::form).post(sign::sign_in))
        .route("/signout", post(sign::sign_out))
        .route("/static/style.css", get(style))
        .route("/static/icon.svg", get(icon))
        .route("/p/{project}", get(browse::project))
        .route("/p/{project}/search", get(browse::search))
        .route("/p/{project}/e/{*id}", get(entry::page))
        .route("/p/{project}/proposals", get(review::queue))
        .route(
            "/p/{project}/proposals/{id}/{decision}",
            post(review::decide),
        )
        .route("/p/{project}/health", get(health::page))
        .route("/p/{project}/usage", get(usage::page))
        .with_state(web)
}

/// Who is looking at a page: a browser session, a bearer token (scripts), or an anonymous
/// loopback viewer where the server allows one; and what their forms must carry.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub who: Option<Principal>,
    /// The session cookie's value, when signed in through the form.
    pub session: Option<String>,
    /// The CSRF token every form of this viewer carries.
    pub csrf: String,
    /// What the CSRF token is bound to.
    basis: Vec<u8>,
    pub peer: Option<IpAddr>,
    /// The request came through TLS (a proxy says so): cookies get `Secure`.
    pub secure: bool,
    /// The browser says the request comes from another site.
    cross_site: bool,
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Whether the `Host` the browser asked for is a loopback name: anonymous access needs it,
/// so that a site whose name resolves to 127.0.0.1 (DNS rebinding) gets nothing.
fn host_is_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether the browser marks the request as coming from another site: `Sec-Fetch-Site`,
/// or an `Origin` that is not this host.
fn is_cross_site(headers: &HeaderMap) -> bool {
    let text = |h: header::HeaderName| headers.get(h).and_then(|v| v.to_str().ok());
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site"))
        && !matches!(site, "same-origin" | "none")
    {
        return true;
    }
    match (text(header::ORIGIN), text(header::HOST)) {
        (Some(origin), Some(host)) => origin.split_once("://").map(|(_, h)| h) != Some(host),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

impl FromRequestParts<WebState> for Viewer {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(
        parts: &mut Parts,
        web: &WebState,
    ) -> Result<Self, Self::Rejection> {
        let peer = ConnectInfo::<SocketAddr>::from_request_parts(parts, web)
            .await
            .ok()
            .map(|c| c.0.ip());
        let headers = &parts.headers;
        let access = web.app.access();
        let secure = headers
            .get("x-forwarded-proto")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
        let mut viewer = Viewer {
            who: None,
            session: None,
            csrf: String::new(),
            basis: b"nobody".to_vec(),
            peer,
            secure,
            cross_site: is_cross_site(headers),
        };
        if let Some(value) = cookie(headers, session::COOKIE)
            && let Some(found) = web.sessions.find(&access, value)
        {
            viewer.who = Some(found.principal);
            viewer.session = Some(value.to_string());
            viewer.basis = [b"session:".as_slice(), &found.digest].concat();
        } else if let Some(authorization) = headers.get(header::AUTHORIZATION) {
            let loopback = peer.is_some_and(|ip| ip.is_loopback());
            if let Ok(who) = auth::authenticate(&access, Some(authorization.as_bytes()), loopback) {
                use sha2::Digest;
                viewer.who = Some(who);
                viewer.basis = [
                    b"bearer:".as_slice(),
                    &sha2::Sha256::digest(authorization.as_bytes()),
                ]
                .concat();
            }
        } else if access.anonymous_loopback
            && peer.is_some_and(|ip| ip.is_loopback())
            && host_is_loopback(headers)
        {
            viewer.who = Some(Principal::Anonymous);
            viewer.basis = b"anonymous".to_vec();
        }
        viewer.csrf = web.sessions.csrf(&viewer.basis);
        Ok(viewer)
    }
}

impl Viewer {
    pub fn may(&self, project: &str, scope: Scope) -> bool {
        self.who.as_ref().is_some_and(|w| w.may(project, scope))
    }

    /// The line that says who is signed in.
    pub fn describe(&self, who: &Principal) -> String {
        match who {
            Principal::Anonymous => "Anonymous (loopback)".into(),
            Principal::Token {
                project,
                name,
                scopes,
            } => {
                let scopes: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
                format!("{name} · {project} ({})", scopes.join(", "))
            }
        }
    }

    /// Checks a state-changing form: from this site, with this viewer's CSRF token.
    pub fn check_form(&self, csrf: &str) -> Result<(), Response> {
        if self.cross_site {
            return Err(self.error(
                StatusCode::FORBIDDEN,
                "Refused",
                "This form was sent from another site.",
            ));
        }
        if !self.sessions_csrf_ok(csrf) {
            return Err(self.error(
                StatusCode::FORBIDDEN,
                "Refused",
                "The form's security token is missing or out of date: reload the page and try again.",
            ));
        }
        Ok(())
    }

    fn sessions_csrf_ok(&self, given: &str) -> bool {
        use subtle::ConstantTimeEq;
        !given.is_empty() && bool::from(self.csrf.as_bytes().ct_eq(given.as_bytes()))
    }

    /// An error page.
    pub fn error(&self, status: StatusCode, title: &str, message: &str) -> Response {
        let mut page = Page::new(title, self);
        page.status = status;
        page.push(format!(
            "<h1>{}</h1><p class=\"error\" role=\"alert\">{}</p><p><a href=\"/\">All projects</a></p>",
            esc(title),
            esc(message)
        ));
        page.render()
    }

    /// The project a page is about, if this viewer may read it. Nobody signed in goes to
    /// the sign-in form; anyone else gets the same 404 whether the project exists or not.
    pub fn project(&self, web: &Web, name: &str, path: &str) -> Result<Arc<Project>, Response> {
        if self.who.is_none() {
            return Err(html::redirect(&format!(
                "/signin?next={}",
                html::enc_query(path)
            )));
        }
        match web.app.projects.get(name) {
            Some(p) if self.may(name, Scope::Read) => Ok(p.clone()),
            _ => Err(self.error(
                StatusCode::NOT_FOUND,
                "Not found",
                "There is no project here that you may read.",
            )),
        }
    }
}

async fn style() -> Response {
    static_file("text/css; charset=utf-8", html::STYLE)
}

async fn icon() -> Response {
    static_file("image/svg+xml", html::ICON)
}

fn static_file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        body,
    )
        .into_response()
}
