//! Sync engine: conditional download of each followed project's artifact into the cache
//! (bounded: connect, stall, total and size limits), and pushing pending entries with
//! idempotency keys; the cache's own bookkeeping is `helix_client::cache`.

use crate::download::{self, Received};
use anyhow::{Context, Result};
use helix_client::cache::{
    CacheMeta, Report, compile_local, install_artifact, read_meta, record, short, temp_path,
    write_json,
};
use helix_client::config::ProjectConfig;
use helix_client::knowledge::INDEX_FILE;
use helix_client::pending;
use helix_index_format::wire::{ErrorBody, ProposalInfo, ProposalState, WriteAck};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

pub use crate::download::{MIN_BYTES_PER_SEC, NetLimits};

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
fn error_body(body: &str) -> Option<(String, String)> {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .map(|b| (b.error.code, b.error.message))
}

/// The server's current text of an entry from a `409 edit_conflict` body.
fn conflict_text(body: &str) -> Option<String> {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .and_then(|b| b.error.conflict)
        .map(|c| c.current_content)
}

/// `code: message` from a JSON error body, or the status line.
fn http_error(status: reqwest::StatusCode, body: &str) -> String {
    match error_body(body) {
        Some((code, message)) => format!("server answered {} {code}: {message}", status.as_u16()),
        None => format!("server answered {status}{}", excerpt(body)),
    }
}

/// `: <the start of body>` on one line, or nothing for an empty body.
fn excerpt(body: &str) -> String {
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

enum Failure {
    Offline(String),
    Other(String),
}

struct Ctx<'a> {
    http: &'a reqwest::blocking::Client,
    server: &'a str,
    token: Option<&'a str>,
    limits: &'a NetLimits,
}

impl Ctx<'_> {
    /// A transport failure, saying which bound gave up when it was a timeout.
    fn offline(&self, e: &reqwest::Error) -> Failure {
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

    fn req(&self, rb: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        match self.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }
}

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

/// Pushes the pending entries of `project`. Returns (pushed, rejected) counts. A pending
/// file leaves the queue only on a documented acknowledgement from the configured server,
/// or on a final refusal (then it is kept in `rejected/`).
fn push_pending(ctx: &Ctx<'_>, project: &str, dir: &Path) -> Result<(usize, usize), Failure> {
    let files = pending::list(project).map_err(|e| Failure::Other(format!("{e:#}")))?;
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
            let _ = pending::rebuild_overlay(project, dir);
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
                project,
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
    pending::rebuild_overlay(project, dir).map_err(|e| Failure::Other(format!("{e:#}")))?;
    Ok((pushed, rejected))
}

/// Asks the server what became of this client's acknowledged proposals and settles the
/// decided ones (landed: kept until an artifact has them; rejected: set aside with the
/// reason). Returns how many are still awaiting review. Failures leave them as they are.
fn follow_proposals(ctx: &Ctx<'_>, project: &str, dir: &Path) -> usize {
    let mut waiting = 0;
    for a in pending::list_acked(project) {
        let Some(id) = a.proposal.clone() else {
            continue;
        };
        let url = format!("{}/v1/projects/{project}/proposals/{id}", ctx.server);
        let info = ctx
            .req(ctx.http.get(&url))
            .send()
            .ok()
            .filter(|r| r.status() == reqwest::StatusCode::OK)
            .and_then(|r| r.json::<ProposalInfo>().ok());
        let fate = match info {
            Some(i) if i.id == id => match (i.state, i.landed) {
                (ProposalState::Approved | ProposalState::Merged, Some(l)) => {
                    Some(pending::ProposalFate::Landed {
                        id: l.id,
                        generation: l.generation,
                    })
                }
                (ProposalState::Rejected, _) => Some(pending::ProposalFate::Rejected {
                    why: format!(
                        "proposal {id} rejected by {}{}",
                        i.decided_by.as_deref().unwrap_or("a reviewer"),
                        i.reason.map(|r| format!(": {r}")).unwrap_or_default()
                    ),
                }),
                _ => None,
            },
            _ => None,
        };
        match fate {
            None => waiting += 1,
            Some(fate) => {
                if let pending::ProposalFate::Rejected { why } = &fate {
                    eprintln!(
                        "helix: {project}: {why}; the entry is kept in the pending folder's rejected/"
                    );
                }
                if let Err(e) = pending::settle_proposal(project, &a, &fate, dir) {
                    eprintln!("helix: {project}: {e:#}");
                    waiting += 1;
                }
            }
        }
    }
    waiting
}

/// Teammates' open proposals, when the project shares them (`show_proposals`): kept in the
/// overlay, which the hooks mark "proposed, unreviewed". A 404 (no longer shared) drops
/// them; other failures keep what is there.
fn share_proposals(ctx: &Ctx<'_>, project: &str, dir: &Path) {
    let url = format!("{}/v1/projects/{project}/proposals/shared", ctx.server);
    let Ok(resp) = ctx.req(ctx.http.get(&url)).send() else {
        return;
    };
    let list: Vec<pending::Proposed> = match resp.status() {
        reqwest::StatusCode::OK => {
            #[derive(serde::Deserialize)]
            struct Shared {
                proposals: Vec<ProposalInfo>,
            }
            let Ok(shared) = resp.json::<Shared>() else {
                return;
            };
            shared
                .proposals
                .into_iter()
                .filter_map(|i| {
                    let entry = i.entry?;
                    // Only what this client would accept itself reaches its overlay.
                    helix_index_format::validate_new_entry(&entry).ok()?;
                    let safe = !i.entry_id.split('/').any(|c| c.is_empty() || c == "..")
                        && i.entry_id.ends_with(".md");
                    safe.then_some(pending::Proposed {
                        id: i.id,
                        entry_id: i.entry_id,
                        author: i.author,
                        entry,
                    })
                })
                .collect()
        }
        reqwest::StatusCode::NOT_FOUND => Vec::new(),
        _ => return,
    };
    if let Err(e) = pending::set_proposed(project, &list, dir) {
        eprintln!("helix: {project}: {e:#}");
    }
}

enum Fetched {
    UpToDate(CacheMeta),
    Updated {
        old_entries: Option<u64>,
        meta: CacheMeta,
        received: Received,
    },
}

/// The conditional GET of the artifact (a patch, else the whole); `shares` says whether the
/// project shares its open proposals (the index answer's `X-Helix-Proposals: shared`).
fn fetch(
    ctx: &Ctx<'_>,
    project: &str,
    dir: &Path,
    quiet: bool,
    shares: &mut bool,
) -> Result<Fetched, Failure> {
    // A cached artifact that no longer opens (damaged on disk) must not be kept alive by a
    // 304: then ask without the ETag and download it again.
    let cache_ok = matches!(
        helix_client::knowledge::open_index(&dir.join(INDEX_FILE)),
        Ok(Some(_))
    );
    let old = read_meta(dir).filter(|_| cache_ok);
    let old_etag = old.as_ref().and_then(|m| m.etag.clone());
    // The artifact held, by content hash: the server may answer with a patch from it.
    let from = old_etag.as_deref().and_then(download::etag_hash);
    match get(ctx, project, dir, old.as_ref(), from, quiet, shares) {
        Err(Retry::Full(why)) => {
            eprintln!("helix: {project}: {why}; downloading the whole artifact");
            get(ctx, project, dir, old.as_ref(), None, quiet, shares).map_err(|r| match r {
                Retry::Full(why) => Failure::Other(why),
                Retry::No(f) => f,
            })
        }
        Err(Retry::No(f)) => Err(f),
        Ok(v) => Ok(v),
    }
}

/// Why a conditional GET gave nothing: worth asking for the whole artifact (a patch that
/// did not apply), or not.
enum Retry {
    Full(String),
    No(Failure),
}

/// One conditional GET of the index, asking for zstd and, with `from`, for a patch.
fn get(
    ctx: &Ctx<'_>,
    project: &str,
    dir: &Path,
    old: Option<&CacheMeta>,
    from: Option<&str>,
    quiet: bool,
    shares: &mut bool,
) -> Result<Fetched, Retry> {
    let mut url = format!("{}/v1/projects/{project}/index", ctx.server);
    if let Some(h) = from {
        url.push_str("?from=");
        url.push_str(&h.to_ascii_lowercase());
    }
    let mut rb = ctx
        .req(ctx.http.get(&url))
        .header(reqwest::header::ACCEPT_ENCODING, "zstd");
    if let Some(etag) = old.and_then(|m| m.etag.as_ref()) {
        rb = rb.header(reqwest::header::IF_NONE_MATCH, etag);
    }
    let mut resp = rb.send().map_err(|e| Retry::No(ctx.offline(&e)))?;
    let status = resp.status();
    *shares = resp
        .headers()
        .get("x-helix-proposals")
        .is_some_and(|v| v.as_bytes() == b"shared");
    let now = helix_client::sys::now_secs();
    if status == reqwest::StatusCode::NOT_MODIFIED {
        let mut meta = old.cloned().unwrap_or_default();
        meta.fetched_at = now;
        let _ = write_json(&dir.join("meta.json"), &meta);
        return Ok(Fetched::UpToDate(meta));
    }
    if !status.is_success() {
        let text = resp.text().unwrap_or_default();
        let mut msg = http_error(status, &text);
        if status == reqwest::StatusCode::UNAUTHORIZED {
            msg.push_str(&format!(
                "; set HELIX_TOKEN or add [servers.\"{}\"] token = \"...\" to {}",
                ctx.server,
                helix_client::paths::user_config_file().display()
            ));
        }
        return Err(Retry::No(Failure::Other(msg)));
    }
    let etag = resp
        .headers()
        .get(reqwest::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let is_patch = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim().starts_with(download::PATCH_CONTENT_TYPE));
    std::fs::create_dir_all(dir)
        .map_err(|e| Retry::No(Failure::Other(format!("creating {}: {e}", dir.display()))))?;
    let tmp = temp_path(dir);
    let res = match (is_patch, from) {
        (true, Some(h)) => download::patch(&mut resp, &dir.join(INDEX_FILE), h, &tmp, ctx.limits)
            .map_err(|e| Retry::Full(format!("patch rejected: {e:#}"))),
        // A patch nobody asked for is never taken for an artifact.
        (true, None) => Err(Retry::No(Failure::Other(
            "the server sent a patch that was not asked for".into(),
        ))),
        (false, _) => download::full(&mut resp, &tmp, ctx.limits, project, quiet)
            .map_err(|e| Retry::No(Failure::Other(format!("{e:#}")))),
    };
    let received = match res {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let (entries, commit, generation) = match install_artifact(&tmp, dir, project) {
        Ok(v) => v,
        Err(e) if received.form == download::Form::Patch => {
            return Err(Retry::Full(format!("patched artifact rejected: {e:#}")));
        }
        Err(e) => return Err(Retry::No(Failure::Other(format!("{e:#}")))),
    };
    let meta = CacheMeta {
        etag,
        commit,
        generation,
        fetched_at: now,
        entries,
    };
    write_json(&dir.join("meta.json"), &meta)
        .map_err(|e| Retry::No(Failure::Other(format!("{e:#}"))))?;
    Ok(Fetched::Updated {
        old_entries: old.map(|m| m.entries),
        meta,
        received,
    })
}

fn cache_age_note(dir: &Path) -> String {
    match read_meta(dir).filter(|_| dir.join(INDEX_FILE).exists()) {
        Some(m) => format!(
            "using cache from {} ago",
            helix_client::human::age(helix_client::sys::now_secs() - m.fetched_at)
        ),
        None => "no cache yet".to_string(),
    }
}

/// Syncs one server project: push pending entries, then fetch the artifact.
pub fn sync_project(
    http: &reqwest::blocking::Client,
    limits: &NetLimits,
    server: &str,
    token: Option<&str>,
    project: &str,
    dir: &Path,
    quiet: bool,
) -> Report {
    let ctx = Ctx {
        http,
        server,
        token,
        limits,
    };
    // Left by a sync or store that was killed: nothing else ever removes them.
    helix_client::sys::remove_stale_temps(dir);
    helix_client::sys::remove_stale_temps(&helix_client::paths::pending_dir(project));
    let fail = |f: Failure| -> Report {
        let line = match f {
            Failure::Offline(why) => {
                format!(
                    "{project}: offline: {why} ({server}), {}",
                    cache_age_note(dir)
                )
            }
            Failure::Other(why) => {
                format!(
                    "{project}: error: {why} ({server}); {}",
                    cache_age_note(dir)
                )
            }
        };
        let left = pending::count(project);
        let line = if left > 0 {
            format!("{line}; {left} pending kept")
        } else {
            line
        };
        record(dir, false, &line);
        Report {
            project: project.to_string(),
            ok: false,
            line,
        }
    };
    let (pushed, rejected) = match push_pending(&ctx, project, dir) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    let mut shares = false;
    let fetched = match fetch(&ctx, project, dir, quiet, &mut shares) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    // After the download: a proposal that landed is then usually in the cache already.
    let awaiting = follow_proposals(&ctx, project, dir);
    if shares {
        share_proposals(&ctx, project, dir);
    } else if let Err(e) = pending::set_proposed(project, &[], dir) {
        eprintln!("helix: {project}: {e:#}");
    }
    let generation = match &fetched {
        Fetched::UpToDate(m) | Fetched::Updated { meta: m, .. } => m.generation,
    };
    if let Err(e) = pending::drop_acked(project, dir, generation) {
        eprintln!("helix: {project}: {e:#}");
    }
    let mut line = match fetched {
        Fetched::UpToDate(m) => format!(
            "{project}: {}, commit {}, up to date",
            helix_client::human::entries(m.entries),
            short(&m.commit)
        ),
        Fetched::Updated {
            old_entries: Some(o),
            meta,
            received,
        } => {
            let diff = meta.entries as i64 - o as i64;
            format!(
                "{project}: updated {} → {} entries ({diff:+}), commit {}, {}",
                helix_client::human::thousands(o),
                helix_client::human::thousands(meta.entries),
                short(&meta.commit),
                received.describe()
            )
        }
        Fetched::Updated {
            old_entries: None,
            meta,
            received,
        } => format!(
            "{project}: {}, commit {}, downloaded {}",
            helix_client::human::entries(meta.entries),
            short(&meta.commit),
            received.describe()
        ),
    };
    if pushed > 0 {
        line.push_str(&format!(", pushed {pushed} pending"));
    }
    if rejected > 0 {
        line.push_str(&format!(", {rejected} rejected (see above)"));
    }
    if awaiting > 0 {
        line.push_str(&format!(", {awaiting} proposed awaiting review"));
    }
    record(dir, rejected == 0, &line);
    Report {
        project: project.to_string(),
        ok: rejected == 0,
        line,
    }
}

/// Syncs every project `cfg` follows.
pub fn sync_all(cfg: &ProjectConfig, quiet: bool) -> Result<Vec<Report>> {
    let Some(server) = cfg.server.as_deref() else {
        let mut out = Vec::new();
        for p in &cfg.projects {
            out.push(compile_local(cfg, p).unwrap_or_else(|e| Report {
                project: p.clone(),
                ok: false,
                line: format!("{p}: error: {e:#}"),
            }));
        }
        return Ok(out);
    };
    let limits = NetLimits::load()?;
    let http = http_client(server, &limits, false)?;
    let mut out = Vec::new();
    for p in &cfg.projects {
        let token = helix_client::config::token_for(server, p)?;
        out.push(sync_project(
            &http,
            &limits,
            server,
            token.as_deref(),
            p,
            &cfg.cache_dir(p),
            quiet,
        ));
    }
    Ok(out)
}

/// `helix sync`: one line per project; exit 1 when any project could not be synced (its
/// cache is then left as it was).
pub fn run(a: helix_client::commands::sync::Args) -> Result<ExitCode> {
    let cfg = helix_client::config::require(&helix_client::commands::cwd()?)?;
    let reports = sync_all(&cfg, a.quiet)?;
    let mut ok = true;
    for r in &reports {
        ok &= r.ok;
        if r.ok {
            if !a.quiet {
                println!("{}", r.line);
            }
        } else {
            // Failures always reach stderr, even with --quiet.
            eprintln!("{}", r.line);
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
