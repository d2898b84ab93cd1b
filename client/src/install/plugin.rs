//! The Claude Code plugin: helix's hooks and MCP server as a plugin, inside a marketplace a
//! team can commit to its own repository (`helix hooks plugin DIR`; this repository ships one
//! at its root). Generated from the hook table, like the settings `hooks install` writes.
//!
//! The plugin does not carry a binary: its commands run the `helix` on PATH, else
//! `~/.cargo/bin/helix`, through the shell Claude Code already starts for every hook (no
//! extra process), and its session-start says clearly when neither exists.

use super::files::render;
use super::ordered::Value;
use super::settings::{SERVER, command, matcher_prefix};
use crate::hook::agent::McpNames;
use crate::hook::agent::claude::{ADAPTER as CLAUDE, BINDINGS, PLUGIN_PREFIX};
use crate::hook::table::TIMEOUT_SECS;
use crate::hook::tools::Tools;
use std::path::PathBuf;

/// The plugin's name (its MCP tools are `mcp__plugin_helix_helix__*`).
pub const NAME: &str = "helix";
/// The marketplace's name: the plugin installs as `helix@helix`.
pub const MARKETPLACE: &str = "helix";
/// Where the plugin sits inside the marketplace directory.
pub const PLUGIN_DIR: &str = "plugins/helix";

/// Where cargo installs helix by default, the plugin's fallback when PATH has none.
const CARGO_HELIX: &str = "$HOME/.cargo/bin/helix";

/// Said to the user (`systemMessage`) at session start when the plugin finds no helix.
pub const MISSING: &str = "helix plugin: no `helix` binary on PATH or in ~/.cargo/bin, so the hooks and MCP tools of helix are off. \
Install it from the helix repository (`cargo install --locked --path client-net`, see its README), then restart Claude Code.";

/// `~/.cargo/bin/helix`, when it exists.
pub fn cargo_helix() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let p = PathBuf::from(home).join(".cargo/bin/helix");
    super::resolve::resolve(&p.to_string_lossy())
}

/// A shell command running `helix <args>` from PATH, else from `~/.cargo/bin`; `otherwise`
/// runs when neither exists.
pub(crate) fn find_and_run(args: &str, otherwise: Option<&str>) -> String {
    let mut s = format!(
        "if command -v helix >/dev/null 2>&1; then exec helix {args}; elif [ -x \"{CARGO_HELIX}\" ]; then exec \"{CARGO_HELIX}\" {args}"
    );
    if let Some(o) = otherwise {
        s.push_str(&format!("; else {o}"));
    }
    s.push_str("; fi");
    s
}

fn string(s: &str) -> Value {
    Value::String(s.into())
}

fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `hooks/hooks.json`: the nine handlers, naming the plugin's MCP tools.
pub fn hooks_json() -> Value {
    let tools = Tools::Mcp(McpNames::Prefix(PLUGIN_PREFIX));
    let missing = serde_json::json!({ "systemMessage": MISSING }).to_string();
    let mut events = Vec::new();
    for spec in &BINDINGS {
        // `command` gives `helix hook <name> --mcp <prefix>`: run it as found.
        let args = command(spec.hook, "", &CLAUDE, tools)
            .trim_start()
            .to_string();
        let otherwise =
            (spec.hook == "session-start").then(|| format!("printf '%s\\n' '{missing}'"));
        let handler = object(vec![
            ("type", string("command")),
            (
                "command",
                string(&find_and_run(&args, otherwise.as_deref())),
            ),
            ("timeout", Value::Number(TIMEOUT_SECS.into())),
        ]);
        let mut group = Vec::new();
        if let Some(m) = spec.matcher_for(matcher_prefix(&CLAUDE, tools)) {
            group.push(("matcher", Value::String(m)));
        }
        group.push(("hooks", Value::Array(vec![handler])));
        events.push((spec.event, Value::Array(vec![object(group)])));
    }
    object(vec![
        (
            "description",
            string("helix: team knowledge in front of Claude at the moment it matters"),
        ),
        ("hooks", object(events)),
    ])
}

/// `.mcp.json` of the plugin: the `helix` server, found the same way.
pub fn mcp_json() -> Value {
    let fail = "echo \"helix plugin: no helix binary on PATH or in ~/.cargo/bin; install helix (see its README)\" >&2; exit 127";
    object(vec![(
        "mcpServers",
        object(vec![(
            SERVER,
            object(vec![
                ("command", string("sh")),
                (
                    "args",
                    Value::Array(vec![string("-c"), string(&find_and_run("mcp", Some(fail)))]),
                ),
            ]),
        )]),
    )])
}

/// `.claude-plugin/plugin.json`.
pub fn plugin_json() -> Value {
    object(vec![
        ("name", string(NAME)),
        ("version", string(env!("CARGO_PKG_VERSION"))),
        (
            "description",
            string(
                "Team knowledge for AI coding agents: helix's nine hooks and its MCP tools (search, store, read, brief, topics), answered from the local helix cache.",
            ),
        ),
        ("author", object(vec![("name", string("helix"))])),
        ("license", string(env!("CARGO_PKG_LICENSE"))),
        (
            "keywords",
            Value::Array(vec![string("knowledge"), string("hooks"), string("mcp")]),
        ),
    ])
}

/// `.claude-plugin/marketplace.json` of a marketplace holding only the helix plugin.
pub fn marketplace_json() -> Value {
    object(vec![
        ("name", string(MARKETPLACE)),
        ("owner", object(vec![("name", string("helix"))])),
        (
            "description",
            string("helix, team knowledge for AI coding agents, as a Claude Code plugin"),
        ),
        (
            "plugins",
            Value::Array(vec![object(vec![
                ("name", string(NAME)),
                ("source", string(&format!("./{PLUGIN_DIR}"))),
                (
                    "description",
                    string(
                        "helix's Claude Code hooks and MCP server; needs the helix binary installed",
                    ),
                ),
            ])]),
        ),
    ])
}

/// Every file of the marketplace, relative to its directory, with its content.
pub fn files() -> anyhow::Result<Vec<(PathBuf, String)>> {
    let p = PathBuf::from(PLUGIN_DIR);
    Ok(vec![
        (
            PathBuf::from(".claude-plugin/marketplace.json"),
            render(&marketplace_json())?,
        ),
        (
            p.join(".claude-plugin/plugin.json"),
            render(&plugin_json())?,
        ),
        (p.join("hooks/hooks.json"), render(&hooks_json())?),
        (p.join(".mcp.json"), render(&mcp_json())?),
    ])
}
