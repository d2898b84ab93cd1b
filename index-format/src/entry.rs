//! Markdown knowledge entries: `(path, bytes, git metadata) -> Entry | Diagnostic`, and back.
//! Front matter (YAML), defaults for title/topic/date/author, and the rules of docs/entry-format.md.

use std::collections::{BTreeMap, HashMap};

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;

/// Largest entry file accepted, in bytes.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;

/// Deepest nesting of lists/maps accepted in front matter (keeps drops and conversions shallow).
const MAX_YAML_DEPTH: usize = 32;
/// Most YAML values (after alias expansion) accepted in one front matter block.
const MAX_YAML_NODES: usize = 100_000;

/// What git knows about the commit that last changed an entry's file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GitMeta {
    /// Commit time, Unix seconds.
    pub time: i64,
    /// Commit author name.
    pub author: String,
}

/// One parsed knowledge entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    /// Repository-relative path with `/` separators, e.g. `git/rebase-onto.md`.
    pub id: String,
    pub topic: String,
    pub title: String,
    pub tags: Vec<String>,
    /// Repository-relative code paths the entry is about.
    pub sources: Vec<String>,
    /// Unix seconds; `None` when neither front matter nor git gives one.
    pub date: Option<i64>,
    pub author: Option<String>,
    /// Markdown body without front matter, line ends normalised to `\n`.
    pub body: String,
    /// Other front-matter keys, kept as JSON values, not interpreted.
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Why a file is not a valid entry, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    pub reason: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.reason)
    }
}

impl std::error::Error for Diagnostic {}

/// Front-matter keys with a meaning of their own (matched ASCII-case-insensitively);
/// every other key goes to [`Entry::extra`].
const KNOWN_KEYS: [&str; 7] = ["title", "topic", "tags", "sources", "source", "date", "author"];

/// Whether a repository-relative path names an entry: a `*.md` file inside at least one
/// folder, with no hidden component (`.github/…`). Root-level Markdown is not an entry.
pub fn is_entry_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() < 2 {
        return false;
    }
    let clean = parts
        .iter()
        .all(|p| !p.is_empty() && !p.starts_with('.') && !p.contains(['\\', '\0']));
    let name = parts[parts.len() - 1];
    clean && name.len() > 3 && name.is_char_boundary(name.len() - 3) && {
        let ext = &name[name.len() - 3..];
        ext.eq_ignore_ascii_case(".md")
    }
}

/// Parses one entry file. `path` is repository-relative with `/` separators.
pub fn parse_entry(path: &str, bytes: &[u8], git: Option<&GitMeta>) -> Result<Entry, Diagnostic> {
    let diag = |line: u32, reason: String| Diagnostic {
        path: path.to_string(),
        line,
        reason,
    };
    if bytes.len() > MAX_ENTRY_BYTES {
        return Err(diag(
            1,
            format!(
                "file is {} bytes, larger than the {} byte limit for an entry",
                bytes.len(),
                MAX_ENTRY_BYTES
            ),
        ));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = &bytes[..err.valid_up_to()];
            return Err(diag(
                line_of(valid),
                format!(
                    "file is not valid UTF-8 (invalid byte 0x{:02x} at offset {})",
                    bytes[err.valid_up_to()],
                    err.valid_up_to()
                ),
            ));
        }
    };
    if text.is_empty() {
        return Err(diag(1, "file is empty".to_string()));
    }
    if text.trim().is_empty() {
        return Err(diag(1, "file contains only whitespace".to_string()));
    }
    // CRLF -> LF once, so every later step and the stored body see `\n` only.
    let normalised;
    let text = if text.contains("\r\n") {
        normalised = text.replace("\r\n", "\n");
        normalised.as_str()
    } else {
        text
    };

    let (front, body, body_line) = match split_front_matter(text) {
        FrontMatter::None => (None, text, 1),
        FrontMatter::Unclosed => {
            return Err(diag(
                1,
                "front matter opened at line 1 is never closed (expected a `---` or `...` line)"
                    .to_string(),
            ));
        }
        FrontMatter::Block {
            yaml,
            body,
            body_line,
        } => (Some(yaml), body, body_line),
    };
    if body.trim().is_empty() {
        return Err(diag(
            body_line.saturating_sub(1).max(1),
            "entry has no body after the front matter".to_string(),
        ));
    }

    // YAML lines are offset by the opening `---` line.
    let pairs = match front {
        None => Vec::new(),
        Some(yaml) => match load_yaml(yaml) {
            Err((line, msg)) => return Err(diag(line.saturating_add(1), msg)),
            Ok(None) => Vec::new(),
            Ok(Some(Node::Map(pairs))) => pairs,
            Ok(Some(other)) => {
                return Err(diag(
                    2,
                    format!(
                        "front matter must be a map of `key: value` lines, found {}",
                        other.describe()
                    ),
                ));
            }
        },
    };

    let id = path.to_string();
    let mut fm_title = None;
    let mut fm_topic = None;
    let mut fm_date = None;
    let mut fm_author = None;
    let mut tags = Vec::new();
    let mut sources = Vec::new();
    let mut extra = BTreeMap::new();
    for (key, value, key_line) in pairs {
        let key_text = key.key_string();
        let lower = key_text.to_ascii_lowercase();
        let file_line = key_line.saturating_add(1);
        match lower.as_str() {
            "title" => fm_title = scalar_text(&value).map(trimmed).filter(|s| !s.is_empty()),
            "topic" => fm_topic = scalar_text(&value).map(trimmed).filter(|s| !s.is_empty()),
            "author" => fm_author = author_text(&value),
            "tags" => tags.extend(string_list(&value, ListStyle::Tags)),
            "sources" | "source" => sources.extend(string_list(&value, ListStyle::Paths)),
            "date" => match &value {
                Node::Scalar(s) if s.is_null() => {}
                Node::Scalar(s) => match parse_date(&s.text) {
                    Some(t) => fm_date = Some(t),
                    None => {
                        return Err(diag(
                            file_line,
                            format!(
                                "date {:?} is not a date (expected YYYY-MM-DD, optionally with a time like 2024-03-05T10:00:00Z or 2024-03-05 10:00:00 +0100)",
                                s.text
                            ),
                        ));
                    }
                },
                other => {
                    return Err(diag(
                        file_line,
                        format!("date must be a single value, found {}", other.describe()),
                    ));
                }
            },
            _ => {
                extra.insert(key_text, value.to_json());
            }
        }
    }

    let tags = normalise_tags(tags);
    sources.extend(inline_sources(body));
    let mut seen = std::collections::HashSet::new();
    let sources: Vec<String> = sources
        .iter()
        .filter_map(|s| normalise_source(s))
        .filter(|s| seen.insert(s.clone()))
        .collect();

    let title = fm_title
        .or_else(|| first_heading(body))
        .unwrap_or_else(|| file_stem(path).to_string());
    let topic = fm_topic.unwrap_or_else(|| first_folder(path).to_string());
    let date = fm_date.or(git.map(|g| g.time));
    let author = fm_author.or_else(|| {
        git.map(|g| g.author.trim().to_string())
            .filter(|a| !a.is_empty())
    });

    Ok(Entry {
        id,
        topic,
        title,
        tags,
        sources,
        date,
        author,
        body: body.to_string(),
        extra,
    })
}

/// Renders an entry as Markdown with YAML front matter, such that
/// `parse_entry(&e.id, render_entry(&e).as_bytes(), None)` gives `e` back for any entry
/// `parse_entry` produced. Extra keys that collide with known keys are skipped.
pub fn render_entry(entry: &Entry) -> String {
    let mut out = String::with_capacity(entry.body.len() + 256);
    out.push_str("---\n");
    push_kv(&mut out, "title", &quoted(&entry.title));
    if entry.topic != first_folder(&entry.id) {
        push_kv(&mut out, "topic", &quoted(&entry.topic));
    }
    for (key, list) in [("tags", &entry.tags), ("sources", &entry.sources)] {
        if !list.is_empty() {
            out.push_str(key);
            out.push_str(":\n");
            for item in list {
                out.push_str("  - ");
                out.push_str(&quoted(item));
                out.push('\n');
            }
        }
    }
    if let Some(date) = entry.date {
        push_kv(&mut out, "date", &format_date(date));
    }
    if let Some(author) = &entry.author {
        push_kv(&mut out, "author", &quoted(author));
    }
    for (key, value) in &entry.extra {
        let lower = key.to_ascii_lowercase();
        if KNOWN_KEYS.contains(&lower.as_str()) {
            continue;
        }
        let mut v = String::new();
        json_to_yaml_flow(value, &mut v);
        push_kv(&mut out, &quoted(key), &v);
    }
    out.push_str("---\n");
    out.push_str(&entry.body);
    out
}

/// A file-name-safe slug for a title: lowercase `[a-z0-9-]`, Latin letters with accents
/// transliterated (`é` → `e`, `ß` → `ss`), other letters dropped, every run of other
/// characters one `-`, at most 80 chars, never empty (`entry`), never a Windows device name.
pub fn slugify(title: &str) -> String {
    const MAX: usize = 80;
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        let piece: Option<&str>;
        let mut buf = [0u8; 4];
        if c.is_ascii_alphanumeric() {
            piece = Some(c.encode_utf8(&mut buf));
        } else if let Some(t) = transliterate(c) {
            piece = Some(t);
        } else if c == '\'' || c == '\u{2019}' || c.is_alphanumeric() || is_combining_mark(c) {
            // Apostrophes and letters we cannot spell in ASCII vanish without a break.
            continue;
        } else {
            pending_dash = true;
            continue;
        }
        if let Some(p) = piece {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push_str(p);
        }
        if slug.len() > MAX {
            break;
        }
    }
    slug.truncate(MAX);
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        return "entry".to_string();
    }
    if is_reserved_name(&slug) {
        return format!("{slug}-entry");
    }
    slug
}

/// Windows device names (and `.git`), which must never be a file or folder name.
pub(crate) fn is_reserved_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or("");
    matches!(stem, "con" | "prn" | "aux" | "nul" | "clock$")
        || ((stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
        || lower == ".git"
}

fn is_combining_mark(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036F}')
}

fn transliterate(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ș' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' | 'ț' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        'þ' => "th",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// Dates

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Reads `digits` ASCII digits at `*pos`, advancing it.
fn take_num(b: &[u8], pos: &mut usize, digits: usize) -> Option<i64> {
    let s = b.get(*pos..*pos + digits)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *pos += digits;
    Some(s.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
}

/// Parses `YYYY-MM-DD` with an optional time (`T` or space, `HH:MM[:SS[.frac]]`) and an
/// optional zone (`Z`, `UTC`, `+HH:MM`, `+HHMM`, `+HH`, space allowed before it) into Unix seconds.
pub(crate) fn parse_date(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let mut p = 0;
    let y = take_num(b, &mut p, 4)?;
    (b.get(p) == Some(&b'-')).then_some(())?;
    p += 1;
    let m = take_num(b, &mut p, 2)?;
    (b.get(p) == Some(&b'-')).then_some(())?;
    p += 1;
    let d = take_num(b, &mut p, 2)?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let mut secs = 0;
    let mut offset = 0;
    if p < b.len() {
        if !matches!(b[p], b'T' | b't' | b' ') {
            return None;
        }
        p += 1;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        let hh = take_num(b, &mut p, 2)?;
        (b.get(p) == Some(&b':')).then_some(())?;
        p += 1;
        let mm = take_num(b, &mut p, 2)?;
        let mut ss = 0;
        if b.get(p) == Some(&b':') {
            p += 1;
            ss = take_num(b, &mut p, 2)?;
            if b.get(p) == Some(&b'.') {
                p += 1;
                let start = p;
                while b.get(p).is_some_and(u8::is_ascii_digit) {
                    p += 1;
                }
                if p == start {
                    return None;
                }
            }
        }
        if hh > 23 || mm > 59 || ss > 60 {
            return None;
        }
        secs = hh * 3600 + mm * 60 + ss;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        let rest = &b[p..];
        if rest.is_empty()
            || rest.eq_ignore_ascii_case(b"z")
            || rest.eq_ignore_ascii_case(b"utc")
            || rest.eq_ignore_ascii_case(b"gmt")
        {
            offset = 0;
        } else {
            let sign = match rest[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let mut q = 1;
            let oh = take_num(rest, &mut q, 2)?;
            let mut om = 0;
            if q < rest.len() {
                if rest[q] == b':' {
                    q += 1;
                }
                om = take_num(rest, &mut q, 2)?;
            }
            if q != rest.len() || oh > 23 || om > 59 {
                return None;
            }
            offset = sign * (oh * 3600 + om * 60);
        }
    }
    Some(days_from_civil(y, m, d) * 86_400 + secs - offset)
}

/// `YYYY-MM-DD` for midnight UTC, else RFC 3339 `YYYY-MM-DDTHH:MM:SSZ`.
fn format_date(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if secs == 0 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

// ---------------------------------------------------------------------------------------
// Front matter

enum FrontMatter<'a> {
    None,
    Unclosed,
    Block {
        yaml: &'a str,
        body: &'a str,
        /// 1-based line where the body starts.
        body_line: u32,
    },
}

fn split_front_matter(text: &str) -> FrontMatter<'_> {
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

/// A YAML scalar with its source text and resolved type.
#[derive(Debug, Clone)]
struct Scalar {
    text: String,
    value: ScalarValue,
}

#[derive(Debug, Clone)]
enum ScalarValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str,
}

impl Scalar {
    fn is_null(&self) -> bool {
        matches!(self.value, ScalarValue::Null)
    }
}

#[derive(Debug, Clone)]
enum Node {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Key, value and the 1-based YAML line of the key.
    Map(Vec<(Node, Node, u32)>),
}

impl Node {
    fn describe(&self) -> &'static str {
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

    fn key_string(&self) -> String {
        match self {
            Node::Scalar(s) => s.text.clone(),
            other => other.to_json().to_string(),
        }
    }

    fn to_json(&self) -> serde_json::Value {
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

/// Resolves a scalar like YAML's core schema (as yaml-rust2's loader does).
fn resolve_scalar(text: String, style: TScalarStyle, tag: Option<Tag>) -> Scalar {
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
    let value = if style != TScalarStyle::Plain {
        ScalarValue::Str
    } else {
        match &tag {
            Some(Tag { handle, suffix }) if handle == "tag:yaml.org,2002:" => {
                match suffix.as_str() {
                    "str" => ScalarValue::Str,
                    "null" | "bool" | "int" | "float" => match plain(&text) {
                        v @ ScalarValue::Null if suffix == "null" => v,
                        v @ ScalarValue::Bool(_) if suffix == "bool" => v,
                        v @ ScalarValue::Int(_) if suffix == "int" => v,
                        v @ (ScalarValue::Float(_) | ScalarValue::Int(_)) if suffix == "float" => v,
                        _ => ScalarValue::Str,
                    },
                    _ => plain(&text),
                }
            }
            _ => plain(&text),
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
fn load_yaml(yaml: &str) -> Result<Option<Node>, (u32, String)> {
    let to_line = |l: usize| u32::try_from(l).unwrap_or(u32::MAX).max(1);
    let mut parser = Parser::new_from_str(yaml);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    let mut docs = 0usize;
    let mut nodes = 0usize;
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| (to_line(e.marker().line()), format!("invalid YAML in front matter: {}", e.info())))?;
        let line = to_line(mark.line());
        let (node, anchor) = match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::DocumentStart => {
                docs += 1;
                if docs > 1 {
                    return Err((line, "front matter holds more than one YAML document".to_string()));
                }
                continue;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_YAML_DEPTH {
                    return Err((
                        line,
                        format!("front matter nests lists or maps deeper than {MAX_YAML_DEPTH} levels"),
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
                None => return Err((line, "invalid YAML in front matter: unbalanced collection".to_string())),
            },
            Event::Scalar(text, style, anchor, tag) => {
                (Node::Scalar(resolve_scalar(text, style, tag)), anchor)
            }
            Event::Alias(id) => {
                let node = anchors.get(&id).cloned().ok_or_else(|| {
                    (line, "invalid YAML in front matter: alias to an unknown anchor".to_string())
                })?;
                nodes = nodes.saturating_add(node.size());
                if nodes > MAX_YAML_NODES {
                    return Err((
                        line,
                        format!("front matter expands to more than {MAX_YAML_NODES} values (YAML aliases)"),
                    ));
                }
                (node, 0)
            }
        };
        nodes += 1;
        if nodes > MAX_YAML_NODES {
            return Err((line, format!("front matter holds more than {MAX_YAML_NODES} values")));
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

fn trimmed(s: String) -> String {
    let t = s.trim();
    if t.len() == s.len() { s } else { t.to_string() }
}

/// The text of a non-null scalar.
fn scalar_text(node: &Node) -> Option<String> {
    match node {
        Node::Scalar(s) if !s.is_null() => Some(s.text.clone()),
        _ => None,
    }
}

/// `author: Name`, `author: [A, B]` (joined with ", ") or `author: {name: Name, ...}`.
fn author_text(node: &Node) -> Option<String> {
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
enum ListStyle {
    /// Comma-separated, or space-separated when there is no comma (Jekyll).
    Tags,
    /// Comma-separated.
    Paths,
}

fn string_list(node: &Node, style: ListStyle) -> Vec<String> {
    match node {
        Node::Scalar(s) if s.is_null() => Vec::new(),
        Node::Scalar(s) => {
            if s.text.contains(',') || style == ListStyle::Paths {
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
fn normalise_tags(raw: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in raw {
        let t = tag.trim().trim_start_matches('#').trim();
        if !t.is_empty() && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// A repository-relative source path in canonical form, or `None` for paths that are not
/// safe relative repository paths (absolute, `..`, URLs, NUL), which are dropped.
/// `./` prefixes, `\` separators, empty and `.` components, and line suffixes
/// (`#L10-L20`, `:42`) are normalised away.
pub(crate) fn normalise_source(raw: &str) -> Option<String> {
    let s = raw.trim().trim_matches('`').trim();
    if s.is_empty() || s.contains('\0') || s.contains("://") || s.chars().any(char::is_control) {
        return None;
    }
    let s = s.replace('\\', "/");
    if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    let mut s = s.as_str();
    if let Some(i) = s.find("#L") {
        s = &s[..i];
    }
    // `path:42` or `path:42:7` or `path:10-20`.
    while let Some(i) = s.rfind(':') {
        let tail = &s[i + 1..];
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            s = &s[..i];
        } else {
            break;
        }
    }
    let mut parts = Vec::new();
    for part in s.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// Whether a line opens or closes a fenced code block; returns the fence char and length.
fn fence_of(line: &str) -> Option<(u8, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == c).count();
    if n < 3 || (c == b'`' && rest[n..].contains('`')) {
        return None;
    }
    Some((c, n))
}

/// Iterates body lines with whether each is inside a fenced code block (fence lines count
/// as inside).
fn lines_with_fences(body: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut open: Option<(u8, usize)> = None;
    body.split('\n').map(move |line| match (open, fence_of(line)) {
        (None, Some(f)) => {
            open = Some(f);
            (line, true)
        }
        (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && line.trim()
            .bytes()
            .all(|b| b == c) =>
        {
            open = None;
            (line, true)
        }
        (Some(_), _) => (line, true),
        (None, None) => (line, false),
    })
}

/// The text of the first ATX (`# Title`) or setext (`Title` / `===`) heading outside code.
fn first_heading(body: &str) -> Option<String> {
    let mut prev: Option<&str> = None;
    for (line, in_code) in lines_with_fences(body) {
        if in_code {
            prev = None;
            continue;
        }
        if let Some(text) = atx_heading(line) {
            if !text.is_empty() {
                return Some(text.to_string());
            }
            prev = None;
            continue;
        }
        let t = line.trim();
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(p) = prev
            && indent <= 3
            && !t.is_empty()
            && (t.bytes().all(|b| b == b'=') || (t.bytes().all(|b| b == b'-') && t.len() >= 2))
        {
            return Some(p.trim().to_string());
        }
        prev = (!t.is_empty()
            && indent <= 3
            && !t.starts_with(['-', '*', '+', '>', '|', '<'])
            && !t.starts_with(|c: char| c.is_ascii_digit()))
        .then_some(line);
    }
    None
}

fn atx_heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let mut text = after.trim();
    // Optional closing sequence: ` ##`.
    let stripped = text.trim_end_matches('#');
    if stripped.is_empty() || stripped.ends_with([' ', '\t']) {
        text = stripped.trim_end();
    }
    Some(text)
}

/// Paths named by inline `[source: a/b.rs]` markers (comma-separated lists allowed),
/// outside fenced code blocks.
fn inline_sources(body: &str) -> Vec<String> {
    const MARK: &[u8] = b"[source:";
    let mut out = Vec::new();
    if !body.contains(":") {
        return out;
    }
    for (line, in_code) in lines_with_fences(body) {
        if in_code {
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i + MARK.len() <= b.len() {
            if b[i] == b'[' && b[i..i + MARK.len()].eq_ignore_ascii_case(MARK) {
                let start = i + MARK.len();
                if let Some(len) = line[start..].find(']') {
                    out.extend(line[start..start + len].split(',').map(str::to_string));
                    i = start + len + 1;
                    continue;
                }
            }
            i += 1;
        }
    }
    out
}

fn first_folder(path: &str) -> &str {
    match path.split_once('/') {
        Some((first, _)) => first,
        None => "",
    }
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

fn line_of(prefix: &[u8]) -> u32 {
    let n = prefix.iter().filter(|&&b| b == b'\n').count();
    u32::try_from(n).unwrap_or(u32::MAX - 1) + 1
}

// ---------------------------------------------------------------------------------------
// Rendering helpers

fn push_kv(out: &mut String, key: &str, value: &str) {
    out.push_str(key);
    out.push_str(": ");
    out.push_str(value);
    out.push('\n');
}

/// A YAML double-quoted scalar (JSON string escapes are valid YAML escapes).
fn quoted(s: &str) -> String {
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

fn json_to_yaml_flow(v: &serde_json::Value, out: &mut String) {
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

