//! Sync engine: per followed project, push pending entries, download its artifact and follow
//! proposals (the driver here), then send its usage report (`usage.rs`); the cache's own
//! bookkeeping is `helix_client::cache`.

mod fetch;
mod http;
pub mod model;
mod proposals;
mod push;
pub mod usage;

use anyhow::Result;
use fetch::{Fetched, fetch};
use helix_client::cache::{Report, commit_note, compile_local_with, empty_note, read_meta, record};
use helix_client::config::ProjectConfig;
use helix_client::knowledge::INDEX_FILE;
use helix_client::pending::{self, PendingDir};
use http::{Ctx, Failure};
use proposals::{follow_proposals, share_proposals};
use push::push_pending;
use std::path::Path;
use std::process::ExitCode;

pub use crate::download::{MIN_BYTES_PER_SEC, NetLimits};
pub use http::{http_client, transport_reason};

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
    // This server's queue of the project (a queue of an earlier helix moved into it first).
    let queue = PendingDir::open(server, project);
    // Left by a sync or store that was killed: nothing else ever removes them.
    helix_client::sys::remove_stale_temps(dir);
    helix_client::sys::remove_stale_temps(queue.path());
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
        let left = pending::count(&queue);
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
    let (pushed, rejected) = match push_pending(&ctx, &queue, dir) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    let mut shares = false;
    let fetched = match fetch(&ctx, project, dir, quiet, &mut shares) {
        Ok(v) => v,
        Err(f) => return fail(f),
    };
    // After the download: a proposal that landed is then usually in the cache already.
    let awaiting = follow_proposals(&ctx, &queue, dir);
    if shares {
        share_proposals(&ctx, &queue, dir);
    } else if let Err(e) = pending::set_proposed(&queue, &[], dir) {
        eprintln!("helix: {project}: {e:#}");
    }
    let generation = match &fetched {
        Fetched::UpToDate(m) | Fetched::Updated { meta: m, .. } => m.generation,
    };
    if let Err(e) = pending::drop_acked(&queue, dir, generation) {
        eprintln!("helix: {project}: {e:#}");
    }
    let mut line = match fetched {
        Fetched::UpToDate(m) => format!(
            "{project}: {}, {}, up to date{}",
            helix_client::human::entries(m.entries),
            commit_note(&m.commit),
            empty_note(m.entries)
        ),
        Fetched::Updated {
            old_entries: Some(o),
            meta,
            received,
        } => {
            let diff = meta.entries as i64 - o as i64;
            format!(
                "{project}: updated {} → {} entries ({diff:+}), {}, {}{}",
                helix_client::human::thousands(o),
                helix_client::human::thousands(meta.entries),
                commit_note(&meta.commit),
                received.describe(),
                empty_note(meta.entries)
            )
        }
        Fetched::Updated {
            old_entries: None,
            meta,
            received,
        } => format!(
            "{project}: {}, {}, downloaded {}{}",
            helix_client::human::entries(meta.entries),
            commit_note(&meta.commit),
            received.describe(),
            empty_note(meta.entries)
        ),
    };
    if pushed > 0 {
        line.push_str(&format!(", pushed {pushed} pending"));
    }
    if rejected > 0 {
        line.push_str(&format!(
            ", {rejected} rejected (kept aside: see `helix doctor`)"
        ));
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

/// What `helix sync` did: one report per project, then the usage reports' lines.
#[derive(Debug, Default)]
pub struct Synced {
    pub reports: Vec<Report>,
    /// Per project, what its usage report did (`usage::Outcome::line`).
    pub usage: Vec<(String, usage::Outcome)>,
    /// What syncing the server's embedding model did (server mode, a project synced).
    pub model: Option<model::ModelSync>,
}

/// Syncs every project `cfg` follows, then, for each one synced without error and unless the
/// user config's `[usage] report = false`, sends its usage report.
pub fn sync_all(cfg: &ProjectConfig, quiet: bool) -> Result<Synced> {
    let Some(server) = cfg.server.as_deref() else {
        // Local mode embeds with the model the warm embedder uses, when there is one.
        // A model that does not load costs the vectors of new entries, not the sync.
        let embedder = crate::embedder::LocalEmbedder::find().unwrap_or_else(|e| {
            eprintln!("helix: warning: {e:#}; compiling without new embeddings");
            None
        });
        let embedder = embedder
            .as_ref()
            .map(|e| e as &dyn helix_client::cache::EmbedEntries);
        let mut out = Vec::new();
        for p in &cfg.projects {
            out.push(
                compile_local_with(cfg, p, embedder).unwrap_or_else(|e| Report {
                    project: p.clone(),
                    ok: false,
                    line: format!("{p}: error: {e:#}"),
                }),
            );
        }
        return Ok(Synced {
            reports: out,
            usage: Vec::new(),
            model: None,
        });
    };
    let limits = NetLimits::load()?;
    let http = http_client(server, &limits, false)?;
    let mut out = Synced::default();
    let mut tokens = Vec::new();
    for p in &cfg.projects {
        let token = helix_client::config::token_for(server, p)?;
        out.reports.push(sync_project(
            &http,
            &limits,
            server,
            token.as_deref(),
            p,
            &cfg.cache_dir(p),
            quiet,
        ));
        tokens.push(token);
    }
    // The embedding model, when the server has one and answered for a project: never fails
    // the sync (a failure keeps the model there was).
    if out.reports.iter().any(|r| r.ok) {
        let ctx = Ctx {
            http: &http,
            server,
            token: tokens.iter().flatten().next().map(String::as_str),
            limits: &limits,
        };
        out.model = Some(model::sync_model(
            &ctx,
            &helix_client::semantic::models_dir(),
        ));
    }
    // After everything else, so a report never delays a download or a push.
    if !report_usage() {
        return Ok(out);
    }
    let (mut log, mut writer) = (None, None);
    for ((p, token), r) in cfg.projects.iter().zip(&tokens).zip(&out.reports) {
        if !r.ok {
            continue;
        }
        let ctx = Ctx {
            http: &http,
            server,
            token: token.as_deref(),
            limits: &limits,
        };
        let outcome = usage::report(&ctx, p, &mut log, &mut writer);
        out.usage.push((p.clone(), outcome));
    }
    Ok(out)
}

/// The user config's `[usage] report` (default on; an unreadable config was already told by
/// the token lookup, and then sends nothing).
fn report_usage() -> bool {
    helix_client::config::UserConfig::load().is_ok_and(|c| c.usage.report())
}

/// `helix sync`: one line per project; exit 1 when any project could not be synced (its
/// cache is then left as it was). Usage reports add a line on stderr and never change the
/// exit status.
pub fn run(a: helix_client::commands::sync::Args) -> Result<ExitCode> {
    let cfg = helix_client::config::require(&helix_client::commands::cwd()?)?;
    let synced = sync_all(&cfg, a.quiet)?;
    let mut ok = true;
    for r in &synced.reports {
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
    if let Some(line) = synced.model.as_ref().and_then(model::ModelSync::line)
        && !a.quiet
    {
        eprintln!("{line}");
    }
    for (project, outcome) in &synced.usage {
        if let Some((line, even_quiet)) = outcome.line(project)
            && (even_quiet || !a.quiet)
        {
            eprintln!("{line}");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
