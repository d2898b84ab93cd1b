//! The flat hooks file of Copilot CLI and Cursor: `{"version": 1, "hooks": {"<event>":
//! [handler, …]}}`, one handler object per command, its matcher inside it. Copilot names
//! the command `bash` and its timeout `timeoutSec`; Cursor names them `command` and
//! `timeout` (both in seconds). Writer and reader side by side.

use super::{Installer, handler_command};
use crate::hook::agent::Binding;
use crate::hook::table::TIMEOUT_SECS;
use crate::hook::tools::Tools;
use crate::install::ordered::Value;
use crate::install::settings::{HelixCommand, matcher_prefix, parse_helix_command};
use anyhow::{Result, bail};

/// The key of a handler's command: Copilot's `bash`, else `command`.
fn command_key(handler: &Value) -> &'static str {
    if handler.get("bash").is_some() {
        "bash"
    } else {
        "command"
    }
}

fn helix_command(handler: &Value) -> Option<HelixCommand> {
    handler
        .get(command_key(handler))
        .and_then(Value::as_str)
        .and_then(parse_helix_command)
}

fn handler_value(inst: &Installer, spec: &Binding, program: &str, tools: Tools) -> Value {
    let copilot = inst.adapter.name == "copilot";
    let mut fields = vec![
        ("type".into(), Value::String("command".into())),
        (
            if copilot { "bash" } else { "command" }.into(),
            Value::String(handler_command(inst, spec.hook, program, tools)),
        ),
    ];
    if let Some(m) = spec.matcher_for(matcher_prefix(inst.adapter, tools)) {
        fields.push(("matcher".into(), Value::String(m)));
    }
    fields.push((
        if copilot { "timeoutSec" } else { "timeout" }.into(),
        Value::Number(TIMEOUT_SECS.into()),
    ));
    Value::Object(fields)
}

/// Merges `inst`'s handlers into a flat hooks document. Returns whether anything changed.
pub fn merge(doc: &mut Value, inst: &Installer, program: &str, tools: Tools) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let mut changed = false;
    if doc.get("version").is_none() {
        *doc.entry_or_insert("version", Value::Null) = Value::Number(1.into());
        changed = true;
    }
    let hooks = doc.entry_or_insert("hooks", Value::Object(Vec::new()));
    let Value::Object(_) = hooks else {
        bail!("`hooks` is not a JSON object")
    };
    let mut events: Vec<&str> = Vec::new();
    for b in inst.adapter.bindings {
        if !events.contains(&b.event) {
            events.push(b.event);
        }
    }
    for event in events {
        let want: Vec<Value> = inst
            .adapter
            .bindings
            .iter()
            .filter(|b| b.event == event)
            .map(|b| handler_value(inst, b, program, tools))
            .collect();
        let list = hooks.entry_or_insert(event, Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            bail!("`hooks.{event}` is not a JSON array")
        };
        let ours: Vec<&Value> = list.iter().filter(|h| helix_command(h).is_some()).collect();
        if ours.len() == want.len() && want.iter().all(|w| ours.contains(&w)) {
            continue;
        }
        list.retain(|h| helix_command(h).is_none());
        list.extend(want);
        changed = true;
    }
    Ok(changed)
}

/// Removes every helix handler, then empty event lists, and the whole document when only
/// `version` is left. Returns whether anything changed.
pub fn remove(doc: &mut Value) -> bool {
    let Some(Value::Object(events)) = doc.get_mut("hooks") else {
        return false;
    };
    let mut changed = false;
    events.retain_mut(|(_, list)| {
        let Value::Array(list) = list else {
            return true;
        };
        let before = list.len();
        list.retain(|h| helix_command(h).is_none());
        if list.len() != before {
            changed = true;
            return !list.is_empty();
        }
        true
    });
    if changed && events.is_empty() {
        doc.remove("hooks");
        if let Value::Object(fields) = doc
            && fields.iter().all(|(k, _)| k == "version")
        {
            fields.clear();
        }
    }
    changed
}

/// Every helix handler of a flat hooks document.
pub fn helix_commands(doc: &Value) -> Vec<HelixCommand> {
    let Some(Value::Object(events)) = doc.get("hooks") else {
        return Vec::new();
    };
    events
        .iter()
        .flat_map(|(_, list)| list.as_array().map(Vec::as_slice).unwrap_or_default())
        .filter_map(helix_command)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::agents::{copilot, cursor};

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).expect("test JSON")
    }

    #[test]
    fn merge_keeps_other_hooks_is_idempotent_and_removes_exactly_helix() {
        let src =
            r#"{"version":1,"hooks":{"postToolUse":[{"command":"./lint.sh","matcher":"Write"}]}}"#;
        let mut doc = parse(src);
        let tools = Tools::from_flag(None, cursor::INSTALLER.adapter);
        assert!(merge(&mut doc, &cursor::INSTALLER, "helix", tools).unwrap());
        let once = serde_json::to_string(&doc).unwrap();
        assert!(!merge(&mut doc, &cursor::INSTALLER, "helix", tools).unwrap());
        assert_eq!(serde_json::to_string(&doc).unwrap(), once);
        assert!(
            once.contains(r#""command":"helix hook prompt --agent cursor""#),
            "{once}"
        );
        assert_eq!(
            helix_commands(&doc).len(),
            crate::hook::agent::cursor::BINDINGS.len()
        );
        assert!(remove(&mut doc));
        assert_eq!(doc, parse(src));
    }

    #[test]
    fn copilot_handlers_use_its_keys_and_an_empty_file_goes() {
        let mut doc = parse("{}");
        let tools = Tools::from_flag(None, copilot::INSTALLER.adapter);
        merge(&mut doc, &copilot::INSTALLER, "helix", tools).unwrap();
        let text = serde_json::to_string(&doc).unwrap();
        assert!(
            text.contains(
                r#""bash":"helix hook session-start --agent copilot 2>/dev/null || true""#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#""timeoutSec":5"#) && text.contains(r#""matcher":"bash|helix-store""#)
        );
        assert!(remove(&mut doc));
        assert_eq!(doc, parse("{}"));
    }
}
