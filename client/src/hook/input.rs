//! Hook input: stdin read with a hard size bound, parsed as one JSON object whose every
//! field is optional and of uncertain type. Anything else is "no input", never an error.

use serde_json::Value;
use std::io::Read;

/// Largest stdin accepted, in bytes. Larger input is not read further and counts as invalid.
pub const MAX_STDIN: u64 = 1 << 20;

/// Reads at most [`MAX_STDIN`] bytes of stdin; `None` when more arrive or reading fails.
pub fn read_stdin() -> Option<Vec<u8>> {
    read_bounded(std::io::stdin().lock(), MAX_STDIN)
}

/// Reads all of `r` if it holds at most `max` bytes.
pub fn read_bounded(r: impl Read, max: u64) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(8 * 1024);
    r.take(max + 1).read_to_end(&mut buf).ok()?;
    if buf.len() as u64 > max {
        None
    } else {
        Some(buf)
    }
}

/// A parsed hook input object.
#[derive(Debug)]
pub struct Input {
    root: Value,
}

impl Input {
    /// Parses `bytes` as one JSON object; `None` for anything else.
    pub fn parse(bytes: &[u8]) -> Option<Input> {
        // serde_json limits nesting depth, so hostile input cannot exhaust the stack.
        let root: Value = serde_json::from_slice(bytes).ok()?;
        root.is_object().then_some(Input { root })
    }

    /// A top-level string field; `None` when missing or not a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.root.get(key).and_then(Value::as_str)
    }

    /// A top-level flag: true only for `true` (or the string "true").
    pub fn flag(&self, key: &str) -> bool {
        match self.root.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        }
    }

    /// A string field of `tool_input`.
    pub fn tool_str(&self, key: &str) -> Option<&str> {
        self.root
            .get("tool_input")
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
    }

    /// `(old_string, new_string)` pairs of an Edit or MultiEdit, skipping malformed ones.
    pub fn edits(&self) -> Vec<(&str, &str)> {
        let Some(ti) = self.root.get("tool_input") else {
            return Vec::new();
        };
        fn pair(v: &Value) -> Option<(&str, &str)> {
            let old = v.get("old_string").and_then(Value::as_str)?;
            let new = v.get("new_string").and_then(Value::as_str).unwrap_or("");
            Some((old, new))
        }
        let mut out: Vec<(&str, &str)> = Vec::new();
        if let Some(p) = pair(ti) {
            out.push(p);
        }
        if let Some(list) = ti.get("edits").and_then(Value::as_array) {
            out.extend(list.iter().filter_map(pair));
        }
        out
    }

    /// A session id safe as a file name (`[A-Za-z0-9._-]`, at most 128 chars), if any.
    pub fn session_id(&self) -> Option<&str> {
        let id = self.str("session_id")?;
        helix_index_format::wire::is_safe_file_stem(id).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_read_rejects_oversize() {
        assert_eq!(read_bounded(&b"abc"[..], 3), Some(b"abc".to_vec()));
        assert_eq!(read_bounded(&b"abcd"[..], 3), None);
    }

    #[test]
    fn lenient_fields() {
        assert!(Input::parse(b"[1]").is_none());
        assert!(Input::parse(b"{\"a\":").is_none());
        assert!(Input::parse(b"\xff\xfe").is_none());
        let i = Input::parse(br#"{"prompt": 5, "stop_hook_active": "true", "session_id": "../x",
            "tool_input": {"old_string": "a", "edits": [{"old_string": "b", "new_string": 3}, 7]}}"#)
        .unwrap();
        assert_eq!(i.str("prompt"), None);
        assert!(i.flag("stop_hook_active"));
        assert_eq!(i.session_id(), None);
        assert_eq!(i.edits(), vec![("a", ""), ("b", "")]);
    }
}
