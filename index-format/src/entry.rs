//! Markdown knowledge entries: `(path, bytes, git metadata) -> Entry | Diagnostic`, and back.
//! Front matter (YAML), defaults for title/topic/date/author, and the rules of docs/entry-format.md.

use std::collections::BTreeMap;

use crate::yaml::{Node, load as load_yaml};

/// Largest entry file accepted, in bytes.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;

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
const KNOWN_KEYS: [&str; 7] = [
    "title", "topic", "tags", "sources", "source", "date", "author",
];

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
    // CRLF (and a lone CR, as CommonMark reads it) -> LF once, so every later step and
    // the stored body see `\n` only.
    let normalised;
    let text = if text.contains('\r') {
        normalised = text.replace("\r\n", "\n").replace('\r', "\n");
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
            Err(e) => return Err(diag(e.line.saturating_add(1), e.reason)),
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
/// The UTC day of Unix seconds as `YYYY-MM-DD`: how helix shows entry dates everywhere.
pub fn format_day(t: i64) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

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

/// How many of the first lines of an entry file are front matter (0 without any; all of
/// them when it is never closed).
pub(crate) fn front_matter_lines(text: &str) -> u32 {
    match split_front_matter(text) {
        FrontMatter::None => 0,
        FrontMatter::Unclosed => u32::MAX,
        FrontMatter::Block { body_line, .. } => body_line - 1,
    }
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
    // Each step only removes characters, so repeating until nothing changes terminates and
    // makes the result canonical (normalising it again is a no-op).
    let mut cur = normalise_source_once(raw)?;
    loop {
        let next = normalise_source_once(&cur)?;
        if next == cur {
            return Some(cur);
        }
        cur = next;
    }
}

fn normalise_source_once(raw: &str) -> Option<String> {
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
        match part.trim().trim_matches('`').trim() {
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
    body.split('\n')
        .map(move |line| match (open, fence_of(line)) {
            (None, Some(f)) => {
                open = Some(f);
                (line, true)
            }
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && line.trim().bytes().all(|b| b == c) =>
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
        prev = (!t.is_empty() && indent <= 3 && !starts_block(t)).then_some(line);
    }
    None
}

/// Whether a (trimmed) line starts a list item, quote, table or HTML block, which a
/// setext underline cannot turn into a heading.
fn starts_block(t: &str) -> bool {
    let b = t.as_bytes();
    let marker_then_space = |n: usize| b.get(n).is_none_or(|c| *c == b' ' || *c == b'\t');
    match b.first() {
        Some(b'-' | b'*' | b'+') => marker_then_space(1),
        Some(b'>' | b'|' | b'<') => true,
        Some(c) if c.is_ascii_digit() => {
            let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
            digits <= 9
                && matches!(b.get(digits), Some(b'.' | b')'))
                && marker_then_space(digits + 1)
        }
        _ => false,
    }
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
                match line[start..].find(']') {
                    Some(len) => {
                        out.extend(line[start..start + len].split(',').map(str::to_string));
                        i = start + len + 1;
                        continue;
                    }
                    // No `]` later on this line: no later marker can close either.
                    None => break,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(path: &str, text: &str) -> Entry {
        match parse_entry(path, text.as_bytes(), None) {
            Ok(e) => e,
            Err(d) => panic!("{path} should parse: {d}"),
        }
    }

    fn diag(path: &str, bytes: &[u8]) -> Diagnostic {
        match parse_entry(path, bytes, None) {
            Ok(e) => panic!("{path} should be refused, parsed as {e:?}"),
            Err(d) => d,
        }
    }

    #[test]
    fn plain_markdown_takes_title_from_heading_and_topic_from_folder() {
        let e = parse(
            "git/rebase-onto.md",
            "# Rebase Onto\n\nUse `git rebase --onto`.\n",
        );
        assert_eq!(e.id, "git/rebase-onto.md");
        assert_eq!(e.topic, "git");
        assert_eq!(e.title, "Rebase Onto");
        assert_eq!(e.body, "# Rebase Onto\n\nUse `git rebase --onto`.\n");
        assert!(e.tags.is_empty() && e.sources.is_empty() && e.extra.is_empty());
        assert_eq!((e.date, e.author), (None, None));
    }

    #[test]
    fn git_metadata_fills_date_and_author_unless_front_matter_has_them() {
        let git = GitMeta {
            time: 1_700_000_000,
            author: "Ada".into(),
        };
        let e = parse_entry("a/b.md", b"text\n", Some(&git)).expect("parses");
        assert_eq!(
            (e.date, e.author.as_deref()),
            (Some(1_700_000_000), Some("Ada"))
        );
        let e = parse_entry(
            "a/b.md",
            b"---\ndate: 2024-03-05\nauthor: Bo\n---\ntext\n",
            Some(&git),
        )
        .expect("parses");
        assert_eq!(
            (e.date, e.author.as_deref()),
            (Some(1_709_596_800), Some("Bo"))
        );
    }

    #[test]
    fn title_falls_back_to_setext_heading_then_file_stem() {
        assert_eq!(
            parse("t/x.md", "Intro text\n\nBig Title\n=====\n").title,
            "Big Title"
        );
        assert_eq!(
            parse("t/x.md", "Big Title\n=====\n\nbody\n").title,
            "Big Title"
        );
        assert_eq!(
            parse("t/x.md", "Sub Title\n---\n\nbody\n").title,
            "Sub Title"
        );
        assert_eq!(
            parse("t/my-note.md", "just text, no heading\n").title,
            "my-note"
        );
        assert_eq!(parse("t/x.md", "## Closed ##\nbody\n").title, "Closed");
        assert_eq!(parse("t/x.md", "#hashtag line\n# Real\n").title, "Real");
        assert_eq!(parse("t/x.md", "2024 recap\n===\n").title, "2024 recap");
        assert_eq!(parse("t/x.md", "-dash start\n===\n").title, "-dash start");
        assert_eq!(
            parse("t/lists.md", "- item\n---\n1. one\n===\n> q\n---\n").title,
            "lists"
        );
    }

    #[test]
    fn hash_lines_inside_code_fences_are_not_headings() {
        let text = "Some intro.\n\n```bash\n# install the thing\nmake\n```\n\n~~~\n# also not\n~~~\n\n# The Title\n";
        assert_eq!(parse("t/x.md", text).title, "The Title");
        let text = "````\n```\n# nested\n```\n````\n    # indented code\n\nno heading\n";
        assert_eq!(parse("t/fenced.md", text).title, "fenced");
    }

    #[test]
    fn hugo_front_matter() {
        let text = r#"---
title: "Cache invalidation: the `Entry` key"
date: 2024-03-05T10:00:00+02:00
draft: false
weight: 10
tags: ["rust", "cache"]
categories:
  - backend
params:
  math: true
  series: [a, b]
sources:
  - ./src/cache/entry.rs
  - src\cache\mod.rs
---

Body text.
"#;
        let e = parse("architecture/cache.md", text);
        assert_eq!(e.title, "Cache invalidation: the `Entry` key");
        assert_eq!(e.date, Some(1_709_625_600));
        assert_eq!(e.tags, ["rust", "cache"]);
        assert_eq!(e.sources, ["src/cache/entry.rs", "src/cache/mod.rs"]);
        assert_eq!(e.extra["draft"], json!(false));
        assert_eq!(e.extra["weight"], json!(10));
        assert_eq!(e.extra["categories"], json!(["backend"]));
        assert_eq!(
            e.extra["params"],
            json!({"math": true, "series": ["a", "b"]})
        );
        assert_eq!(e.body, "\nBody text.\n");
    }

    #[test]
    fn jekyll_front_matter() {
        let text = "---\nlayout: post\ntitle:  Welcome to Jekyll!\ndate:   2015-11-10 15:34:30 -0500\ntags: ruby static-sites  ruby\nauthor:\n  name: Jo\n  email: jo@example.com\n---\nHello.\n";
        let e = parse("blog/welcome.md", text);
        assert_eq!(e.title, "Welcome to Jekyll!");
        assert_eq!(e.date, Some(1_447_187_670));
        assert_eq!(e.tags, ["ruby", "static-sites"]);
        assert_eq!(e.author.as_deref(), Some("Jo"));
        assert_eq!(e.extra["layout"], json!("post"));
    }

    #[test]
    fn obsidian_front_matter() {
        let text = "---\naliases: [Flaky tests]\ntags:\n  - \"#testing\"\n  - '#ci/flaky'\n  - testing\n  - ''\ncreated: 2024-01-02\nsource: tests/integration/server.rs\n---\n# Flaky CI\n\nSee [source: ./tests/common/mod.rs] and [Source: src/a.rs, src/b.rs].\n";
        let e = parse("testing/flaky.md", text);
        assert_eq!(e.title, "Flaky CI");
        assert_eq!(e.tags, ["testing", "ci/flaky"]);
        assert_eq!(
            e.sources,
            [
                "tests/integration/server.rs",
                "tests/common/mod.rs",
                "src/a.rs",
                "src/b.rs"
            ]
        );
        assert_eq!(e.extra["aliases"], json!(["Flaky tests"]));
        assert_eq!(e.extra["created"], json!("2024-01-02"));
    }

    #[test]
    fn tags_as_comma_string_and_topic_override() {
        let e = parse(
            "misc/x.md",
            "---\ntags: rust, build ,  , rust,#ci\ntopic: build\n---\nx\n",
        );
        assert_eq!(e.tags, ["rust", "build", "ci"]);
        assert_eq!(e.topic, "build");
    }

    #[test]
    fn source_paths_are_normalised_and_unsafe_ones_dropped() {
        let text = "---\nsources: [./a//b/./c.rs, /etc/passwd, ../up.rs, 'C:\\x.rs', https://x.io/a, 'src/lib.rs:42', 'src/x.rs#L3-L9', '', a//b/c.rs]\n---\nbody [source: ../../secret] [source: `src/y.rs`]\n```\n[source: in/code.rs]\n```\n";
        let e = parse("t/x.md", text);
        assert_eq!(
            e.sources,
            ["a/b/c.rs", "src/lib.rs", "src/x.rs", "src/y.rs"]
        );
    }

    #[test]
    fn dates_in_all_accepted_forms() {
        for (s, want) in [
            ("2024-03-05", 1_709_596_800),
            ("2024-03-05T10:00:00Z", 1_709_632_800),
            ("2024-03-05 10:00:00 +0100", 1_709_629_200),
            ("2024-03-05T10:00:00+02:00", 1_709_625_600),
            ("2024-03-05T10:00:00.123-00:30", 1_709_634_600),
            ("2024-03-05 10:00", 1_709_632_800),
            ("1969-12-31", -86_400),
            ("2000-02-29", 951_782_400),
        ] {
            assert_eq!(parse_date(s), Some(want), "{s}");
            for quoted in [s.to_string(), format!("\"{s}\""), format!("'{s}'")] {
                let e = parse("t/x.md", &format!("---\ndate: {quoted}\n---\nx\n"));
                assert_eq!(e.date, Some(want), "{quoted}");
            }
        }
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "March 5",
            "2024-03-05T25:00",
            "2024-3-5",
            "20240305",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn bad_date_is_a_diagnostic_naming_value_and_line() {
        let d = diag("t/x.md", b"---\ntitle: x\ndate: last tuesday\n---\nbody\n");
        assert_eq!(d.line, 3);
        assert!(d.reason.contains("\"last tuesday\""), "{}", d.reason);
        let d = diag("t/x.md", b"---\ndate: [2024-01-01]\n---\nbody\n");
        assert_eq!(d.line, 2);
    }

    #[test]
    fn bom_and_crlf_are_normalised() {
        let e = parse_entry(
            "t/x.md",
            b"\xEF\xBB\xBF---\r\ntitle: T\r\n---\r\nline one\r\nline two\r\n",
            None,
        )
        .expect("parses");
        assert_eq!(e.title, "T");
        assert_eq!(e.body, "line one\nline two\n");
        let e =
            parse_entry("t/x.md", b"\xEF\xBB\xBF# Heading\r\n\r\ntext\r\n", None).expect("parses");
        assert_eq!(e.title, "Heading");
        assert_eq!(e.body, "# Heading\n\ntext\n");
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let d = diag("t/x.md", b"# ok\nfine\nbad \xff byte\n");
        assert_eq!(d.line, 3);
        assert!(
            d.reason.starts_with("file is not valid UTF-8"),
            "{}",
            d.reason
        );
        assert_eq!(d.to_string(), format!("t/x.md:3: {}", d.reason));
    }

    #[test]
    fn oversize_single_line_is_refused_with_size_and_limit() {
        let big = vec![b'a'; 5 * 1024 * 1024];
        let d = diag("t/big.md", &big);
        assert_eq!(d.line, 1);
        assert_eq!(
            d.reason,
            "file is 5242880 bytes, larger than the 1048576 byte limit for an entry"
        );
        let mut at_limit = vec![b'a'; MAX_ENTRY_BYTES];
        at_limit[0] = b'#';
        at_limit[1] = b' ';
        assert!(parse_entry("t/ok.md", &at_limit, None).is_ok());
    }

    #[test]
    fn unclosed_front_matter_empty_files_and_empty_bodies() {
        let d = diag("t/x.md", b"---\ntitle: x\n\nbody that never ends\n");
        assert_eq!(d.line, 1);
        assert!(
            d.reason
                .starts_with("front matter opened at line 1 is never closed")
        );
        assert_eq!(diag("t/x.md", b"---").line, 1);
        assert_eq!(diag("t/x.md", b"").reason, "file is empty");
        assert_eq!(diag("t/x.md", b"\xEF\xBB\xBF").reason, "file is empty");
        assert_eq!(
            diag("t/x.md", b" \n\t\n").reason,
            "file contains only whitespace"
        );
        let d = diag("t/x.md", b"---\ntitle: x\n---\n\n  \n");
        assert_eq!(
            (d.line, d.reason.as_str()),
            (3, "entry has no body after the front matter")
        );
        // A heading alone is content: the title is searchable.
        assert_eq!(
            parse("t/x.md", "---\ntags: [a]\n---\n# Only a heading\n").title,
            "Only a heading"
        );
        // `...` closes too.
        assert_eq!(
            parse("t/x.md", "---\ntitle: Dots\n...\nbody\n").title,
            "Dots"
        );
    }

    #[test]
    fn bad_yaml_points_at_the_file_line() {
        let d = diag(
            "t/x.md",
            b"---\ntitle: ok\ntags: [a, b\nauthor: x\n---\nbody\n",
        );
        assert!(
            d.reason.starts_with("invalid YAML in front matter: "),
            "{}",
            d.reason
        );
        assert!((3..=5).contains(&d.line), "line {}", d.line);
        let d = diag(
            "t/x.md",
            b"---\ntitle: ok\nauthor: \"unterminated\n---\nbody\n",
        );
        assert!(d.reason.starts_with("invalid YAML"), "{}", d.reason);
        let d = diag("t/x.md", b"---\ntitle: ok\n  bad: indent\n---\nbody\n");
        assert_eq!(d.line, 3, "{d}");
        let d = diag("t/x.md", b"---\n- a\n- b\n---\nbody\n");
        assert_eq!(
            d.reason,
            "front matter must be a map of `key: value` lines, found a list"
        );
        // Empty or comment-only front matter is fine.
        assert_eq!(parse("t/x.md", "---\n# note\n---\nbody\n").title, "x");
    }

    /// Issue 16: a flow sequence over several lines, closed at the parent key's
    /// indentation, with a comment line, is read as PyYAML reads it; lines after it still
    /// count right in diagnostics.
    #[test]
    fn flow_sequence_closed_at_the_parent_indentation() {
        let text = "---\ntitle: Run the linter\ntools:\n  lint:\n    command: eslint\n    args: [\n      \"--fix\",\n      # comment line\n      \"src/\"\n  ]\ntags: [lint,\n  ci]\n---\nRun eslint before pushing.\n";
        let e = parse("ci/lint.md", text);
        assert_eq!(e.title, "Run the linter");
        assert_eq!(e.tags, ["lint", "ci"]);
        assert_eq!(
            e.extra["tools"],
            json!({"lint": {"command": "eslint", "args": ["--fix", "src/"]}})
        );
        let back = parse_entry("ci/lint.md", render_entry(&e).as_bytes(), None);
        assert_eq!(back.as_ref(), Ok(&e));
        let bad = text.replace("tags: [lint,", "date: someday\ntags: [lint,");
        let d = diag("ci/lint.md", bad.as_bytes());
        assert_eq!(
            (d.line, d.reason.starts_with("date \"someday\"")),
            (11, true)
        );
    }

    #[test]
    fn yaml_bombs_and_deep_nesting_are_refused() {
        let mut bomb = String::from("---\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='j' {
            bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
            prev = name;
        }
        bomb.push_str("---\nbody\n");
        let d = diag("t/x.md", bomb.as_bytes());
        assert!(d.reason.contains("more than 100000 values"), "{}", d.reason);
        let deep = format!(
            "---\nk: {}{}\n---\nbody\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(parse_entry("t/x.md", deep.as_bytes(), None).is_err());
        let deep = format!("---\nk: {}x\n---\nbody\n", "- ".repeat(100_000));
        assert!(parse_entry("t/x.md", deep.as_bytes(), None).is_err());
    }

    #[test]
    fn scalar_types_in_extra() {
        let e = parse(
            "t/x.md",
            "---\ni: 42\nh: 0x1f\nf: 1.5\nb: yes\nt: True\nn: ~\ns: '42'\ninf: .inf\nlist: [1, two, null]\n? [complex, key]\n: v\n---\nbody\n",
        );
        assert_eq!(e.extra["i"], json!(42));
        assert_eq!(e.extra["h"], json!(31));
        assert_eq!(e.extra["f"], json!(1.5));
        assert_eq!(e.extra["b"], json!("yes"));
        assert_eq!(e.extra["t"], json!(true));
        assert_eq!(e.extra["n"], json!(null));
        assert_eq!(e.extra["s"], json!("42"));
        assert_eq!(e.extra["inf"], json!(".inf"));
        assert_eq!(e.extra["list"], json!([1, "two", null]));
        assert_eq!(e.extra["[\"complex\",\"key\"]"], json!("v"));
    }

    #[test]
    fn entry_paths() {
        for ok in ["git/rebase.md", "a/b/c.MD", "build/x.Md", "topic/über.md"] {
            assert!(is_entry_path(ok), "{ok}");
        }
        for bad in [
            "README.md",
            "git/notes.txt",
            ".github/x.md",
            "git/.hidden.md",
            "git//x.md",
            "/git/x.md",
            "git/../x.md",
            "git/.md",
            "git/md",
            "",
            "a/b\\c.md",
        ] {
            assert!(!is_entry_path(bad), "{bad}");
        }
    }

    #[test]
    fn render_round_trips_tricky_values() {
        let titles = [
            "Plain",
            "Colon: in title",
            "# hash first",
            "\"double\" and 'single' quotes",
            "Ünïcödé — 日本語 ✓ 🚀",
            "back\\slash and tab\tinside",
            "- looks like a list",
            "yes",
            "null",
            "123",
            "{not: a map}",
            "[not, a list]",
            "@at &anchor *alias !tag %percent `tick` | >",
            "line\nbreak",
            "a\u{2028}sep\u{85}\u{feff}b",
        ];
        for (i, title) in titles.iter().enumerate() {
            let mut extra = BTreeMap::new();
            extra.insert("draft".to_string(), json!(true));
            extra.insert("weight key".to_string(), json!(-3.25));
            extra.insert(
                "nested".to_string(),
                json!({"a": [1, "b: c", null], "q\"": {}}),
            );
            let e = Entry {
                id: format!("topic/entry-{i}.md"),
                topic: if i % 2 == 0 {
                    "topic".into()
                } else {
                    "Other Topic: x".into()
                },
                title: title.to_string(),
                tags: vec!["rust".into(), "c++".into(), "a, b".into(), "ünï".into()],
                sources: vec!["src/cache/entry.rs".into(), "docs/a b.md".into()],
                date: Some(if i % 2 == 0 {
                    1_709_596_800
                } else {
                    1_709_632_801
                }),
                author: Some("O'Brien: \"Dev\"".into()),
                body: "# Heading\n\n---\nnot front matter\n[source: src/inline.rs]\n".into(),
                extra,
            };
            let mut want = e.clone();
            want.sources.push("src/inline.rs".into());
            let text = render_entry(&want);
            let back =
                parse_entry(&e.id, text.as_bytes(), None).unwrap_or_else(|d| panic!("{d}\n{text}"));
            assert_eq!(back, want, "{text}");
        }
        let e = parse("t/x.md", "just a body\n");
        assert_eq!(render_entry(&e), "---\ntitle: \"x\"\n---\njust a body\n");
    }

    #[test]
    fn slugs() {
        for (title, want) in [
            ("Rebase Onto Another Branch", "rebase-onto-another-branch"),
            ("  Don't panic!!  ", "dont-panic"),
            ("Crème brûlée & Straße", "creme-brulee-strasse"),
            ("日本語", "entry"),
            ("日本語 notes", "notes"),
            ("", "entry"),
            ("---", "entry"),
            (
                "CachedEntry::get() in src/cache.rs",
                "cachedentry-get-in-src-cache-rs",
            ),
            ("CON", "con-entry"),
            ("lpt1", "lpt1-entry"),
        ] {
            assert_eq!(slugify(title), want, "{title}");
        }
        let long = slugify(&"word ".repeat(40));
        assert!(long.len() <= 80 && !long.ends_with('-'), "{long}");
        let s = slugify("é".repeat(100).as_str());
        assert!(s.len() <= 80 && s.bytes().all(|b| b == b'e'));
    }

    /// xorshift64*, deterministic and dependency-free.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[test]
    fn never_panics_and_round_trips_on_mutated_input() {
        let seeds: [&[u8]; 6] = [
            b"---\ntitle: \"T: x\"\ntags: [a, '#b']\nsources: [./src/a.rs]\ndate: 2024-03-05T10:00:00+02:00\nauthor: A\nx: {y: [1, 2.5, null]}\n---\n# H\n\nbody [source: b/c.rs]\n",
            b"# Title\r\n\r\n```sh\r\n# comment\r\n```\r\nText\r\n",
            b"\xEF\xBB\xBF---\nlayout: post\ndate: 2015-11-10 15:34:30 -0500\ntags: ruby jekyll\n...\nBody\n",
            b"Setext\n===\n\n- list\n",
            b"---\na: &x [1, 2]\nb: *x\n? complex\n: |\n  block\n  text\n---\nz\n",
            b"---\n---\n",
        ];
        let tokens: [&[u8]; 14] = [
            b"---\n",
            b"...\n",
            b"\n",
            b"\r\n",
            b"#",
            b"```",
            b"[source: ",
            b"]",
            b": ",
            b"- ",
            b"\"",
            b"'",
            b"\xff",
            b"&a *a ",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut parsed = 0;
        for round in 0..6000 {
            let mut bytes = seeds[round % seeds.len()].to_vec();
            for _ in 0..=rng.below(6) {
                let at = rng.below(bytes.len() + 1);
                match rng.below(5) {
                    0 => bytes.insert(at, rng.next() as u8),
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    2 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
                    3 => {
                        let t = tokens[rng.below(tokens.len())];
                        bytes.splice(at..at, t.iter().copied());
                    }
                    _ => bytes.truncate(at),
                }
            }
            if round % 7 == 0 {
                bytes = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
            }
            if let Ok(e) = parse_entry("t/x.md", &bytes, None) {
                parsed += 1;
                let text = render_entry(&e);
                match parse_entry("t/x.md", text.as_bytes(), None) {
                    Ok(back) => assert_eq!(back, e, "round trip of {bytes:?}"),
                    Err(d) => panic!("render of {bytes:?} did not parse: {d}\n{text}"),
                }
            }
            let _ = slugify(&String::from_utf8_lossy(&bytes));
        }
        assert!(parsed > 1000, "only {parsed} mutated inputs parsed");
    }

    /// docs/examples/knowledge: every entry parses cleanly with front matter and sources,
    /// holds no secret, and the root README is not an entry.
    #[test]
    fn shipped_example_repository_parses() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/examples/knowledge");
        assert!(!is_entry_path("README.md"));
        assert!(root.join("README.md").is_file());
        let mut entries = Vec::new();
        for topic in std::fs::read_dir(&root)
            .expect("example repository exists")
            .flatten()
        {
            if !topic.path().is_dir() {
                continue;
            }
            let name = topic.file_name().to_string_lossy().into_owned();
            for file in std::fs::read_dir(topic.path()).expect("readable").flatten() {
                let id = format!("{name}/{}", file.file_name().to_string_lossy());
                assert!(is_entry_path(&id), "{id}");
                let bytes = std::fs::read(file.path()).expect("readable entry");
                let e = parse_entry(&id, &bytes, None).unwrap_or_else(|d| panic!("{d}"));
                assert_eq!(e.topic, name);
                assert!(e.date.is_some() && e.author.is_some(), "{id}");
                assert!(!e.sources.is_empty() && !e.tags.is_empty(), "{id}");
                assert!(e.body.len() > 400, "{id} is too short to be real knowledge");
                assert_eq!(crate::secrets::find_secret(&e.body), None, "{id}");
                entries.push(e);
            }
        }
        assert!(
            (6..=8).contains(&entries.len()),
            "{} entries",
            entries.len()
        );
        let by_id = |id: &str| entries.iter().find(|e| e.id == id).expect(id);
        let e = by_id("testing/flaky-clock-in-cache-tests.md");
        assert_eq!(e.tags, ["testing", "flaky", "cache"]);
        assert_eq!(e.sources, ["src/clock.rs", "src/cache/sweeper.rs"]);
        let e = by_id("build/openssl-on-musl.md");
        assert_eq!(e.sources, ["Cargo.toml", "Dockerfile"]);
        assert_eq!(e.tags, ["build", "musl", "tls", "docker"]);
        let e = by_id("architecture/cache-entry-versioning.md");
        assert_eq!(e.sources[2], "src/cache/mod.rs");
        assert_eq!(e.extra["review"]["status"], json!("approved"));
    }

    /// Inputs shaped to make a naive scanner quadratic; they must finish (in well under a
    /// second in release; there is no timing assertion, a hang would show as a stuck test).
    #[test]
    fn adversarial_inputs_near_the_size_limit_finish() {
        // A quarter of the limit: enough for quadratic work to hang, quick when linear.
        let n = MAX_ENTRY_BYTES / 4;
        let fill = |unit: &str| unit.repeat(n / unit.len());
        let bodies = [
            fill("[source:"),
            fill("[source: a"),
            fill("#"),
            fill("```\n"),
            fill("x\n=\n"),
            fill("- "),
            fill("a"),
        ];
        for body in &bodies {
            let _ = parse_entry("t/x.md", body.as_bytes(), None);
            let _ = crate::secrets::find_secret(body);
        }
        for front in [
            fill("a"),
            fill("k: v\n"),
            fill("[a, "),
            fill("- "),
            fill("{a: "),
            fill("&a x\n"),
        ] {
            let text = format!("---\n{front}\n---\nbody\n");
            let text = &text[..text.len().min(MAX_ENTRY_BYTES)];
            let _ = parse_entry("t/x.md", text.as_bytes(), None);
        }
        for secretish in [
            "token=",
            "eyJaaaaaaaaaaa.",
            "AKIA",
            "ghp_",
            "sk-",
            "password: ",
        ] {
            let _ = crate::secrets::find_secret(&secretish.repeat(64 * 1024 / secretish.len()));
        }
    }

    /// The real TIL corpus (no front matter): every note parses, title = first `# `
    /// heading, topic = folder.
    #[test]
    fn til_corpus_parses() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/til");
        let root = if root.is_dir() {
            root
        } else {
            std::path::PathBuf::from("/work/shared/corpora/til")
        };
        let Ok(topics) = std::fs::read_dir(&root) else {
            println!(
                "note: {} not found; skipping the corpus test",
                root.display()
            );
            return;
        };
        let mut count = 0;
        for topic in topics.flatten() {
            let name = topic.file_name().to_string_lossy().into_owned();
            if !topic.path().is_dir() || name.starts_with('.') {
                continue;
            }
            for file in std::fs::read_dir(topic.path())
                .expect("readable topic dir")
                .flatten()
            {
                let file_name = file.file_name().to_string_lossy().into_owned();
                let id = format!("{name}/{file_name}");
                if !is_entry_path(&id) {
                    continue;
                }
                let bytes = std::fs::read(file.path()).expect("readable note");
                let e = parse_entry(&id, &bytes, None).unwrap_or_else(|d| panic!("{d}"));
                let text = String::from_utf8(bytes).expect("utf-8 note");
                let heading = text
                    .lines()
                    .find_map(|l| l.strip_prefix("# "))
                    .expect("note has a # heading")
                    .trim();
                assert_eq!(e.title, heading, "{id}");
                assert_eq!(e.topic, name, "{id}");
                count += 1;
            }
        }
        assert!(
            count > 1000,
            "only {count} notes found under {}",
            root.display()
        );
    }
}
