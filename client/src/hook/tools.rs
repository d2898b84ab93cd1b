//! Which helix tools a hook's texts point the model at: the MCP tools under the names the
//! agent gives them, or only the CLI when no helix MCP server is registered.
//!
//! The installer knows what it registered and says so on the hook's command line:
//! `helix hook <name>` (the server is `helix`, named the agent's way), `--mcp <prefix>`
//! (Claude Code's plugin: `mcp__plugin_helix_helix__`) or `--mcp none` (no server).

use super::agent::{Adapter, McpNames, claude};

/// The `--mcp` value for "no helix MCP server".
pub const NONE: &str = "none";

/// What the hook texts may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tools {
    /// The MCP tools, so named, and the CLI.
    Mcp(McpNames),
    /// Only the `helix` CLI.
    Cli,
}

impl Default for Tools {
    fn default() -> Tools {
        Tools::Mcp(McpNames::Prefix(claude::DEFAULT_PREFIX))
    }
}

impl Tools {
    /// The tools of a session of `agent` whose hook command line says `--mcp value`;
    /// unknown values mean the agent's own default.
    pub fn from_flag(value: Option<&str>, agent: &Adapter) -> Tools {
        match value {
            Some(NONE) => Tools::Cli,
            Some(claude::PLUGIN_PREFIX) if agent.name == claude::ADAPTER.name => {
                Tools::Mcp(McpNames::Prefix(claude::PLUGIN_PREFIX))
            }
            _ => Tools::Mcp(agent.mcp),
        }
    }

    /// The `--mcp` argument that selects `self` for `agent` (none for its default).
    pub fn flag(self, agent: &Adapter) -> Option<&'static str> {
        match self {
            Tools::Mcp(names) if names == agent.mcp => None,
            Tools::Mcp(McpNames::Prefix(p)) => Some(p),
            Tools::Mcp(McpNames::Namespace(_) | McpNames::Plain) => None,
            Tools::Cli => Some(NONE),
        }
    }

    /// How a text names helix's MCP tool `tool`.
    fn mcp_tool(names: McpNames, tool: &str) -> String {
        match names {
            McpNames::Prefix(p) => format!("the `{p}{tool}` tool"),
            McpNames::Namespace(ns) => format!("the `{tool}` tool of `{ns}`"),
            McpNames::Plain => format!("the helix MCP server's `{tool}` tool"),
        }
    }

    /// "search it: …": how to search helix.
    pub fn search_hint(self) -> String {
        match self {
            Tools::Mcp(n) => {
                format!(
                    "search it: `helix search <words>` or {}",
                    Tools::mcp_tool(n, "search")
                )
            }
            Tools::Cli => "search it: `helix search <words>`".to_string(),
        }
    }

    /// How to store an entry.
    pub fn store_hint(self) -> String {
        const CLI: &str = "`helix store --topic <topic> --title <title> --body <text>`";
        match self {
            Tools::Mcp(n) => format!("{CLI} or {}", Tools::mcp_tool(n, "store")),
            Tools::Cli => CLI.to_string(),
        }
    }
}

/// The value after `--mcp` in a hook's extra arguments.
pub fn flag_value<S: AsRef<str>>(args: &[S]) -> Option<&str> {
    value_after(args, "--mcp")
}

/// The value after `--agent` in a hook's extra arguments.
pub fn agent_value<S: AsRef<str>>(args: &[S]) -> Option<&str> {
    value_after(args, "--agent")
}

fn value_after<'a, S: AsRef<str>>(args: &'a [S], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a.as_ref() == flag)
        .and_then(|i| args.get(i + 1))
        .map(AsRef::as_ref)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::agent::{ADAPTERS, find};

    #[test]
    fn flags_round_trip_and_texts_name_only_what_exists() {
        let claude = find("claude").unwrap();
        for t in [
            Tools::default(),
            Tools::Mcp(McpNames::Prefix(claude::PLUGIN_PREFIX)),
            Tools::Cli,
        ] {
            assert_eq!(Tools::from_flag(t.flag(claude), claude), t);
        }
        assert_eq!(
            Tools::from_flag(Some("mcp__evil__"), claude),
            Tools::default()
        );
        assert!(!Tools::Cli.search_hint().contains("mcp__"));
        assert!(!Tools::Cli.store_hint().contains("mcp__"));
        assert!(
            Tools::Mcp(McpNames::Prefix(claude::PLUGIN_PREFIX))
                .store_hint()
                .contains("`mcp__plugin_helix_helix__store`")
        );
        // Each agent's default names its tools its own way, and the plugin's prefix is
        // Claude Code's alone.
        for a in ADAPTERS {
            let t = Tools::from_flag(None, a);
            assert_eq!(t, Tools::Mcp(a.mcp));
            assert_eq!(Tools::from_flag(t.flag(a), a), t);
            if a.name != "claude" {
                assert_eq!(Tools::from_flag(Some(claude::PLUGIN_PREFIX), a), t);
            }
        }
        assert_eq!(flag_value(&["--mcp", "none"]), Some("none"));
        assert_eq!(flag_value(&["--mcp"]), None);
        assert_eq!(
            agent_value(&["--mcp", "none", "--agent", "codex"]),
            Some("codex")
        );
    }
}
