//! GitHub Copilot CLI: camelCase input (`sessionId`, `toolName`, `toolArgs`, `toolResult`),
//! a top-level `additionalContext` answer (the nested Claude Code form is ignored), tools
//! `view`, `edit`, `create`, `grep`, `glob`, `bash`, helix's MCP tools as `helix-<tool>`
//! (`helix/<tool>` in a permission request).
//!
//! A shell command that fails is a `postToolUse` like any other: the exit code is only in
//! the result's last line, `<shellId: 0 completed with exit code 3>`; `postToolUseFailure`
//! comes for tool errors (a missing file, an MCP error). Copilot also runs the prompt and
//! stop hooks for each subagent (with an `agentId`): those are left alone, the subagent
//! had `subagentStart`'s context. Facts from the pinned client: tests/agents/copilot.

use super::{Adapter, Binding, McpNames, flag_of, helix_tool, str_of};
use crate::hook::call::{Action, Answer, Call, Tool};
use crate::hook::table::Hook;
use serde_json::{Value, json};
use std::borrow::Cow;

/// How the model sees helix's tools: `<server>-<tool>`.
pub const PREFIX: &str = "helix-";
/// How a permission request names them: `<server>/<tool>`.
const PERMISSION_PREFIX: &str = "helix/";

pub static ADAPTER: Adapter = Adapter {
    name: "copilot",
    title: "Copilot CLI",
    read,
    render,
    bindings: &BINDINGS,
    mcp: McpNames::Prefix(PREFIX),
    markup: true,
};

/// A tool's matcher is a regular expression over its whole name.
pub const BINDINGS: [Binding; 9] = [
    bind("session-start", "sessionStart", None),
    bind("prompt", "userPromptSubmitted", None),
    bind("ambient", "preToolUse", Some("view|edit|create|grep|glob")),
    bind("post-tool", "postToolUse", Some("bash|{mcp}store")),
    bind("error", "postToolUseFailure", Some("bash")),
    bind("pre-compact", "preCompact", None),
    bind("stop", "agentStop", None),
    bind("subagent-start", "subagentStart", None),
    bind("approve-mcp", "permissionRequest", Some("helix/.*")),
];

const fn bind(hook: &'static str, event: &'static str, matcher: Option<&'static str>) -> Binding {
    Binding {
        hook,
        event,
        matcher,
    }
}

/// The text and exit code of a finished `bash` call, when its last line says it failed.
fn shell_failure(result: &Value) -> Option<&str> {
    let text = str_of(result, "textResultForLlm")?.trim_end();
    let (body, last) = text.rsplit_once('\n').unwrap_or(("", text));
    let code = last
        .strip_prefix("<shellId: ")?
        .split_once(" completed with exit code ")?
        .1
        .strip_suffix('>')?;
    (code.parse::<i64>().ok()? != 0).then_some(body)
}

fn read(v: &Value) -> Call<'_> {
    let args = v.get("toolArgs").unwrap_or(&Value::Null);
    let subagent = v.get("agentId").is_some();
    let name = str_of(v, "toolName");
    let tool = name.map(|name| {
        let s = |k| str_of(args, k);
        let helix = helix_tool(name, &[PREFIX, PERMISSION_PREFIX]);
        let action = match name {
            "view" => Action::Read,
            "edit" => Action::Edit,
            "create" => Action::Write,
            "grep" | "glob" => Action::Search,
            "bash" => Action::Shell,
            _ if helix.is_some() => Action::Helix,
            _ => Action::Other,
        };
        // `paths` of a search: a string or a list.
        let paths = match args.get("paths") {
            Some(Value::String(p)) => Some(p.as_str()),
            Some(Value::Array(list)) => list.first().and_then(Value::as_str),
            _ => None,
        };
        Tool {
            name,
            action,
            file: s("path").or(paths).map(Cow::Borrowed),
            pattern: (action == Action::Search).then(|| s("pattern")).flatten(),
            command: s("command").map(Cow::Borrowed),
            edits: match (s("old_str"), s("new_str")) {
                (Some(old), new) if action == Action::Edit => vec![(old, new.unwrap_or(""))],
                _ => Vec::new(),
            },
            helix,
        }
    });
    let failure = str_of(v, "error").or_else(|| {
        v.get("toolResult")
            .filter(|_| name == Some("bash"))
            .and_then(shell_failure)
    });
    Call {
        session: str_of(v, "sessionId"),
        cwd: str_of(v, "cwd"),
        event: str_of(v, "hookName"),
        source: str_of(v, "source").map(|s| if s == "new" { "startup" } else { s }),
        prompt: str_of(v, "prompt").filter(|_| !subagent).map(Cow::Borrowed),
        tool,
        failure: failure.map(Cow::Borrowed),
        interrupted: false,
        stop_active: subagent || flag_of(v, "stop_hook_active"),
    }
}

fn render(_hook: &Hook, _call: &Call<'_>, answer: Answer) -> Option<String> {
    Some(match answer {
        Answer::Context(text) => json!({ "additionalContext": text }).to_string(),
        Answer::Block(reason) => json!({"decision": "block", "reason": reason}).to_string(),
        Answer::Allow => json!({"behavior": "allow"}).to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_failed_shell_command_is_read_from_its_last_line() {
        let v = fixture(
            r#"{"sessionId":"s","toolName":"bash","toolArgs":{"command":"make"},
                "toolResult":{"resultType":"success","textResultForLlm":"error: ld failed\nmore\n<shellId: 0 completed with exit code 3>"}}"#,
        );
        let c = read(&v);
        assert_eq!(c.failure.as_deref(), Some("error: ld failed\nmore"));
        assert_eq!(c.command(), Some("make"));
        let v = fixture(
            r#"{"toolName":"bash","toolArgs":{"command":"ls"},
                "toolResult":{"textResultForLlm":"a\n<shellId: 0 completed with exit code 0>"}}"#,
        );
        assert_eq!(read(&v).failure, None);
        // The marker in another tool's output means nothing.
        let v = fixture(
            r#"{"toolName":"view","toolArgs":{"path":"/r/a.rs"},
                "toolResult":{"textResultForLlm":"x\n<shellId: 0 completed with exit code 1>"}}"#,
        );
        assert_eq!(read(&v).failure, None);
    }

    #[test]
    fn tools_subagents_and_answers() {
        let v = fixture(
            r#"{"toolName":"edit","toolArgs":{"path":"/r/a.rs","old_str":"fn a","new_str":"fn b"}}"#,
        );
        let t = read(&v).tool.unwrap();
        assert_eq!(
            (t.action, t.file.as_deref()),
            (Action::Edit, Some("/r/a.rs"))
        );
        assert_eq!(t.edits, vec![("fn a", "fn b")]);
        let v = fixture(r#"{"toolName":"helix/search","toolInput":{}}"#);
        assert_eq!(read(&v).tool.unwrap().helix, Some("search"));
        let v = fixture(r#"{"prompt":"why","agentId":"a1"}"#);
        assert!(read(&v).prompt.is_none(), "a subagent's prompt");
        let v = fixture(r#"{"source":"new"}"#);
        assert_eq!(read(&v).source, Some("startup"));
        let hook = crate::hook::table::find("prompt").unwrap();
        let out = render(hook, &read(&v), Answer::Context("t".into())).unwrap();
        assert_eq!(out, r#"{"additionalContext":"t"}"#);
        assert_eq!(
            render(hook, &read(&v), Answer::Allow).unwrap(),
            r#"{"behavior":"allow"}"#
        );
    }
}
