//! The agents helix's hooks serve, one adapter each: how the agent's hook input reads into
//! the engine's [`Call`], how an [`Answer`] is printed in the form the agent accepts, which
//! of its events run which helix hook (the installers and `helix hooks status` read these
//! bindings), and how it names helix's MCP tools. Everything that differs between agents is
//! here, at the edge; the engine (`events`, `ambient`) knows none of it.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
mod shell;

use super::call::{Action, Answer, Call};
use super::table::Hook;
use serde_json::Value;

/// Which helix hook an agent's event runs.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// `helix hook <hook>`.
    pub hook: &'static str,
    /// The agent's event it is installed under.
    pub event: &'static str,
    /// The agent's tool matcher, if the event takes one; `{mcp}` stands for the name
    /// prefix of helix's MCP tools.
    pub matcher: Option<&'static str>,
}

impl Binding {
    /// The matcher with helix's MCP tool prefix filled in.
    pub fn matcher_for(&self, prefix: &str) -> Option<String> {
        self.matcher.map(|m| m.replace("{mcp}", prefix))
    }
}

/// How the model sees helix's MCP tools in an agent, for texts that tell it which to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpNames {
    /// `<prefix><tool>`: `mcp__helix__search`, `helix-search`, `mcp_helix_search`.
    Prefix(&'static str),
    /// The tool under its own name in a namespace: Codex offers `search` in namespace
    /// `mcp__helix`, while its hooks see `mcp__helix__search`.
    Namespace(&'static str),
    /// The agent shows the tool's own name (`search`) under the server's.
    Plain,
}

/// One agent's adapter.
#[derive(Debug)]
pub struct Adapter {
    /// The `--agent` value.
    pub name: &'static str,
    /// The product's name, for messages.
    pub title: &'static str,
    /// Reads the agent's hook input, a JSON object.
    pub read: for<'a> fn(&'a Value) -> Call<'a>,
    /// Prints `answer` to the call of `hook` as the agent accepts it; `None` prints nothing
    /// (the agent cannot take that answer from that event).
    pub render: fn(&Hook, &Call<'_>, Answer) -> Option<String>,
    /// Which event runs which hook.
    pub bindings: &'static [Binding],
    /// The names helix's MCP tools have, when registered as `helix`.
    pub mcp: McpNames,
    /// Whether context reaches the model as written; `false`: the agent escapes `<` and `>`,
    /// so texts avoid them.
    pub markup: bool,
}

/// Every agent, Claude Code (the default) first.
pub static ADAPTERS: [&Adapter; 5] = [
    &claude::ADAPTER,
    &codex::ADAPTER,
    &copilot::ADAPTER,
    &gemini::ADAPTER,
    &cursor::ADAPTER,
];

/// The adapter of `--agent NAME`.
pub fn find(name: &str) -> Option<&'static Adapter> {
    ADAPTERS.iter().copied().find(|a| a.name == name)
}

/// The default agent, Claude Code: hooks installed before agents were named run as it.
pub fn default() -> &'static Adapter {
    &claude::ADAPTER
}

// Helpers for reading lenient JSON: every field optional and of uncertain type.

/// A string field.
pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A flag: true only for `true` (or the string "true").
pub(crate) fn flag_of(v: &Value, key: &str) -> bool {
    match v.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// `(old, new)` pairs of an edit's input: its own `old_string`/`new_string` and those of
/// its `edits` list, skipping malformed ones.
pub(crate) fn edits_of(input: &Value) -> Vec<(&str, &str)> {
    fn pair(v: &Value) -> Option<(&str, &str)> {
        let old = v.get("old_string").and_then(Value::as_str)?;
        let new = v.get("new_string").and_then(Value::as_str).unwrap_or("");
        Some((old, new))
    }
    let mut out: Vec<(&str, &str)> = Vec::new();
    if let Some(p) = pair(input) {
        out.push(p);
    }
    if let Some(list) = input.get("edits").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(pair));
    }
    out
}

/// The helix tool a prefixed MCP tool name stands for (`mcp__helix__store` → `store`).
pub(crate) fn helix_tool<'a>(name: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .filter(|t| !t.is_empty())
}

/// Claude Code's answer form, which Codex and Gemini CLI take too, under the event the call
/// names, else the event `hook` is bound to in `bindings`.
pub(crate) fn nested_context(
    bindings: &[Binding],
    hook: &Hook,
    call: &Call<'_>,
    text: &str,
) -> String {
    let event = call
        .event
        .or_else(|| {
            bindings
                .iter()
                .find(|b| b.hook == hook.name)
                .map(|b| b.event)
        })
        .unwrap_or("");
    claude::context(event, text)
}

/// Whether `action` is one of the file tools the file-context hook looks at.
pub(crate) fn is_file_action(action: Action) -> bool {
    matches!(
        action,
        Action::Read | Action::Edit | Action::Write | Action::Search
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_binding_names_a_hook() {
        for (i, a) in ADAPTERS.iter().enumerate() {
            assert!(ADAPTERS[..i].iter().all(|o| o.name != a.name), "{}", a.name);
            assert_eq!(find(a.name).map(|f| f.name), Some(a.name));
            assert!(!a.bindings.is_empty(), "{}", a.name);
            for b in a.bindings {
                assert!(
                    super::super::table::find(b.hook).is_some(),
                    "{}: {} is no hook",
                    a.name,
                    b.hook
                );
            }
        }
        assert_eq!(default().name, "claude");
        assert!(find("vim").is_none());
    }

    #[test]
    fn lenient_fields() {
        let v: Value = serde_json::from_str(
            r#"{"prompt": 5, "stop_hook_active": "true",
                "tool_input": {"old_string": "a", "edits": [{"old_string": "b", "new_string": 3}, 7]}}"#,
        )
        .unwrap();
        assert_eq!(str_of(&v, "prompt"), None);
        assert!(flag_of(&v, "stop_hook_active"));
        assert_eq!(edits_of(&v["tool_input"]), vec![("a", ""), ("b", "")]);
        assert_eq!(
            helix_tool("mcp__helix__store", &["mcp__helix__"]),
            Some("store")
        );
        assert_eq!(helix_tool("mcp__helix__", &["mcp__helix__"]), None);
        assert_eq!(helix_tool("mcp__evil__store", &["mcp__helix__"]), None);
    }
}
