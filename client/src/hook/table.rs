//! The one table of helix's hooks: each hook's `helix hook <name>`, the Claude Code event and
//! matcher it is installed under, whether its answer may carry context, and its handler. It
//! drives dispatch, `helix hooks install|status` and the help text alike.

use super::ctx::Ctx;
use super::events;

/// One helix hook.
#[derive(Debug, Clone, Copy)]
pub struct Hook {
    /// `helix hook <name>`.
    pub name: &'static str,
    /// The Claude Code event it is installed under.
    pub event: &'static str,
    /// The installed matcher (tool names or a regex), if any; `{mcp}` stands for the
    /// prefix of helix's MCP tool names (see [`Hook::matcher_for`]).
    pub matcher: Option<&'static str>,
    /// Whether Claude Code accepts `additionalContext` from this event.
    pub context: bool,
    /// Whether a second call with the same stdin in the same session moments later (a
    /// duplicate handler) is silenced (`once`). Not for approve-mcp: an allow is idempotent,
    /// and a repeated identical request must still be allowed.
    pub once: bool,
    /// One line for help texts.
    pub about: &'static str,
    pub run: fn(&Ctx<'_>) -> Option<String>,
}

/// Timeout of every helix handler, in seconds (hooks answer in milliseconds).
pub const TIMEOUT_SECS: u64 = 5;

/// The nine hooks, in the order of the design.
pub const HOOKS: [Hook; 9] = [
    Hook {
        name: "session-start",
        event: "SessionStart",
        matcher: None,
        context: true,
        once: true,
        about: "counts, top topics and how to search; the full topic list after a compaction",
        run: events::session_start,
    },
    Hook {
        name: "prompt",
        event: "UserPromptSubmit",
        matcher: None,
        context: true,
        once: true,
        about: "entries about the prompt",
        run: events::prompt,
    },
    Hook {
        name: "ambient",
        event: "PreToolUse",
        matcher: Some("Read|Edit|Write|MultiEdit|Glob|Grep|NotebookEdit"),
        context: true,
        once: true,
        about: "entries about the file a tool is about to touch",
        run: events::ambient,
    },
    // helix's `store` tool lets the stop hook know the session stored something.
    Hook {
        name: "post-build",
        event: "PostToolUse",
        matcher: Some("Bash|{mcp}store"),
        context: true,
        once: true,
        about: "after a build command, a nudge to store a non-obvious fix",
        run: events::post_build,
    },
    Hook {
        name: "error",
        event: "PostToolUseFailure",
        matcher: Some("Bash"),
        context: true,
        once: true,
        about: "entries matching a failed command's error",
        run: events::error,
    },
    Hook {
        name: "pre-compact",
        event: "PreCompact",
        matcher: None,
        context: false,
        once: true,
        about: "records the compaction for the session",
        run: events::pre_compact,
    },
    Hook {
        name: "stop",
        event: "Stop",
        matcher: None,
        context: false,
        once: true,
        about: "at most one reminder to store what a failing session learned",
        run: events::stop,
    },
    Hook {
        name: "subagent-start",
        event: "SubagentStart",
        matcher: None,
        context: true,
        once: true,
        about: "the topic list and how to search, for a subagent",
        run: events::subagent_start,
    },
    Hook {
        name: "approve-mcp",
        event: "PermissionRequest",
        matcher: Some("{mcp}.*"),
        context: false,
        once: false,
        about: "allows helix's own MCP tools",
        run: events::approve_mcp,
    },
];

impl Hook {
    /// The matcher to install for a session whose helix MCP tools are named `prefix…`.
    pub fn matcher_for(&self, prefix: &str) -> Option<String> {
        self.matcher.map(|m| m.replace("{mcp}", prefix))
    }
}

/// The hook called `name`.
pub fn find(name: &str) -> Option<&'static Hook> {
    HOOKS.iter().find(|h| h.name == name)
}

/// The `hookEventName` to answer `hook`'s call with: the input's own when Claude Code
/// accepts context from that event, else the event the hook is installed under.
pub fn answer_event<'a>(hook: &Hook, input_event: Option<&'a str>) -> &'a str {
    input_event
        .filter(|e| carries_context(e))
        .unwrap_or(hook.event)
}

/// Whether Claude Code accepts context from `event` (a Claude Code event name).
pub fn carries_context(event: &str) -> bool {
    HOOKS.iter().any(|h| h.context && h.event == event)
}

/// The hooks for `helix hook --help`: one line each.
pub fn help() -> String {
    let mut s = String::from("The hook to run (unknown names print nothing):\n");
    for h in &HOOKS {
        s.push_str(&format!("  {:<15} {} — {}\n", h.name, h.event, h.about));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_command_safe() {
        for (i, h) in HOOKS.iter().enumerate() {
            assert!(
                HOOKS[..i].iter().all(|o| o.name != h.name),
                "{} twice",
                h.name
            );
            assert!(h.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
            assert!(help().contains(h.name));
        }
        assert!(carries_context("UserPromptSubmit"));
        assert!(!carries_context("Stop"));
        assert!(find("prompt").is_some() && find("nope").is_none());
    }
}
