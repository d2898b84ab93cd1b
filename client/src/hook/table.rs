//! The one table of helix's hooks: each hook's `helix hook <name>`, whether a duplicate call
//! is silenced, and its handler. It drives dispatch and the help text; which event of which
//! agent runs each hook is each agent adapter's own table (`agent::Adapter::bindings`),
//! which the installers and `helix hooks status` read.

use super::call::Answer;
use super::ctx::Ctx;
use super::events;

/// One helix hook.
#[derive(Debug, Clone, Copy)]
pub struct Hook {
    /// `helix hook <name>`.
    pub name: &'static str,
    /// Whether a second call with the same stdin in the same session moments later (a
    /// duplicate handler) is silenced (`once`). Not for approve-mcp: an allow is idempotent,
    /// and a repeated identical request must still be allowed.
    pub once: bool,
    /// One line for help texts.
    pub about: &'static str,
    pub run: fn(&Ctx<'_>) -> Option<Answer>,
}

/// Timeout of every helix handler, in seconds (hooks answer in milliseconds).
pub const TIMEOUT_SECS: u64 = 5;

/// The hooks, in the order of the design; `post-tool` serves agents that report every
/// finished tool call, failed or not, through one event.
pub const HOOKS: [Hook; 10] = [
    Hook {
        name: "session-start",
        once: true,
        about: "counts, top topics and how to search; the full topic list after a compaction",
        run: events::session_start,
    },
    Hook {
        name: "prompt",
        once: true,
        about: "entries about the prompt",
        run: events::prompt,
    },
    Hook {
        name: "ambient",
        once: true,
        about: "entries about the file a tool is about to touch",
        run: events::ambient,
    },
    Hook {
        name: "post-build",
        once: true,
        about: "after a build command, a nudge to store a non-obvious fix",
        run: events::post_build,
    },
    Hook {
        name: "error",
        once: true,
        about: "entries matching a failed command's error",
        run: events::error,
    },
    Hook {
        name: "post-tool",
        once: true,
        about: "after any tool: `error` if it failed, else `ambient` for a file read, else `post-build`",
        run: events::post_tool,
    },
    Hook {
        name: "pre-compact",
        once: true,
        about: "records the compaction for the session",
        run: events::pre_compact,
    },
    Hook {
        name: "stop",
        once: true,
        about: "at most one reminder to store what a failing session learned",
        run: events::stop,
    },
    Hook {
        name: "subagent-start",
        once: true,
        about: "the topic list and how to search, for a subagent",
        run: events::subagent_start,
    },
    Hook {
        name: "approve-mcp",
        once: false,
        about: "allows helix's own MCP tools",
        run: events::approve_mcp,
    },
];

/// The hook called `name`.
pub fn find(name: &str) -> Option<&'static Hook> {
    HOOKS.iter().find(|h| h.name == name)
}

/// The hooks for `helix hook --help`: one line each.
pub fn help() -> String {
    let mut s = String::from("The hook to run (unknown names print nothing):\n");
    for h in &HOOKS {
        s.push_str(&format!("  {:<15} {}\n", h.name, h.about));
    }
    s.push_str("\n--agent NAME: whose input and output form (");
    let names: Vec<&str> = super::agent::ADAPTERS.iter().map(|a| a.name).collect();
    s.push_str(&names.join(", "));
    s.push_str("; default claude)\n");
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
        assert!(find("prompt").is_some() && find("nope").is_none());
    }
}
