//! What is wrong with a project's knowledge, and why: the last fetch and compile, Markdown
//! files skipped by reason, files that are not valid entries with their error, writes
//! refused for holding a credential (provider and kind, never the value), and entries that
//! say nearly the same.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::Response;
use helix_index_format::Skip;

use super::browse::{derived, short};
use super::derived::MAX_PAIRS;
use super::html::{Page, Tab, enc_path, esc, when};
use super::{Viewer, WebState};

pub async fn page(
    State(web): State<WebState>,
    viewer: Viewer,
    Path(name): Path<String>,
    uri: Uri,
) -> Response {
    let p = match viewer.project(&web, &name, &uri.to_string()) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let mut page = Page::new(format!("Health of {name}"), &viewer).in_project(&name, Tab::Health);
    page.push("<h1>Health</h1>");
    let out = &mut page.body;

    out.push_str("<section aria-labelledby=\"h-sync\"><h2 id=\"h-sync\">Fetch and compile</h2><dl class=\"facts\">");
    let f = p.fetch_status();
    let fetch = match (&p.cfg.upstream, f.at, &f.error) {
        (None, _, _) => "server-owned repository: nothing to fetch".to_string(),
        (Some(_), _, Some(e)) => format!(
            "<span class=\"bad\">failed{}</span>: {}",
            f.at.map(|t| format!(" at {}", when(t))).unwrap_or_default(),
            esc(e)
        ),
        (Some(_), Some(t), None) => format!("ok at {}", when(t)),
        (Some(_), None, None) => "not yet".into(),
    };
    let _ = write!(out, "<dt>Last fetch</dt><dd>{fetch}</dd>");
    let compile = match &f.compile_error {
        Some((t, e)) => format!(
            "<span class=\"bad\">failed at {}</span>: {} (the last good artifact is still served)",
            when(*t),
            esc(e)
        ),
        None => "ok".into(),
    };
    let _ = write!(out, "<dt>Last compile</dt><dd>{compile}</dd>");
    match p.current() {
        Some(c) => {
            let _ = write!(
                out,
                "<dt>Served</dt><dd>commit <code>{}</code>, generation {}, {} entries, {} bytes, compiled {}</dd>",
                esc(short(&c.info.commit)),
                c.info.generation,
                c.info.entries,
                c.info.bytes,
                when(c.info.built_at)
            );
        }
        None => out.push_str("<dt>Served</dt><dd>nothing yet</dd>"),
    }
    out.push_str("</dl></section>");

    let census = p.census();
    out.push_str(
        "<section aria-labelledby=\"h-skipped\"><h2 id=\"h-skipped\">Skipped Markdown files</h2>",
    );
    if census.skipped.is_empty() {
        out.push_str(
            "<p>None: every Markdown file of the served commit is an entry or invalid (below).</p>",
        );
    } else {
        out.push_str("<p>Markdown files of the served commit that are not entries, by reason (docs/entry-format.md says which files are entries).</p><table><thead><tr><th scope=\"col\">Reason</th><th scope=\"col\">Files</th></tr></thead><tbody>");
        for (why, n) in &census.skipped {
            let _ = write!(out, "<tr><td>{}</td><td>{n}</td></tr>", label(*why));
        }
        out.push_str("</tbody></table>");
    }
    if let Some(w) = census.warning() {
        let _ = write!(out, "<p class=\"error\">{}</p>", esc(&w));
    }
    out.push_str("</section>");

    let diagnostics = p.diagnostics();
    let _ = write!(
        out,
        "<section aria-labelledby=\"h-invalid\"><h2 id=\"h-invalid\">Invalid entries ({})</h2>",
        diagnostics.len()
    );
    if diagnostics.is_empty() {
        out.push_str("<p>None.</p>");
    } else {
        out.push_str("<p>Files left out of the served artifact, with the reason. Fix them in the repository: <code>helix check</code> gives the same messages.</p><table><thead><tr><th scope=\"col\">File</th><th scope=\"col\">Line</th><th scope=\"col\">Error</th></tr></thead><tbody>");
        for d in &diagnostics {
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&d.path),
                d.line,
                esc(&d.reason)
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</section>");

    let refusals = p.refusals();
    let total: u64 = refusals.counts.iter().map(|k| k.count).sum();
    let _ = write!(
        out,
        "<section aria-labelledby=\"h-secrets\"><h2 id=\"h-secrets\">Writes refused for holding a credential ({total})</h2>"
    );
    if refusals.counts.is_empty() {
        out.push_str("<p>None.</p>");
    } else {
        out.push_str("<p>Nothing of the credential is kept: only what kind it looked like, who sent it and where.</p><table><thead><tr><th scope=\"col\">Provider</th><th scope=\"col\">Kind</th><th scope=\"col\">Refused</th><th scope=\"col\">Last</th></tr></thead><tbody>");
        for k in &refusals.counts {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if k.provider.is_empty() {
                    "—".to_string()
                } else {
                    esc(&k.provider)
                },
                esc(&k.kind),
                k.count,
                when(k.last)
            );
        }
        out.push_str("</tbody></table><h3>Most recent</h3><table><thead><tr><th scope=\"col\">When</th><th scope=\"col\">Token</th><th scope=\"col\">Where</th><th scope=\"col\">What</th></tr></thead><tbody>");
        for r in &refusals.recent {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{} line {}</td><td>{}</td></tr>",
                when(r.at),
                esc(&r.by),
                esc(&r.field),
                r.line,
                esc(&helix_index_format::secrets::describe(&r.provider, &r.kind)),
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</section>");

    out.push_str(
        "<section aria-labelledby=\"h-dups\"><h2 id=\"h-dups\">Near-duplicate entries</h2>",
    );
    let d = derived(&web, &viewer, &p).await.ok();
    let out = &mut page.body;
    match d.as_ref().map(|d| (d, d.duplicates())) {
        None => out.push_str("<p>Nothing served yet.</p>"),
        Some((_, None)) => out.push_str("<p role=\"status\">Being computed (a search per entry): reload the page in a moment.</p>"),
        Some((_, Some(Err(e)))) => {
            let _ = write!(out, "<p class=\"error\">Cannot compute them: {}</p>", esc(e));
        }
        Some((_, Some(Ok(pairs)))) if pairs.is_empty() => {
            out.push_str("<p>None: no two entries say nearly the same.</p>");
        }
        Some((_, Some(Ok(pairs)))) => {
            let _ = write!(
                out,
                "<p>Pairs of entries that say nearly the same (the similarity that refuses a new write), most alike first{}. Merge them, or mark the older one superseded.</p>\
                 <table><thead><tr><th scope=\"col\">Entry</th><th scope=\"col\">Entry</th><th scope=\"col\">Similarity</th></tr></thead><tbody>",
                if pairs.len() >= MAX_PAIRS {
                    format!(" (the first {MAX_PAIRS})")
                } else {
                    String::new()
                }
            );
            let link = |id: &str, title: &str| {
                format!(
                    "<a href=\"/p/{}/e/{}\">{}</a>",
                    enc_path(&name),
                    enc_path(id),
                    esc(title)
                )
            };
            for pair in pairs {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{:.2}</td></tr>",
                    link(&pair.a, &pair.a_title),
                    link(&pair.b, &pair.b_title),
                    pair.score
                );
            }
            out.push_str("</tbody></table>");
        }
    }
    out.push_str("</section>");
    page.render()
}

fn label(s: Skip) -> &'static str {
    s.label()
}
