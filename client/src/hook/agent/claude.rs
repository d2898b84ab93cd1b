//! Claude Code (the default agent): snake_case input (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `error`), answers in
//! `hookSpecificOutput.additionalContext` under the event's own name, a Stop hook's
//! `{"decision": "block"}`, and a PermissionRequest allow for helix's own MCP tools.

use super::{Adapter, Binding, McpNames, edits_of, flag_of, helix_tool, str_of};
use crate::hook::call::{Action, Answer, Call, Tool};
use crate::hook::table::Hook;
use serde_json::{Value, json};
use std::borrow::Cow;

/// Tool-name prefix of a helix MCP server registered as `helix` (`.mcp.json`, `~/.claude.json`).
pub const DEFAULT_PREFIX: &str = "mcp__helix__";
/// Tool-name prefix of the helix plugin's server: `mcp__plugin_<plugin>_<server>__`.
pub const PLUGIN_PREFIX: &str = "mcp__plugin_helix_helix__";
/// Every name helix's MCP tools have in Claude Code; approve-mcp allows exactly these.
pub const PREFIXES: [&str; 2] = [DEFAULT_PREFIX, PLUGIN_PREFIX];

pub static ADAPTER: Adapter = Adapter {
    name: "claude",
    title: "Claude Code",
    read,
    render,
    bindings: &BINDINGS,
    mcp: McpNames::Prefix(DEFAULT_PREFIX),
    markup: true,
};

/// The nine hooks, under Claude Code's events. helix's `store` tool runs post-build too, so
/// the stop hook knows the session stored something.
pub const BINDINGS: [Binding; 9] = [
    bind("session-start", "SessionStart", None),
    bind("prompt", "UserPromptSubmit", None),
    bind(
        "ambient",
        "PreToolUse",
        Some("Read|Edit|Write|MultiEdit|Glob|Grep|NotebookEdit"),
    ),
    bind("post-build", "PostToolUse", Some("Bash|{mcp}store")),
    bind("error", "PostToolUseFailure", Some("Bash")),
    bind("pre-compact", "PreCompact", None),
    bind("stop", "Stop", None),
    bind("subagent-start", "SubagentStart", None),
    bind("approve-mcp", "PermissionRequest", Some("{mcp}.*")),
];

const fn bind(hook: &'static str, event: &'static str, matcher: Option<&'static str>) -> Binding {
    Binding {
        hook,
        event,
        matcher,
    }
}

/// The Claude Code events whose `additionalContext` reaches the model.
const CONTEXT_EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStart",
];

/// The Claude Code event installed for `hook`.
pub fn event_of(hook: &str) -> Option<&'static str> {
    BINDINGS.iter().find(|b| b.hook == hook).map(|b| b.event)
}

/// Whether Claude Code accepts context from `event`.
pub fn carries_context(event: &str) -> bool {
    CONTEXT_EVENTS.contains(&event)
}

fn read(v: &Value) -> Call<'_> {
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let tool = str_of(v, "tool_name").map(|name| {
        let s = |k| str_of(input, k);
        let action = match name {
            "Read" => Action::Read,
            "Edit" | "MultiEdit" | "NotebookEdit" => Action::Edit,
            "Write" => Action::Write,
            "Glob" | "Grep" => Action::Search,
            "Bash" => Action::Shell,
            _ if helix_tool(name, &PREFIXES).is_some() => Action::Helix,
            _ => Action::Other,
        };
        Tool {
            name,
            action,
            file: s("file_path")
                .or_else(|| s("notebook_path"))
                .or_else(|| s("path"))
                .map(Cow::Borrowed),
            pattern: (action == Action::Search).then(|| s("pattern")).flatten(),
            command: s("command").map(Cow::Borrowed),
            edits: if action == Action::Edit {
                edits_of(input)
            } else {
                Vec::new()
            },
            helix: helix_tool(name, &PREFIXES),
        }
    });
    Call {
        session: str_of(v, "session_id"),
        cwd: str_of(v, "cwd"),
        event: str_of(v, "hook_event_name"),
        source: str_of(v, "source"),
        prompt: str_of(v, "prompt").map(Cow::Borrowed),
        tool,
        failure: str_of(v, "error").map(Cow::Borrowed),
        interrupted: flag_of(v, "is_interrupt"),
        stop_active: flag_of(v, "stop_hook_active"),
    }
}

/// The `hookEventName` to answer with: the input's own when Claude Code accepts context from
/// it, else the event the hook is installed under.
pub fn answer_event<'a>(hook: &Hook, input_event: Option<&'a str>) -> &'a str {
    input_event
        .filter(|e| carries_context(e))
        .or_else(|| event_of(hook.name))
        .unwrap_or("")
}

fn render(hook: &Hook, call: &Call<'_>, answer: Answer) -> Option<String> {
    Some(match answer {
        Answer::Context(text) => context(answer_event(hook, call.event), &text),
        Answer::Block(reason) => json!({"decision": "block", "reason": reason}).to_string(),
        Answer::Allow => json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}})
        .to_string(),
    })
}

/// `{"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}`: Claude
/// Code's form, which Codex and Gemini CLI take too.
pub fn context(event: &str, text: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(json: &str) -> Value {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn reads_every_field_the_hooks_use() {
        let v = call(
            r#"{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Edit",
                "tool_input":{"file_path":"src/a.rs","old_string":"fn a()","new_string":""}}"#,
        );
        let c = read(&v);
        assert_eq!(
            (c.session(), c.cwd, c.event),
            (Some("s1"), Some("/w"), Some("PreToolUse"))
        );
        let t = c.tool.as_ref().unwrap();
        assert_eq!(
            (t.action, t.file.as_deref()),
            (Action::Edit, Some("src/a.rs"))
        );
        assert_eq!(t.edits, vec![("fn a()", "")]);
        let v = call(r#"{"tool_name":"Grep","tool_input":{"pattern":"Pool","path":"src"}}"#);
        let t = read(&v).tool.unwrap();
        assert_eq!(
            (t.action, t.pattern, t.file.as_deref()),
            (Action::Search, Some("Pool"), Some("src"))
        );
        let v = call(
            r#"{"tool_name":"Bash","tool_input":{"command":"cargo build"},"error":"E","is_interrupt":true}"#,
        );
        let c = read(&v);
        assert_eq!(
            (c.command(), c.failure.as_deref(), c.interrupted),
            (Some("cargo build"), Some("E"), true)
        );
        let v = call(r#"{"tool_name":"mcp__plugin_helix_helix__store","session_id":"../x"}"#);
        let c = read(&v);
        assert_eq!(c.tool.as_ref().unwrap().helix, Some("store"));
        assert_eq!(c.session(), None, "not a safe file name");
    }

    #[test]
    fn answers_in_claude_codes_shapes() {
        let hook = crate::hook::table::find("prompt").unwrap();
        let v = call(r#"{"hook_event_name":"UserPromptSubmit"}"#);
        let out: Value =
            serde_json::from_str(&render(hook, &read(&v), Answer::Context("a\"b".into())).unwrap())
                .unwrap();
        assert_eq!(out["hookSpecificOutput"]["additionalContext"], "a\"b");
        assert_eq!(
            out["hookSpecificOutput"]["hookEventName"],
            "UserPromptSubmit"
        );
        // An event without context support answers as the installed one.
        let v = call(r#"{"hook_event_name":"Stop"}"#);
        assert_eq!(
            answer_event(hook, str_of(&v, "hook_event_name")),
            "UserPromptSubmit"
        );
        let out: Value =
            serde_json::from_str(&render(hook, &read(&v), Answer::Block("r".into())).unwrap())
                .unwrap();
        assert_eq!(out["decision"], "block");
        assert!(carries_context("SubagentStart") && !carries_context("Stop"));
    }
}
