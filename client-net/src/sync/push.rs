//! Pushing a project's pending entries (POST) and edits (PUT with their base) with
//! idempotency keys; only a documented acknowledgement takes one out of the queue.

use super::http::{Ctx, Failure, conflict_text, error_body, excerpt, http_client, http_error};
use helix_client::pending::{self, PendingDir};
use helix_index_format::wire::WriteAck;
use std::path::Path;
use std::time::Duration;

/// Whether a refusal is final: the same entry will never be accepted, so it leaves the
/// push queue (kept in `rejected/` with the reason) instead of blocking the ones after it.
fn refusal_is_final(status: reqwest::StatusCode, code: Option<&str>) -> bool {
    use reqwest::StatusCode as S;
    matches!(
        status,
        S::UNPROCESSABLE_ENTITY | S::BAD_REQUEST | S::PAYLOAD_TOO_LARGE
    ) || (status == S::CONFLICT
        && matches!(
            code,
            Some("topic_conflict" | "duplicate_entry" | "edit_conflict" | "superseded" | "retired")
        ))
        || (status == S::NOT_FOUND && code == Some("no_such_entry"))
}

/// Pushes the pending entries of `queue` (its project's, on `ctx`'s server). Returns (pushed, rejected) counts. A pending
/// file leaves the queue only on a documented acknowledgement from the configured server,
/// or on a final refusal (then it is kept in `rejected/`).
pub(super) fn push_pending(
    ctx: &Ctx<'_>,
    queue: &PendingDir,
    dir: &Path,
) -> Result<(usize, usize), Failure> {
    let project = queue.project();
    let files = pending::list(queue).map_err(|e| Failure::Other(format!("{e:#}")))?;
    if files.is_empty() {
        return Ok((0, 0));
    }
    let writer =
        http_client(ctx.server, ctx.limits, true).map_err(|e| Failure::Other(format!("{e:#}")))?;
    let (mut pushed, mut rejected) = (0, 0);
    let url = format!("{}/v1/projects/{project}/entries", ctx.server);
    let what = |f: &pending::PendingFile| match &f.edit {
        Some(e) => format!("edit of {}", e.id),
        None => format!("entry `{}`", f.new.title),
    };
    let stop = |pushed: usize, f: Failure| {
        if pushed > 0 {
            let _ = pending::rebuild_overlay(queue, dir);
        }
        Err(f)
    };
    for f in files {
        // The server may batch, commit, push and compile before answering.
        let (rb, body) = match &f.edit {
            Some(e) => (
                // The URL parser escapes spaces and non-ASCII; these three it would read.
                writer.put(format!(
                    "{url}/{}",
                    e.id.replace('%', "%25")
                        .replace('?', "%3F")
                        .replace('#', "%23")
                )),
                serde_json::json!({"base": e.base, "content": f.text}),
            ),
            None => (
                writer.post(&url),
                // The wire type itself: `force` goes along when the entry was stored with it.
                serde_json::to_value(&f.new).unwrap_or_default(),
            ),
        };
        let rb = rb.timeout(ctx.limits.stall.max(Duration::from_secs(60)));
        let resp = ctx
            .req(rb)
            .header("Idempotency-Key", &f.key)
            .json(&body)
            .send();
        let resp = match resp {
            Ok(r) => r,
            Err(e) => return stop(pushed, ctx.offline(&e)),
        };
        let status = resp.status();
        if status.is_redirection() {
            let to = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("elsewhere")
                .to_string();
            return stop(
                pushed,
                Failure::Other(format!(
                    "pushing pending entries: the server redirected the write ({status} to {to}); \
                     helix never follows redirects for writes: set `server` in .helix.toml to the helix server's own URL"
                )),
            );
        }
        if status == reqwest::StatusCode::OK || status == reqwest::StatusCode::CREATED {
            let ctype = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("no content type")
                .to_string();
            let text = resp.text().unwrap_or_default();
            let ack = serde_json::from_str::<WriteAck>(&text)
                .ok()
                .filter(WriteAck::is_plausible);
            let Some(ack) = ack else {
                // A sign-in page from a proxy, a captive portal, another service: nothing
                // says the entry is stored, so it stays queued.
                return stop(
                    pushed,
                    Failure::Other(format!(
                        "pushing pending entries: the server answered {status} ({ctype}) without an acknowledgement{}; \
                         is `{}` the helix server (not a proxy's sign-in page)?",
                        excerpt(&text),
                        ctx.server
                    )),
                );
            };
            // Acknowledged: only now may the file leave the push queue. A crash before this
            // leaves it in place; the retry carries the same key and the server answers 200.
            // It stays visible (overlay) until a synced artifact of that generation arrives.
            let proposal = ack.proposal.as_ref().map(|p| p.id.as_str());
            if let Err(e) = pending::mark_acked(
                queue,
                &f,
                &ack.id,
                ack.generation,
                proposal,
                ack.blob.as_deref(),
            ) {
                // Still pending: the next sync posts it again and gets the same answer.
                return stop(
                    pushed,
                    Failure::Other(format!(
                        "recording the acknowledgement of the {}: {e:#}",
                        what(&f)
                    )),
                );
            }
            pushed += 1;
            continue;
        }
        let text = resp.text().unwrap_or_default();
        let code = error_body(&text).map(|(c, _)| c);
        if refusal_is_final(status, code.as_deref()) {
            // The server will never accept it: keep it, out of the push queue, with the reason.
            let why = http_error(status, &text);
            let current = conflict_text(&text);
            match pending::mark_rejected(&f, &why, current.as_deref()) {
                Ok(dest) => eprintln!(
                    "helix: {project}: {} rejected ({why}); kept in {}{}",
                    what(&f),
                    dest.display(),
                    if current.is_some() {
                        " (the server's current text beside it, .current.md)"
                    } else {
                        ""
                    }
                ),
                Err(e) => {
                    return stop(
                        pushed,
                        Failure::Other(format!("setting aside the refused {}: {e:#}", what(&f))),
                    );
                }
            }
            rejected += 1;
        } else {
            return stop(
                pushed,
                Failure::Other(format!(
                    "pushing pending entries: {}",
                    http_error(status, &text)
                )),
            );
        }
    }
    pending::rebuild_overlay(queue, dir).map_err(|e| Failure::Other(format!("{e:#}")))?;
    Ok((pushed, rejected))
}
