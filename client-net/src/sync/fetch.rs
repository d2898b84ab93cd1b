//! The conditional GET of a project's artifact within `NetLimits`: a patch from the cached
//! one, else (or when the patch fails) the whole, installed into the cache.

use super::http::{Ctx, Failure, http_error};
use crate::download::{self, Received};
use helix_client::cache::{CacheMeta, install_artifact, read_meta, temp_path, write_json};
use helix_client::knowledge::INDEX_FILE;
use std::path::Path;

pub(super) enum Fetched {
    UpToDate(CacheMeta),
    Updated {
        old_entries: Option<u64>,
        meta: CacheMeta,
        received: Received,
    },
}

/// The conditional GET of the artifact (a patch, else the whole); `shares` says whether the
/// project shares its open proposals (the index answer's `X-Helix-Proposals: shared`).
pub(super) fn fetch(
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
