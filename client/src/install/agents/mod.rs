//! `helix hooks install|uninstall|status --agent NAME` for the agents other than Claude Code
//! (whose installer is the parent module): where each keeps its hooks and MCP servers, in
//! which form, and what it asks of the user before it runs a project's hooks. The hooks
//! come from the agent adapter's bindings (`hook::agent`), so the installed events are the
//! ones the adapter reads.
//!
//! Three forms of hooks file: grouped (`{"hooks": {"<Event>": [{"matcher", "hooks": [{…}]}]}}`,
//! Codex and Gemini CLI, written by `settings::merge_hooks`), flat (`{"version": 1,
//! "hooks": {"<event>": [{"command", "matcher"}]}}`, Copilot CLI and Cursor), and MCP
//! registrations in JSON (`mcpServers.helix`) or Codex's TOML (`[mcp_servers.helix]`).

pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod flat;
pub mod gemini;

use super::files::{self, load, load_or_empty};
use super::ordered::Value;
use super::status::{Finding, Level};
use super::{Plan, mcp, plan, settings};
use crate::hook::agent::Adapter;
use crate::hook::tools::Tools;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// How an agent keeps its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HooksForm {
    Grouped,
    Flat,
}

/// How an agent keeps its MCP servers.
#[derive(Debug, Clone, Copy)]
pub enum McpForm {
    /// `mcpServers.helix` in a JSON file, with this entry.
    Json(fn(&str) -> Value),
    /// `[mcp_servers.helix]` in Codex's `config.toml`.
    CodexToml,
}

/// One scope's files of an agent.
#[derive(Debug, Clone)]
pub struct Files {
    pub project: bool,
    pub hooks: PathBuf,
    pub hooks_form: HooksForm,
    pub mcp: PathBuf,
    pub mcp_form: McpForm,
}

/// One agent's installer.
#[derive(Debug)]
pub struct Installer {
    pub adapter: &'static Adapter,
    /// The files of the project (`--project`) or user scope.
    pub files: fn(project: bool, cwd: &Path) -> Result<Files>,
    /// Whether the agent is installed on this machine (for `--agent all`).
    pub detect: fn() -> bool,
    /// What keeps installed hooks from running, and how to lift it, for `dir`'s project or
    /// the user scope: `None` when nothing does.
    pub gate: fn(project: bool, dir: &Path) -> Option<String>,
    /// Whether handler commands end in ` 2>/dev/null || true`: for agents that take a
    /// hook's failure (helix missing on a teammate's PATH) as a refusal of the prompt or
    /// the tool.
    pub guarded: bool,
}

/// Every agent but Claude Code.
pub static INSTALLERS: [&Installer; 4] = [
    &codex::INSTALLER,
    &copilot::INSTALLER,
    &gemini::INSTALLER,
    &cursor::INSTALLER,
];

/// The installer of `--agent NAME`.
pub fn find(name: &str) -> Option<&'static Installer> {
    INSTALLERS.iter().copied().find(|i| i.adapter.name == name)
}

/// `$HOME`, or an error naming what needs it.
pub fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set; cannot find the user's agent settings (use --project)")
}

/// Whether `name` is on PATH or `dir` (under HOME) exists: the agent is installed.
pub fn present(name: &str, dir: &str) -> bool {
    super::resolve::on_path(name).is_some() || home().is_ok_and(|h| h.join(dir).is_dir())
}

/// The suffix of a guarded handler command.
pub const GUARD: &str = " 2>/dev/null || true";

/// The command of one handler for `inst`'s agent.
pub fn handler_command(inst: &Installer, hook: &str, program: &str, tools: Tools) -> String {
    let mut c = settings::command(hook, program, inst.adapter, tools);
    if inst.guarded {
        c.push_str(GUARD);
    }
    c
}

/// The file changes that install helix for `inst` in `files`' scope.
pub(crate) fn plan_install(
    inst: &Installer,
    files: &Files,
    program: &str,
    quoted: &str,
    tools: Tools,
) -> Result<Vec<Plan>> {
    let ctx = |p: &Path| p.display().to_string();
    // Load (and so validate) every file before changing any.
    let (mut hooks, previous) = load_or_empty(&files.hooks)?;
    let mut changed = match files.hooks_form {
        HooksForm::Grouped => settings::merge_hooks_with(&mut hooks, inst.adapter, tools, |h| {
            handler_command(inst, h, quoted, tools)
        }),
        HooksForm::Flat => flat::merge(&mut hooks, inst, quoted, tools),
    }
    .with_context(|| ctx(&files.hooks))?;
    let mut plans = Vec::new();
    let mcp_plan = match files.mcp_form {
        // One file for both (Gemini CLI's settings): one document, one write.
        McpForm::Json(entry) if files.mcp == files.hooks => {
            changed |=
                merge_mcp(&mut hooks, entry, program, tools).with_context(|| ctx(&files.mcp))?;
            None
        }
        McpForm::Json(entry) => {
            let (mut reg, reg_previous) = load_or_empty(&files.mcp)?;
            merge_mcp(&mut reg, entry, program, tools)
                .with_context(|| ctx(&files.mcp))?
                .then(|| plan(&files.mcp, reg_previous, &reg))
                .transpose()?
        }
        McpForm::CodexToml => codex::plan_mcp(&files.mcp, program, tools != Tools::Cli)?,
    };
    if changed {
        plans.push(plan(&files.hooks, previous, &hooks)?);
    }
    plans.extend(mcp_plan);
    Ok(plans)
}

/// Registers helix's server as `entry(program)`, or takes helix's registration out when
/// the hooks name no MCP tools. Returns whether anything changed.
fn merge_mcp(
    doc: &mut Value,
    entry: fn(&str) -> Value,
    program: &str,
    tools: Tools,
) -> Result<bool> {
    if tools == Tools::Cli {
        Ok(mcp::remove(doc))
    } else {
        mcp::merge(doc, entry(program))
    }
}

/// The file changes that take helix out of `files`' scope again.
pub(crate) fn plan_uninstall(files: &Files) -> Result<Vec<Plan>> {
    let mut plans = Vec::new();
    let same = files.mcp == files.hooks;
    if let Some((mut doc, text)) = load(&files.hooks)? {
        let mut changed = match files.hooks_form {
            HooksForm::Grouped => settings::remove_hooks(&mut doc),
            HooksForm::Flat => flat::remove(&mut doc),
        };
        if same && matches!(files.mcp_form, McpForm::Json(_)) {
            changed |= mcp::remove(&mut doc);
        }
        if changed {
            plans.push(plan(&files.hooks, Some(text), &doc)?);
        }
    }
    match files.mcp_form {
        McpForm::Json(_) if same => {}
        McpForm::Json(_) => {
            if let Some((mut reg, text)) = load(&files.mcp)?
                && mcp::remove(&mut reg)
            {
                plans.push(plan(&files.mcp, Some(text), &reg)?);
            }
        }
        McpForm::CodexToml => plans.extend(codex::plan_mcp(&files.mcp, "", false)?),
    }
    Ok(plans)
}

/// The helix handlers in a scope's hooks file.
pub fn installed_hooks(files: &Files) -> Result<Vec<settings::HelixCommand>> {
    Ok(match load(&files.hooks)? {
        None => Vec::new(),
        Some((doc, _)) => match files.hooks_form {
            HooksForm::Grouped => settings::helix_commands(&doc),
            HooksForm::Flat => flat::helix_commands(&doc),
        },
    })
}

/// Whether helix's MCP server is registered in a scope.
pub fn mcp_registered(files: &Files) -> Result<bool> {
    Ok(match files.mcp_form {
        McpForm::Json(_) => {
            load(&files.mcp)?.is_some_and(|(doc, _)| mcp::entry(&doc).is_some_and(mcp::is_ours))
        }
        McpForm::CodexToml => codex::mcp_registered(&files.mcp)?,
    })
}

/// What `helix hooks status` and `helix doctor` say of `inst`'s agent, seen from `cwd`: per
/// scope, whether the hooks and the MCP server are installed, whether their program
/// resolves, and what still keeps the agent from running them.
pub fn findings(inst: &Installer, cwd: &Path) -> Vec<Finding> {
    let dir = super::resolve::project_dir(cwd);
    let label = inst.adapter.name;
    let mut out = Vec::new();
    let mut installed_somewhere = false;
    for project in [true, false] {
        let scope = if project { "project" } else { "user" };
        let files = match (inst.files)(project, &dir) {
            Ok(f) => f,
            Err(e) => {
                out.push(Finding::new(Level::Note, label, format!("{scope}: {e:#}")));
                continue;
            }
        };
        let hooks = match installed_hooks(&files) {
            Ok(h) => h,
            Err(e) => {
                out.push(Finding::new(Level::Problem, label, format!("{e:#}")));
                continue;
            }
        };
        if hooks.is_empty() {
            continue;
        }
        installed_somewhere = true;
        let want: Vec<&str> = inst.adapter.bindings.iter().map(|b| b.hook).collect();
        let have: Vec<&str> = hooks.iter().map(|h| h.hook.as_str()).collect();
        let missing: Vec<&str> = want.iter().copied().filter(|h| !have.contains(h)).collect();
        let unresolved: Vec<&str> = hooks
            .iter()
            .map(|h| h.program.as_str())
            .filter(|p| super::resolve::resolve(p).is_none())
            .collect();
        let mcp = mcp_registered(&files).unwrap_or(false);
        let mut text = format!(
            "{} hooks ({scope}, {}): {} of {} installed; MCP server {}",
            inst.adapter.title,
            files.hooks.display(),
            want.len() - missing.len(),
            want.len(),
            if mcp {
                format!("registered ({})", files.mcp.display())
            } else {
                "not registered".to_string()
            }
        );
        if !missing.is_empty() {
            text.push_str(&format!("; missing: {}", missing.join(", ")));
        }
        let flag = if project { " --project" } else { "" };
        let reinstall = format!("helix hooks install --agent {label}{flag}");
        if let Some(p) = unresolved.first() {
            out.push(
                Finding::new(
                    Level::Problem,
                    label,
                    format!("{text}; binary {p} (MISSING)"),
                )
                .fix(format!(
                    "put helix on PATH (cargo install --locked --path client-net), then `{reinstall}`"
                )),
            );
        } else if !missing.is_empty() {
            out.push(Finding::new(Level::Problem, label, text).fix(format!("`{reinstall}`")));
        } else {
            out.push(Finding::new(Level::Ok, label, text));
        }
        if let Some(gate) = (inst.gate)(project, &dir) {
            out.push(
                Finding::new(
                    Level::Problem,
                    label,
                    format!(
                        "{} will not run these hooks yet: {gate}",
                        inst.adapter.title
                    ),
                )
                .fix(gate),
            );
        }
    }
    if !installed_somewhere && (inst.detect)() {
        out.push(
            Finding::new(
                Level::Note,
                label,
                format!(
                    "{} is on this machine; helix's hooks are not installed for it",
                    inst.adapter.title
                ),
            )
            .fix(format!("helix hooks install --agent {label} [--project]")),
        );
    }
    out
}

/// A JSON document read for a check, `None` when missing or invalid. Whole-line `//`
/// comments are left out: Copilot CLI writes its `config.json` with two of them on top.
pub fn read_json(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).ok()
}

/// Whether `dir` is `listed` or inside it.
pub fn within(dir: &Path, listed: &str) -> bool {
    let listed = Path::new(listed.trim_end_matches('/'));
    !listed.as_os_str().is_empty() && dir.starts_with(listed)
}

/// Renders `doc` as the agents' JSON files are written.
pub fn render(doc: &Value) -> Result<String> {
    files::render(doc)
}
