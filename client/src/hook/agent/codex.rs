//! OpenAI Codex CLI: Claude Code's snake_case input and output form (any field Codex does
//! not know fails the hook, so answers carry exactly `hookEventName` and
//! `additionalContext`), its events named as Claude Code's.
//!
//! Codex does everything through the shell: a file read is a `Bash` call of `cat`, `sed -n`
//! or `head` (the file is read from the command line, `shell::file_use`), and a command
//! that failed arrives as an ordinary `PostToolUse` whose `tool_response` is the output
//! alone, without its exit code: output that reads as a failure (a line that starts with
//! `error`, `fatal:`, `FAILED`, a traceback…) is taken for one, and the error hook's gate
//! judges the rest. Facts from the pinned client: tests/agents/codex.

use super::shell::file_use;
use super::{Adapter, Binding, McpNames, flag_of, helix_tool, str_of};
use crate::hook::call::{Action, Answer, Call, Tool};
use crate::hook::table::Hook;
use serde_json::{Value, json};
use std::borrow::Cow;

/// How hooks and matchers see helix's tools (the model sees tool `search` in namespace
/// `mcp__helix`).
pub const PREFIX: &str = "mcp__helix__";

pub static ADAPTER: Adapter = Adapter {
    name: "codex",
    title: "Codex CLI",
    read,
    render,
    bindings: &BINDINGS,
    mcp: McpNames::Namespace("mcp__helix"),
    markup: true,
};

/// A file read is a shell command, so the file hook runs before every `Bash` call and says
/// nothing unless the command reads a file; after it, `post-tool` tells a failure (the
/// error hook) from a finished build. A compaction restarts the session (`SessionStart`
/// with source `compact`).
pub const BINDINGS: [Binding; 6] = [
    bind("session-start", "SessionStart", None),
    bind("prompt", "UserPromptSubmit", None),
    bind("ambient", "PreToolUse", Some("Bash")),
    bind("post-tool", "PostToolUse", Some("Bash|{mcp}store")),
    bind("stop", "Stop", None),
    bind("subagent-start", "SubagentStart", None),
];

const fn bind(hook: &'static str, event: &'static str, matcher: Option<&'static str>) -> Binding {
    Binding {
        hook,
        event,
        matcher,
    }
}

/// Line starts that say a command failed, compared case-insensitively: compilers, git,
/// test runners (Jest and Vitest `FAIL`), npm old and new, Python, Rust, Go.
const FAILURE_STARTS: [&str; 14] = [
    "error",
    "fatal:",
    "failed",
    "failure",
    "fail ",
    "panic:",
    "thread '",
    "traceback (most recent call last)",
    "exception",
    "npm err!",
    "npm error",
    "err!",
    "syntaxerror",
    "e   ",
];
/// Texts inside a line that say a command failed.
const FAILURE_MARKS: [&str; 12] = [
    ": error:",
    "command not found",
    "no such file or directory",
    "permission denied",
    "undefined reference to",
    "undefined method",
    "--- fail:",
    " error ts",
    "aborted!",
    "no matches found",
    "argument list too long",
    "cannot find",
];
/// What a tool's own prefix (`curl: `, `jq: `, `zsh: `) says after it, for a failure.
const PREFIXED_FAILURES: [&str; 7] = [
    "error",
    "(",
    "not found",
    "invalid",
    "cannot",
    "failed",
    "denied",
];

/// Whether a command's output reads as a failure: a marker line, an exception's class
/// (`TypeError:`, `URI::InvalidComponentError:`), an ESLint problem (`23:7  error`), or a
/// tool's `name: ` prefix before an error.
fn looks_failed(output: &str) -> bool {
    output.lines().take(400).any(|line| {
        let l = line.trim_start().to_ascii_lowercase();
        let words: Vec<&str> = line.split_whitespace().collect();
        FAILURE_STARTS.iter().any(|s| l.starts_with(s))
            || FAILURE_MARKS.iter().any(|m| l.contains(m))
            || (l.starts_with("thread ") && l.contains("panicked"))
            || words
                .iter()
                .any(|w| w.ends_with("Error:") || w.ends_with("Exception:"))
            || (words.len() > 1
                && words[1] == "error"
                && words[0]
                    .split(':')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
            || l.split_once(": ").is_some_and(|(tool, rest)| {
                !tool.is_empty()
                    && tool.len() <= 20
                    && tool
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    && PREFIXED_FAILURES
                        .iter()
                        .any(|p| rest.starts_with(p) || rest.contains(&format!(" {p}")))
            })
    })
}

fn read(v: &Value) -> Call<'_> {
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let name = str_of(v, "tool_name");
    let command = str_of(input, "command");
    let tool = name.map(|name| {
        let helix = helix_tool(name, &[PREFIX]);
        let mut tool = Tool {
            name,
            action: if name == "Bash" {
                Action::Shell
            } else if helix.is_some() {
                Action::Helix
            } else {
                Action::Other
            },
            command: command.map(Cow::Borrowed),
            helix,
            ..Tool::default()
        };
        if let Some(used) = command.filter(|_| name == "Bash").and_then(file_use) {
            tool.action = used.action;
            tool.file = used.file.map(Cow::Owned);
            tool.pattern = None;
            if let Some(p) = used.pattern {
                // A search's pattern borrows from the input: keep it only when it is
                // written as is in the command.
                tool.pattern =
                    command.and_then(|c| c.find(p.as_str()).map(|at| &c[at..at + p.len()]));
            }
        }
        tool
    });
    let output = str_of(v, "tool_response");
    let failed = name == Some("Bash")
        && str_of(v, "hook_event_name") == Some("PostToolUse")
        && output.is_some_and(looks_failed);
    Call {
        session: str_of(v, "session_id"),
        cwd: str_of(v, "cwd"),
        event: str_of(v, "hook_event_name"),
        source: str_of(v, "source"),
        prompt: str_of(v, "prompt")
            .filter(|_| v.get("agent_id").is_none())
            .map(Cow::Borrowed),
        tool,
        failure: output.filter(|_| failed).map(Cow::Borrowed),
        interrupted: false,
        stop_active: flag_of(v, "stop_hook_active"),
    }
}

fn render(hook: &Hook, call: &Call<'_>, answer: Answer) -> Option<String> {
    match answer {
        Answer::Context(text) => Some(super::nested_context(&BINDINGS, hook, call, &text)),
        Answer::Block(reason) => Some(json!({"decision": "block", "reason": reason}).to_string()),
        Answer::Allow => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_read_is_a_file_read() {
        let v: Value = serde_json::from_str(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"sed -n '1,20p' src/db/pool.rs"}}"#,
        )
        .unwrap();
        let t = read(&v).tool.unwrap();
        assert_eq!(
            (t.action, t.file.as_deref()),
            (Action::Read, Some("src/db/pool.rs"))
        );
        let v: Value = serde_json::from_str(
            r#"{"tool_name":"Bash","tool_input":{"command":"rg -n PoolConfig src"}}"#,
        )
        .unwrap();
        let t = read(&v).tool.unwrap();
        assert_eq!(
            (t.action, t.pattern, t.file.as_deref()),
            (Action::Search, Some("PoolConfig"), Some("src"))
        );
    }

    #[test]
    fn failures_are_read_from_the_output() {
        let post = |out: &str| {
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "cargo build"}, "tool_response": out})
        };
        for failed in [
            "   Compiling x\nerror[E0425]: cannot find value `y`",
            "fatal: not a git repository",
            "sh: 1: pnpm: command not found",
            "Traceback (most recent call last):\n  File \"a.py\"",
            "thread 'main' panicked at src/main.rs:3:5",
            "/app/x.rb:3:in `go': undefined method `y' for nil (NoMethodError)",
            " FAIL  src/cart.test.ts > totals",
            "--- FAIL: TestLedger (0.00s)",
            "src/a.ts(4,3): error TS2322: Type 'string' is not assignable",
            "  23:7  error  'x' is assigned a value but never used  no-unused-vars",
            "curl: (22) The requested URL returned error: 404",
            "jq: error (at <stdin>:0): Cannot index string",
            "zsh: no matches found: *.orig",
            "npm error code ERESOLVE",
            "    raise TypeError: unsupported operand",
            "rake aborted!",
        ] {
            let v = post(failed);
            assert_eq!(read(&v).failure.as_deref(), Some(failed), "{failed}");
        }
        for ok in [
            "   Compiling x\n    Finished release",
            "src/a.rs:3: let error = 1;",
            "test result: ok. 12 passed; 0 failed",
            "PASS  src/cart.test.ts",
            "",
        ] {
            let v = post(ok);
            assert_eq!(read(&v).failure, None, "{ok}");
        }
        let v: Value = serde_json::from_str(r#"{"prompt":"check","agent_id":"a"}"#).unwrap();
        assert!(read(&v).prompt.is_none(), "a subagent's prompt");
    }
}
