//! Codex CLI: hooks in `.codex/hooks.json` (project) or `$CODEX_HOME/hooks.json` (user, by
//! default `~/.codex`), in the grouped form; the MCP server as `[mcp_servers.helix]` in the
//! `config.toml` beside it.
//!
//! Two gates stand before a hook runs, and Codex skips hooks it may not run without a word:
//! a project's `.codex/` loads only when the user config trusts the project
//! (`[projects."<dir>"] trust_level = "trusted"`), and every hook runs only once the user
//! approved it in `/hooks`, which records `[hooks.state."<hooks.json>:<event>:<group>:<n>"]
//! trusted_hash = "sha256:…"` in the user config — a hash of the handler's definition, so
//! a changed handler needs approving again. `hooks status` computes those hashes to say
//! whether helix's hooks will run.

use super::{Files, HooksForm, Installer, McpForm, home, present};
use crate::install::Plan;
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub static INSTALLER: Installer = Installer {
    adapter: &crate::hook::agent::codex::ADAPTER,
    files,
    detect: || present("codex", ".codex"),
    gate,
    guarded: false,
};

/// `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => Ok(home()?.join(".codex")),
    }
}

fn files(project: bool, dir: &Path) -> Result<Files> {
    let base = if project {
        dir.join(".codex")
    } else {
        codex_home()?
    };
    Ok(Files {
        project,
        hooks: base.join("hooks.json"),
        hooks_form: HooksForm::Grouped,
        mcp: base.join("config.toml"),
        mcp_form: McpForm::CodexToml,
    })
}

const TABLE: &str = "[mcp_servers.helix]";

/// The lines of `text` without helix's `[mcp_servers.helix]` table (its header up to the
/// next table header), and whether it had one.
fn without_table(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            inside = matches!(
                t.split('#').next().map(str::trim),
                Some(TABLE | "[mcp_servers.\"helix\"]")
            );
            found |= inside;
        }
        if !inside {
            out.push_str(line);
        }
    }
    (out, found)
}

/// The `mcp_servers.helix` table of a parsed config, when helix wrote it (it runs
/// `<…/>helix mcp`).
fn ours(doc: &toml::Table) -> Option<bool> {
    let entry = doc.get("mcp_servers")?.get("helix")?;
    let program = entry.get("command").and_then(|c| c.as_str()).unwrap_or("");
    let args = entry.get("args").and_then(|a| a.as_array());
    Some(
        program.rsplit('/').next() == Some("helix")
            && args.is_some_and(|a| a.len() == 1 && a[0].as_str() == Some("mcp")),
    )
}

fn parse(text: &str, path: &Path) -> Result<toml::Table> {
    text.parse::<toml::Table>().with_context(|| {
        format!(
            "{}: not valid TOML; left untouched — fix it, then retry",
            path.display()
        )
    })
}

/// The change to `config.toml` that registers helix's MCP server running `program`
/// (`register`) or takes helix's registration out; `None` when there is nothing to do.
/// Edits the text, so the rest of the file keeps its comments and layout.
pub(crate) fn plan_mcp(path: &Path, program: &str, register: bool) -> Result<Option<Plan>> {
    let previous = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let text = previous.clone().unwrap_or_default();
    let doc = parse(&text, path)?;
    if ours(&doc) == Some(false) {
        if register {
            bail!(
                "{}: `mcp_servers.helix` is another server; rename or remove it, or pass --no-mcp",
                path.display()
            );
        }
        return Ok(None);
    }
    let (mut next, had) = without_table(&text);
    if had
        && parse(&next, path)
            .map(|d| ours(&d).is_some())
            .unwrap_or(true)
    {
        bail!(
            "{}: `mcp_servers.helix` is written in a form helix does not edit (an inline table?); move it into its own `{TABLE}` table",
            path.display()
        );
    }
    if register {
        if !next.is_empty() && !next.ends_with("\n\n") {
            next.push_str(if next.ends_with('\n') { "\n" } else { "\n\n" });
        }
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
        next.push_str(&format!(
            "{TABLE}\ncommand = {}\nargs = [\"mcp\"]\n",
            quote(program)
        ));
        parse(&next, path)?;
    } else {
        next = next.trim_end().to_string();
        if !next.is_empty() {
            next.push('\n');
        }
    }
    if Some(&next) == previous.as_ref() || (previous.is_none() && !register) {
        return Ok(None);
    }
    let next = if next.trim().is_empty() && previous.is_some() {
        None
    } else {
        Some(next)
    };
    Ok(Some(Plan {
        path: path.to_path_buf(),
        previous,
        next,
        preview: None,
    }))
}

/// Whether helix's MCP server is registered in `config.toml`.
pub fn mcp_registered(path: &Path) -> Result<bool> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(ours(&parse(&text, path)?) == Some(true)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Codex's key for an event in `hooks.state`: `SessionStart` → `session_start`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Events whose matcher Codex ignores, and leaves out of the hash.
const NO_MATCHER: [&str; 2] = ["UserPromptSubmit", "Stop"];

/// JSON with object keys sorted and no spaces, as Codex hashes it.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::Value::String((*k).clone()),
                        canonical(&m[*k])
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        serde_json::Value::Array(a) => {
            format!(
                "[{}]",
                a.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        other => other.to_string(),
    }
}

/// The `trusted_hash` Codex records when the user approves one command handler: sha256 of
/// `{"event_name", "matcher"?, "hooks": [{"type", "command", "timeout", "async", …}]}`.
fn trusted_hash(event: &str, matcher: Option<&str>, handler: &serde_json::Value) -> String {
    let timeout = handler
        .get("timeout")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(600)
        .max(1);
    let mut h = serde_json::json!({
        "type": "command",
        "command": handler.get("command").cloned().unwrap_or_default(),
        "timeout": timeout,
        "async": handler.get("async").and_then(serde_json::Value::as_bool).unwrap_or(false),
    });
    for k in ["statusMessage", "commandWindows", "additionalContextLimit"] {
        if let Some(v) = handler.get(k).filter(|v| !v.is_null()) {
            h[k] = v.clone();
        }
    }
    let mut ident = serde_json::json!({"event_name": snake(event), "hooks": [h]});
    if let Some(m) = matcher.filter(|_| !NO_MATCHER.contains(&event)) {
        ident["matcher"] = serde_json::Value::String(m.to_string());
    }
    format!("sha256:{}", hex::encode(Sha256::digest(canonical(&ident))))
}

/// helix's handlers of a hooks.json that Codex has no matching approval for, as
/// `(event, command)`.
fn unapproved(hooks_json: &Path, config: &toml::Table) -> Vec<(String, String)> {
    let Some(doc) = super::read_json(hooks_json) else {
        return Vec::new();
    };
    let abs = std::path::absolute(hooks_json).unwrap_or_else(|_| hooks_json.to_path_buf());
    let state = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table());
    let mut out = Vec::new();
    for (event, groups) in doc
        .get("hooks")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
    {
        for (gi, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(serde_json::Value::as_str);
            for (hi, handler) in group
                .get("hooks")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let command = handler
                    .get("command")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                if crate::install::settings::parse_helix_command(command).is_none() {
                    continue;
                }
                let key = format!("{}:{}:{gi}:{hi}", abs.display(), snake(event));
                let approved = state
                    .and_then(|s| s.get(&key))
                    .and_then(|e| e.get("trusted_hash"))
                    .and_then(|h| h.as_str());
                if approved != Some(trusted_hash(event, matcher, handler).as_str()) {
                    out.push((event.clone(), command.to_string()));
                }
            }
        }
    }
    out
}

/// What keeps Codex from running helix's hooks of a scope: an untrusted project, and hooks
/// not (or no longer) approved in `/hooks`.
fn gate(project: bool, dir: &Path) -> Option<String> {
    let user_config = codex_home().ok()?.join("config.toml");
    let config = std::fs::read_to_string(&user_config)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .unwrap_or_default();
    let mut why = Vec::new();
    if project {
        let trusted = config
            .get("projects")
            .and_then(|p| p.as_table())
            .into_iter()
            .flatten()
            .any(|(path, p)| {
                Path::new(path) == dir
                    && p.get("trust_level").and_then(|t| t.as_str()) == Some("trusted")
            });
        if !trusted {
            why.push(format!(
                "the project {} is not trusted, so Codex does not load its .codex/ folder: start `codex` in it and trust it",
                dir.display()
            ));
        }
    }
    let hooks = files(project, dir).ok()?.hooks;
    let pending = unapproved(&hooks, &config);
    if !pending.is_empty() {
        why.push(format!(
            "{} of helix's hooks are not approved, and Codex skips them silently: in Codex, open `/hooks` and approve them",
            pending.len()
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_table_is_added_and_removed_keeping_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.db]\ncommand = \"db\"\n";
        std::fs::write(&path, before).unwrap();
        let plan = plan_mcp(&path, "helix", true).unwrap().unwrap();
        let added = plan.next.clone().unwrap();
        assert!(added.starts_with(before), "{added}");
        assert!(added.ends_with("[mcp_servers.helix]\ncommand = \"helix\"\nargs = [\"mcp\"]\n"));
        std::fs::write(&path, &added).unwrap();
        assert!(mcp_registered(&path).unwrap());
        assert!(
            plan_mcp(&path, "helix", true).unwrap().is_none(),
            "idempotent"
        );
        let removed = plan_mcp(&path, "", false).unwrap().unwrap().next.unwrap();
        assert_eq!(removed, before);
        std::fs::write(
            &path,
            "[mcp_servers.helix]\ncommand = \"node\"\nargs = [\"x\"]\n",
        )
        .unwrap();
        assert!(
            plan_mcp(&path, "helix", true).is_err(),
            "another server's name"
        );
        assert!(
            plan_mcp(&path, "", false).unwrap().is_none(),
            "not ours to remove"
        );
        std::fs::write(
            &path,
            "mcp_servers = { helix = { command = \"helix\", args = [\"mcp\"] } }\n",
        )
        .unwrap();
        assert!(plan_mcp(&path, "helix", true).is_err(), "an inline table");
        std::fs::write(&path, "not toml [").unwrap();
        assert!(plan_mcp(&path, "helix", true).is_err());
    }

    /// The hashes Codex 0.169.0 records when these handlers are approved (computed by
    /// tests/agents/codex's `hook_hash`, checked there against the real client's `hooks/list`).
    #[test]
    fn approval_hashes_match_codex() {
        let handler = |c: &str| serde_json::json!({"type": "command", "command": c, "timeout": 5});
        assert_eq!(
            trusted_hash(
                "UserPromptSubmit",
                Some("ignored"),
                &handler("helix hook prompt --agent codex")
            ),
            "sha256:05bd685def113277e4e62465255214b74353bd9c76752055e268370c181b5904"
        );
        assert_eq!(
            trusted_hash(
                "PreToolUse",
                Some("Bash"),
                &handler("helix hook ambient --agent codex")
            ),
            "sha256:3e56d33189c695fe1292c80d82fc8ffa5aa51714206788546139088bd902150a"
        );
        assert_eq!(snake("PreToolUse"), "pre_tool_use");
    }
}
