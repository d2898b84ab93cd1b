//! Browsing: the projects the viewer may read, one project's topics and entries newest
//! first, and search ranked exactly as `helix search` ranks (`crate::knowledge`).

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::Response;
use helix_index_format::EntryRef;
use serde::Deserialize;

use super::derived::{Derived, Topics};
use super::html::{self, Page, Tab, enc_path, enc_query, esc, when};
use super::{Viewer, WebState};
use crate::config::Scope;
use crate::knowledge::{self, Row, Search, Status};
use crate::project::Project;

/// Entries per page of a project.
const PAGE: usize = 50;
/// Hits per page of a search.
const HITS: usize = 20;
/// Deepest page of a search (each page searches for every hit before it).
const MAX_SEARCH_PAGE: usize = 25;
/// Topics per page of the list of all.
const TOPICS_PAGE: usize = 500;

pub async fn home(State(web): State<WebState>, viewer: Viewer) -> Response {
    let Some(who) = &viewer.who else {
        return html::redirect("/signin");
    };
    let mut page = Page::new("Projects", &viewer);
    page.push("<h1>Projects</h1>");
    let readable: Vec<&Arc<Project>> = web
        .app
        .projects
        .values()
        .filter(|p| who.may(p.name(), Scope::Read))
        .collect();
    if readable.is_empty() {
        page.push("<p>This token reads no project of this server.</p>");
        return page.render();
    }
    page.push(
        "<table class=\"projects\"><caption class=\"visually-hidden\">Projects you may read</caption>\
         <thead><tr><th scope=\"col\">Project</th><th scope=\"col\">Entries</th>\
         <th scope=\"col\">Commit</th><th scope=\"col\">Last fetch</th></tr></thead><tbody>",
    );
    for p in readable {
        let c = p.current();
        let f = p.fetch_status();
        let fetch = match (&f.error, f.at, &p.cfg.upstream) {
            (_, _, None) => "server-owned repository".to_string(),
            (Some(e), at, _) => format!(
                "<span class=\"bad\">failed{}: {}</span>",
                at.map(|t| format!(" {}", when(t))).unwrap_or_default(),
                esc(e)
            ),
            (None, Some(at), _) => format!("ok, {}", when(at)),
            (None, None, _) => "not yet".into(),
        };
        let _ = write!(
            page.body,
            "<tr><th scope=\"row\"><a href=\"/p/{}\">{}</a></th><td>{}</td><td>{}</td><td>{fetch}</td></tr>",
            enc_path(p.name()),
            esc(p.name()),
            c.as_ref()
                .map_or("—".into(), |c| c.info.entries.to_string()),
            c.as_ref().map_or("none yet".into(), |c| format!(
                "<code>{}</code> · generation {} · compiled {}",
                esc(short(&c.info.commit)),
                c.info.generation,
                when(c.info.built_at)
            )),
        );
    }
    page.push("</tbody></table>");
    page.render()
}

/// The first 10 characters of a commit id.
pub fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// The derived views of the project's served artifact, or the page that says there is none.
pub async fn derived(
    web: &WebState,
    viewer: &Viewer,
    p: &Project,
) -> Result<Arc<Derived>, Response> {
    let Some(served) = p.current() else {
        return Err(viewer.error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Not ready",
            "This project has no knowledge yet: it is being fetched and compiled. Try again in a moment.",
        ));
    };
    web.derived.of(p.name(), served).await.map_err(|e| {
        tracing::error!(project = p.name(), error = %e, "cannot read the served artifact");
        viewer.error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error",
            "The served artifact cannot be read; see the server log.",
        )
    })
}

/// One entry as a list item: title link, status, topic, date, author.
pub fn entry_item(out: &mut String, project: &str, e: &EntryRef<'_>, status: Status) {
    let _ = write!(
        out,
        "<li><a href=\"/p/{}/e/{}\">{}</a>{} <span class=\"meta\">{}{}{}</span></li>",
        enc_path(project),
        enc_path(e.id),
        esc(e.title),
        badge(status),
        esc(e.topic),
        e.date
            .map(|d| format!(" · {}", helix_index_format::format_day(d)))
            .unwrap_or_default(),
        e.author
            .map(|a| format!(" · {}", esc(a)))
            .unwrap_or_default(),
    );
}

/// The mark of a retired or superseded entry (nothing for an active one).
pub fn badge(status: Status) -> &'static str {
    match status {
        Status::Active => "",
        Status::Retired => " <span class=\"badge retired\">retired</span>",
        Status::Superseded => " <span class=\"badge superseded\">superseded</span>",
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ProjectQuery {
    topic: Option<String>,
    page: Option<usize>,
    show: Option<String>,
    /// `all`: the list of every topic instead of entries.
    topics: Option<String>,
}

pub async fn project(
    State(web): State<WebState>,
    viewer: Viewer,
    Path(name): Path<String>,
    uri: Uri,
    query: Result<Query<ProjectQuery>, QueryRejection>,
) -> Response {
    let q = query.map(|q| q.0).unwrap_or_default();
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let d = match derived(&web, &viewer, &p).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let index = d.index();
    let hidden = q.show.as_deref() == Some("hidden");
    let topic_row = q
        .topic
        .as_deref()
        .and_then(|t| d.topics.rows.get(t).copied());
    let mut page = Page::new(name.clone(), &viewer).in_project(&name, Tab::Entries);
    let _ = write!(
        page.body,
        "<h1>{}</h1><p class=\"lede\">{} entries in {} topics · commit <code>{}</code> · generation {}{}</p>",
        esc(&name),
        index.visible_len(),
        d.topics.visible.len(),
        esc(short(&d.served.info.commit)),
        d.served.info.generation,
        if d.recent.hidden.is_empty() {
            String::new()
        } else {
            format!(
                " · <a href=\"/p/{}?show=hidden\">{} retired or superseded</a>",
                enc_path(&name),
                d.recent.hidden.len()
            )
        },
    );
    if index.is_empty() {
        page.push("<p>No entries yet. Add one with <code>helix add</code>, or commit a Markdown file to the repository.</p>");
        return page.render();
    }
    topics_nav(&mut page.body, &name, &d.topics, q.topic.as_deref());
    if q.topics.as_deref() == Some("all") {
        all_topics(&mut page.body, &name, &d.topics, q.page.unwrap_or(0));
        return page.render();
    }
    let all_rows: &[Row] = if hidden {
        &d.recent.hidden
    } else {
        &d.recent.active
    };
    // An unknown topic lists nothing; no topic lists every row.
    let wanted = |r: &&Row| match (q.topic.as_deref(), topic_row) {
        (Some(_), None) => false,
        (_, Some(t)) => r.topic == t,
        (None, None) => true,
    };
    let heading = match (&q.topic, hidden) {
        (Some(t), false) => format!("Entries of {}", esc(t)),
        (Some(t), true) => format!("Retired and superseded entries of {}", esc(t)),
        (None, false) => "Recent entries".into(),
        (None, true) => "Retired and superseded entries".into(),
    };
    let _ = write!(page.body, "<h2>{heading}</h2>");
    if hidden {
        page.push("<p>These are left out of hooks and search; they stay readable here.</p>");
    }
    let at = q.page.unwrap_or(0);
    let slice = all_rows
        .iter()
        .filter(wanted)
        .skip(at.saturating_mul(PAGE))
        .take(PAGE);
    let mut list = String::from("<ul class=\"entries\">");
    let mut shown = 0;
    for r in slice {
        if let Ok(e) = index.entry(r.doc) {
            let status = match index.hidden(r.doc) {
                None => Status::Active,
                Some(helix_index_format::Hidden::Retired) => Status::Retired,
                Some(_) => Status::Superseded,
            };
            entry_item(&mut list, &name, &e, status);
            shown += 1;
        }
    }
    list.push_str("</ul>");
    if shown == 0 {
        page.push("<p>No entries here.</p>");
    } else {
        page.push(list);
    }
    let mut base = format!("/p/{}", enc_path(&name));
    let mut sep = '?';
    if let Some(t) = &q.topic {
        let _ = write!(base, "{sep}topic={}", enc_query(t));
        sep = '&';
    }
    if hidden {
        let _ = write!(base, "{sep}show=hidden");
    }
    let more = all_rows
        .iter()
        .filter(wanted)
        .nth((at + 1).saturating_mul(PAGE))
        .is_some();
    page.push(html::pager(&base, at, more));
    page.render()
}

fn topic_link(out: &mut String, project: &str, (topic, count): &(String, u32), current: bool) {
    let _ = write!(
        out,
        "<li><a href=\"/p/{}?topic={}\"{}>{} <span class=\"count\">{}</span></a></li>",
        enc_path(project),
        enc_query(topic),
        if current {
            " aria-current=\"page\""
        } else {
            ""
        },
        esc(topic),
        count
    );
}

fn topics_nav(out: &mut String, project: &str, topics: &Topics, current: Option<&str>) {
    out.push_str(
        "<nav class=\"topics\" aria-label=\"Topics\"><h2 class=\"visually-hidden\">Topics</h2><ul>",
    );
    let _ = write!(
        out,
        "<li><a href=\"/p/{}\"{}>all</a></li>",
        enc_path(project),
        if current.is_none() {
            " aria-current=\"page\""
        } else {
            ""
        }
    );
    for t in topics.shown(current) {
        topic_link(out, project, t, current == Some(t.0.as_str()));
    }
    if topics.largest.is_some() {
        let _ = write!(
            out,
            "<li><a href=\"/p/{}?topics=all\">every topic ({})</a></li>",
            enc_path(project),
            topics.visible.len()
        );
    }
    out.push_str("</ul></nav>");
}

/// Every topic with its entry count, by name, a page at a time.
fn all_topics(out: &mut String, project: &str, topics: &Topics, at: usize) {
    out.push_str("<h2>Topics</h2><ul class=\"topic-list\">");
    for t in topics
        .visible
        .iter()
        .skip(at.saturating_mul(TOPICS_PAGE))
        .take(TOPICS_PAGE)
    {
        topic_link(out, project, t, false);
    }
    out.push_str("</ul>");
    let more = topics.visible.len() > (at + 1).saturating_mul(TOPICS_PAGE);
    out.push_str(&html::pager(
        &format!("/p/{}?topics=all", enc_path(project)),
        at,
        more,
    ));
}

#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    topic: Option<String>,
    all: Option<String>,
    page: Option<usize>,
}

pub async fn search(
    State(web): State<WebState>,
    viewer: Viewer,
    Path(name): Path<String>,
    uri: Uri,
    query: Result<Query<SearchQuery>, QueryRejection>,
) -> Response {
    let q = query.map(|q| q.0).unwrap_or_default();
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let text = q.q.as_deref().map(str::trim).unwrap_or("").to_string();
    // `other:topic` for another project this viewer reads searches there.
    if let Some((other, topic)) = q.topic.as_deref().and_then(|t| t.split_once(':'))
        && other != name
        && web.app.projects.contains_key(other)
        && viewer.may(other, Scope::Read)
    {
        return html::redirect(&format!(
            "/p/{}/search?q={}&topic={}",
            enc_path(other),
            enc_query(&text),
            enc_query(topic)
        ));
    }
    let d = match derived(&web, &viewer, &p).await {
        Ok(d) => d,
        Err(r) => return r,
    };
    let index = d.index();
    let topic = knowledge::topic_filter(&name, q.topic.as_deref());
    let all = q.all.as_deref().is_some_and(|a| a != "0" && a != "false");
    let at = q.page.unwrap_or(0).min(MAX_SEARCH_PAGE);
    let title = if text.is_empty() {
        "Search".to_string()
    } else {
        format!("{text} — search")
    };
    let mut page = Page::new(title, &viewer).in_project(&name, Tab::Entries);
    page.query = &text;
    let _ = write!(page.body, "<h1>Search {}</h1>", esc(&name));
    filters(&mut page.body, &name, &d.topics, &text, topic, all);
    if text.is_empty() {
        page.push("<p>Type words to search for in the box above.</p>");
        return page.render();
    }
    let search = Search {
        query: &text,
        topic,
        limit: (at + 1) * HITS + 1,
        all,
        now: crate::sys::now_secs(),
    };
    // Fused with a vector search when the artifact holds vectors of the loaded model.
    let query_vector = match web.app.model.clone() {
        Some(m) if m.serves(&index) => m.embed_query(&text).await,
        _ => None,
    };
    let found = match &query_vector {
        Some(v) => knowledge::search_fused(&index, &search, v),
        None => knowledge::search(&index, &search),
    };
    let hits = match found {
        Ok(h) => h,
        Err(e) => {
            tracing::error!(project = %name, error = %e, "search failed");
            return viewer.error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Error",
                "The search failed; see the server log.",
            );
        }
    };
    let more = hits.len() > (at + 1) * HITS;
    let shown: Vec<&knowledge::Hit> = hits.iter().skip(at * HITS).take(HITS).collect();
    if shown.is_empty() {
        let _ = write!(
            page.body,
            "<p role=\"status\">No entries match <strong>{}</strong>{}.</p>",
            esc(&text),
            topic
                .map(|t| format!(" in topic {}", esc(t)))
                .unwrap_or_default()
        );
        return page.render();
    }
    let _ = write!(
        page.body,
        "<p role=\"status\" class=\"lede\">{}{} for <strong>{}</strong>, best first.</p><ol class=\"hits\" start=\"{}\">",
        if more { "More than " } else { "" },
        match hits.len().min((at + 1) * HITS) {
            1 => "1 entry".to_string(),
            n => format!("{n} entries"),
        },
        esc(&text),
        at * HITS + 1
    );
    let mut partial_said = false;
    for h in shown {
        // As `helix search` does: say where the entries with every word end.
        if !h.full && !partial_said {
            partial_said = true;
            if hits.iter().any(|x| x.full) {
                page.push("<li class=\"divider\" aria-hidden=\"true\">entries with only some of the words</li>");
            }
        }
        let _ = write!(
            page.body,
            "<li><h2><a href=\"/p/{}/e/{}\">{}</a>{}</h2><p class=\"meta\">{}{}{}{}</p><p class=\"snippet\">{}</p></li>",
            enc_path(&name),
            enc_path(&h.id),
            esc(&h.title),
            badge(h.status),
            esc(&h.topic),
            h.date
                .as_deref()
                .map(|d| format!(" · {d}"))
                .unwrap_or_default(),
            h.author
                .as_deref()
                .map(|a| format!(" · {}", esc(a)))
                .unwrap_or_default(),
            h.superseded_by
                .as_deref()
                .map(|s| format!(
                    " · superseded by <a href=\"/p/{}/e/{}\">{}</a>",
                    enc_path(&name),
                    enc_path(s),
                    esc(s)
                ))
                .unwrap_or_default(),
            esc(&h.snippet),
        );
    }
    page.push("</ol>");
    let mut base = format!("/p/{}/search?q={}", enc_path(&name), enc_query(&text));
    if let Some(t) = topic {
        let _ = write!(base, "&topic={}", enc_query(t));
    }
    if all {
        base.push_str("&all=1");
    }
    page.push(html::pager(&base, at, more && at < MAX_SEARCH_PAGE));
    page.render()
}

/// The search filters: topic and whether retired and superseded entries are included.
fn filters(
    out: &mut String,
    project: &str,
    topics: &Topics,
    text: &str,
    topic: Option<&str>,
    all: bool,
) {
    let _ = write!(
        out,
        "<form class=\"filters\" method=\"get\" action=\"/p/{}/search\"><input type=\"hidden\" name=\"q\" value=\"{}\">\
         <label for=\"topic\">Topic</label>",
        enc_path(project),
        esc(text)
    );
    // A long list is a text field with the largest topics suggested: the page must not
    // grow with the number of topics.
    if topics.largest.is_some() {
        let _ = write!(
            out,
            "<input type=\"text\" id=\"topic\" name=\"topic\" list=\"topic-names\" value=\"{}\" placeholder=\"all topics\"><datalist id=\"topic-names\">",
            esc(topic.unwrap_or(""))
        );
        for t in topics.shown(None) {
            let _ = write!(out, "<option value=\"{}\">", esc(&t.0));
        }
        out.push_str("</datalist>");
    } else {
        out.push_str("<select id=\"topic\" name=\"topic\"><option value=\"\">all topics</option>");
        for (t, _) in &topics.visible {
            let _ = write!(
                out,
                "<option value=\"{}\"{}>{}</option>",
                esc(t),
                if topic == Some(t.as_str()) {
                    " selected"
                } else {
                    ""
                },
                esc(t)
            );
        }
        out.push_str("</select>");
    }
    let _ = write!(
        out,
        "<label class=\"check\"><input type=\"checkbox\" name=\"all\" value=\"1\"{}> include retired and superseded</label>\
         <button type=\"submit\">Filter</button></form>",
        if all { " checked" } else { "" }
    );
}
