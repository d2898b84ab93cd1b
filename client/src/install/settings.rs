//! helix's hook handlers in a settings document of the grouped form Claude Code, Codex and
//! Gemini CLI share — `{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type":
//! "command", "command": …}]}]}}` — from the agent's bindings, and Claude Code's
//! `enabledMcpjsonServers`. Writer and reader side by side: what `merge_hooks` writes,
//! `parse_helix_command` recognises, and `remove_hooks` takes out again.

use super::ordered::Value;
use crate::hook::agent::{self, Adapter, Binding, McpNames};
use crate::hook::table::TIMEOUT_SECS;
use crate::hook::tools::Tools;
use anyhow::{Result, bail};

/// The MCP server name helix registers (`mcpServers.helix`, `enabledMcpjsonServers`).
pub const SERVER: &str = "helix";

/// The command of a handler: `<program> hook <name>[ --agent <agent>][ --mcp <value>]`
/// (Claude Code, the default agent, without `--agent`: handlers installed before agents were
/// named keep their meaning).
pub fn command(hook: &str, program: &str, agent: &Adapter, tools: Tools) -> String {
    let mut c = format!("{program} hook {hook}");
    if agent.name != agent::default().name {
        c.push_str(" --agent ");
        c.push_str(agent.name);
    }
    if let Some(f) = tools.flag(agent) {
        c.push_str(" --mcp ");
        c.push_str(f);
    }
    c
}

/// The prefix helix's MCP tools get in `agent`'s matchers (its default one when no server
/// is registered: approve-mcp then never fires, which is harmless).
pub fn matcher_prefix(agent: &Adapter, tools: Tools) -> &'static str {
    match (tools, agent.mcp) {
        (Tools::Mcp(McpNames::Prefix(p)), _) | (Tools::Cli, McpNames::Prefix(p)) => p,
        // Codex: hooks see `mcp__helix__search` though the model sees a namespace.
        (_, McpNames::Namespace(_)) => agent::codex::PREFIX,
        _ => "",
    }
}

/// A recognised helix handler command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelixCommand {
    /// The program as written: `helix` or a path.
    pub program: String,
    /// The hook name.
    pub hook: String,
    /// The `--mcp` value, if any.
    pub mcp: Option<String>,
    /// The `--agent` value, if any (none: Claude Code).
    pub agent: Option<String>,
}

/// If `command` is a helix handler (`helix hook <name>` or `/path/to/helix hook <name>`,
/// optionally with `--agent <name>` and `--mcp <value>`), what it runs.
pub fn parse_helix_command(command: &str) -> Option<HelixCommand> {
    let command = command.trim();
    // Agents that take a failed hook for a refusal get `… 2>/dev/null || true`.
    let command = command
        .strip_suffix(super::agents::GUARD.trim_start())
        .map_or(command, str::trim_end);
    let (prog, rest) = if let Some(stripped) = command.strip_prefix('\'') {
        let end = stripped.find('\'')?;
        (stripped[..end].to_string(), &stripped[end + 1..])
    } else {
        let end = command.find(char::is_whitespace)?;
        (command[..end].to_string(), &command[end..])
    };
    let mut words = rest.split_whitespace();
    if words.next()? != "hook" {
        return None;
    }
    let hook = words.next()?.to_string();
    let (mut mcp, mut agent) = (None, None);
    while let Some(flag) = words.next() {
        let slot = match flag {
            "--mcp" => &mut mcp,
            "--agent" => &mut agent,
            _ => return None,
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(words.next()?.to_string());
    }
    let base = prog.rsplit('/').next().unwrap_or(&prog);
    if base != "helix" {
        return None;
    }
    Some(HelixCommand {
        program: prog,
        hook,
        mcp,
        agent,
    })
}

fn is_helix_handler(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| parse_helix_command(c).is_some())
}

/// One handler running `command`: Gemini CLI names each and counts its timeout in
/// milliseconds; the others count seconds.
fn handler_value(spec: &Binding, command: String, agent: &Adapter) -> Value {
    let mut fields = vec![
        ("type".into(), Value::String("command".into())),
        ("command".into(), Value::String(command)),
    ];
    if agent.name == "gemini" {
        fields.push(("name".into(), Value::String(format!("helix-{}", spec.hook))));
        fields.push((
            "timeout".into(),
            Value::Number((TIMEOUT_SECS * 1000).into()),
        ));
    } else {
        fields.push(("timeout".into(), Value::Number(TIMEOUT_SECS.into())));
    }
    Value::Object(fields)
}

fn group_value(spec: &Binding, command: String, agent: &Adapter, tools: Tools) -> Value {
    let mut fields = Vec::new();
    if let Some(m) = spec.matcher_for(matcher_prefix(agent, tools)) {
        fields.push(("matcher".into(), Value::String(m)));
    }
    fields.push((
        "hooks".into(),
        Value::Array(vec![handler_value(spec, command, agent)]),
    ));
    Value::Object(fields)
}

/// Whether `groups` (one event's array) already holds exactly the wanted helix handlers of
/// `specs` (the bindings of that event), once each.
fn already_installed(
    groups: &[Value],
    specs: &[&Binding],
    command: &impl Fn(&str) -> String,
    agent: &Adapter,
    tools: Tools,
) -> bool {
    let helix: Vec<(&Value, Option<&str>, usize)> = groups
        .iter()
        .flat_map(|g| {
            let matcher = g
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty());
            let handlers = g
                .get("hooks")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            handlers
                .iter()
                .filter(|h| is_helix_handler(h))
                .map(move |h| (h, matcher, handlers.len()))
        })
        .collect();
    helix.len() == specs.len()
        && specs.iter().all(|spec| {
            let want = handler_value(spec, command(spec.hook), agent);
            let want_matcher = spec.matcher_for(matcher_prefix(agent, tools));
            helix
                .iter()
                .any(|(h, m, n)| **h == want && *m == want_matcher.as_deref() && *n == 1)
        })
}

/// Removes helix handlers from one event's groups; drops groups left empty by that.
fn remove_helix(groups: &mut Vec<Value>) -> bool {
    let mut changed = false;
    groups.retain_mut(|g| {
        let Some(handlers) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|h| !is_helix_handler(h));
        if handlers.len() != before {
            changed = true;
            return !handlers.is_empty();
        }
        true
    });
    changed
}

/// Merges `agent`'s handlers, running `program`, into a settings document. Returns whether
/// anything changed.
pub fn merge_hooks(doc: &mut Value, program: &str, agent: &Adapter, tools: Tools) -> Result<bool> {
    merge_hooks_with(doc, agent, tools, |hook| {
        command(hook, program, agent, tools)
    })
}

/// [`merge_hooks`] with each hook's handler command given by `command`.
pub fn merge_hooks_with(
    doc: &mut Value,
    agent: &Adapter,
    tools: Tools,
    command: impl Fn(&str) -> String,
) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let hooks = doc.entry_or_insert("hooks", Value::Object(Vec::new()));
    let Value::Object(_) = hooks else {
        bail!("`hooks` is not a JSON object")
    };
    let mut changed = false;
    let mut events: Vec<&str> = Vec::new();
    for b in agent.bindings {
        if !events.contains(&b.event) {
            events.push(b.event);
        }
    }
    for event in events {
        let specs: Vec<&Binding> = agent.bindings.iter().filter(|b| b.event == event).collect();
        let groups = hooks.entry_or_insert(event, Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            bail!("`hooks.{event}` is not a JSON array")
        };
        if already_installed(groups, &specs, &command, agent, tools) {
            continue;
        }
        remove_helix(groups);
        for spec in specs {
            groups.push(group_value(spec, command(spec.hook), agent, tools));
        }
        changed = true;
    }
    Ok(changed)
}

/// Removes every helix handler from a settings document, and containers left empty by it.
pub fn remove_hooks(doc: &mut Value) -> bool {
    let Some(hooks) = doc.get_mut("hooks") else {
        return false;
    };
    let Value::Object(events) = hooks else {
        return false;
    };
    let mut changed = false;
    events.retain_mut(|(_, groups)| {
        let Value::Array(list) = groups else {
            return true;
        };
        let before = list.len();
        if remove_helix(list) {
            changed = true;
            // An event array that only held helix groups goes away with them.
            return !(list.is_empty() && before > 0);
        }
        true
    });
    if changed && events.is_empty() {
        doc.remove("hooks");
    }
    changed
}

/// Every helix handler of a settings document.
pub fn helix_commands(doc: &Value) -> Vec<HelixCommand> {
    let mut found = Vec::new();
    let Some(Value::Object(events)) = doc.get("hooks") else {
        return found;
    };
    for (_, groups) in events {
        for g in groups.as_array().map(Vec::as_slice).unwrap_or_default() {
            for h in g
                .get("hooks")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if let Some(parsed) = h
                    .get("command")
                    .and_then(Value::as_str)
                    .and_then(parse_helix_command)
                {
                    found.push(parsed);
                }
            }
        }
    }
    found
}

/// Adds `helix` to `enabledMcpjsonServers` (approves the project's `.mcp.json` server for
/// everyone who uses these settings). Returns whether anything changed.
pub fn enable_mcpjson_server(doc: &mut Value) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let list = doc.entry_or_insert("enabledMcpjsonServers", Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        bail!("`enabledMcpjsonServers` is not a JSON array")
    };
    if list.iter().any(|v| v.as_str() == Some(SERVER)) {
        return Ok(false);
    }
    list.push(Value::String(SERVER.into()));
    Ok(true)
}

/// Takes `helix` out of `enabledMcpjsonServers` (and the key, when that empties it).
pub fn disable_mcpjson_server(doc: &mut Value) -> bool {
    let Some(Value::Array(list)) = doc.get_mut("enabledMcpjsonServers") else {
        return false;
    };
    let before = list.len();
    list.retain(|v| v.as_str() != Some(SERVER));
    let changed = list.len() != before;
    if changed && list.is_empty() {
        doc.remove("enabledMcpjsonServers");
    }
    changed
}

/// Whether `helix` is in `enabledMcpjsonServers`.
pub fn mcpjson_server_enabled(doc: &Value) -> bool {
    doc.get("enabledMcpjsonServers")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(SERVER)))
}

/// The enabled plugins called `helix` (`enabledPlugins: {"helix@<marketplace>": true}`).
pub fn helix_plugins(doc: &Value) -> Vec<String> {
    let Some(Value::Object(plugins)) = doc.get("enabledPlugins") else {
        return Vec::new();
    };
    plugins
        .iter()
        .filter(|(id, on)| id.split('@').next() == Some("helix") && *on == Value::Bool(true))
        .map(|(id, _)| id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::agent::claude::{ADAPTER as CLAUDE, PLUGIN_PREFIX};

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).expect("test JSON")
    }

    fn render(doc: &Value) -> String {
        serde_json::to_string_pretty(doc).expect("render")
    }

    #[test]
    fn recognises_helix_commands() {
        let p = |c: &str| parse_helix_command(c).map(|h| (h.program, h.hook, h.mcp));
        assert_eq!(
            parse_helix_command("helix hook post-tool --agent codex --mcp none")
                .map(|h| (h.hook, h.agent, h.mcp)),
            Some((
                "post-tool".into(),
                Some("codex".into()),
                Some("none".into())
            ))
        );
        assert_eq!(
            parse_helix_command("helix hook prompt --agent a --agent b"),
            None
        );
        assert_eq!(
            parse_helix_command("helix hook prompt --agent gemini 2>/dev/null || true")
                .map(|h| h.agent),
            Some(Some("gemini".into()))
        );
        assert_eq!(parse_helix_command("helix hook prompt 2>/dev/null"), None);
        assert_eq!(
            p("helix hook prompt"),
            Some(("helix".into(), "prompt".into(), None))
        );
        assert_eq!(
            p("/usr/local/bin/helix hook stop"),
            Some(("/usr/local/bin/helix".into(), "stop".into(), None))
        );
        assert_eq!(
            p("'/my dir/helix' hook error --mcp none"),
            Some(("/my dir/helix".into(), "error".into(), Some("none".into())))
        );
        assert_eq!(p("other-tool hook prompt"), None);
        assert_eq!(p("helix sync"), None);
        assert_eq!(p("helix hook prompt && rm -rf /"), None);
        assert_eq!(p("helix hook prompt --mcp"), None);
    }

    #[test]
    fn merge_keeps_order_and_other_hooks_and_is_idempotent() {
        let src = r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"lint"}]}]},"zeta":1}"#;
        let mut doc = parse(src);
        assert!(merge_hooks(&mut doc, "helix", &CLAUDE, Tools::default()).unwrap());
        let once = render(&doc);
        assert!(!merge_hooks(&mut doc, "helix", &CLAUDE, Tools::default()).unwrap());
        assert_eq!(render(&doc), once);
        let keys: Vec<&str> = match &doc {
            Value::Object(m) => m.iter().map(|(k, _)| k.as_str()).collect(),
            _ => vec![],
        };
        assert_eq!(keys, ["model", "hooks", "zeta"]);
        assert!(remove_hooks(&mut doc));
        assert_eq!(doc, parse(src));
    }

    #[test]
    fn merge_replaces_a_stale_binary_path_and_tool_names() {
        let mut doc = parse(r#"{}"#);
        merge_hooks(&mut doc, "/old/helix", &CLAUDE, Tools::default()).unwrap();
        assert!(
            merge_hooks(
                &mut doc,
                "/new/helix",
                &CLAUDE,
                Tools::Mcp(McpNames::Prefix(PLUGIN_PREFIX))
            )
            .unwrap()
        );
        let text = render(&doc);
        assert!(!text.contains("/old/helix"));
        assert_eq!(text.matches("/new/helix hook").count(), 9);
        assert!(text.contains("\"mcp__plugin_helix_helix__.*\""), "{text}");
        assert_eq!(helix_commands(&doc).len(), 9);
    }

    #[test]
    fn enabled_servers_merge_and_remove() {
        let mut doc = parse(r#"{"enabledMcpjsonServers":["db"]}"#);
        assert!(enable_mcpjson_server(&mut doc).unwrap());
        assert!(!enable_mcpjson_server(&mut doc).unwrap());
        assert!(mcpjson_server_enabled(&doc));
        assert!(disable_mcpjson_server(&mut doc));
        assert_eq!(doc, parse(r#"{"enabledMcpjsonServers":["db"]}"#));
        let mut doc = parse(r#"{}"#);
        enable_mcpjson_server(&mut doc).unwrap();
        disable_mcpjson_server(&mut doc);
        assert_eq!(doc, parse("{}"));
    }
}
