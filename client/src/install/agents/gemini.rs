//! Gemini CLI: hooks and the MCP server in `.gemini/settings.json` (project) or
//! `~/.gemini/settings.json` (user), `hooks` in the grouped form with named handlers and
//! timeouts in milliseconds; the server marked `"trust": true`, without which `gemini -p`
//! offers none of its tools. Project settings load only in a trusted folder
//! (`~/.gemini/trustedFolders.json`, which the trust dialog writes) and only when Gemini is
//! started in the project's root.

use super::{Files, HooksForm, Installer, McpForm, home, present, read_json, within};
use crate::install::ordered::Value;
use anyhow::Result;
use std::path::Path;

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
