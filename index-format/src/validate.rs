//! Write-path checks for new entries, shared by the server and `helix store` so both refuse
//! the same input: field limits, safe topic and source paths, and the secret scan.

use crate::entry::{Entry, is_reserved_name};
use crate::secrets::{SecretFinding, describe, find_secret, find_secrets};
pub use crate::wire::NewEntry;

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

/// Why a new entry is refused. `field` names the offending field (`title`, `tags[2]`, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// A field breaks a format rule.
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    /// A field contains what looks like a credential; the value itself is never echoed.
    #[error(
        "{field} line {line} contains what looks like {what}; remove it, or reference where the secret lives instead (a vault path or an environment variable name)",
        what = describe(.provider, .kind)
    )]
    Secret {
        field: String,
        line: u32,
        /// Who issues the credential (`"GitLab"`); empty for generic kinds.
        provider: &'static str,
        /// What it is (`"personal access token"`, `"hard-coded password"`).
        kind: &'static str,
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
                line: found.line,
                provider: found.provider,
                kind: found.kind,
            });
        }
    }
    Ok(())
}

/// Checks an edited entry file (its whole Markdown, front matter included) for the entry
/// `id` and returns it parsed: it must parse as the server would read it (`status` and
/// `supersedes` included), keep a one-line title and a body within the limits, and hold no
/// secret anywhere in the file. The topic and sources are not checked as for a new entry:
/// the path stays the entry's own, and sources are normalised by the parser.
pub fn validate_edit(id: &str, text: &str) -> Result<Entry, ValidationError> {
    let entry = crate::parse_entry(id, text.as_bytes(), None)
        .map_err(|d| invalid("content", format!("line {}: {}", d.line, d.reason)))?;
    if let Some(found) = find_secrets_in_entry_file(text).first() {
        return Err(ValidationError::Secret {
            field: found.field.to_string(),
            line: found.finding.line,
            provider: found.finding.provider,
            kind: found.finding.kind,
        });
    }
    if has_empty_title(text) {
        return Err(invalid(
            "title",
            "`title:` is empty; write the entry's title (or remove the line: the first heading is then the title)".to_string(),
        ));
    }
    let title_chars = entry.title.chars().count();
    if title_chars > MAX_TITLE_CHARS || entry.title.chars().any(char::is_control) {
        return Err(invalid(
            "title",
            format!("title must be one line of at most {MAX_TITLE_CHARS} characters"),
        ));
    }
    if entry.body.len() > MAX_BODY_BYTES || entry.body.contains('\0') {
        return Err(invalid(
            "body",
            format!("body must be at most {MAX_BODY_BYTES} bytes, without NUL characters"),
        ));
    }
    Ok(entry)
}

/// Whether the front matter says `title:` with nothing after it (or `""`): the parser then
/// falls back to a heading or the file name, which the author did not mean.
fn has_empty_title(text: &str) -> bool {
    let lines = crate::entry::front_matter_lines(text);
    if lines == 0 || lines == u32::MAX {
        return false;
    }
    let front: Vec<&str> = text.lines().take(lines as usize).skip(1).collect();
    front.iter().enumerate().any(|(i, l)| {
        let Some(v) = l.strip_prefix("title:") else {
            return false;
        };
        // `title:` may go on, indented, on the next line.
        let continued = v.trim().is_empty()
            && front
                .get(i + 1)
                .is_some_and(|n| n.starts_with([' ', '\t']) && !n.trim().is_empty());
        !continued && matches!(v.trim(), "" | "\"\"" | "''" | "~" | "null")
    })
}

/// A credential in an entry file as committed, for `helix check`: where it is (`"front
/// matter"` or `"body"`) and what it looks like. Unlike [`validate_new_entry`] this scans the
/// whole file, parseable or not: a secret in a broken file is still in git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSecret {
    pub field: &'static str,
    pub finding: SecretFinding,
}

/// Every credential in an entry file's text, with line numbers of the file.
pub fn find_secrets_in_entry_file(text: &str) -> Vec<FileSecret> {
    let front = crate::entry::front_matter_lines(text);
    find_secrets(text)
        .map(|finding| FileSecret {
            field: if finding.line <= front {
                "front matter"
            } else {
                "body"
            },
            finding,
        })
        .collect()
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
            force: false,
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
    fn a_secret_is_refused_with_field_line_provider_and_kind_never_the_value() {
        let glpat = fake("glpat-", "Qm4xZ7pL2vR9tKs8Wd3N");
        let cases = [
            (
                fake("token ", &glpat),
                "GitLab",
                "personal access token",
                "a GitLab personal access token",
            ),
            (
                fake("aws_access_key_id = AKIA", "Q3ZL7MHB5TW2RX6N"),
                "AWS",
                "access key id",
                "an AWS access key id",
            ),
            (
                fake("DB_PASSWORD=", "hT9x!kQ2vL7pZ4mW"),
                "",
                "hard-coded password",
                "a hard-coded password",
            ),
            (
                fake("postgres://app:", "Vd8kq2Lx@db.internal/app"),
                "PostgreSQL",
                "connection string with a password",
                "a PostgreSQL connection string with a password",
            ),
        ];
        for (secret, provider, kind, what) in cases {
            let text = format!("Some notes.\n\nMore notes here.\n{secret}\n");
            let e = err(NewEntry {
                body: text,
                ..ok_entry()
            });
            assert_eq!(
                e,
                ValidationError::Secret {
                    field: "body".into(),
                    line: 4,
                    provider,
                    kind
                }
            );
            assert_eq!(e.code(), "secret_detected");
            let msg = e.to_string();
            assert_eq!(
                msg,
                format!(
                    "body line 4 contains what looks like {what}; remove it, or reference where the secret lives instead (a vault path or an environment variable name)"
                )
            );
            // The message never echoes the secret.
            let tail = &secret[secret.len() - 10..];
            assert!(!msg.contains(tail), "{msg} echoes {tail}");
        }
        let e = err(NewEntry {
            tags: vec!["ok".into(), glpat.clone()],
            ..ok_entry()
        });
        assert_eq!((e.field(), e.code()), ("tags[1]", "secret_detected"));
        let e = err(NewEntry {
            title: fake("Key ", &glpat),
            ..ok_entry()
        });
        assert_eq!(e.field(), "title");
        let e = err(NewEntry {
            sources: vec![fake("https://ci:", "Vd8kq2Lx9@ci.internal/job")],
            ..ok_entry()
        });
        assert_eq!(e.field(), "sources[0]");
    }

    #[test]
    fn file_scan_tells_front_matter_from_body() {
        let key = fake("glpat-", "Qm4xZ7pL2vR9tKs8Wd3N");
        let text = format!("---\ntitle: T\ndeploy_token: {key}\n---\n\nUse {key} here.\n");
        let found = find_secrets_in_entry_file(&text);
        let fields: Vec<_> = found.iter().map(|f| (f.field, f.finding.line)).collect();
        assert_eq!(fields, [("front matter", 3), ("body", 6)]);
        assert_eq!(found[0].finding.provider, "GitLab");
        let no_front = format!("# T\n\n{key}\n");
        assert_eq!(find_secrets_in_entry_file(&no_front)[0].field, "body");
        let unclosed = format!("---\ntitle: T\n{key}\n");
        assert_eq!(
            find_secrets_in_entry_file(&unclosed)[0].field,
            "front matter"
        );
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
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
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
    fn an_edit_with_an_empty_title_is_refused() {
        for front in ["title:", "title: \"\"", "title: ''", "title:   "] {
            let text = format!("---\n{front}\ntopic: ops\n---\n\n# Heading\n\nBody.\n");
            let e = validate_edit("ops/x.md", &text).unwrap_err();
            assert!(e.to_string().contains("`title:` is empty"), "{front}: {e}");
        }
        // A title on the next line, or no `title:` at all (the heading is the title), is fine.
        let next = "---\ntitle:\n  Deploys need a lock\n---\n\nBody.\n";
        assert_eq!(
            validate_edit("ops/x.md", next).unwrap().title,
            "Deploys need a lock"
        );
        let none = "---\ntopic: ops\n---\n\n# Heading\n\nBody.\n";
        assert_eq!(validate_edit("ops/x.md", none).unwrap().title, "Heading");
    }
}
