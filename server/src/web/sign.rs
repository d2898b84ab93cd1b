//! Signing in and out: a token pasted once into a form (never in a URL) becomes an
//! `HttpOnly`, `SameSite=Strict` session cookie worth no more than the token. The sign-in
//! form carries a CSRF token bound to a cookie of its own (there is no session yet).

use std::fmt::Write as _;

use axum::Form;
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rand::RngCore;
use serde::Deserialize;

use super::html::{self, Page, esc};
use super::{Viewer, WebState, cookie};
use crate::auth::Principal;
use crate::auth::session::{COOKIE, SignInError};

/// The cookie that binds the sign-in form's CSRF token.
const FORM_COOKIE: &str = "helix_signin";

#[derive(Debug, Default, Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// Where to go after signing in: a path of this server, never another site.
fn local(next: Option<&str>) -> Option<&str> {
    next.filter(|n| {
        n.starts_with('/')
            && !n.starts_with("//")
            && !n.contains('\\')
            && !n.bytes().any(|b| b.is_ascii_control())
    })
}

fn set_cookie(name: &str, value: &str, max_age: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
    ))
    .unwrap_or(HeaderValue::from_static(""))
}

fn form_page(
    web: &WebState,
    viewer: &Viewer,
    next: Option<&str>,
    status: StatusCode,
    message: Option<&str>,
) -> Response {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let nonce = hex::encode(raw);
    let mut page = Page::new("Sign in", viewer);
    page.status = status;
    page.push("<h1>Sign in</h1>");
    if let Some(m) = message {
        let _ = write!(
            page.body,
            "<p class=\"error\" role=\"alert\">{}</p>",
            esc(m)
        );
    }
    if let Some(who) = &viewer.who {
        let _ = write!(
            page.body,
            "<p>You are signed in as {}. Signing in with another token replaces it.</p>",
            esc(&viewer.describe(who))
        );
    }
    let _ = write!(
        page.body,
        "<form class=\"signin\" method=\"post\" action=\"/signin\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{nonce}\">\
         <input type=\"hidden\" name=\"next\" value=\"{}\">\
         <label for=\"token\">Token</label>\
         <input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" spellcheck=\"false\" required \
          aria-describedby=\"token-help\">\
         <p id=\"token-help\" class=\"help\">A token of this server (<code>hx_…</code>), as <code>helix-server token add</code> printed it. \
         It is sent once; the browser keeps only a session cookie, which ends when you sign out, after {} hours, or when the token is revoked.</p>\
         <button type=\"submit\">Sign in</button></form>",
        esc(local(next).unwrap_or("")),
        web.app.config.session_hours,
    );
    let mut resp = page.render();
    resp.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(FORM_COOKIE, &nonce, 3600, viewer.secure),
    );
    resp
}

pub async fn form(
    State(web): State<WebState>,
    viewer: Viewer,
    next: Result<Query<Next>, QueryRejection>,
) -> Response {
    let next = next.ok().and_then(|n| n.0.next);
    form_page(&web, &viewer, next.as_deref(), StatusCode::OK, None)
}

#[derive(Debug, Deserialize)]
pub struct SignIn {
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    next: Option<String>,
}

pub async fn sign_in(
    State(web): State<WebState>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Result<Form<SignIn>, FormRejection>,
) -> Response {
    let Ok(Form(f)) = form else {
        return form_page(
            &web,
            &viewer,
            None,
            StatusCode::BAD_REQUEST,
            Some("The form could not be read."),
        );
    };
    let bound = cookie(&headers, FORM_COOKIE).unwrap_or("");
    let fresh = {
        use subtle::ConstantTimeEq;
        !bound.is_empty() && bool::from(bound.as_bytes().ct_eq(f.csrf.as_bytes()))
    };
    if viewer.cross_site || !fresh {
        return form_page(
            &web,
            &viewer,
            f.next.as_deref(),
            StatusCode::FORBIDDEN,
            Some("The form was out of date or sent from another site: sign in again."),
        );
    }
    let Some(peer) = viewer.peer else {
        return viewer.error(StatusCode::BAD_REQUEST, "Error", "Unknown client address.");
    };
    match web.sessions.sign_in(&web.app.access(), &f.token, peer) {
        Ok((value, who)) => {
            if let Some(old) = &viewer.session {
                web.sessions.sign_out(old);
            }
            let to = local(f.next.as_deref())
                .map(str::to_string)
                .unwrap_or_else(|| match &who {
                    Principal::Token { project, .. } => format!("/p/{}", html::enc_path(project)),
                    Principal::Anonymous => "/".into(),
                });
            let name = match &who {
                Principal::Token { name, .. } => name.as_str(),
                Principal::Anonymous => "anonymous",
            };
            tracing::info!(who = name, "signed in to the web view");
            let mut resp = html::redirect(&to);
            let h = resp.headers_mut();
            h.append(
                header::SET_COOKIE,
                set_cookie(
                    COOKIE,
                    &value,
                    web.sessions.lifetime.as_secs(),
                    viewer.secure,
                ),
            );
            h.append(
                header::SET_COOKIE,
                set_cookie(FORM_COOKIE, "", 0, viewer.secure),
            );
            resp
        }
        Err(SignInError::Unknown) => form_page(
            &web,
            &viewer,
            f.next.as_deref(),
            StatusCode::UNAUTHORIZED,
            Some("That token is not valid on this server (unknown, revoked or mistyped)."),
        ),
        Err(SignInError::Limited(wait)) => {
            let mut resp = form_page(
                &web,
                &viewer,
                f.next.as_deref(),
                StatusCode::TOO_MANY_REQUESTS,
                Some(&format!(
                    "Too many failed sign-ins from your address: try again in {} minute(s).",
                    wait.as_secs().div_ceil(60)
                )),
            );
            if let Ok(v) = HeaderValue::from_str(&wait.as_secs().to_string()) {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            resp
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct SignOut {
    #[serde(default)]
    csrf: String,
}

pub async fn sign_out(
    State(web): State<WebState>,
    viewer: Viewer,
    form: Result<Form<SignOut>, FormRejection>,
) -> Response {
    let csrf = form.map(|f| f.0.csrf).unwrap_or_default();
    if let Err(r) = viewer.check_form(&csrf) {
        return r;
    }
    if let Some(s) = &viewer.session {
        web.sessions.sign_out(s);
    }
    let mut resp = html::redirect("/signin");
    resp.headers_mut()
        .append(header::SET_COOKIE, set_cookie(COOKIE, "", 0, viewer.secure));
    resp.into_response()
}
