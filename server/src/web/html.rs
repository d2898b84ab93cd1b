//! The page frame every view shares (head, navigation, the signed-in line, footer), the
//! response headers of a page (a strict `Content-Security-Policy` among them), and the small
//! encoders pages need. Every untrusted string goes through [`esc`] or an encoder here.

use std::fmt::Write as _;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Viewer;
pub use super::markdown::escape as esc;

/// What a page may load: its own stylesheet and icon, nothing else, no script at all;
/// forms post only here; no framing.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The stylesheet, and its version for the URL (a new build is a new URL).
pub const STYLE: &str = include_str!("style.css");
pub const ICON: &str = include_str!("icon.svg");

/// Which section of a project a page is in (marked in the navigation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    None,
    Entries,
    Proposals,
    Health,
    Usage,
}

/// One page being written.
#[derive(Debug)]
pub struct Page<'a> {
    pub title: String,
    pub viewer: &'a Viewer,
    /// The project the page is about: its navigation and search box.
    pub project: Option<&'a str>,
    pub tab: Tab,
    /// The words in the search box.
    pub query: &'a str,
    pub status: StatusCode,
    pub body: String,
}

impl<'a> Page<'a> {
    pub fn new(title: impl Into<String>, viewer: &'a Viewer) -> Page<'a> {
        Page {
            title: title.into(),
            viewer,
            project: None,
            tab: Tab::None,
            query: "",
            status: StatusCode::OK,
            body: String::new(),
        }
    }

    pub fn in_project(mut self, project: &'a str, tab: Tab) -> Self {
        self.project = Some(project);
        self.tab = tab;
        self
    }

    /// Appends formatted HTML to the body (the caller escapes what it interpolates).
    pub fn push(&mut self, html: impl AsRef<str>) {
        self.body.push_str(html.as_ref());
    }

    fn nav(&self, out: &mut String) {
        out.push_str("<header class=\"top\"><nav aria-label=\"Site\"><a class=\"brand\" href=\"/\">helix</a>");
        if let Some(p) = self.project {
            let pe = enc_path(p);
            let _ = write!(
                out,
                "<span class=\"sep\" aria-hidden=\"true\">/</span><a href=\"/p/{pe}\">{}</a>",
                esc(p)
            );
            out.push_str("<ul class=\"tabs\">");
            for (tab, href, label) in [
                (Tab::Entries, format!("/p/{pe}"), "Entries"),
                (Tab::Proposals, format!("/p/{pe}/proposals"), "Proposals"),
                (Tab::Health, format!("/p/{pe}/health"), "Health"),
                (Tab::Usage, format!("/p/{pe}/usage"), "Usage"),
            ] {
                let current = if tab == self.tab {
                    " aria-current=\"page\""
                } else {
                    ""
                };
                let _ = write!(out, "<li><a href=\"{href}\"{current}>{label}</a></li>");
            }
            out.push_str("</ul>");
        }
        out.push_str("</nav>");
        if let Some(p) = self.project {
            let _ = write!(
                out,
                "<form class=\"search\" role=\"search\" method=\"get\" action=\"/p/{}/search\">\
                 <label for=\"q\" class=\"visually-hidden\">Search {}</label>\
                 <input id=\"q\" name=\"q\" type=\"search\" value=\"{}\" placeholder=\"Search {}\" required>\
                 <button type=\"submit\">Search</button></form>",
                enc_path(p),
                esc(p),
                esc(self.query),
                esc(p),
            );
        }
        out.push_str("<div class=\"who\">");
        match &self.viewer.who {
            Some(who) => {
                let _ = write!(out, "<span>{}</span>", esc(&self.viewer.describe(who)));
                if self.viewer.session.is_some() {
                    let _ = write!(
                        out,
                        "<form method=\"post\" action=\"/signout\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                         <button type=\"submit\" class=\"link\">Sign out</button></form>",
                        esc(&self.viewer.csrf)
                    );
                } else {
                    out.push_str("<a href=\"/signin\">Sign in with a token</a>");
                }
            }
            None => out.push_str("<a href=\"/signin\">Sign in</a>"),
        }
        out.push_str("</div></header>");
    }

    pub fn render(self) -> Response {
        let mut out = String::with_capacity(self.body.len() + 2048);
        let _ = write!(
            out,
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{} · helix</title>\
             <link rel=\"stylesheet\" href=\"/static/style.css?v={}\">\
             <link rel=\"icon\" href=\"/static/icon.svg\" type=\"image/svg+xml\"></head><body>\
             <a class=\"skip\" href=\"#main\">Skip to content</a>",
            esc(&self.title),
            style_version(),
        );
        self.nav(&mut out);
        out.push_str("<main id=\"main\">");
        out.push_str(&self.body);
        let _ = write!(
            out,
            "</main><footer><p>helix-server {}</p></footer></body></html>",
            env!("CARGO_PKG_VERSION")
        );
        html_response(self.status, out)
    }
}

/// A short hash of the stylesheet, so that its URL changes with its content.
pub fn style_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        use sha2::Digest;
        hex::encode(&sha2::Sha256::digest(STYLE.as_bytes())[..6])
    })
}

/// A page's headers: HTML, the CSP, no sniffing, no framing, no referrer to other sites,
/// and not cached (pages show what the viewer may read).
pub fn html_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("same-origin"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// `303 See Other` to a path of this server.
pub fn redirect(to: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (
                header::LOCATION,
                HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/")),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
    )
        .into_response()
}

/// Percent-encodes a URL path (each `/` kept): ids and project names in links.
pub fn enc_path(s: &str) -> String {
    encode(s, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
    })
}

/// Percent-encodes a query value.
pub fn enc_query(s: &str) -> String {
    encode(s, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
    })
}

fn encode(s: &str, keep: fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if keep(b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `YYYY-MM-DD HH:MM UTC` of unix seconds.
pub fn when(t: i64) -> String {
    let day = helix_index_format::format_day(t);
    let s = t.rem_euclid(86_400);
    format!("{day} {:02}:{:02} UTC", s / 3600, s % 3600 / 60)
}

/// A `<nav>` of previous/next page links around page `page` (0-based) of `base` (a URL
/// that already has a `?`, or none).
pub fn pager(base: &str, page: usize, more: bool) -> String {
    if page == 0 && !more {
        return String::new();
    }
    let join = if base.contains('?') { '&' } else { '?' };
    let mut out = String::from("<nav class=\"pager\" aria-label=\"Pages\">");
    if page > 0 {
        let href = if page == 1 {
            base.to_string()
        } else {
            format!("{base}{join}page={}", page - 1)
        };
        let _ = write!(
            out,
            "<a rel=\"prev\" href=\"{}\">← Previous</a>",
            esc(&href)
        );
    }
    let _ = write!(out, "<span>Page {}</span>", page + 1);
    if more {
        let _ = write!(
            out,
            "<a rel=\"next\" href=\"{}\">Next →</a>",
            esc(&format!("{base}{join}page={}", page + 1))
        );
    }
    out.push_str("</nav>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoders_keep_only_what_is_safe() {
        assert_eq!(enc_path("git/re base&x.md"), "git/re%20base%26x.md");
        assert_eq!(enc_query("a b/&=\"<"), "a%20b%2F%26%3D%22%3C");
        assert_eq!(enc_path("é"), "%C3%A9");
    }

    #[test]
    fn when_is_utc_minutes() {
        assert_eq!(when(0), "1970-01-01 00:00 UTC");
        assert_eq!(when(1_700_000_000), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn pager_links_both_ways() {
        assert_eq!(pager("/p/a", 0, false), "");
        let p = pager("/p/a?topic=x", 1, true);
        assert!(p.contains("href=\"/p/a?topic=x\""), "{p}");
        assert!(p.contains("href=\"/p/a?topic=x&amp;page=2\""), "{p}");
    }
}
