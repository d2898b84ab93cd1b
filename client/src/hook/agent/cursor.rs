//! Cursor (the IDE's agent and its `agent` CLI): snake_case input with a
//! `conversation_id` and `workspace_roots` (no `cwd` on session start and prompt), tools
//! `Read`, `Write`, `Grep`, `Delete`, `Shell`, `Task` and `MCP:<tool>`, a top-level
//! `additional_context` answer, and a stop hook's `followup_message`.
//!
//! A shell command that exits non-zero is a `postToolUse` whose `tool_output` is the JSON
//! text `{"output": …, "exitCode": 1}`; `postToolUseFailure` (`error_message`,
//! `failure_type`) comes when the tool itself failed (a timeout, a rejection). Cursor cannot
//! run offline, so these shapes come from its hook engine (`@cursor/sdk` 1.0.32) and docs,
//! and are pinned by contract tests (client/tests/cli/agents.rs).

use super::{Adapter, Binding, McpNames, flag_of, str_of};
use crate::hook::call::{Action, Answer, Call, Tool};
use crate::hook::table::Hook;
use serde_json::{Value, json};
use std::borrow::Cow;

pub static ADAPTER: Adapter = Adapter {
    name: "cursor",
    title: "Cursor",
    read,
    render,
    bindings: &BINDINGS,
    // Hooks see `MCP:<tool>`, without the server: the texts name helix's server instead.
    mcp: McpNames::Plain,
    markup: true,
};

pub const BINDINGS: [Binding; 7] = [
    bind("session-start", "sessionStart", None),
    bind("prompt", "beforeSubmitPrompt", None),
    bind("ambient", "preToolUse", Some("Read|Write|Grep|Delete")),
    bind("post-tool", "postToolUse", Some("Shell")),
    bind("error", "postToolUseFailure", Some("Shell")),
    bind("stop", "stop", None),
    bind("subagent-start", "subagentStart", None),
];

const fn bind(hook: &'static str, event: &'static str, matcher: Option<&'static str>) -> Binding {
    Binding {
        hook,
        event,
        matcher,
    }
}

/// The output of a shell command that exited non-zero: `tool_output` is JSON text
/// `{"output": "...", "exitCode": N}`.
fn shell_failure(v: &Value) -> Option<String> {
    let out: Value = serde_json::from_str(str_of(v, "tool_output")?).ok()?;
    let code = out.get("exitCode").and_then(Value::as_i64)?;
    (code != 0).then(|| str_of(&out, "output").unwrap_or("").to_string())
}

fn read(v: &Value) -> Call<'_> {
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let tool = str_of(v, "tool_name").map(|name| {
        let s = |k| str_of(input, k);
        let action = match name {
            "Read" => Action::Read,
            "Write" | "Delete" => Action::Write,
            "Grep" => Action::Search,
            "Shell" => Action::Shell,
            _ => Action::Other,
        };
        Tool {
            name,
            action,
            file: s("file_path").or_else(|| s("path")).map(Cow::Borrowed),
            pattern: (action == Action::Search).then(|| s("pattern")).flatten(),
            command: s("command").map(Cow::Borrowed),
            edits: Vec::new(),
            helix: None,
        }
    });
    let failure = match str_of(v, "error_message") {
        Some(m) => Some(Cow::Borrowed(m)),
        None if str_of(v, "tool_name") == Some("Shell") => shell_failure(v).map(Cow::Owned),
        None => None,
    };
    let root = v
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str);
    Call {
        session: str_of(v, "conversation_id").or_else(|| str_of(v, "session_id")),
        cwd: str_of(v, "cwd").filter(|c| !c.is_empty()).or(root),
        event: str_of(v, "hook_event_name"),
        source: None,
        prompt: str_of(v, "prompt").map(Cow::Borrowed),
        tool,
        failure,
        interrupted: flag_of(v, "is_interrupt"),
        // The stop hook's follow-up is running when the loop has gone round once.
        stop_active: v.get("loop_count").and_then(Value::as_u64).unwrap_or(0) > 0,
    }
}

fn render(_hook: &Hook, _call: &Call<'_>, answer: Answer) -> Option<String> {
    match answer {
        Answer::Context(text) => Some(json!({ "additional_context": text }).to_string()),
        Answer::Block(reason) => Some(json!({ "followup_message": reason }).to_string()),
        Answer::Allow => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_roots_stand_for_cwd_and_exit_codes_for_failures() {
        let v: Value = serde_json::from_str(
            r#"{"conversation_id":"c1","workspace_roots":["/w"],"hook_event_name":"beforeSubmitPrompt","prompt":"why"}"#,
        )
        .unwrap();
        let c = read(&v);
        assert_eq!(
            (c.session(), c.cwd, c.prompt.as_deref()),
            (Some("c1"), Some("/w"), Some("why"))
        );
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"Shell","tool_input":{"command":"make","cwd":""},"tool_output":"{\"output\":\"E1\",\"exitCode\":1}","cwd":"/w"}"#,
        )
        .unwrap();
        let c = read(&v);
        assert_eq!(
            (c.failure.as_deref(), c.command()),
            (Some("E1"), Some("make"))
        );
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"Shell","tool_output":"{\"output\":\"ok\",\"exitCode\":0}"}"#,
        )
        .unwrap();
        assert_eq!(read(&v).failure, None);
        let hook = crate::hook::table::find("stop").unwrap();
        assert_eq!(
            render(hook, &read(&v), Answer::Block("store it".into())).unwrap(),
            r#"{"followup_message":"store it"}"#
        );
    }
}
