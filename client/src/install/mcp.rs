//! helix's MCP server entry in Claude Code's registrations: a project's `.mcp.json` and the
//! user's `~/.claude.json` (what `claude mcp add --scope user` writes). Writer and reader side
//! by side.

use super::ordered::Value;
use super::settings::SERVER;
use anyhow::{Result, bail};

fn args_mcp() -> Value {
    Value::Array(vec![Value::String("mcp".into())])
}

/// The `.mcp.json` entry: `{"command": program, "args": ["mcp"]}`.
pub fn project_entry(program: &str) -> Value {
    Value::Object(vec![
        ("command".into(), Value::String(program.into())),
        ("args".into(), args_mcp()),
    ])
}

/// The `~/.claude.json` entry, in the shape `claude mcp add --scope user helix -- <program>
/// mcp` writes (Claude Code 2.1): `{"type": "stdio", "command", "args": ["mcp"], "env": {}}`.
pub fn user_entry(program: &str) -> Value {
    Value::Object(vec![
        ("type".into(), Value::String("stdio".into())),
        ("command".into(), Value::String(program.into())),
        ("args".into(), args_mcp()),
        ("env".into(), Value::Object(Vec::new())),
    ])
}

/// Sets `mcpServers.helix` to `entry`. Returns whether anything changed.
pub fn merge(doc: &mut Value, entry: Value) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let servers = doc.entry_or_insert("mcpServers", Value::Object(Vec::new()));
    let Value::Object(_) = servers else {
        bail!("`mcpServers` is not a JSON object")
    };
    if servers.get(SERVER) == Some(&entry) {
        return Ok(false);
    }
    *servers.entry_or_insert(SERVER, Value::Null) = entry;
    Ok(true)
}

/// Whether a `helix` server entry is one helix wrote: it runs `<…/>helix mcp`.
pub fn is_ours(entry: &Value) -> bool {
    let prog = entry.get("command").and_then(Value::as_str).unwrap_or("");
    prog.rsplit('/').next() == Some("helix") && entry.get("args") == Some(&args_mcp())
}

/// Removes `mcpServers.helix` when helix wrote it (and `mcpServers` when that empties it).
pub fn remove(doc: &mut Value) -> bool {
    let Some(servers) = doc.get_mut("mcpServers") else {
        return false;
    };
    if !servers.get(SERVER).is_some_and(is_ours) {
        return false;
    }
    servers.remove(SERVER);
    if matches!(servers, Value::Object(v) if v.is_empty()) {
        doc.remove("mcpServers");
    }
    true
}

/// The `helix` server entry of a registration document, if any.
pub fn entry(doc: &Value) -> Option<&Value> {
    doc.get("mcpServers").and_then(|s| s.get(SERVER))
}

/// The `helix` server `claude mcp add` (local scope, the default) put in `~/.claude.json` for
/// the project at `dir`: `projects["<dir>"].mcpServers.helix`.
pub fn local_entry<'a>(global: &'a Value, dir: &str) -> Option<&'a Value> {
    global
        .get("projects")
        .and_then(|p| p.get(dir))
        .and_then(entry)
}

/// The program an entry runs, if it has one.
pub fn command(entry: &Value) -> Option<&str> {
    entry.get("command").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).expect("test JSON")
    }

    #[test]
    fn merge_and_remove_only_our_entry() {
        let mut doc = parse(r#"{"userID":"u","mcpServers":{"db":{"command":"db-mcp"}}}"#);
        assert!(merge(&mut doc, user_entry("/opt/bin/helix")).unwrap());
        assert!(!merge(&mut doc, user_entry("/opt/bin/helix")).unwrap());
        assert_eq!(
            command(entry(&doc).unwrap()),
            Some("/opt/bin/helix"),
            "{doc:?}"
        );
        assert!(remove(&mut doc));
        assert_eq!(
            doc,
            parse(r#"{"userID":"u","mcpServers":{"db":{"command":"db-mcp"}}}"#)
        );
        let mut theirs = parse(r#"{"mcpServers":{"helix":{"command":"node","args":["x"]}}}"#);
        assert!(!remove(&mut theirs));
        let global = parse(
            r#"{"projects":{"/r":{"mcpServers":{"helix":{"command":"helix","args":["mcp"]}}}}}"#,
        );
        assert!(local_entry(&global, "/r").is_some_and(is_ours));
        assert!(local_entry(&global, "/other").is_none());
    }
}
