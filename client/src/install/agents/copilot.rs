//! Copilot CLI: hooks in a file of helix's own, `.github/hooks/helix.json` (project) or
//! `~/.copilot/hooks/helix.json` (user); the MCP server in `.github/mcp.json` (project: the
//! Claude Code `.mcp.json` stays Claude Code's) or `~/.copilot/mcp-config.json` (user).
//! Project hooks and MCP load only in a folder the user trusted (`trustedFolders` in
//! `~/.copilot/config.json`, which answering the trust prompt with "remember" writes).

use super::{Files, HooksForm, Installer, McpForm, home, present, read_json, within};
use crate::install::ordered::Value;
use anyhow::Result;
use std::path::Path;

pub static INSTALLER: Installer = Installer {
    adapter: &crate::hook::agent::copilot::ADAPTER,
    files,
    detect: || present("copilot", ".copilot"),
    gate,
    guarded: true,
};

fn files(project: bool, dir: &Path) -> Result<Files> {
    Ok(if project {
        Files {
            project,
            hooks: dir.join(".github/hooks/helix.json"),
            hooks_form: HooksForm::Flat,
            mcp: dir.join(".github/mcp.json"),
            mcp_form: McpForm::Json(entry),
        }
    } else {
        let base = home()?.join(".copilot");
        Files {
            project,
            hooks: base.join("hooks/helix.json"),
            hooks_form: HooksForm::Flat,
            mcp: base.join("mcp-config.json"),
            mcp_form: McpForm::Json(entry),
        }
    })
}

/// The entry `copilot mcp add helix -- helix mcp` writes, every tool enabled.
fn entry(program: &str) -> Value {
    Value::Object(vec![
        ("type".into(), Value::String("local".into())),
        ("command".into(), Value::String(program.into())),
        (
            "args".into(),
            Value::Array(vec![Value::String("mcp".into())]),
        ),
        (
            "tools".into(),
            Value::Array(vec![Value::String("*".into())]),
        ),
    ])
}

/// A project's hooks run once its folder, or a parent, is in `trustedFolders`.
fn gate(project: bool, dir: &Path) -> Option<String> {
    if !project {
        return None;
    }
    let config = home().ok()?.join(".copilot/config.json");
    let trusted = read_json(&config)
        .and_then(|c| c.get("trustedFolders").cloned())
        .and_then(|t| t.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .any(|f| within(dir, f));
    (!trusted).then(|| {
        format!(
            "{} is not a trusted folder: start `copilot` there and answer the trust prompt with \"remember this folder\" (or add it to trustedFolders in {})",
            dir.display(),
            config.display()
        )
    })
}
