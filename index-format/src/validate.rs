//! Write-path checks for new entries, shared by the server and `helix store` so both refuse
//! the same input: field limits, safe topic and source paths, and a hand-written secret scan.

use crate::entry::is_reserved_name;

/// Longest topic, in characters.
pub const MAX_TOPIC_CHARS: usize = 64;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Largest body, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Most tags (and most sources) per entry.
pub const MAX_TAGS: usize = 20;
/// Longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 40;
/// Most sources per entry.
pub const MAX_SOURCES: usize = 20;
/// Longest source path, in characters.
pub const MAX_SOURCE_CHARS: usize = 512;

/// An entry as submitted for writing (the body of `POST /v1/projects/{p}/entries`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewEntry {
    pub topic: String,
    pub title: String,
    pub body: String,
    pub tags: Vec<String>,
    pub sources: Vec<String>,
}

/// Why a new entry is refused. `field` names the offending field (`title`, `tags[2]`, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// A field breaks a format rule.
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    /// A field contains what looks like a credential; the value itself is never echoed.
    #[error(
        "{field} line {line} contains what looks like a {kind}; remove the secret before storing the entry"
    )]
    Secret {
        field: String,
        kind: &'static str,
        line: u32,
    },
}

impl ValidationError {
    /// The field the error is about.
    pub fn field(&self) -> &str {
        match self {
            ValidationError::Invalid { field, .. } | ValidationError::Secret { field, .. } => field,
        }
    }

    /// The HTTP API error code for this error (`invalid_entry` or `secret_detected`).
    pub fn code(&self) -> &'static str {
        match self {
            ValidationError::Invalid { .. } => "invalid_entry",
            ValidationError::Secret { .. } => "secret_detected",
        }
    }
}

/// Where [`find_secret`] found something that looks like a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretFinding {
    /// What it looks like, e.g. `"GitHub token"`.
    pub kind: &'static str,
    /// 1-based line within the scanned text.
    pub line: u32,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> ValidationError {
    ValidationError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// Checks a new entry against the write-path rules (docs/entry-format.md, "Writing entries").
pub fn validate_new_entry(new: &NewEntry) -> Result<(), ValidationError> {
    validate_topic(&new.topic)?;

    let title_chars = new.title.chars().count();
    if new.title.trim().is_empty() {
        return Err(invalid("title", "title must not be empty"));
    }
    if title_chars > MAX_TITLE_CHARS {
        return Err(invalid(
            "title",
            format!("title is {title_chars} characters long; the limit is {MAX_TITLE_CHARS}"),
        ));
    }
    if new.title.chars().any(char::is_control) {
        return Err(invalid(
            "title",
            "title must be one line without control characters",
        ));
    }

    if new.body.trim().is_empty() {
        return Err(invalid("body", "body must not be empty"));
    }
    if new.body.len() > MAX_BODY_BYTES {
        return Err(invalid(
            "body",
            format!(
                "body is {} bytes; the limit is {MAX_BODY_BYTES} bytes",
                new.body.len()
            ),
        ));
    }
    if new.body.contains('\0') {
        return Err(invalid("body", "body must not contain NUL characters"));
    }

    if new.tags.len() > MAX_TAGS {
        return Err(invalid(
            "tags",
            format!(
                "{} tags given; at most {MAX_TAGS} are allowed",
                new.tags.len()
            ),
        ));
    }
    for (i, tag) in new.tags.iter().enumerate() {
        let n = tag.chars().count();
        if tag.trim().is_empty() || n > MAX_TAG_CHARS {
            return Err(invalid(
                format!("tags[{i}]"),
                format!("tag must be 1 to {MAX_TAG_CHARS} characters long (got {n})"),
            ));
        }
        if tag.chars().any(char::is_control) {
            return Err(invalid(
                format!("tags[{i}]"),
                "tag must not contain control characters",
            ));
        }
    }

    if new.sources.len() > MAX_SOURCES {
        return Err(invalid(
            "sources",
            format!(
                "{} sources given; at most {MAX_SOURCES} are allowed",
                new.sources.len()
            ),
        ));
    }
    for (i, source) in new.sources.iter().enumerate() {
        if let Err(reason) = check_source(source) {
            return Err(invalid(format!("sources[{i}]"), reason));
        }
    }

    let fields = std::iter::once(("title".to_string(), new.title.as_str()))
        .chain(std::iter::once(("body".to_string(), new.body.as_str())))
        .chain(
            new.tags
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("tags[{i}]"), t.as_str())),
        )
        .chain(
            new.sources
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("sources[{i}]"), s.as_str())),
        );
    for (field, text) in fields {
        if let Some(found) = find_secret(text) {
            return Err(ValidationError::Secret {
                field,
                kind: found.kind,
                line: found.line,
            });
        }
    }
    Ok(())
}

fn validate_topic(topic: &str) -> Result<(), ValidationError> {
    let shape = || {
        invalid(
            "topic",
            format!(
                "topic {topic:?} may only contain a-z, 0-9, '-', '_' and '/' separated segments"
            ),
        )
    };
    let n = topic.chars().count();
    if n == 0 || n > MAX_TOPIC_CHARS {
        return Err(invalid(
            "topic",
            format!("topic must be 1 to {MAX_TOPIC_CHARS} characters long (got {n})"),
        ));
    }
    for segment in topic.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err(shape());
        }
        if !segment
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err(shape());
        }
        if is_reserved_name(segment) {
            return Err(invalid(
                "topic",
                format!("topic segment {segment:?} is a reserved name"),
            ));
        }
    }
    Ok(())
}

fn check_source(source: &str) -> Result<(), String> {
    let n = source.chars().count();
    if source.trim().is_empty() || n > MAX_SOURCE_CHARS {
        return Err(format!(
            "source path must be 1 to {MAX_SOURCE_CHARS} characters long (got {n})"
        ));
    }
    if source.chars().any(char::is_control) {
        return Err("source path must not contain NUL or control characters".to_string());
    }
    let unified = source.replace('\\', "/");
    if unified.starts_with('/') || unified.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "source path {source:?} must be relative to the repository root, not absolute"
        ));
    }
    if unified.split('/').any(|c| c == "..") {
        return Err(format!("source path {source:?} must not contain '..'"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Secret scanning

const PRIVATE_KEY: &str = "private key";
const AWS_KEY: &str = "AWS access key id";
const GITHUB_TOKEN: &str = "GitHub token";
const SLACK_TOKEN: &str = "Slack token";
const API_KEY: &str = "OpenAI/Anthropic API key";
const GOOGLE_KEY: &str = "Google API key";
const STRIPE_KEY: &str = "Stripe secret key";
const JWT: &str = "JSON Web Token";
const ASSIGNMENT: &str = "password or secret assignment";

/// Names of everything [`find_secret`] looks for, for documentation and messages.
pub const SECRET_KINDS: [&str; 9] = [
    PRIVATE_KEY,
    AWS_KEY,
    GITHUB_TOKEN,
    SLACK_TOKEN,
    API_KEY,
    GOOGLE_KEY,
    STRIPE_KEY,
    JWT,
    ASSIGNMENT,
];

/// Finds the first thing in `text` that looks like a credential: private key blocks, AWS
/// access key ids, GitHub/Slack/OpenAI/Anthropic/Google/Stripe tokens, JWTs, and
/// `password=`/`secret=`/`api_key=`/`token=` assignments of long random-looking values.
pub fn find_secret(text: &str) -> Option<SecretFinding> {
    for (i, line) in text.split('\n').enumerate() {
        if let Some(kind) = scan_line(line.as_bytes()) {
            return Some(SecretFinding {
                kind,
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            });
        }
    }
    None
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes satisfying `f` starting at `i`.
fn run(b: &[u8], i: usize, f: impl Fn(u8) -> bool) -> usize {
    b.get(i..)
        .map_or(0, |s| s.iter().take_while(|&&c| f(c)).count())
}

fn starts_with_at(b: &[u8], i: usize, pat: &[u8]) -> bool {
    b.get(i..i + pat.len()) == Some(pat)
}

fn scan_line(b: &[u8]) -> Option<&'static str> {
    if let Some(p) = find(b, b"-----BEGIN ")
        && find(&b[p..], b"PRIVATE KEY-----").is_some()
    {
        return Some(PRIVATE_KEY);
    }
    for i in 0..b.len() {
        // Every pattern starts at a token boundary.
        if i > 0 && is_token_char(b[i - 1]) {
            continue;
        }
        if let Some(kind) = token_at(b, i) {
            return Some(kind);
        }
    }
    assignment(b)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn token_at(b: &[u8], i: usize) -> Option<&'static str> {
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let upper_digit = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    let end_ok = |j: usize| b.get(j).is_none_or(|&c| !c.is_ascii_alphanumeric());
    match b[i] {
        b'A' => {
            if (starts_with_at(b, i, b"AKIA") || starts_with_at(b, i, b"ASIA"))
                && run(b, i + 4, upper_digit) == 16
                && end_ok(i + 20)
            {
                return Some(AWS_KEY);
            }
            if starts_with_at(b, i, b"AIza") && run(b, i + 4, is_token_char) >= 35 {
                return Some(GOOGLE_KEY);
            }
        }
        b'g' => {
            for prefix in [
                &b"ghp_"[..],
                b"gho_",
                b"ghu_",
                b"ghs_",
                b"ghr_",
                b"github_pat_",
            ] {
                if starts_with_at(b, i, prefix)
                    && run(b, i + prefix.len(), |c| alnum(c) || c == b'_') >= 20
                {
                    return Some(GITHUB_TOKEN);
                }
            }
        }
        b'x' if starts_with_at(b, i, b"xox")
            && matches!(b.get(i + 3), Some(b'a' | b'b' | b'p' | b'r' | b's'))
            && b.get(i + 4) == Some(&b'-')
            && run(b, i + 5, |c| alnum(c) || c == b'-') >= 10 =>
        {
            return Some(SLACK_TOKEN);
        }
        b's' => {
            if starts_with_at(b, i, b"sk_live_") && run(b, i + 8, alnum) >= 10 {
                return Some(STRIPE_KEY);
            }
            if starts_with_at(b, i, b"sk-") {
                let n = run(b, i + 3, is_token_char);
                let tok = &b[i + 3..i + 3 + n];
                if n >= 20
                    && tok.iter().any(u8::is_ascii_digit)
                    && tok.iter().any(u8::is_ascii_alphabetic)
                    && mixed_enough(tok)
                {
                    return Some(API_KEY);
                }
            }
        }
        b'r' if starts_with_at(b, i, b"rk_live_") && run(b, i + 8, alnum) >= 10 => {
            return Some(STRIPE_KEY);
        }
        b'e' if starts_with_at(b, i, b"eyJ") => {
            let b64 = |c: u8| alnum(c) || c == b'_' || c == b'-';
            let s1 = run(b, i, b64);
            if s1 >= 10 && b.get(i + s1) == Some(&b'.') {
                let j = i + s1 + 1;
                let s2 = run(b, j, b64);
                if s2 >= 10 && b.get(j + s2) == Some(&b'.') && run(b, j + s2 + 1, b64) >= 10 {
                    return Some(JWT);
                }
            }
        }
        _ => {}
    }
    None
}

/// Whether an `sk-` token looks generated rather than like a kebab-case name
/// (`sk-learn-...`): it has an uppercase letter or at least one digit per 12 characters.
fn mixed_enough(tok: &[u8]) -> bool {
    tok.iter().any(u8::is_ascii_uppercase)
        || tok.iter().filter(|c| c.is_ascii_digit()).count() * 12 >= tok.len()
}

/// Key names whose long random-looking value is treated as a secret.
const SECRET_KEY_SUFFIXES: [&str; 11] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_key",
    "private_key",
    "auth",
];

/// `KEY = VALUE`, `KEY: VALUE`, `"KEY": "VALUE"` where KEY ends in a secret-ish word and
/// VALUE is a long, random-looking literal (not code like `get_token()` or `${VAR}`).
fn assignment(b: &[u8]) -> Option<&'static str> {
    let key_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.';
    for (i, &c) in b.iter().enumerate() {
        if c != b'=' && c != b':' {
            continue;
        }
        // `==`, `:=`/`::` are comparisons, walrus or paths; `=>`, `=~` neither.
        if b.get(i + 1)
            .is_some_and(|&n| n == b'=' || n == b':' || n == b'>' || n == b'~')
            || (i > 0 && matches!(b[i - 1], b'=' | b'!' | b'<' | b'>' | b':'))
        {
            continue;
        }
        // Key: walk back over optional closing quote and spaces.
        let mut k = i;
        while k > 0 && b[k - 1] == b' ' {
            k -= 1;
        }
        if k > 0 && matches!(b[k - 1], b'"' | b'\'') {
            k -= 1;
        }
        let key_end = k;
        while k > 0 && key_char(b[k - 1]) {
            k -= 1;
        }
        let key = String::from_utf8_lossy(&b[k..key_end]).to_ascii_lowercase();
        if !SECRET_KEY_SUFFIXES.iter().any(|s| key.ends_with(s)) {
            continue;
        }
        // Value: skip spaces and an opening quote.
        let mut v = i + 1;
        while b.get(v) == Some(&b' ') {
            v += 1;
        }
        if matches!(b.get(v), Some(b'"' | b'\'' | b'`')) {
            v += 1;
        }
        // Bounded: values longer than `looks_random` accepts need not be measured, and an
        // unbounded run per `=` would make `a=a=a=…` quadratic.
        let n = b.get(v..).map_or(0, |rest| {
            rest.iter()
                .take(513)
                .take_while(|&&c| {
                    c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'`' | b',' | b';' | b')')
                })
                .count()
        });
        let value = &b[v..v + n];
        if looks_random(value) {
            return Some(ASSIGNMENT);
        }
    }
    None
}

fn looks_random(v: &[u8]) -> bool {
    if v.len() < 16 || v.len() > 512 {
        return false;
    }
    // Code and placeholders, not literals: calls, env lookups, templates, paths, URLs.
    if v.iter()
        .any(|c| matches!(c, b'(' | b'{' | b'<' | b'[' | b'$' | b'%' | b'*'))
        || v.starts_with(b"process.env")
        || v.windows(3).any(|w| w == b"://")
        || v.iter().filter(|&&c| c == b'/').count() > 2
    {
        return false;
    }
    let lower = v.iter().any(u8::is_ascii_lowercase);
    let upper = v.iter().any(u8::is_ascii_uppercase);
    let digit = v.iter().any(u8::is_ascii_digit);
    let classes = usize::from(lower) + usize::from(upper) + usize::from(digit);
    classes >= 2 && digit && entropy(v) >= 3.0
}

/// Shannon entropy in bits per byte.
fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in v {
        counts[usize::from(c)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * libm::log2(p)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_entry() -> NewEntry {
        NewEntry {
            topic: "build".into(),
            title: "Release builds need `--locked`".into(),
            body: "CI runs `cargo build --release --locked`; without it the lock file drifts.\n"
                .into(),
            tags: vec!["cargo".into(), "ci".into()],
            sources: vec!["Cargo.lock".into(), "./ci/release.sh".into()],
        }
    }

    fn err(e: NewEntry) -> ValidationError {
        match validate_new_entry(&e) {
            Ok(()) => panic!("should be refused: {e:?}"),
            Err(err) => err,
        }
    }

    #[test]
    fn a_good_entry_passes() {
        assert_eq!(validate_new_entry(&ok_entry()), Ok(()));
        let nested = NewEntry {
            topic: "backend/cache_layer-2".into(),
            ..ok_entry()
        };
        assert_eq!(validate_new_entry(&nested), Ok(()));
    }

    #[test]
    fn topics_must_be_safe_segments() {
        for bad in [
            "", "../etc", "/abs", "a//b", "a/", "Build", "a b", "a.b", ".git", "con", "a/NUL",
            "lpt1", "com9", "a\\b", "ünï", "x/./y",
        ] {
            let e = err(NewEntry {
                topic: bad.into(),
                ..ok_entry()
            });
            assert_eq!(e.field(), "topic", "{bad}");
            assert_eq!(e.code(), "invalid_entry");
        }
        let e = err(NewEntry {
            topic: "../etc".into(),
            ..ok_entry()
        });
        assert_eq!(
            e.to_string(),
            "topic: topic \"../etc\" may only contain a-z, 0-9, '-', '_' and '/' separated segments"
        );
        let e = err(NewEntry {
            topic: "x".repeat(65),
            ..ok_entry()
        });
        assert!(e.to_string().contains("1 to 64 characters"), "{e}");
        assert!(
            err(NewEntry {
                topic: "aux".into(),
                ..ok_entry()
            })
            .to_string()
            .contains("reserved")
        );
    }

    #[test]
    fn title_body_tags_and_sources_limits() {
        let cases: Vec<(NewEntry, &str)> = vec![
            (
                NewEntry {
                    title: " ".into(),
                    ..ok_entry()
                },
                "title",
            ),
            (
                NewEntry {
                    title: "é".repeat(201),
                    ..ok_entry()
                },
                "title",
            ),
            (
                NewEntry {
                    title: "two\nlines".into(),
                    ..ok_entry()
                },
                "title",
            ),
            (
                NewEntry {
                    title: "bell\u{7}".into(),
                    ..ok_entry()
                },
                "title",
            ),
            (
                NewEntry {
                    body: "\n \t".into(),
                    ..ok_entry()
                },
                "body",
            ),
            (
                NewEntry {
                    body: "a".repeat(64 * 1024 + 1),
                    ..ok_entry()
                },
                "body",
            ),
            (
                NewEntry {
                    body: "nul\0byte".into(),
                    ..ok_entry()
                },
                "body",
            ),
            (
                NewEntry {
                    tags: vec!["t".into(); 21],
                    ..ok_entry()
                },
                "tags",
            ),
            (
                NewEntry {
                    tags: vec!["ok".into(), "".into()],
                    ..ok_entry()
                },
                "tags[1]",
            ),
            (
                NewEntry {
                    tags: vec!["x".repeat(41)],
                    ..ok_entry()
                },
                "tags[0]",
            ),
            (
                NewEntry {
                    sources: vec!["a.rs".into(); 21],
                    ..ok_entry()
                },
                "sources",
            ),
            (
                NewEntry {
                    sources: vec!["/etc/passwd".into()],
                    ..ok_entry()
                },
                "sources[0]",
            ),
            (
                NewEntry {
                    sources: vec!["C:\\x.rs".into()],
                    ..ok_entry()
                },
                "sources[0]",
            ),
            (
                NewEntry {
                    sources: vec!["src/../../x".into()],
                    ..ok_entry()
                },
                "sources[0]",
            ),
            (
                NewEntry {
                    sources: vec!["a\0b".into()],
                    ..ok_entry()
                },
                "sources[0]",
            ),
            (
                NewEntry {
                    sources: vec!["a".repeat(513)],
                    ..ok_entry()
                },
                "sources[0]",
            ),
            (
                NewEntry {
                    sources: vec!["".into()],
                    ..ok_entry()
                },
                "sources[0]",
            ),
        ];
        for (entry, field) in cases {
            let e = err(entry);
            assert_eq!(e.field(), field, "{e}");
            assert!(matches!(e, ValidationError::Invalid { .. }), "{e}");
        }
        // Limits themselves are fine.
        let edge = NewEntry {
            title: "é".repeat(200),
            body: "a".repeat(64 * 1024),
            tags: (0..20).map(|i| format!("{i:0>40}")).collect(),
            sources: vec!["s".repeat(512)],
            ..ok_entry()
        };
        assert_eq!(validate_new_entry(&edge), Ok(()));
    }

    // Test secrets are assembled at run time so this file does not itself trip scanners.
    fn fake(prefix: &str, tail: &str) -> String {
        format!("{prefix}{tail}")
    }

    #[test]
    fn secrets_are_found_with_kind_and_line() {
        let b64 = "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1";
        let cases = [
            (fake("-----BEGIN RSA ", "PRIVATE KEY-----"), PRIVATE_KEY),
            (fake("-----BEGIN OPENSSH ", "PRIVATE KEY-----"), PRIVATE_KEY),
            (
                fake("aws_access_key_id = AKIA", "IOSFODNN7EXAMPLE"),
                AWS_KEY,
            ),
            (fake("key ASIA", "Y34FZKBOKMUTVV7A."), AWS_KEY),
            (fake("export GH=ghp_", &b64[..36]), GITHUB_TOKEN),
            (fake("github_pat_", &b64[..40]), GITHUB_TOKEN),
            (fake("gho_", &b64[..30]), GITHUB_TOKEN),
            (
                fake("SLACK=xoxb-", "123456789012-abcdefABCDEF"),
                SLACK_TOKEN,
            ),
            (fake("OPENAI_KEY=sk-", &b64[..40]), API_KEY),
            (
                fake("sk-ant-", "api03-aB3dE5gH7jK9mN1pQ3sT5vX7zA9"),
                API_KEY,
            ),
            (fake("key=AIza", &b64[..35]), GOOGLE_KEY),
            (fake("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"), STRIPE_KEY),
            (
                fake(
                    "Authorization: Bearer eyJ",
                    "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                ),
                JWT,
            ),
            (fake("DB_PASSWORD=", "hT9x!kQ2vL7pZ4mW"), ASSIGNMENT),
            (
                fake("\"client_secret\": \"", "8f3Kd92LmQx7Zp1Vb6Ny\""),
                ASSIGNMENT,
            ),
            (
                fake("api_key: ", "d41d8cd98f00b204e9800998ecf8427e"),
                ASSIGNMENT,
            ),
            (fake("token = '", "Zm9vYmFyYmF6cXV4MTIzNDU2'"), ASSIGNMENT),
        ];
        for (secret, kind) in cases {
            let text = format!("Some notes.\n\nMore notes here.\n{secret}\n");
            assert_eq!(
                find_secret(&text),
                Some(SecretFinding { kind, line: 4 }),
                "{secret}"
            );
            let entry = NewEntry {
                body: text,
                ..ok_entry()
            };
            let e = err(entry);
            assert_eq!(e.code(), "secret_detected");
            assert_eq!(e.field(), "body");
            let msg = e.to_string();
            assert!(msg.contains(kind) && msg.contains("line 4"), "{msg}");
            // The message must never echo the secret.
            let tail: String = secret
                .chars()
                .rev()
                .take(12)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            assert!(!msg.contains(&tail), "{msg} echoes {tail}");
        }
        let e = err(NewEntry {
            tags: vec!["ok".into(), fake("ghp_", "aB3dE5gH7jK9mN1pQ3sT5vX7")],
            ..ok_entry()
        });
        assert_eq!((e.field(), e.code()), ("tags[1]", "secret_detected"));
        let e = err(NewEntry {
            title: fake("Key AKIA", "IOSFODNN7EXAMPLE"),
            ..ok_entry()
        });
        assert_eq!(e.field(), "title");
    }

    #[test]
    fn ordinary_text_and_code_are_not_secrets() {
        let clean = [
            "Rebuild the cache with `cargo run --bin warm` after changing the schema.",
            "let token = get_token();",
            "const token = await getToken(process.env.API_URL);",
            "password = os.environ[\"DB_PASSWORD\"]",
            "api_key: ${{ secrets.API_KEY }}",
            "token: <your-token-here>",
            "password=hunter2",
            "max_tokens = 4096",
            "if token == expected_token_value_here {",
            "commit 3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it",
            "request id 123e4567-e89b-12d3-a456-426614174000 failed",
            "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "the task-runner skips sk-learn-style-very-long-kebab-name here",
            "Ask the desk-1234 team",
            "AKIA is the prefix of AWS keys; ghp_ of GitHub tokens.",
            "-----BEGIN CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----",
            "eyJ alone is not a JWT, nor is eyJhbGciOi.short.x",
            "secret_sauce: the cache warms itself on boot",
            "token_url = https://auth.example.com/oauth2/token?grant=1234",
            "Use a UUID like 550e8400-e29b-41d4-a716-446655440000 for ids.",
            "日本語のテキスト password: パスワードは短い",
        ];
        for text in clean {
            assert_eq!(find_secret(text), None, "{text}");
        }
        assert_eq!(
            validate_new_entry(&NewEntry {
                body: clean.join("\n"),
                ..ok_entry()
            }),
            Ok(())
        );
    }

    #[test]
    fn scanner_never_panics_on_odd_input() {
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        let pieces = [
            "AKIA",
            "ghp_",
            "sk-",
            "eyJ",
            ".",
            "=",
            ":",
            "\"",
            "xoxb-",
            "AIza",
            "-----BEGIN ",
            "é",
            "\n",
            "token",
        ];
        for _ in 0..5000 {
            let mut s = String::new();
            for _ in 0..(x % 12) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push_str(pieces[(x % pieces.len() as u64) as usize]);
                if x.is_multiple_of(3) {
                    s.push_str("aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
                }
            }
            let _ = find_secret(&s);
        }
    }
}
