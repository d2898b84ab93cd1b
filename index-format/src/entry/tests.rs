//! Unit tests of entry parsing and rendering: front matter, defaults, names, dates.

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
        offset: 0,
        author: "Ada".into(),
    };
    let e = parse_entry("a/b.md", b"text\n", Some(&git)).expect("parses");
    assert_eq!(
        (e.date, e.author.as_deref()),
        (Some(1_700_000_000), Some("Ada"))
    );
    // 2024-03-05 02:30 UTC is still March 4th in New York (-05:00), as `git log` shows it.
    let ny = GitMeta {
        time: 1_709_605_800,
        offset: -5 * 3600,
        author: "Ada".into(),
    };
    let e = parse_entry("a/b.md", b"text\n", Some(&ny)).expect("parses");
    assert_eq!(e.date.map(format_day).as_deref(), Some("2024-03-04"));
    let tokyo = GitMeta {
        offset: 9 * 3600,
        time: 1_709_650_800, // 2024-03-05 15:00 UTC: March 6th, 00:00 in Tokyo
        ..ny
    };
    let e = parse_entry("a/b.md", b"text\n", Some(&tokyo)).expect("parses");
    assert_eq!(e.date.map(format_day).as_deref(), Some("2024-03-06"));
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

/// A skill file: `name` is what it is called, not its first section heading or "SKILL".
#[test]
fn front_matter_name_comes_before_headings_and_the_stem() {
    let skill = "---\nname: Devils Advocate\ndescription: Argue the other side of a design\n---\n\n## Workflow\n\nStep one.\n";
    let e = parse("agents/SKILL.md", skill);
    assert_eq!(e.title, "Devils Advocate");
    // `name` stays in the extra keys, where it was.
    assert_eq!(e.extra["name"], "Devils Advocate");
    // A title still wins; an empty or non-text name does not count.
    let both = "---\ntitle: The Title\nname: the-name\n---\n# Heading\n";
    assert_eq!(parse("t/x.md", both).title, "The Title");
    assert_eq!(
        parse("t/x.md", "---\nname: ''\n---\n# Heading\n").title,
        "Heading"
    );
    assert_eq!(
        parse("t/x.md", "---\nname: [a, b]\n---\n# Heading\n").title,
        "Heading"
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
    // 10:00 on March 5th where it was written (+02:00), whatever the zone.
    assert_eq!(e.date, Some(1_709_632_800));
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
    assert_eq!(e.date, Some(1_447_169_670));
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
        // The zone is checked, not applied: the wall-clock time (and day) stays.
        ("2024-03-05 10:00:00 +0100", 1_709_632_800),
        ("2024-03-05T10:00:00+02:00", 1_709_632_800),
        ("2024-03-05T10:00:00.123-00:30", 1_709_632_800),
        ("2024-03-05T23:30:00-05:00", 1_709_681_400),
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
        "2024-03-05T10:00:00+25:00",
        "2024-03-05T10:00:00 PST",
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
fn review_after_is_a_checked_day_kept_with_the_other_keys() {
    let e = parse(
        "t/x.md",
        "---\ntitle: x\nReview_After: 2024-06-01T18:30:00+02:00\n---\nbody\n",
    );
    assert_eq!(e.extra[REVIEW_AFTER], json!("2024-06-01"));
    assert_eq!(parse("t/x.md", &render_entry(&e)), e);
    let d = diag("t/x.md", b"---\ntitle: x\nreview_after: soon\n---\nbody\n");
    assert_eq!(d.line, 3);
    assert!(d.reason.contains("review_after \"soon\""), "{}", d.reason);
    let d = diag("t/x.md", b"---\nreview_after: [2024-01-01]\n---\nbody\n");
    assert!(d.reason.contains("single value"), "{}", d.reason);
    let json = serde_json::to_string(&e.extra).unwrap();
    assert!(!review_due(&json, "2024-06-01"));
    assert!(review_due(&json, "2024-06-02"));
    assert!(!review_due("", "2999-01-01"));
    assert!(!review_due(r#"{"review_after":"20"}"#, "2999-01-01"));
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
    let e = parse_entry("t/x.md", b"\xEF\xBB\xBF# Heading\r\n\r\ntext\r\n", None).expect("parses");
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

/// A flow sequence over several lines, closed at the parent key's
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
            blob: String::new(),
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

/// xorshift64*, deterministic and dependency-free (the YAML tests use it too).
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/examples/knowledge");
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

#[test]
fn files_at_a_folder_root_take_its_name_as_topic_unless_front_matter_says() {
    let adr = Root::of_subdir(Some("docs/adr"));
    let e = adr
        .parse(
            "0001-use-postgres.md",
            b"# Use Postgres\n\nWe chose it.\n",
            None,
        )
        .expect("parses");
    assert_eq!(
        (e.id.as_str(), e.topic.as_str()),
        ("0001-use-postgres.md", "adr")
    );
    let e = adr
        .parse("0002-x.md", b"---\ntopic: storage\n---\nbody\n", None)
        .expect("parses");
    assert_eq!(e.topic, "storage");
    // Agent files of a whole repository get their table's topic, and render keeps it.
    let e = parse(".github/copilot-instructions.md", "Use tabs.\n");
    assert_eq!(e.topic, "copilot");
    assert_eq!(parse("AGENTS.md", "# Agents\nRun make.\n").topic, "agents");
    let text = render_entry(&e);
    assert!(!text.contains("topic:"), "{text}");
    let e = adr.parse("0003-y.md", b"body\n", None).expect("parses");
    let back = parse_entry(&e.id, render_entry(&e).as_bytes(), None).expect("round trip");
    assert_eq!(back, e);
}

#[test]
fn apply_to_and_globs_are_glob_sources() {
    let e = parse(
        ".github/instructions/ci.instructions.md",
        "---\napplyTo: '.github/workflows/*.yml,**/*.{ts,tsx}, /scripts/*.sh'\n---\nPin actions by SHA.\n",
    );
    assert_eq!(
        e.sources,
        [".github/workflows/*.yml", "**/*.{ts,tsx}", "scripts/*.sh"]
    );
    assert!(e.extra.is_empty(), "{:?}", e.extra);
    let e = parse(
        ".cursor/rules/db.mdc",
        "---\ndescription: Database rules\nglobs: [src/db/**/*.rs, '**']\nalwaysApply: false\n---\nUse sqlx.\n",
    );
    assert_eq!(
        e.sources,
        ["src/db/**/*.rs"],
        "`**` matches everything: dropped"
    );
    assert_eq!(e.extra["alwaysApply"], json!(false));
    let e = parse(
        "t/x.md",
        "---\napplyTo: '**'\nsources: src/lib.rs\n---\nx\n",
    );
    assert_eq!(e.sources, ["src/lib.rs"]);
}
