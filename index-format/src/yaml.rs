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
