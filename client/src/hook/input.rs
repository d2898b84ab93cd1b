//! Hook input: stdin read with a hard size bound, parsed as one JSON object whose every
//! field is optional and of uncertain type (the agent adapters read it). Anything else is
//! "no input", never an error.

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

/// Parses `bytes` as one JSON object; `None` for anything else. serde_json limits nesting
/// depth, so hostile input cannot exhaust the stack.
pub fn parse(bytes: &[u8]) -> Option<Value> {
    let root: Value = serde_json::from_slice(bytes).ok()?;
    root.is_object().then_some(root)
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
    fn only_an_object_is_input() {
        assert!(parse(b"[1]").is_none());
        assert!(parse(b"{\"a\":").is_none());
        assert!(parse(b"\xff\xfe").is_none());
        assert!(parse(b"{}").is_some());
    }
}
