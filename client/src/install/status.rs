//! Where helix is installed for Claude Code, seen from a directory: the hooks in each
//! settings file, the MCP registrations, enabled helix plugins — and what will not work (a
//! program that does not resolve, hook texts naming tools no server provides) or runs twice.
//! `helix hooks status` prints it; `helix doctor` reports the same findings.

use super::files::load;
use super::ordered::Value;
use super::resolve::{self, NET_BINARY};
use super::settings::{self, HelixCommand};
use super::{mcp, plugin};
use crate::hook::agent::claude::{BINDINGS as HOOKS, DEFAULT_PREFIX};
use std::path::{Path, PathBuf};

/// How a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    /// Works, but worth knowing (a duplicate installation).
    Note,
    /// Will not work as installed: `status` and `doctor` exit non-zero.
    Problem,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Finding {
    pub level: Level,
    /// `user`, `project`, `project-local`, `mcp`, `mcp-user`, `mcp-local`, `plugin`, …
    pub label: &'static str,
    pub text: String,
    /// What to do about a note or problem.
    pub fix: Option<String>,
}

impl Finding {
    pub(crate) fn new(level: Level, label: &'static str, text: String) -> Finding {
        Finding {
            level,
            label,
            text,
            fix: None,
        }
    }

    pub(crate) fn fix(mut self, how: impl Into<String>) -> Finding {
        self.fix = Some(how.into());
        self
    }
}

/// Everything the scan found.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    /// Whether anything will not work.
    pub fn has_problems(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Problem)
    }
}

/// What one settings file holds of helix.
struct Scope {
    label: &'static str,
    path: PathBuf,
    commands: Vec<HelixCommand>,
    plugins: Vec<String>,
}

/// Scans every place Claude Code reads helix from, for a session started in `cwd`.
pub fn scan(cwd: &Path) -> Report {
    let dir = resolve::project_dir(cwd);
    let mut r = Report::default();
    let mut files: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Ok(u) = resolve::user_settings() {
        files.push(("user", u));
    }
    files.push(("project", dir.join(".claude").join("settings.json")));
    files.push((
        "project-local",
        dir.join(".claude").join("settings.local.json"),
    ));
    let mut scopes = Vec::new();
    let mut mcpjson_enabled = false;
    for (label, path) in files {
        if let Some(doc) = load_reporting(label, &path, &mut r) {
            mcpjson_enabled |= label != "user" && settings::mcpjson_server_enabled(&doc);
            let scope = Scope {
                label,
                commands: settings::helix_commands(&doc),
                plugins: settings::helix_plugins(&doc),
                path,
            };
            describe_hooks(&scope, &mut r);
            scopes.push(scope);
        }
    }
    let servers = describe_servers(&dir, mcpjson_enabled, &mut r);
    describe_plugins(&scopes, &mut r);
    check_tool_names(&scopes, &servers, &mut r);
    check_duplicates(&scopes, &mut r);
    r
}

/// [`scan`] for Claude Code, then what every other agent has of helix (only the agents
/// with helix hooks in a scope say anything).
pub fn scan_all(cwd: &Path) -> Report {
    let mut r = scan(cwd);
    for inst in super::agents::INSTALLERS {
        r.findings.extend(super::agents::findings(inst, cwd));
    }
    r
}

/// Whether any agent has helix's hooks installed (or the Claude Code plugin enabled).
pub fn any_installed(report: &Report) -> bool {
    report.findings.iter().any(|f| {
        f.text.contains("helix hooks installed")
            || (f.label == "plugin" && f.level != Level::Problem)
            || (super::agents::find(f.label).is_some() && f.text.contains(" installed;"))
    })
}

/// The document at `path`; a missing file is reported as such, invalid JSON as a problem.
fn load_reporting(label: &'static str, path: &Path, r: &mut Report) -> Option<Value> {
    match load(path) {
        Err(e) => {
            r.findings
                .push(Finding::new(Level::Problem, label, format!("{e:#}")));
            None
        }
        Ok(None) => {
            r.findings.push(Finding::new(
                Level::Ok,
                label,
                format!("{}: no file", path.display()),
            ));
            None
        }
        Ok(Some((doc, _))) => Some(doc),
    }
}

fn describe_hooks(s: &Scope, r: &mut Report) {
    if s.commands.is_empty() {
        r.findings.push(Finding::new(
            Level::Ok,
            s.label,
            format!("{}: no helix hooks", s.path.display()),
        ));
        return;
    }
    let names: Vec<&str> = s.commands.iter().map(|c| c.hook.as_str()).collect();
    let missing: Vec<&str> = HOOKS
        .iter()
        .map(|h| h.hook)
        .filter(|h| !names.contains(h))
        .collect();
    let mut programs: Vec<&str> = s.commands.iter().map(|c| c.program.as_str()).collect();
    programs.sort_unstable();
    programs.dedup();
    let unresolved: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| resolve::resolve(p).is_none())
        .collect();
    let progs: Vec<String> = programs
        .iter()
        .map(|p| {
            let state = if unresolved.contains(p) {
                "MISSING"
            } else {
                "found"
            };
            format!("{p} ({state})")
        })
        .collect();
    let mut text = format!(
        "{}: {} of {} helix hooks installed ({}); binary: {}",
        s.path.display(),
        HOOKS.len() - missing.len(),
        HOOKS.len(),
        names.join(", "),
        progs.join(", ")
    );
    if !missing.is_empty() {
        text.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    let level = if unresolved.is_empty() {
        Level::Ok
    } else {
        Level::Problem
    };
    let mut f = Finding::new(level, s.label, text);
    if let Some(p) = unresolved.first() {
        f = f.fix(not_found_fix(p, s.label != "user"));
    }
    r.findings.push(f);
}

/// How to fix a program Claude Code cannot run.
fn not_found_fix(program: &str, project: bool) -> String {
    let again = if project {
        "`helix hooks install --project`"
    } else {
        "`helix hooks install`"
    };
    if program.contains('/') {
        format!(
            "{program} does not exist (moved or uninstalled): run {again} again with the helix you use now"
        )
    } else {
        format!(
            "`{program}` is not on PATH here, so Claude Code cannot start it: put the directory holding helix on PATH \
             (cargo installs into ~/.cargo/bin), or run {again} with `--absolute` to name this machine's binary"
        )
    }
}

/// Which tool-name prefixes a session in this directory has helix MCP tools under.
struct Servers {
    /// `mcp__helix__` is provided (by `.mcp.json`, the user or the local registration).
    default: bool,
}

fn describe_servers(dir: &Path, mcpjson_enabled: bool, r: &mut Report) -> Servers {
    let mut default = false;
    let path = dir.join(".mcp.json");
    if let Some(doc) = load_reporting("mcp", &path, r) {
        let approved = if mcpjson_enabled {
            "; approved in enabledMcpjsonServers"
        } else {
            ""
        };
        default |= server_finding("mcp", &path, mcp::entry(&doc), approved, r);
    }
    let Ok(global) = resolve::global_config() else {
        return Servers { default };
    };
    if let Some(doc) = load_reporting("mcp-user", &global, r) {
        default |= server_finding("mcp-user", &global, mcp::entry(&doc), "", r);
        let key = dir.to_string_lossy();
        if let Some(e) = mcp::local_entry(&doc, &key) {
            default |= server_finding("mcp-local", &global, Some(e), "", r);
        }
    }
    Servers { default }
}

/// Reports one `helix` server entry; returns whether it provides the tools.
fn server_finding(
    label: &'static str,
    path: &Path,
    entry: Option<&Value>,
    extra: &str,
    r: &mut Report,
) -> bool {
    let Some(entry) = entry else {
        r.findings.push(Finding::new(
            Level::Ok,
            label,
            format!("{}: helix MCP server not registered", path.display()),
        ));
        return false;
    };
    let Some(program) = mcp::command(entry).filter(|_| mcp::is_ours(entry)) else {
        r.findings.push(Finding::new(
            Level::Note,
            label,
            format!(
                "{}: a different `helix` MCP server is registered",
                path.display()
            ),
        ));
        return true;
    };
    let text = format!(
        "{}: helix MCP server registered{extra}; runs {program}",
        path.display()
    );
    match resolve::resolve(program) {
        None => r.findings.push(
            Finding::new(Level::Problem, label, format!("{text} (MISSING)"))
                .fix(not_found_fix(program, label == "mcp")),
        ),
        Some(found) if !resolve::net_beside(&found) => r.findings.push(
            Finding::new(
                Level::Problem,
                label,
                format!("{text} (found, but no {NET_BINARY} beside it)"),
            )
            .fix(format!(
                "`helix mcp` runs {NET_BINARY} from {}: install it there (`cargo install --locked --path client-net` from the helix repository)",
                resolve::dir_of(&found.canonicalize().unwrap_or(found.clone()))
            )),
        ),
        Some(_) => r
            .findings
            .push(Finding::new(Level::Ok, label, format!("{text} (found)"))),
    }
    true
}

fn describe_plugins(scopes: &[Scope], r: &mut Report) {
    let found = resolve::on_path("helix").or_else(plugin::cargo_helix);
    for s in scopes {
        for id in &s.plugins {
            let text = format!(
                "{}: plugin {id} enabled (its hooks and MCP server run `helix` from PATH, else ~/.cargo/bin)",
                s.path.display()
            );
            r.findings.push(match &found {
                Some(_) => Finding::new(Level::Ok, "plugin", text),
                None => Finding::new(
                    Level::Problem,
                    "plugin",
                    format!("{text}; no helix binary in either place"),
                )
                .fix("install helix: `cargo install --locked --path client` and `--path client-net` from the helix repository"),
            });
        }
    }
}

/// Hooks whose texts name `mcp__helix__…` tools while no such server is registered would send
/// the model after tools that do not exist.
fn check_tool_names(scopes: &[Scope], servers: &Servers, r: &mut Report) {
    for s in scopes {
        let names_default = s
            .commands
            .iter()
            .any(|c| c.mcp.is_none() || c.mcp.as_deref() == Some(DEFAULT_PREFIX));
        if names_default && !servers.default {
            let again = if s.label == "user" {
                "`helix hooks install`"
            } else {
                "`helix hooks install --project`"
            };
            r.findings.push(
                Finding::new(
                    Level::Problem,
                    s.label,
                    format!(
                        "{}: the hooks point the model at {DEFAULT_PREFIX}* tools, but no helix MCP server is registered for this directory",
                        s.path.display()
                    ),
                )
                .fix(format!(
                    "run {again} again (it registers the server), or with `--no-mcp` for hooks that name only the helix CLI"
                )),
            );
        }
    }
}

fn check_duplicates(scopes: &[Scope], r: &mut Report) {
    let mut sources: Vec<String> = scopes
        .iter()
        .filter(|s| !s.commands.is_empty())
        .map(|s| format!("{} settings", s.label))
        .collect();
    let plugins: Vec<&String> = scopes.iter().flat_map(|s| &s.plugins).collect();
    sources.extend(plugins.iter().map(|p| format!("plugin {p}")));
    if sources.len() > 1 {
        r.findings.push(
            Finding::new(
                Level::Note,
                "duplicate",
                format!(
                    "helix hooks are installed {} times ({}): Claude Code runs each handler; helix answers once per event and the duplicates exit at once",
                    sources.len(),
                    sources.join(", ")
                ),
            )
            .fix("keep one: `helix hooks uninstall` (user) or `helix hooks uninstall --project`, or disable the plugin"),
        );
    }
}

/// Prints the report as `helix hooks status` does: one `label: text` line per finding.
pub fn print(report: &Report) {
    for f in &report.findings {
        println!("{}: {}", f.label, f.text);
        if let Some(fix) = &f.fix {
            println!("  → {fix}");
        }
    }
    let problems = report
        .findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    if problems > 0 {
        println!("{problems} problem(s): an agent cannot use helix as installed");
    }
}
