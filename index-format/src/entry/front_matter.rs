//! Front matter: splitting it from the body, reading its values (scalars, lists, authors,
//! tags) and writing them back as YAML that `yaml` reads again.

use super::glob::split_list;
use super::yaml::Node;

// ---------------------------------------------------------------------------------------
// Front matter

pub(super) enum FrontMatter<'a> {
    None,
    Unclosed,
    Block {
        yaml: &'a str,
        body: &'a str,
        /// 1-based line where the body starts.
        body_line: u32,
    },
}

/// How many of the first lines of an entry file are front matter (0 without any; all of
/// them when it is never closed).
pub(crate) fn front_matter_lines(text: &str) -> u32 {
    match split_front_matter(text) {
        FrontMatter::None => 0,
        FrontMatter::Unclosed => u32::MAX,
        FrontMatter::Block { body_line, .. } => body_line - 1,
    }
}

pub(super) fn split_front_matter(text: &str) -> FrontMatter<'_> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end_matches([' ', '\t', '\r']) != "---" {
        return FrontMatter::None;
    }
    if first_end == text.len() {
        return FrontMatter::Unclosed;
    }
    let yaml_start = first_end + 1;
    let mut pos = yaml_start;
    let mut line: u32 = 2;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let l = text[pos..end].trim_end_matches([' ', '\t', '\r']);
        if l == "---" || l == "..." {
            let body_start = (end + 1).min(text.len());
            return FrontMatter::Block {
                yaml: &text[yaml_start..pos],
                body: &text[body_start..],
                body_line: line.saturating_add(1),
            };
        }
        pos = end + 1;
        line = line.saturating_add(1);
    }
    FrontMatter::Unclosed
}

pub(super) fn trimmed(s: String) -> String {
    let t = s.trim();
    if t.len() == s.len() { s } else { t.to_string() }
}

/// The text of a non-null scalar.
pub(super) fn scalar_text(node: &Node) -> Option<String> {
    match node {
        Node::Scalar(s) if !s.is_null() => Some(s.text.clone()),
        _ => None,
    }
}

/// `author: Name`, `author: [A, B]` (joined with ", ") or `author: {name: Name, ...}`.
pub(super) fn author_text(node: &Node) -> Option<String> {
    let text = match node {
        Node::Scalar(_) => scalar_text(node)?,
        Node::Seq(items) => items
            .iter()
            .filter_map(scalar_text)
            .map(trimmed)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", "),
        Node::Map(pairs) => pairs
            .iter()
            .find(|(k, _, _)| k.key_string().eq_ignore_ascii_case("name"))
            .and_then(|(_, v, _)| scalar_text(v))?,
    };
    Some(trimmed(text)).filter(|s| !s.is_empty())
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum ListStyle {
    /// Comma-separated, or space-separated when there is no comma (Jekyll).
    Tags,
    /// Comma-separated.
    Paths,
}

pub(super) fn string_list(node: &Node, style: ListStyle) -> Vec<String> {
    match node {
        Node::Scalar(s) if s.is_null() => Vec::new(),
        Node::Scalar(s) => {
            if style == ListStyle::Paths {
                // Commas inside a glob's `{a,b}` do not separate paths.
                split_list(&s.text)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            } else if s.text.contains(',') {
                s.text.split(',').map(str::to_string).collect()
            } else {
                s.text.split_whitespace().map(str::to_string).collect()
            }
        }
        Node::Seq(items) => items.iter().filter_map(scalar_text).collect(),
        Node::Map(_) => Vec::new(),
    }
}

/// Trims, strips Obsidian's leading `#`, drops empties and duplicates (first wins).
pub(super) fn normalise_tags(raw: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in raw {
        let t = tag.trim().trim_start_matches('#').trim();
        if !t.is_empty() && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Rendering helpers

pub(super) fn push_kv(out: &mut String, key: &str, value: &str) {
    out.push_str(key);
    out.push_str(": ");
    out.push_str(value);
    out.push('\n');
}

/// A YAML double-quoted scalar (JSON string escapes are valid YAML escapes).
pub(super) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Anything YAML might not print literally: control chars, line/paragraph
            // separators, BOM, non-characters.
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{85}')
                || matches!(c as u32, 0xFFFE | 0xFFFF) =>
            {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(super) fn json_to_yaml_flow(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&quoted(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json_to_yaml_flow(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quoted(k));
                out.push_str(": ");
                json_to_yaml_flow(item, out);
            }
            out.push('}');
        }
    }
}
