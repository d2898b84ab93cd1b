//! `helix doctor`: checks configuration, token, server reachability, cache integrity and
//! hook installation, and prints what to fix. Exit 1 when something needs fixing.

use anyhow::Result;
use helix_client::commands::doctor::Args;
use helix_client::knowledge::INDEX_FILE;
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
                Ok(r) if r.status().is_success() => out.ok(&format!("project {p} readable")),
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
            Ok(None) => out.fix(&format!("cache {p}: not synced yet"), "run `helix sync`"),
            Err(e) => out.fix(
                &format!("cache {p}: {e:#}"),
                &format!("delete {} and run `helix sync`", file.display()),
            ),
        }
        let pending = helix_client::pending::count(p);
        if pending > 0 {
            out.note(&format!(
                "{p}: {pending} pending entries (sent by the next `helix sync`)"
            ));
        }
        let rejected = helix_client::paths::pending_dir(p).join("rejected");
        if rejected.is_dir() {
            out.fix(
                &format!(
                    "{p}: entries rejected by the server are kept in {}",
                    rejected.display()
                ),
                "read the .reason files, fix the entry and `helix store` it again",
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

/// Where helix is installed for Claude Code and whether Claude Code can start it: the same
/// findings as `helix hooks status`.
fn hooks(cwd: &std::path::Path, out: &mut Out) {
    use helix_client::install::status::{self, Level};
    let report = status::scan(cwd);
    let installed = report.findings.iter().any(|f| {
        f.text.contains("helix hooks installed")
            || (f.label == "plugin" && f.level != Level::Problem)
    });
    if !installed {
        out.fix(
            "Claude Code hooks not installed",
            "run `helix hooks install` (or `--project` to commit them for the team)",
        );
    }
    for f in &report.findings {
        let what = format!("claude code {}: {}", f.label, f.text);
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
                if f.text.contains("helix hooks installed") || f.text.contains("registered;") =>
            {
                out.ok(&what)
            }
            Level::Ok => {}
        }
    }
}
