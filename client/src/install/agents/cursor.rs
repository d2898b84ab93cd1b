//! Cursor: hooks in `.cursor/hooks.json` (project) or `~/.cursor/hooks.json` (user), in the
//! flat form; the MCP server in `.cursor/mcp.json` or `~/.cursor/mcp.json`. Cursor runs a
//! project's hooks without a trust step; it asks once to enable a project's MCP server.

use super::{Files, HooksForm, Installer, McpForm, home, present};
use crate::install::ordered::Value;
use anyhow::Result;
use std::path::Path;

pub static INSTALLER: Installer = Installer {
    adapter: &crate::hook::agent::cursor::ADAPTER,
    files,
    detect: || present("cursor-agent", ".cursor") || present("cursor", ".cursor"),
    gate: |_, _| None,
    guarded: false,
};

fn files(project: bool, dir: &Path) -> Result<Files> {
    let base = if project {
        dir.join(".cursor")
    } else {
        home()?.join(".cursor")
    };
    Ok(Files {
        project,
        hooks: base.join("hooks.json"),
        hooks_form: HooksForm::Flat,
        mcp: base.join("mcp.json"),
        mcp_form: McpForm::Json(entry),
    })
}

fn entry(program: &str) -> Value {
    Value::Object(vec![
        ("command".into(), Value::String(program.into())),
        (
            "args".into(),
            Value::Array(vec![Value::String("mcp".into())]),
        ),
    ])
}
