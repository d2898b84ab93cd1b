//! The YAML of front matter: one document read into a small value model (scalars typed by
//! YAML 1.2's core schema), with limits on nesting, size and alias expansion.

use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, Tag};

/// Deepest nesting of lists/maps accepted in front matter (keeps drops and conversions shallow).
const MAX_YAML_DEPTH: usize = 32;
/// Most YAML values (after alias expansion) accepted in one front matter block.
const MAX_YAML_NODES: usize = 100_000;

/// Why front-matter YAML is refused, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct YamlError {
    /// 1-based line in the YAML text.
    pub line: u32,
    pub reason: String,
}

/// Reads YAML as front matter is read and gives the data helix keeps of it, as JSON:
/// `null` for an empty document; keys that are not strings written as JSON text; floats
/// JSON cannot hold (`.inf`, `.nan`) as their source text.
pub fn to_json(yaml: &str) -> Result<serde_json::Value, YamlError> {
    Ok(load(yaml)?.map_or(serde_json::Value::Null, |node| node.to_json()))
}

/// A YAML scalar with its source text and resolved type.
#[derive(Debug, Clone)]
pub(crate) struct Scalar {
    pub(crate) text: String,
    pub(crate) value: ScalarValue,
}

#[derive(Debug, Clone)]
pub(crate) enum ScalarValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str,
}

impl Scalar {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self.value, ScalarValue::Null)
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Key, value and the 1-based YAML line of the key.
    Map(Vec<(Node, Node, u32)>),
}

impl Node {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Node::Scalar(_) => "a single value",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a map",
        }
    }

    fn size(&self) -> usize {
        match self {
            Node::Scalar(_) => 1,
            Node::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Node::Map(pairs) => {
                1 + pairs
                    .iter()
                    .map(|(k, v, _)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }

    pub(crate) fn key_string(&self) -> String {
        match self {
            Node::Scalar(s) => s.text.clone(),
            other => other.to_json().to_string(),
        }
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Scalar(s) => match s.value {
                ScalarValue::Null => Value::Null,
                ScalarValue::Bool(b) => Value::Bool(b),
                ScalarValue::Int(i) => Value::from(i),
                ScalarValue::Float(f) => serde_json::Number::from_f64(f)
                    .map_or_else(|| Value::String(s.text.clone()), Value::Number),
                ScalarValue::Str => Value::String(s.text.clone()),
            },
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Node::Map(pairs) => {
                let mut map = serde_json::Map::new();
                for (k, v, _) in pairs {
                    map.insert(k.key_string(), v.to_json());
                }
                Value::Object(map)
            }
        }
    }
}

/// Resolves a scalar by YAML 1.2's core schema: quoted, block and `!`-tagged scalars are
/// strings; `!!str`, `!!int`… tags are honoured where the text fits them.
fn resolve_scalar(text: String, style: ScalarStyle, tag: Option<&Tag>) -> Scalar {
    let plain = |t: &str| -> ScalarValue {
        match t {
            "" | "~" | "null" | "Null" | "NULL" => ScalarValue::Null,
            "true" | "True" | "TRUE" => ScalarValue::Bool(true),
            "false" | "False" | "FALSE" => ScalarValue::Bool(false),
            _ => {
                let int = if let Some(h) = t.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else if let Some(o) = t.strip_prefix("0o") {
                    i64::from_str_radix(o, 8).ok()
                } else {
                    t.parse::<i64>().ok()
                };
                if let Some(i) = int {
                    ScalarValue::Int(i)
                } else if t.bytes().any(|b| b.is_ascii_digit())
                    && !t.contains(['_', ' '])
                    && let Ok(f) = t.parse::<f64>()
                {
                    ScalarValue::Float(f)
                } else {
                    ScalarValue::Str
                }
            }
        }
    };
    let value = if style != ScalarStyle::Plain {
        ScalarValue::Str
    } else {
        match tag.map(|t| (t.handle(), t.suffix())) {
            None => plain(&text),
            // The non-specific tag `!`: "not resolved by content", so a string.
            Some(("", "!")) => ScalarValue::Str,
            Some(("tag:yaml.org,2002:", suffix)) => match suffix {
                "str" => ScalarValue::Str,
                "null" | "bool" | "int" | "float" => match plain(&text) {
                    v @ ScalarValue::Null if suffix == "null" => v,
                    v @ ScalarValue::Bool(_) if suffix == "bool" => v,
                    v @ ScalarValue::Int(_) if suffix == "int" => v,
                    v @ (ScalarValue::Float(_) | ScalarValue::Int(_)) if suffix == "float" => v,
                    _ => ScalarValue::Str,
                },
                _ => plain(&text),
            },
            // Application tags (`!local`, `!e!x`) carry no meaning here: plain resolution.
            Some(_) => plain(&text),
        }
    };
    Scalar { text, value }
}

enum Frame {
    Seq(Vec<Node>, usize),
    Map(Vec<(Node, Node, u32)>, Option<(Node, u32)>, usize),
}

/// Loads one YAML document into a [`Node`] tree, with depth and size limits (aliases are
/// expanded by copying, so a "billion laughs" block is refused instead of eating memory).
/// Errors carry the 1-based YAML line.
pub(crate) fn load(yaml: &str) -> Result<Option<Node>, YamlError> {
    let to_line = |l: usize| u32::try_from(l).unwrap_or(u32::MAX).max(1);
    let err = |line: u32, reason: String| YamlError { line, reason };
    // Flow collections and quoted scalars may be under-indented, as libyaml (PyYAML, the
    // forges' tooling) reads them; see docs/entry-format.md. Spelled out, not defaulted.
    let options = granit_parser::options! { strict_indentation: false };
    let mut parser = Parser::new_from_str_with_options(yaml, options);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut docs = 0usize;
    let mut nodes = 0usize;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| {
            err(
                to_line(e.marker().line()),
                format!("invalid YAML in front matter: {}", e.info()),
            )
        })?;
        let line = to_line(span.start.line());
        let (node, anchor) = match event {
            Event::StreamEnd => break,
            Event::DocumentStart(..) => {
                docs += 1;
                if docs > 1 {
                    return Err(err(
                        line,
                        "front matter holds more than one YAML document".to_string(),
                    ));
                }
                continue;
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                if stack.len() >= MAX_YAML_DEPTH {
                    return Err(err(
                        line,
                        format!(
                            "front matter nests lists or maps deeper than {MAX_YAML_DEPTH} levels"
                        ),
                    ));
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq(Vec::new(), anchor)
                } else {
                    Frame::Map(Vec::new(), None, anchor)
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq(items, anchor)) => (Node::Seq(items), anchor),
                Some(Frame::Map(pairs, _, anchor)) => (Node::Map(pairs), anchor),
                None => {
                    return Err(err(
                        line,
                        "invalid YAML in front matter: unbalanced collection".to_string(),
                    ));
                }
            },
            Event::Scalar(text, style, anchor, tag) => (
                Node::Scalar(resolve_scalar(text.into_owned(), style, tag.as_deref())),
                anchor,
            ),
            Event::Alias(id) => {
                let node = anchors.get(&id).cloned().ok_or_else(|| {
                    err(
                        line,
                        "invalid YAML in front matter: alias to an unknown anchor".to_string(),
                    )
                })?;
                nodes = nodes.saturating_add(node.size());
                if nodes > MAX_YAML_NODES {
                    return Err(err(
                        line,
                        format!(
                            "front matter expands to more than {MAX_YAML_NODES} values (YAML aliases)"
                        ),
                    ));
                }
                (node, 0)
            }
            // Stream start, document end, and metadata events the default options never
            // emit (comments, anchor names, unresolved aliases).
            _ => continue,
        };
        nodes += 1;
        if nodes > MAX_YAML_NODES {
            return Err(err(
                line,
                format!("front matter holds more than {MAX_YAML_NODES} values"),
            ));
        }
        if anchor > 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(items, _)) => items.push(node),
            Some(Frame::Map(pairs, pending, _)) => match pending.take() {
                None => *pending = Some((node, line)),
                Some((key, key_line)) => pairs.push((key, node, key_line)),
            },
        }
    }
    Ok(root.filter(|n| !matches!(n, Node::Scalar(s) if s.is_null())))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn data(yaml: &str) -> Value {
        to_json(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
    }

    /// Flow collections closed left of their key's indentation, and their neighbours, each
    /// with the data PyYAML 6 gives for it.
    #[test]
    fn under_indented_flow_collections_read_as_pyyaml_reads_them() {
        let issue = "title: Run the linter\ntools:\n  lint:\n    command: eslint\n    args: [\n      \"--fix\",\n      # comment line\n      \"src/\"\n  ]\n  format:\n    command: prettier\n";
        assert_eq!(
            data(issue),
            json!({"title": "Run the linter", "tools": {
                "lint": {"command": "eslint", "args": ["--fix", "src/"]},
                "format": {"command": "prettier"}}})
        );
        let cases = [
            // Closing bracket at the key's own indentation (yaml-rust2 refused this too).
            (
                "a:\n  args: [\n    x,\n  ]\n  next: 1\n",
                json!({"a": {"args": ["x"], "next": 1}}),
            ),
            // Items and closer at column 0 under a nested key.
            (
                "a:\n  b:\n    args: [\nx,\ny\n]\nc: 2\n",
                json!({"a": {"b": {"args": ["x", "y"]}}, "c": 2}),
            ),
            // Flow maps inside a flow sequence, a comment, a map closed left of its key.
            (
                "matrix:\n  include: [\n    { os: linux, rust: stable },\n    # nightly only on linux\n    { os: linux,\n  rust: nightly },\n]\nafter: done\n",
                json!({"matrix": {"include": [
                    {"os": "linux", "rust": "stable"},
                    {"os": "linux", "rust": "nightly"}]}, "after": "done"}),
            ),
            // A flow map in a block sequence item, a flow sequence at column 0 inside it.
            (
                "steps:\n  - name: lint\n    with: {\n  args: \"--all\",\n      extra: [a,\nb]\n    }\n  - name: test\n",
                json!({"steps": [
                    {"name": "lint", "with": {"args": "--all", "extra": ["a", "b"]}},
                    {"name": "test"}]}),
            ),
            // Empty collections closed at column 0.
            (
                "a:\n  b: [\n  ]\n  c: {\n}\n",
                json!({"a": {"b": [], "c": {}}}),
            ),
            // Quoted scalars whose continuation lines are under-indented (folded to spaces).
            (
                "a:\n  desc: \"first\nsecond line\n  third\"\n  single: 'it''s\nspread'\n",
                json!({"a": {"desc": "first second line third", "single": "it's spread"}}),
            ),
        ];
        for (yaml, want) in cases {
            assert_eq!(data(yaml), want, "{yaml}");
        }
    }

    /// Every placement of a flow collection's items and closer, from column 0 to past the
    /// key, at four nesting depths, with comments, trailing commas and a following key,
    /// reads as the same data (the cases PyYAML agrees on; yaml-rust2 refused two thirds).
    #[test]
    fn every_indentation_of_a_flow_collection_gives_the_same_data() {
        let mut checked = 0;
        for depth in 0..4 {
            let key_col = 2 * depth;
            let mut head = String::from("title: t\n");
            for i in 0..depth {
                head.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
            }
            for map in [false, true] {
                let (open, close) = if map { ('{', '}') } else { ('[', ']') };
                let items = if map {
                    ["a: 1", "\"b\": two", "c: [x, y]"]
                } else {
                    ["\"--fix\"", "'src/'", "plain item"]
                };
                let value = if map {
                    json!({"a": 1, "b": "two", "c": ["x", "y"]})
                } else {
                    json!(["--fix", "src/", "plain item"])
                };
                for item_col in 0..key_col + 6 {
                    for close_col in 0..key_col + 4 {
                        for (comment, trailing, sibling) in [
                            (false, false, false),
                            (true, true, false),
                            (true, false, true),
                        ] {
                            let mut yaml = format!("{head}{}args: {open}\n", " ".repeat(key_col));
                            for (j, item) in items.iter().enumerate() {
                                if comment && j == 1 {
                                    yaml.push_str(&format!("{}# comment\n", " ".repeat(item_col)));
                                }
                                let comma = if j + 1 < items.len() || trailing {
                                    ","
                                } else {
                                    ""
                                };
                                yaml.push_str(&format!("{}{item}{comma}\n", " ".repeat(item_col)));
                            }
                            yaml.push_str(&format!("{}{close}\n", " ".repeat(close_col)));
                            let mut inner = json!({"args": value.clone()});
                            if sibling {
                                yaml.push_str(&format!("{}next: 1\n", " ".repeat(key_col)));
                                inner["next"] = json!(1);
                            }
                            for i in (0..depth).rev() {
                                inner = json!({ format!("k{i}"): inner });
                            }
                            let mut want = json!({"title": "t"});
                            if let (Some(w), Some(i)) = (want.as_object_mut(), inner.as_object()) {
                                w.extend(i.clone());
                            }
                            assert_eq!(data(&yaml), want, "{yaml}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 3 * (6 * 4 + 8 * 6 + 10 * 8 + 12 * 10));
    }

    /// Leniency stops at what libyaml allows: broken structure is still refused, on its line.
    #[test]
    fn broken_yaml_is_still_refused_with_its_line() {
        for (yaml, line) in [
            ("a: [1, 2\nb: 3\n", 2),
            ("a: [1, 2]]\n", 1),
            ("a:\n  b: [1,\n2]\n   c: 3\n", 4),
            ("a: {x: 1,\n}\n  b: 2\n", 3),
            ("a: [\n- x\n]\n", 2),
            ("a: [x,\n  # c\n]  y\n", 3),
            ("a: [1,\n2]: x\n", 2),
            ("title: ok\n  bad: indent\n", 2),
            ("a:\n\t- x\n", 2),
            ("a: [x, y\n", 2),
        ] {
            let e = to_json(yaml).expect_err(yaml);
            assert!(
                e.reason.starts_with("invalid YAML in front matter: "),
                "{e}"
            );
            assert!(
                e.reason.len() > "invalid YAML in front matter: ".len() + 5,
                "{e}"
            );
            assert!(e.line == line || e.line == line - 1, "{yaml:?}: {e}");
        }
    }

    /// The limits hold whatever the parser: nesting deeper than 32, more than 100,000
    /// values, alias bombs, a second document.
    #[test]
    fn limits_hold() {
        let deep = format!("k: {}{}\n", "[".repeat(40), "]".repeat(40));
        assert!(
            to_json(&deep)
                .unwrap_err()
                .reason
                .contains("deeper than 32")
        );
        let deep = format!("k: {}\n", "[".repeat(100_000));
        assert!(to_json(&deep).is_err());
        let deep: String = (0..40).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        assert!(
            to_json(&deep)
                .unwrap_err()
                .reason
                .contains("deeper than 32")
        );
        let wide = format!("k: [{}]\n", "1,".repeat(100_001));
        assert!(
            to_json(&wide)
                .unwrap_err()
                .reason
                .contains("more than 100000")
        );
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ('a'..='i').zip('b'..='j') {
            let refs = vec![format!("*{prev}"); 10].join(", ");
            bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let e = to_json(&bomb).unwrap_err();
        assert!(e.reason.contains("(YAML aliases)") && e.line >= 4, "{e}");
        let e = to_json("a: 1\n--- !x\nb: 2\n").unwrap_err();
        assert_eq!(e.reason, "front matter holds more than one YAML document");
    }

    use crate::entry::tests::Rng;

    /// YAML-shaped noise (indicators, indentation, tabs, quotes, anchors, tags, directives,
    /// block scalars) never panics the parser or the loader.
    #[test]
    fn yaml_noise_never_panics() {
        let pieces = [
            "\n",
            "\n  ",
            "\n    ",
            "\t",
            " ",
            "- ",
            "? ",
            ": ",
            ",",
            "[",
            "]",
            "{",
            "}",
            "#c",
            "\"",
            "'",
            "\\",
            "&a ",
            "*a",
            "!",
            "!!str ",
            "!<x> ",
            "%YAML 1.2\n",
            "%TAG ! x\n",
            "---",
            "...",
            "|",
            ">-",
            "|+2",
            "key",
            "1.5",
            "~",
            "\u{feff}",
            "é",
            "\r",
            "\0",
            "\"a\nb\"",
            "[a,\n",
            "\n]",
            "{k: v,\n",
            "\n}",
        ];
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        let mut accepted = 0;
        for _ in 0..20_000 {
            let yaml: String = (0..rng.below(40))
                .map(|_| pieces[rng.below(pieces.len())])
                .collect();
            if to_json(&yaml).is_ok() {
                accepted += 1;
            }
        }
        assert!(
            accepted > 500,
            "only {accepted} accepted: the noise is too noisy"
        );
    }
}
