//! Gemini CLI: hooks and the MCP server in `.gemini/settings.json` (project) or
//! `~/.gemini/settings.json` (user), `hooks` in the grouped form with named handlers and
//! timeouts in milliseconds; the server marked `"trust": true`, without which `gemini -p`
//! offers none of its tools. Project settings load only in a trusted folder
//! (`~/.gemini/trustedFolders.json`, which the trust dialog writes) and only when Gemini is
//! started in the project's root.

use super::{Files, HooksForm, Installer, McpForm, home, present, read_json, within};
use crate::hook::tools::Tools;
use crate::install::ordered::Value;
use crate::install::{files::render, plugin::find_and_run, settings};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub static INSTALLER: Installer = Installer {
    adapter: &crate::hook::agent::gemini::ADAPTER,
    files,
    detect: || present("gemini", ".gemini"),
    gate,
    guarded: true,
};

fn files(project: bool, dir: &Path) -> Result<Files> {
    let settings = if project {
        dir.join(".gemini/settings.json")
    } else {
        home()?.join(".gemini/settings.json")
    };
    Ok(Files {
        project,
        hooks: settings.clone(),
        hooks_form: HooksForm::Grouped,
        mcp: settings,
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
        ("trust".into(), Value::Bool(true)),
    ])
}

/// A project's settings apply once its folder (or a parent) is trusted, unless folder trust
/// is off in the user's settings.
fn gate(project: bool, dir: &Path) -> Option<String> {
    if !project {
        return None;
    }
    let base = home().ok()?.join(".gemini");
    let trust_off = read_json(&base.join("settings.json"))
        .and_then(|s| s.pointer("/security/folderTrust/enabled").cloned())
        == Some(serde_json::Value::Bool(false));
    let file = base.join("trustedFolders.json");
    let trusted = read_json(&file)
        .and_then(|t| t.as_object().cloned())
        .unwrap_or_default()
        .iter()
        .any(|(folder, level)| match level.as_str() {
            Some("TRUST_FOLDER") => Path::new(folder) == dir,
            Some("TRUST_PARENT") => within(dir, folder),
            _ => false,
        });
    (!trust_off && !trusted).then(|| {
        format!(
            "{} is not a trusted folder: start `gemini` in it and trust the folder when asked (it is then listed in {}); start Gemini in the project's root, where .gemini/ is",
            dir.display(),
            file.display()
        )
    })
}

/// A Gemini CLI extension of helix (`helix hooks plugin DIR --agent gemini`, shipped in
/// `plugins/gemini/`): `gemini-extension.json` with the MCP server and `hooks/hooks.json`
/// with the hooks, both running the `helix` on PATH, else `~/.cargo/bin/helix`, and
/// nothing at all when neither exists.
pub fn extension_files() -> Result<Vec<(PathBuf, String)>> {
    let tools = Tools::Mcp(INSTALLER.adapter.mcp);
    let mut hooks = Value::Object(Vec::new());
    settings::merge_hooks_with(&mut hooks, INSTALLER.adapter, tools, |hook| {
        let args = settings::command(hook, "", INSTALLER.adapter, tools);
        format!("{} 2>/dev/null", find_and_run(args.trim_start(), None))
    })?;
    let server = Value::Object(vec![
        ("command".into(), Value::String("sh".into())),
        (
            "args".into(),
            Value::Array(vec![
                Value::String("-c".into()),
                Value::String(find_and_run(
                    "mcp",
                    Some(
                        "echo 'helix extension: no helix binary on PATH or in ~/.cargo/bin' >&2; exit 127",
                    ),
                )),
            ]),
        ),
    ]);
    let manifest = Value::Object(vec![
        ("name".into(), Value::String("helix".into())),
        ("version".into(), Value::String(env!("CARGO_PKG_VERSION").into())),
        (
            "description".into(),
            Value::String(
                "Team knowledge for coding agents: helix's hooks and MCP tools, answered from the local helix cache; needs the helix binary installed".into(),
            ),
        ),
        (
            "mcpServers".into(),
            Value::Object(vec![("helix".into(), server)]),
        ),
    ]);
    Ok(vec![
        (PathBuf::from("gemini-extension.json"), render(&manifest)?),
        (PathBuf::from("hooks/hooks.json"), render(&hooks)?),
    ])
}
