//! `helix doctor`: checks configuration, token, server reachability, cache integrity and
//! hook installation, and prints what to fix. Exit 1 when something needs fixing.

use anyhow::Result;
use helix_client::commands::doctor::Args;
use helix_client::knowledge::INDEX_FILE;
use helix_index_format::Census;
use std::process::ExitCode;

struct Out {
    problems: usize,
}

impl Out {
    fn ok(&self, what: &str) {
        println!("ok    {what}");
    }
    fn fix(&mut self, what: &str, how: &str) {
        self.problems += 1;
        println!("FIX   {what}\n      → {how}");
    }
    fn note(&self, what: &str) {
        println!("note  {what}");
    }
}

/// The server's `/status` as counts: entries, invalid files, skipped Markdown by reason.
fn census_of_status(v: &serde_json::Value) -> Census {
    let skipped = v["skipped"].as_object().into_iter().flatten();
    Census {
        entries: v["entries"].as_u64().unwrap_or(0),
        invalid: v["diagnostics"].as_array().map_or(0, |d| d.len() as u64),
        ..Census::default()
    }
    .with_skipped_keys(skipped.map(|(k, n)| (k.as_str(), n.as_u64().unwrap_or(0))))
}

/// What a project's knowledge holds, as `helix check` counts it: Markdown but no entry is
/// something to fix (the wrong folder, or a layout helix does not read).
fn knowledge_report(out: &mut Out, project: &str, census: &Census) {
    match census.warning() {
        Some(w) => out.fix(
            &format!("project {project}: {w}"),
            "point the project at the folder that holds the entries (server `subdir`, or `local` in .helix.toml), or move them into topic folders",
        ),
        None => {
            let mut line = format!(
                "project {project}: {} entries, {} invalid",
                census.entries, census.invalid
            );
            if let Some(skipped) = census.skipped_line() {
                line.push_str(&format!("; {skipped}"));
            }
            out.ok(&line);
        }
    }
}

pub fn run(_a: Args) -> Result<ExitCode> {
    let cwd = helix_client::commands::cwd()?;
    let mut out = Out { problems: 0 };
    let cfg = match helix_client::config::find(&cwd) {
        Ok(Some(c)) => {
            out.ok(&format!("config {}", c.file.display()));
            c
        }
        Ok(None) => {
            out.fix(
                "no configuration",
                &helix_client::config::missing_config_help(&cwd).replace('\n', "\n        "),
            );
            return Ok(ExitCode::from(1));
        }
        Err(e) => {
            out.fix(&format!("{e:#}"), "edit the file so it parses");
            return Ok(ExitCode::from(1));
        }
    };
    if let Err(e) = helix_client::config::UserConfig::load() {
        out.fix(&format!("{e:#}"), "fix or remove the user config file");
    }
    // Projects the server follows but serves no artifact of yet.
    let mut unserved: Vec<&str> = Vec::new();
    if let Some(server) = &cfg.server {
        let first = cfg.projects.first().map(String::as_str).unwrap_or_default();
        let token = match helix_client::config::token_for(server, first) {
            Ok(Some(_)) => {
                out.ok(&format!("token for {server}"));
                true
            }
            Ok(None) => {
                out.note(&format!(
                    "no token for {server} (fine for a local default server); to add one: HELIX_TOKEN, or [servers.\"{server}\"] token = \"...\" (or per project: [servers.\"{server}\".projects.NAME] token = \"...\") in {}",
                    helix_client::paths::user_config_file().display()
                ));
                false
            }
            Err(e) => {
                out.fix(
                    &format!("token: {e:#}"),
                    "fix token_command in the user config",
                );
                false
            }
        };
        let limits = crate::sync::NetLimits::load()?;
        let http = crate::sync::http_client(server, &limits, false)?;
        match http.get(format!("{server}/healthz")).send() {
            Ok(r) if r.status().is_success() => out.ok(&format!("server {server} reachable")),
            Ok(r) => out.fix(
                &format!("server {server} answered {} on /healthz", r.status()),
                "check the server logs",
            ),
            Err(e) => out.fix(
                &format!(
                    "server {server} unreachable: {}",
                    crate::sync::transport_reason(&e)
                ),
                "start the server or fix `server` in .helix.toml; searches keep using the cache",
            ),
        }
        for p in &cfg.projects {
            let tok = helix_client::config::token_for(server, p).ok().flatten();
            let mut rb = http.get(format!("{server}/v1/projects/{p}/status"));
            if let Some(t) = &tok {
                rb = rb.bearer_auth(t);
            }
            match rb.send() {
                Ok(r) if r.status().is_success() => {
                    out.ok(&format!("project {p} readable"));
                    match r.json::<serde_json::Value>() {
                        Ok(v) if v["commit"].is_null() => {
                            // Nothing to download yet: `helix sync` would fail too.
                            unserved.push(p.as_str());
                            let why = v["last_fetch"]["error"]
                                .as_str()
                                .map(|e| format!("; its last fetch failed: {e}"))
                                .unwrap_or_default();
                            out.fix(
                                &format!("project {p}: the server has not compiled it yet{why}"),
                                "wait for the server's first fetch of its upstream (its poll interval), or fix the upstream in the server config; `helix sync` works once the server serves it",
                            );
                        }
                        Ok(v) => knowledge_report(&mut out, p, &census_of_status(&v)),
                        Err(e) => out.note(&format!("project {p}: unreadable status: {e}")),
                    }
                }
                Ok(r) if r.status().as_u16() == 401 => out.fix(
                    &format!("project {p}: 401 unauthorized"),
                    if token {
                        "the token is wrong or revoked; get a new one"
                    } else {
                        "add a read token (see note above)"
                    },
                ),
                Ok(r) if r.status().as_u16() == 403 => out.fix(
                    &format!("project {p}: 403 forbidden"),
                    "this token cannot read that project",
                ),
                Ok(r) if r.status().as_u16() == 404 => out.fix(
                    &format!("project {p}: not on the server"),
                    "fix `projects` in .helix.toml",
                ),
                Ok(r) => out.note(&format!("project {p}: status answered {}", r.status())),
                Err(_) => {}
            }
        }
    }
    if let Some(local) = &cfg.local {
        let p = cfg.projects.first().map(String::as_str).unwrap_or("local");
        match helix_client::compile::compile_dir(local, false) {
            Ok(c) => knowledge_report(&mut out, p, &c.census),
            Err(e) => out.fix(
                &format!("local knowledge {}: {e:#}", local.display()),
                "fix `local` in .helix.toml",
            ),
        }
    }
    for p in &cfg.projects {
        let dir = cfg.cache_dir(p);
        let file = dir.join(INDEX_FILE);
        match helix_client::knowledge::open_index(&file) {
            Ok(Some(index)) => match index.verify() {
                Ok(()) => out.ok(&format!("cache {p}: {} entries, checksum ok", index.len())),
                Err(e) => out.fix(
                    &format!("cache {p}: {e}"),
                    &format!("delete {} and run `helix sync`", file.display()),
                ),
            },
            Ok(None) if unserved.contains(&p.as_str()) => {
                out.note(&format!(
                    "cache {p}: not synced yet (nothing to sync yet, see above)"
                ));
            }
            Ok(None) => out.fix(&format!("cache {p}: not synced yet"), "run `helix sync`"),
            Err(e) => out.fix(
                &format!("cache {p}: {e:#}"),
                &format!("delete {} and run `helix sync`", file.display()),
            ),
        }
        // Local mode queues nothing: its writes go straight into the knowledge directory.
        let Some(server) = cfg.server.as_deref() else {
            continue;
        };
        // Quietly: a legacy queue left where it was is reported below, once.
        let queue = helix_client::pending::PendingDir::open_quietly(server, p);
        if let Some(problem) = queue.migration_problem() {
            out.fix(
                &format!("{p}: {problem}"),
                "then `helix sync` sends them, and `helix doctor` no longer reports this",
            );
        }
        let pending = helix_client::pending::count(&queue);
        if pending > 0 {
            out.note(&format!(
                "{p}: {pending} pending entries (sent by the next `helix sync`)"
            ));
        }
        let rejected = queue.path().join("rejected");
        // The entries themselves: not the server's text kept beside a conflicting edit.
        let kept = std::fs::read_dir(&rejected)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".md") && !name.ends_with(".current.md")
            })
            .count();
        if kept > 0 {
            out.fix(
                &format!(
                    "{p}: {kept} entries rejected by the server are kept in {}",
                    rejected.display()
                ),
                "read each `<key>.reason`. An edit refused as a conflict has the server's \
                 text beside it (`<key>.current.md`): merge the two and `helix edit ID --file \
                 merged.md`. Otherwise fix the entry and `helix store` it again. Then delete \
                 the key's files from that directory",
            );
        }
    }
    hooks(&cwd, &mut out);
    if out.problems == 0 {
        println!("all good");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{} thing(s) to fix", out.problems);
        Ok(ExitCode::from(1))
    }
}

/// Where helix is installed, for every agent, and whether each agent will run it: the same
/// findings as `helix hooks status`.
fn hooks(cwd: &std::path::Path, out: &mut Out) {
    use helix_client::install::status::{self, Level};
    let report = status::scan_all(cwd);
    if !status::any_installed(&report) {
        out.fix(
            "no agent's hooks installed",
            "run `helix hooks install --agent NAME` (claude, codex, copilot, gemini, cursor; `--agent all` for every agent on this machine), with `--project` to commit them for the team",
        );
    }
    for f in &report.findings {
        let agent = helix_client::install::agents::find(f.label).is_some();
        let what = if agent {
            format!("{}: {}", f.label, f.text)
        } else {
            format!("claude code {}: {}", f.label, f.text)
        };
        match f.level {
            Level::Problem => out.fix(
                &what,
                f.fix.as_deref().unwrap_or("see `helix hooks status`"),
            ),
            Level::Note => out.note(&match &f.fix {
                Some(fix) => format!("{what} ({fix})"),
                None => what,
            }),
            Level::Ok
                if agent
                    || f.text.contains("helix hooks installed")
                    || f.text.contains("registered;") =>
            {
                out.ok(&what)
            }
            Level::Ok => {}
        }
    }
}
