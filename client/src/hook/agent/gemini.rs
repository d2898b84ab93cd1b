//! Gemini CLI: snake_case input like Claude Code's, its own events (`BeforeAgent` for the
//! prompt, `AfterTool` after every tool), its own tools (`read_file`, `replace`,
//! `write_file`, `grep_search`, `glob`, `run_shell_command`, MCP tools as
//! `mcp_<server>_<tool>`), answers in `hookSpecificOutput.additionalContext`.
//!
//! Gemini wraps hook context in `<hook_context>` with `<` and `>` escaped, so texts avoid
//! them; it puts the session-start context before the prompt that the prompt hook then
//! receives, which is taken off here; a failed shell command says `Exit Code: N` in its
//! result, and a tool error has `tool_response.error`. Facts from the pinned client:
//! tests/agents/gemini.

use super::{Adapter, Binding, McpNames, flag_of, helix_tool, str_of};
use crate::hook::call::{Action, Answer, Call, Tool};
use crate::hook::table::Hook;
use serde_json::Value;
use std::borrow::Cow;

/// How the model sees helix's tools: `mcp_<server>_<tool>`.
pub const PREFIX: &str = "mcp_helix_";

pub static ADAPTER: Adapter = Adapter {
    name: "gemini",
    title: "Gemini CLI",
    read,
    render,
    bindings: &BINDINGS,
    mcp: McpNames::Prefix(PREFIX),
    markup: false,
};

/// Only these events add context. `AfterTool` serves a file read (its only file event with
/// context), a failed command and a finished build alike (`post-tool`). No `PreCompress`:
/// Gemini fires it on every turn.
pub const BINDINGS: [Binding; 3] = [
    Binding {
        hook: "session-start",
        event: "SessionStart",
        matcher: None,
    },
    Binding {
        hook: "prompt",
        event: "BeforeAgent",
        matcher: None,
    },
    Binding {
        hook: "post-tool",
        event: "AfterTool",
        matcher: Some(
            "read_file|read_many_files|replace|write_file|grep_search|glob|run_shell_command|{mcp}store",
        ),
    },
];

/// The prompt without the session-start context Gemini put before it:
/// `<hook_context>…</hook_context>\n\n<prompt>` (the escaped context holds no `<`).
fn strip_context(prompt: &str) -> &str {
    match prompt.strip_prefix("<hook_context>") {
        Some(rest) => rest
            .split_once("</hook_context>")
            .map_or(prompt, |(_, p)| p.trim_start_matches('\n')),
        None => prompt,
    }
}

/// What a failed tool printed: a tool error's message, or a shell command's output when its
/// `Exit Code` is not 0.
fn failure(response: &Value) -> Option<&str> {
    if let Some(msg) = response.get("error").and_then(|e| str_of(e, "message")) {
        return Some(msg);
    }
    let content = str_of(response, "llmContent")?;
    let code = content
        .lines()
        .find_map(|l| l.strip_prefix("Exit Code: "))?;
    if code.trim().parse::<i64>().ok()? == 0 {
        return None;
    }
    str_of(response, "returnDisplay")
        .filter(|d| !d.trim().is_empty())
        .or_else(|| {
            let out = content.split_once("Output: ")?.1;
            Some(out.split_once("\nExit Code: ").map_or(out, |(o, _)| o))
        })
}

fn read(v: &Value) -> Call<'_> {
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let name = str_of(v, "tool_name");
    let tool = name.map(|name| {
        let s = |k| str_of(input, k);
        let helix = helix_tool(name, &[PREFIX]);
        let action = match name {
            "read_file" | "read_many_files" => Action::Read,
            "replace" => Action::Edit,
            "write_file" => Action::Write,
            "grep_search" | "glob" => Action::Search,
            "run_shell_command" => Action::Shell,
            _ if helix.is_some() => Action::Helix,
            _ => Action::Other,
        };
        Tool {
            name,
            action,
            file: s("file_path")
                .or_else(|| s("dir_path"))
                .or_else(|| s("path"))
                .map(Cow::Borrowed),
            pattern: (action == Action::Search).then(|| s("pattern")).flatten(),
            command: s("command").map(Cow::Borrowed),
            edits: match s("old_string") {
                Some(old) if action == Action::Edit => {
                    vec![(old, s("new_string").unwrap_or(""))]
                }
                _ => Vec::new(),
            },
            helix,
        }
    });
    Call {
        session: str_of(v, "session_id"),
        cwd: str_of(v, "cwd"),
        event: str_of(v, "hook_event_name"),
        source: str_of(v, "source"),
        prompt: str_of(v, "prompt").map(|p| Cow::Borrowed(strip_context(p))),
        tool,
        failure: v.get("tool_response").and_then(failure).map(Cow::Borrowed),
        interrupted: false,
        stop_active: flag_of(v, "stop_hook_active"),
    }
}

fn render(hook: &Hook, call: &Call<'_>, answer: Answer) -> Option<String> {
    match answer {
        Answer::Context(text) => Some(super::nested_context(&BINDINGS, hook, call, &text)),
        // Gemini has no stop hook helix uses, and no permission prompt in `-p` mode.
        Answer::Block(_) | Answer::Allow => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_start_context_is_taken_off_the_prompt() {
        assert_eq!(
            strip_context("<hook_context>helix &lt;x&gt; 3 entries</hook_context>\n\nWhy?"),
            "Why?"
        );
        assert_eq!(strip_context("Why <b>?"), "Why <b>?");
        assert_eq!(
            strip_context("<hook_context>unclosed"),
            "<hook_context>unclosed"
        );
    }

    #[test]
    fn failures_from_exit_codes_and_tool_errors() {
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"run_shell_command","tool_input":{"command":"make"},
                "tool_response":{"llmContent":"<untrusted_context>\nOutput: E1\nExit Code: 1\nProcess Group PGID: 9\n</untrusted_context>","returnDisplay":"E1"}}"#,
        )
        .unwrap();
        assert_eq!(read(&v).failure.as_deref(), Some("E1"));
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"run_shell_command","tool_response":{"llmContent":"Output: ok\nProcess Group PGID: 9"}}"#,
        )
        .unwrap();
        assert_eq!(read(&v).failure, None, "no exit code line: it succeeded");
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"read_file","tool_input":{"file_path":"/r/x"},"tool_response":{"error":{"message":"File not found: /r/x"}}}"#,
        )
        .unwrap();
        let c = read(&v);
        assert_eq!(c.failure.as_deref(), Some("File not found: /r/x"));
        assert_eq!(c.tool.unwrap().action, Action::Read);
    }
}
