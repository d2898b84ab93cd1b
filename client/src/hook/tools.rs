//! Which helix tools a hook's texts point the model at: the MCP tools under the name the
//! session gives them, or only the CLI when no helix MCP server is registered.
//!
//! The installer knows what it registered and says so on the hook's command line:
//! `helix hook <name>` (the server is `helix`: `mcp__helix__*`), `--mcp <prefix>` (another
//! name, e.g. the plugin's `mcp__plugin_helix_helix__`) or `--mcp none` (no server).

/// Tool-name prefix of a helix MCP server registered as `helix` (`.mcp.json`, `~/.claude.json`).
pub const DEFAULT_PREFIX: &str = "mcp__helix__";
/// Tool-name prefix of the helix plugin's server: `mcp__plugin_<plugin>_<server>__`.
pub const PLUGIN_PREFIX: &str = "mcp__plugin_helix_helix__";
/// Every name helix's MCP tools have in Claude Code; approve-mcp allows exactly these.
pub const PREFIXES: [&str; 2] = [DEFAULT_PREFIX, PLUGIN_PREFIX];
/// The `--mcp` value for "no helix MCP server".
pub const NONE: &str = "none";

/// What the hook texts may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tools {
    /// The MCP tools, under this prefix, and the CLI.
    Mcp(&'static str),
    /// Only the `helix` CLI.
    Cli,
}

impl Default for Tools {
    fn default() -> Tools {
        Tools::Mcp(DEFAULT_PREFIX)
    }
}

impl Tools {
    /// The value of `--mcp`; unknown values mean the default.
    pub fn from_flag(value: Option<&str>) -> Tools {
        match value {
            Some(NONE) => Tools::Cli,
            Some(v) => PREFIXES
                .iter()
                .find(|p| **p == v)
                .map_or_else(Tools::default, |p| Tools::Mcp(p)),
            None => Tools::default(),
        }
    }

    /// The `--mcp` arguments that select `self` (none for the default).
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Tools::Mcp(DEFAULT_PREFIX) => None,
            Tools::Mcp(p) => Some(p),
            Tools::Cli => Some(NONE),
        }
    }

    /// "search it: …": how to search helix.
    pub fn search_hint(self) -> String {
        match self {
            Tools::Mcp(p) => {
                format!("search it: `helix search <words>` or the `{p}search` tool")
            }
            Tools::Cli => "search it: `helix search <words>`".to_string(),
        }
    }

    /// How to store an entry.
    pub fn store_hint(self) -> String {
        const CLI: &str = "`helix store --topic <topic> --title <title> --body <text>`";
        match self {
            Tools::Mcp(p) => format!("{CLI} or the `{p}store` tool"),
            Tools::Cli => CLI.to_string(),
        }
    }
}

/// Whether `tool` is one of helix's MCP tools, under any name it has.
pub fn is_helix_tool(tool: &str) -> bool {
    PREFIXES
        .iter()
        .any(|p| tool.len() > p.len() && tool.starts_with(p))
}

/// The value after `--mcp` in a hook's extra arguments.
pub fn flag_value<S: AsRef<str>>(args: &[S]) -> Option<&str> {
    args.iter()
        .position(|a| a.as_ref() == "--mcp")
        .and_then(|i| args.get(i + 1))
        .map(AsRef::as_ref)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_and_texts_name_only_what_exists() {
        for t in [Tools::default(), Tools::Mcp(PLUGIN_PREFIX), Tools::Cli] {
            assert_eq!(Tools::from_flag(t.flag()), t);
        }
        assert_eq!(Tools::from_flag(Some("mcp__evil__")), Tools::default());
        assert!(!Tools::Cli.search_hint().contains("mcp__"));
        assert!(!Tools::Cli.store_hint().contains("mcp__"));
        assert!(
            Tools::Mcp(PLUGIN_PREFIX)
                .store_hint()
                .contains("`mcp__plugin_helix_helix__store`")
        );
        assert!(is_helix_tool("mcp__helix__search"));
        assert!(is_helix_tool("mcp__plugin_helix_helix__store"));
        assert!(!is_helix_tool("mcp__helix__"));
        assert!(!is_helix_tool("mcp__plugin_evil_helix__search"));
        assert_eq!(flag_value(&["--mcp", "none"]), Some("none"));
        assert_eq!(flag_value(&["--mcp"]), None);
    }
}
