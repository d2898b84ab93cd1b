//! Sync engine: conditional download of each followed project's artifact into the cache
//! (temp file, full verify, project check, then atomic rename), pushing pending entries
//! with idempotency keys, and local-mode compilation with the `helix build` code path.

use crate::config::ProjectConfig;
use crate::knowledge::INDEX_FILE;
use crate::pending;
use anyhow::{Context, Result, anyhow};
use helix_index_format::Index;
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `meta.json` next to a cached artifact.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheMeta {
    pub etag: Option<String>,
    pub commit: String,
    pub generation: u64,
    /// Unix seconds of the last successful check with the server (or local compile).
    pub fetched_at: i64,
    pub entries: u64,
}

/// `last_sync.json`: the result of the last sync attempt of one project.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LastSync {
    pub at: i64,
    pub ok: bool,
    pub message: String,
}

/// Downloads bigger than this get a progress bar (on a terminal).
const PROGRESS_BYTES: u64 = 4 << 20;

pub fn read_meta(dir: &Path) -> Option<CacheMeta> {
    let text = std::fs::read(dir.join("meta.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

pub fn read_last_sync(dir: &Path) -> Option<LastSync> {
    let text = std::fs::read(dir.join("last_sync.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(v).expect("serialising plain structs cannot fail");
    crate::paths::write_atomic_nosync(path, &bytes)
        .with_context(|| format!("writing {}", path.display()))
}

fn record(dir: &Path, ok: bool, message: &str) {
    let _ = std::fs::create_dir_all(dir);
    let _ = write_json(
        &dir.join("last_sync.json"),
        &LastSync {
            at: crate::compile::now_secs(),
            ok,
            message: message.to_string(),
        },
    );
}

/// Outcome of syncing one project: the line to print and whether it succeeded.
#[derive(Debug, Clone)]
pub struct Report {
    #[allow(dead_code)] // for callers that act per project; the CLI only prints `line`
    pub project: String,
    pub ok: bool,
    pub line: String,
}

/// Verifies `bytes`-backed artifact at `tmp` and installs it as `dir/index.hix`.
/// Returns the artifact's entry count, commit and generation.
pub fn install_artifact(tmp: &Path, dir: &Path, project: &str) -> Result<(u64, String, u64)> {
    let res = (|| {
        let map =
            crate::knowledge::map_file(tmp)?.ok_or_else(|| anyhow!("downloaded file vanished"))?;
        let index = Index::open(map).map_err(|e| anyhow!("download rejected: {e}"))?;
        index
            .verify()
            .map_err(|e| anyhow!("download rejected: {e}"))?;
        let meta = index
            .meta()
            .map_err(|e| anyhow!("download rejected: {e}"))?;
        if meta.project != project {
            return Err(anyhow!(
                "download rejected: artifact is for project `{}`, expected `{project}`",
                meta.project
            ));
        }
        Ok((
            u64::from(meta.entry_count),
            meta.commit.to_string(),
            meta.generation,
        ))
    })();
    match res {
        Ok(v) => {
            std::fs::rename(tmp, dir.join(INDEX_FILE))
                .with_context(|| format!("installing {}", dir.join(INDEX_FILE).display()))?;
            Ok(v)
        }
        Err(e) => {
            let _ = std::fs::remove_file(tmp);
            Err(e)
        }
    }
}

fn temp_path(dir: &Path) -> PathBuf {
    dir.join(format!(
        ".download.{}.{:08x}.tmp",
        std::process::id(),
        rand::random::<u32>()
    ))
}

/// Compiles the local knowledge directory into the local cache (local mode), with the same
/// code as `helix build`. Returns the report line.
pub fn compile_local(cfg: &ProjectConfig, project: &str) -> Result<Report> {
    let local = cfg
        .local
        .as_ref()
        .ok_or_else(|| anyhow!("{} has no `local` directory", cfg.file.display()))?;
    let dir = cfg.cache_dir(project);
    let old = read_meta(&dir);
    let meta = std::fs::metadata(local).with_context(|| {
        format!(
            "local knowledge directory {} (from {})",
            local.display(),
            cfg.file.display()
        )
    })?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory", local.display());
    let c = crate::compile::compile_dir(local, true)?;
    for d in &c.diagnostics {
        eprintln!("{d}");
    }
    let generation = old.as_ref().map_or(1, |m| m.generation + 1);
    let bytes = crate::compile::to_artifact(&c, project, generation)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = temp_path(&dir);
    crate::paths::write_atomic(&tmp, &bytes)
        .with_context(|| format!("writing {}", tmp.display()))?;
    let (entries, commit, generation) = install_artifact(&tmp, &dir, project)?;
    let etag = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    write_json(
        &dir.join("meta.json"),
        &CacheMeta {
            etag: Some(etag),
            commit: commit.clone(),
            generation,
            fetched_at: crate::compile::now_secs(),
            entries,
        },
    )?;
    let was = old.map(|m| m.entries);
    let mut line = format!(
        "{project}: {} from {}",
        crate::commands::entries(entries),
        local.display()
    );
    if !commit.is_empty() {
        line.push_str(&format!(", commit {}", short(&commit)));
    }
    if let Some(w) = was.filter(|w| *w != entries) {
        line.push_str(&format!(", was {}", crate::commands::thousands(w)));
    }
    if !c.diagnostics.is_empty() {
        line.push_str(&format!(", {} invalid (see above)", c.diagnostics.len()));
    }
    record(&dir, true, &line);
    Ok(Report {
        project: project.to_string(),
        ok: true,
        line,
    })
}

fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// The blocking HTTP client for `server`: short connect timeout so an unreachable server
/// never hangs; `timeout` bounds a whole request including the body.
pub fn http_client(server: &str, timeout: Duration) -> Result<reqwest::blocking::Client> {
    let mut b = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(timeout)
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

/// `code: message` from a JSON error body, or the status line.
fn http_error(status: reqwest::StatusCode, body: &str) -> String {
    #[derive(Deserialize)]
    struct Inner {
        code: String,
        message: String,
    }
    #[derive(Deserialize)]
    struct Outer {
        error: Inner,
    }
    match serde_json::from_str::<Outer>(body) {
        Ok(o) => format!(
            "server answered {} {}: {}",
            status.as_u16(),
            o.error.code,
            o.error.message
        ),
        Err(_) => {
            let b: String = body.chars().take(200).collect();
            format!(
                "server answered {status}{}",
                if b.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", b.trim())
                }
            )
        }
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
}

impl Ctx<'_> {
    fn req(&self, rb: reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder {
        match self.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }
}

/// Pushes the pending entries of `project`. Returns (pushed, rejected) counts.
fn push_pending(ctx: &Ctx<'_>, project: &str) -> Result<(usize, usize), Failure> {
    let files = pending::list(project).map_err(|e| Failure::Other(format!("{e:#}")))?;
    let (mut pushed, mut rejected) = (0, 0);
    let url = format!("{}/v1/projects/{project}/entries", ctx.server);
    for f in files {
        let body = serde_json::json!({
            "topic": f.new.topic, "title": f.new.title, "body": f.new.body,
            "tags": f.new.tags, "sources": f.new.sources,
        });
        let resp = ctx
            .req(ctx.http.post(&url).timeout(Duration::from_secs(30)))
            .header("Idempotency-Key", &f.key)
            .json(&body)
            .send();
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                if pushed > 0 {
                    let _ = pending::rebuild_overlay(project);
                }
                return Err(Failure::Offline(transport_reason(&e)));
            }
        };
        let status = resp.status();
        if status == reqwest::StatusCode::OK || status == reqwest::StatusCode::CREATED {
            // Acknowledged: only now may the file leave the push queue. A crash before this
            // leaves it in place; the retry carries the same key and the server answers 200.
            // It stays visible (overlay) until a synced artifact of that generation arrives.
            #[derive(Deserialize)]
            struct Created {
                id: String,
                generation: u64,
            }
            let created = resp.json::<Created>().ok();
            let moved = created
                .as_ref()
                .is_some_and(|c| pending::mark_acked(project, &f, &c.id, c.generation).is_ok());
            if !moved {
                let _ = std::fs::remove_file(&f.path);
            }
            pushed += 1;
        } else if status == reqwest::StatusCode::UNPROCESSABLE_ENTITY
            || status == reqwest::StatusCode::BAD_REQUEST
            || status == reqwest::StatusCode::PAYLOAD_TOO_LARGE
        {
            // The server will never accept it: keep it, out of the push queue, with the reason.
            let text = resp.text().unwrap_or_default();
            let why = http_error(status, &text);
            let dir = f
                .path
                .parent()
                .map(|p| p.join("rejected"))
                .unwrap_or_default();
            let _ = std::fs::create_dir_all(&dir);
            let dest = dir.join(format!("{}.md", f.key));
            let _ = std::fs::write(dir.join(format!("{}.reason", f.key)), format!("{why}\n"));
            let _ = std::fs::rename(&f.path, &dest);
            eprintln!(
                "helix: {project}: entry `{}` rejected ({why}); kept in {}",
                f.new.title,
                dest.display()
            );
            rejected += 1;
        } else {
            if pushed > 0 {
                let _ = pending::rebuild_overlay(project);
            }
            let text = resp.text().unwrap_or_default();
            return Err(Failure::Other(format!(
                "pushing pending entries: {}",
                http_error(status, &text)
            )));
        }
    }
    if pushed + rejected > 0 {
        pending::rebuild_overlay(project).map_err(|e| Failure::Other(format!("{e:#}")))?;
    }
    Ok((pushed, rejected))
}

enum Fetched {
    UpToDate(CacheMeta),
    Updated {
        old_entries: Option<u64>,
        meta: CacheMeta,
    },
}

fn fetch(ctx: &Ctx<'_>, project: &str, dir: &Path, quiet: bool) -> Result<Fetched, Failure> {
    // A cached artifact that no longer opens (damaged on disk) must not be kept alive by a
    // 304: then ask without the ETag and download it again.
    let cache_ok = matches!(
        crate::knowledge::open_index(&dir.join(INDEX_FILE)),
        Ok(Some(_))
    );
    let old = read_meta(dir).filter(|_| cache_ok);
    let url = format!("{}/v1/projects/{project}/index", ctx.server);
    let mut rb = ctx.req(ctx.http.get(&url));
    if let Some(etag) = old.as_ref().and_then(|m| m.etag.as_ref()) {
        rb = rb.header(reqwest::header::IF_NONE_MATCH, etag);
    }
    let mut resp = rb
        .send()
        .map_err(|e| Failure::Offline(transport_reason(&e)))?;
    let status = resp.status();
    let now = crate::compile::now_secs();
    if status == reqwest::StatusCode::NOT_MODIFIED {
        let mut meta = old.unwrap_or_default();
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
                crate::paths::user_config_file().display()
            ));
        }
        return Err(Failure::Other(msg));
    }
    let etag = resp
        .headers()
        .get(reqwest::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Other(format!("creating {}: {e}", dir.display())))?;
    let tmp = temp_path(dir);
    let len = resp.content_length();
    let res = (|| -> Result<()> {
        let mut file =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let show =
            !quiet && std::io::stderr().is_terminal() && len.is_some_and(|l| l >= PROGRESS_BYTES);
        if show {
            let pb = indicatif::ProgressBar::new(len.unwrap_or(0));
            pb.set_message(project.to_string());
            let mut r = pb.wrap_read(&mut resp);
            std::io::copy(&mut r, &mut file).map_err(|e| anyhow!("download interrupted: {e}"))?;
            pb.finish_and_clear();
        } else {
            std::io::copy(&mut resp, &mut file)
                .map_err(|e| anyhow!("download interrupted: {e}"))?;
        }
        file.sync_all()?;
        if let Some(l) = len {
            let got = file.metadata()?.len();
            anyhow::ensure!(
                got == l,
                "download rejected: truncated ({got} of {l} bytes)"
            );
        }
        Ok(())
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(Failure::Other(format!("{e:#}")));
    }
    let (entries, commit, generation) =
        install_artifact(&tmp, dir, project).map_err(|e| Failure::Other(format!("{e:#}")))?;
    let meta = CacheMeta {
        etag,
        commit,
        generation,
        fetched_at: now,
        entries,
    };
    write_json(&dir.join("meta.json"), &meta).map_err(|e| Failure::Other(format!("{e:#}")))?;
    Ok(Fetched::Updated {
        old_entries: old.map(|m| m.entries),
        meta,
    })
}

fn cache_age_note(dir: &Path) -> String {
    match read_meta(dir).filter(|_| dir.join(INDEX_FILE).exists()) {
        Some(m) => format!(
            "using cache from {} ago",
            crate::commands::age(crate::compile::now_secs() - m.fetched_at)
        ),
        None => "no cache yet".to_string(),
    }
}

/// Syncs one server project: push pending entries, then fetch the artifact.
pub fn sync_project(
    http: &reqwest::blocking::Client,
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
    };
    let fail = |f: Failure| -> Report {
        let line = match f {
            Failure::Offline(why) => format!("{project}: offline: {why}, {}", cache_age_note(dir)),
            Failure::Other(why) => format!("{project}: error: {why}; {}", cache_age_note(dir)),
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
    let (pushed, rejected) = match push_pending(&ctx, project) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    let fetched = match fetch(&ctx, project, dir, quiet) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    let generation = match &fetched {
        Fetched::UpToDate(m) | Fetched::Updated { meta: m, .. } => m.generation,
    };
    if let Err(e) = pending::drop_acked(project, generation) {
        eprintln!("helix: {project}: {e:#}");
    }
    let mut line = match fetched {
        Fetched::UpToDate(m) => format!(
            "{project}: {}, commit {}, up to date",
            crate::commands::entries(m.entries),
            short(&m.commit)
        ),
        Fetched::Updated {
            old_entries: Some(o),
            meta,
        } => {
            let diff = meta.entries as i64 - o as i64;
            format!(
                "{project}: updated {} → {} entries ({diff:+}), commit {}",
                crate::commands::thousands(o),
                crate::commands::thousands(meta.entries),
                short(&meta.commit)
            )
        }
        Fetched::Updated {
            old_entries: None,
            meta,
        } => format!(
            "{project}: {}, commit {}, downloaded",
            crate::commands::entries(meta.entries),
            short(&meta.commit)
        ),
    };
    if pushed > 0 {
        line.push_str(&format!(", pushed {pushed} pending"));
    }
    if rejected > 0 {
        line.push_str(&format!(", {rejected} rejected (see above)"));
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
    let http = http_client(server, Duration::from_secs(60))?;
    let mut out = Vec::new();
    for p in &cfg.projects {
        let token = crate::config::token_for(server, p)?;
        out.push(sync_project(
            &http,
            server,
            token.as_deref(),
            p,
            &cfg.cache_dir(p),
            quiet,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use helix_index_format::{BuildInfo, Entry, SearchOptions};

    fn artifact(project: &str, ids: &[&str]) -> Vec<u8> {
        let entries: Vec<Entry> = ids
            .iter()
            .map(|id| Entry {
                id: id.to_string(),
                topic: id.split('/').next().unwrap().to_string(),
                title: format!("About {id}"),
                body: format!("unique words for {id} zebra"),
                ..Default::default()
            })
            .collect();
        let info = BuildInfo {
            project: project.into(),
            commit: "c0ffee".into(),
            generation: 1,
            build_time: 0,
        };
        helix_index_format::build(&entries, &info).unwrap()
    }

    #[test]
    fn installing_over_a_mapped_artifact_leaves_the_old_mapping_readable() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("a.tmp");
        std::fs::write(&tmp, artifact("p", &["a/one.md"])).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();
        let old = crate::knowledge::open_index(&dir.path().join(INDEX_FILE))
            .unwrap()
            .unwrap();

        let tmp = dir.path().join("b.tmp");
        std::fs::write(&tmp, artifact("p", &["b/two.md", "b/three.md"])).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();

        // The old mapping still sees the old inode, whole and valid.
        old.verify().unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(
            old.search("zebra", &SearchOptions::default()).unwrap()[0]
                .entry
                .id,
            "a/one.md"
        );
        let new = crate::knowledge::open_index(&dir.path().join(INDEX_FILE))
            .unwrap()
            .unwrap();
        assert_eq!(new.len(), 2);
    }

    #[test]
    fn rejected_install_keeps_the_old_artifact_and_removes_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("a.tmp");
        let good = artifact("p", &["a/one.md"]);
        std::fs::write(&tmp, &good).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();
        let tmp = dir.path().join("b.tmp");
        std::fs::write(&tmp, artifact("q", &["a/one.md"])).unwrap();
        let err = install_artifact(&tmp, dir.path(), "p")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("artifact is for project `q`, expected `p`"),
            "{err}"
        );
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(dir.path().join(INDEX_FILE)).unwrap(), good);
    }
}
