//! `helix hook <event>` through the real binary: golden stdin → stdout per hook on a fixture
//! index compiled by `helix build`, and a table of hostile inputs and broken caches.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{Client, helix};

/// Hook names, as `helix hook <name>`.
const EVENTS: &[&str] = &[
    "session-start",
    "prompt",
    "ambient",
    "post-build",
    "error",
    "pre-compact",
    "stop",
    "subagent-start",
    "approve-mcp",
];

const ENTRIES: &[(&str, &str)] = &[
    (
        "build/linker-openssl.md",
        "---\ntitle: Linker cannot find -lssl on fresh machines\ntags: [linker, openssl]\n\
         sources: [build.rs]\ndate: 2025-03-04\nauthor: Ada\n---\n\n\
         `cargo build` fails with `cannot find -lssl` when libssl-dev is missing.\n\
         Install libssl-dev (Debian) or openssl-devel (Fedora); the vendored feature is off on purpose.\n",
    ),
    (
        "db/pool-exhaustion.md",
        "---\ntitle: Connection pool exhausted in integration tests\ntags: [postgres]\n\
         sources: [src/db/pool.rs]\ndate: 2025-06-10\n---\n\n\
         Integration tests hang when max_connections is below the test thread count.\n\
         Set DATABASE_MAX_CONNECTIONS=16 in CI.\n",
    ),
    (
        "db/migration-order.md",
        "---\ntitle: Migrations run in file name order\nsources: [src/db/migrate.rs]\ndate: 2024-11-02\n---\n\n\
         Name migrations with a UTC timestamp prefix; two branches adding 0042 collide.\n",
    ),
    (
        "db/retry-policy.md",
        "---\ntitle: Never retry inside a transaction\ndate: 2024-08-12\n---\n\n\
         Callers of acquire_pooled_conn must not retry inside an open transaction: \
         the pool hands back the poisoned connection.\n",
    ),
    (
        "ci/arm-runner-timeouts.md",
        "# CI times out on the arm runner\n\nThe arm runner is four times slower; \
         raise the job timeout, do not retry.\n",
    ),
];

/// A code repository with `.helix.toml` (local mode, project `kb`) and isolated XDG homes.
pub(crate) struct Fixture {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
}

impl Fixture {
    /// No `.helix.toml` at all.
    pub(crate) fn bare() -> Fixture {
        let Client { tmp, root, home } = Client::new();
        Fixture {
            _tmp: tmp,
            root,
            home,
        }
    }

    /// Configured, entries written, but nothing compiled into the cache yet.
    pub(crate) fn uncompiled() -> Fixture {
        let f = Fixture::bare();
        f.write(".helix.toml", "local = \"knowledge\"\nproject = \"kb\"\n");
        for (path, text) in ENTRIES {
            f.write(&format!("knowledge/{path}"), text);
        }
        // The code the entries are about: a source missing here would be marked as such.
        for src in ["build.rs", "src/db/pool.rs", "src/db/migrate.rs"] {
            f.write(src, "// code\n");
        }
        f
    }

    /// The fixture entries compiled into the local cache, as `helix sync` would.
    pub(crate) fn new() -> Fixture {
        let f = Fixture::uncompiled();
        f.compile();
        f
    }

    pub(crate) fn compile(&self) {
        let out = self
            .command()
            .args(["build", "knowledge", "--no-git", "--project", "kb", "-o"])
            .arg(self.cache_file())
            .output()
            .expect("run helix build");
        assert!(
            out.status.success(),
            "helix build failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub(crate) fn cache_file(&self) -> PathBuf {
        crate::common::first_cache_dir(self.command()).join("index.hix")
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    /// Writes `rel` under the fixture's HOME.
    pub(crate) fn write_home(&self, rel: &str, text: &str) {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    pub(crate) fn command(&self) -> Command {
        let mut c = Command::new(helix());
        // Duplicate-call claims go to `$XDG_RUNTIME_DIR` (in memory on a real machine).
        helix_test_support::isolate(c.current_dir(&self.root), &self.home)
            // No background sync unless a test asks for one.
            .env("HELIX_SYNC_MAX_AGE", "0");
        c
    }

    /// Runs `helix hook <event>` with `stdin`; asserts exit 0 and returns stdout.
    pub(crate) fn hook_with(&self, event: &str, stdin: &[u8], env: &[(&str, &str)]) -> String {
        let mut cmd = self.command();
        cmd.args(["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn helix hook");
        let mut pipe = child.stdin.take().expect("stdin piped");
        let data = stdin.to_vec();
        // The hook stops reading oversized input: a broken pipe here is expected.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
        let out = child.wait_with_output().expect("wait helix hook");
        writer.join().expect("writer thread");
        assert_eq!(
            out.status.code(),
            Some(0),
            "helix hook {event} must exit 0; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    pub(crate) fn hook(&self, event: &str, input: &Value) -> String {
        self.hook_with(event, input.to_string().as_bytes(), &[])
    }

    /// A hook input with the common fields for this fixture.
    pub(crate) fn input(&self, event_name: &str, extra: Value) -> Value {
        let mut v = json!({
            "session_id": "sess-1",
            "transcript_path": self.home.join("t.jsonl"),
            "cwd": self.root,
            "hook_event_name": event_name,
            "permission_mode": "default",
        });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    }
}

/// Asserts the `additionalContext` shape for `event` and returns the context text.
pub(crate) fn context(stdout: &str, event: &str) -> String {
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "one JSON line: {stdout:?}"
    );
    let v: Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("invalid JSON {e}: {stdout}"));
    let top: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(top, ["hookSpecificOutput"], "{stdout}");
    let hso = &v["hookSpecificOutput"];
    assert_eq!(hso["hookEventName"], event, "{stdout}");
    assert_eq!(hso.as_object().expect("object").len(), 2, "{stdout}");
    let text = hso["additionalContext"]
        .as_str()
        .expect("additionalContext is a string")
        .to_string();
    assert!(
        text.chars().count() <= 2000,
        "context over the cap: {} chars",
        text.chars().count()
    );
    text
}

/// Asserts stdout is empty or valid JSON of a documented shape.
fn empty_or_valid(stdout: &str, what: &str) {
    if stdout.is_empty() {
        return;
    }
    let v: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("{what}: invalid JSON {e}: {stdout}"));
    let ok = v
        .get("hookSpecificOutput")
        .is_some_and(|h| h["hookEventName"].is_string())
        || v.get("decision").is_some_and(|d| d == "block")
        || v == json!({});
    assert!(ok, "{what}: undocumented output shape: {stdout}");
    assert!(stdout.len() < 10_000, "{what}: output too long");
}

#[test]
fn session_start_gives_counts_top_topics_and_how_to_search() {
    let f = Fixture::new();
    let out = f.hook(
        "session-start",
        &f.input("SessionStart", json!({"source": "startup"})),
    );
    let text = context(&out, "SessionStart");
    assert!(text.contains("5 entries in 3 topics (kb)"), "{text}");
    assert!(
        text.contains("Top topics: db (3), build (1), ci (1)"),
        "{text}"
    );
    assert!(text.contains("helix search"), "{text}");
    assert!(text.contains("helix read <project:id>"), "{text}");
}

#[test]
fn session_start_after_compaction_lists_every_topic_again() {
    let f = Fixture::new();
    let out = f.hook(
        "session-start",
        &f.input("SessionStart", json!({"source": "compact"})),
    );
    let text = context(&out, "SessionStart");
    assert!(
        text.contains("All topics: db (3), build (1), ci (1)"),
        "{text}"
    );
}

#[test]
fn session_start_with_stale_cache_answers_at_once_and_syncs_in_the_background() {
    let f = Fixture::new();
    // An entry added after the cache was built, and a cache two hours old.
    f.write(
        "knowledge/ci/cache-keys.md",
        "---\ntitle: Cache keys include the toolchain\ndate: 2025-07-01\n---\n\nBump the key on toolchain upgrades.\n",
    );
    let touched = Command::new("touch")
        .args(["-d", "2 hours ago"])
        .arg(f.cache_file())
        .status()
        .expect("run touch");
    assert!(touched.success());
    let input = f.input("SessionStart", json!({"source": "startup"}));
    let out = f.hook_with(
        "session-start",
        input.to_string().as_bytes(),
        &[("HELIX_SYNC_MAX_AGE", "3600")],
    );
    // Answered from the old cache.
    let text = context(&out, "SessionStart");
    assert!(text.contains("5 entries"), "{text}");
    let stamps = f.home.join(".cache/helix/hook-sync");
    assert_eq!(
        std::fs::read_dir(&stamps).expect("stamp dir").count(),
        1,
        "one rate-limit stamp"
    );
    // The detached `helix sync --quiet` recompiles the cache; wait for it to land.
    let meta = f.cache_file().with_file_name("meta.json");
    let mut waited = 0;
    while !meta.exists() && waited < 600 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    assert!(
        meta.exists(),
        "the background sync wrote {}",
        meta.display()
    );
    let mut text = String::new();
    for i in 0..100 {
        // A later session (the same input again would be a duplicate of the first).
        let mut input = input.clone();
        input["session_id"] = json!(format!("later-{i}"));
        let out = f.hook_with(
            "session-start",
            input.to_string().as_bytes(),
            &[("HELIX_SYNC_MAX_AGE", "3600")],
        );
        text = context(&out, "SessionStart");
        if text.contains("6 entries") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(text.contains("6 entries"), "{text}");
}

#[test]
fn session_start_without_any_cache_and_no_sync_prints_nothing() {
    let f = Fixture::uncompiled();
    let out = f.hook(
        "session-start",
        &f.input("SessionStart", json!({"source": "startup"})),
    );
    assert_eq!(out, "");
}

#[test]
fn prompt_returns_matching_entries_with_project_and_id() {
    let f = Fixture::new();
    let out = f.hook(
        "prompt",
        &f.input("UserPromptSubmit", json!({"prompt": "Can you please check why the integration tests hang on the connection pool?"})),
    );
    let text = context(&out, "UserPromptSubmit");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("helix team knowledge that may apply"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("- kb:db/pool-exhaustion.md · db · 2025-06-10 · Connection pool exhausted in integration tests — "),
        "{text}"
    );
    assert!(lines.len() <= 4, "at most 3 hits: {text}");
}

#[test]
fn prompt_skips_short_long_meta_only_and_unmatched_prompts() {
    let f = Fixture::new();
    for prompt in [
        "hi there".to_string(),
        "please can you help me with this".to_string(),
        format!("connection pool {}", "exhausted ".repeat(60)),
        "quaternion spline interpolation details".to_string(),
    ] {
        let out = f.hook(
            "prompt",
            &f.input("UserPromptSubmit", json!({ "prompt": prompt })),
        );
        assert_eq!(out, "", "prompt {prompt:?}");
    }
}

#[test]
fn ambient_read_of_a_source_file_names_its_entries_and_coupled_topics() {
    let f = Fixture::new();
    let file = f.root.join("src/db/pool.rs");
    let out = f.hook(
        "ambient",
        &f.input(
            "PreToolUse",
            json!({"tool_name": "Read", "tool_input": {"file_path": file}}),
        ),
    );
    let text = context(&out, "PreToolUse");
    assert!(
        text.starts_with("helix team knowledge for src/db/pool.rs"),
        "{text}"
    );
    let about = text.find("About this file:").expect("about section");
    let entry = text
        .find("- kb:db/pool-exhaustion.md · db · 2025-06-10 · Connection pool exhausted")
        .expect("source entry");
    assert!(about < entry, "{text}");
    assert!(
        text.contains("Topics sharing sources with this file: db ("),
        "{text}"
    );
    assert_eq!(
        text.matches("kb:db/pool-exhaustion.md").count(),
        1,
        "deduplicated: {text}"
    );
}

#[test]
fn ambient_relative_path_and_file_name_match() {
    let f = Fixture::new();
    // A relative path resolves against the stdin cwd; `build.rs` is a source of an entry.
    let out = f.hook("ambient", &f.input("PreToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": "build.rs", "content": "fn main() {}"}})));
    let text = context(&out, "PreToolUse");
    assert!(text.contains("kb:build/linker-openssl.md"), "{text}");
}

/// Copilot instruction files say which files they are for (`applyTo`); reading one of
/// those files brings the instruction, and a file the glob does not match does not.
#[test]
fn ambient_read_of_a_file_an_instruction_applies_to_names_it() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/.github/instructions/workflows.instructions.md",
        "---\napplyTo: '.github/workflows/*.yml'\n---\n# Workflows\n\nPin every action to a full commit SHA.\n",
    );
    f.compile();
    let read = |path: &str| {
        f.hook(
            "ambient",
            &f.input(
                "PreToolUse",
                json!({"tool_name": "Read", "tool_input": {"file_path": f.root.join(path)}}),
            ),
        )
    };
    let text = context(&read(".github/workflows/release.yml"), "PreToolUse");
    let about = text.find("About this file:").expect("about section");
    let entry = text
        .find("kb:.github/instructions/workflows.instructions.md · copilot")
        .expect("the instruction");
    assert!(about < entry, "{text}");
    let other = read(".github/dependabot.yml");
    assert!(!other.contains("workflows.instructions.md"), "{other}");
}

#[test]
fn ambient_edit_that_removes_a_symbol_warns_about_entries_mentioning_it() {
    let f = Fixture::new();
    let input = f.input(
        "PreToolUse",
        json!({"tool_name": "MultiEdit", "tool_input": {
            "file_path": f.root.join("src/net/client.rs"),
            "edits": [
                {"old_string": "let c = acquire_pooled_conn(&pool)?;", "new_string": "let c = pool.get()?;"},
                {"old_string": "// keep", "new_string": "// kept"}
            ]}}),
    );
    let text = context(&f.hook("ambient", &input), "PreToolUse");
    assert!(
        text.contains("Impact warning: this edit removes `acquire_pooled_conn`"),
        "{text}"
    );
    assert!(
        text.contains("kb:db/retry-policy.md · db · 2024-08-12 · Never retry inside a transaction"),
        "{text}"
    );
}

#[test]
fn ambient_on_an_unrelated_file_prints_nothing() {
    let f = Fixture::new();
    for (tool, input) in [
        (
            "Read",
            json!({"file_path": f.root.join("docs/quaternion.txt")}),
        ),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("Read", json!({})),
        ("Read", json!({"file_path": 42})),
    ] {
        let out = f.hook(
            "ambient",
            &f.input(
                "PreToolUse",
                json!({"tool_name": tool, "tool_input": input}),
            ),
        );
        assert_eq!(out, "", "{tool} {input}");
    }
}

#[test]
fn ambient_grep_pattern_searches_its_words() {
    let f = Fixture::new();
    let input = f.input(
        "PreToolUse",
        json!({"tool_name": "Grep", "tool_input": {"pattern": "migrations?"}}),
    );
    let text = context(&f.hook("ambient", &input), "PreToolUse");
    assert!(text.contains("kb:db/migration-order.md"), "{text}");
}

#[test]
fn ambient_output_stays_under_the_cap_with_many_matching_entries() {
    let f = Fixture::uncompiled();
    for i in 0..60 {
        f.write(
            &format!("knowledge/db/pool-note-{i}.md"),
            &format!(
                "---\ntitle: Pool note {i} with a deliberately long title about pools and connections\nsources: [src/db/pool.rs]\n---\n\n{}\n",
                "The pool is fragile in many ways that matter. ".repeat(20)
            ),
        );
    }
    f.compile();
    let input = f.input("PreToolUse", json!({"tool_name": "Edit", "tool_input": {"file_path": f.root.join("src/db/pool.rs"), "old_string": "fragile_pool_setup()", "new_string": ""}}));
    let text = context(&f.hook("ambient", &input), "PreToolUse");
    assert!(text.chars().count() > 500, "{text}");
}

#[test]
fn post_build_nudges_for_build_commands_only_and_once_until_a_new_failure() {
    let f = Fixture::new();
    // Each call is a new tool use (a repeated identical input would be a duplicate).
    let calls = std::cell::Cell::new(0);
    let bash = |cmd: &str, session: &str| {
        calls.set(calls.get() + 1);
        let mut v = f.input("PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": cmd}, "tool_response": {"stdout": "ok"}, "tool_use_id": format!("t{}", calls.get())}));
        v["session_id"] = json!(session);
        f.hook("post-build", &v)
    };
    for cmd in ["ls -la", "git status", "npm install", "echo cargo build"] {
        assert_eq!(bash(cmd, "a"), "", "{cmd}");
    }
    let text = context(
        &bash("cd client && cargo build --release", "a"),
        "PostToolUse",
    );
    assert!(text.contains("store the root cause"), "{text}");
    assert!(text.contains("helix store"), "{text}");
    // Once per session ...
    assert_eq!(bash("make -j4", "a"), "");
    // ... and again after a new failure.
    let fail = f.input("PostToolUseFailure", json!({"session_id": "a", "tool_name": "Bash", "tool_input": {"command": "make"}, "error": "Exit code 2\nmake: *** [Makefile:12: all] Error 2 undefined reference to frobnicate"}));
    f.hook("error", &fail);
    context(&bash("make -j4", "a"), "PostToolUse");
    for (i, cmd) in [
        "npm run build",
        "go build ./...",
        "gradle assemble",
        "dotnet build",
        "xcodebuild -scheme App",
        "swift build",
        "mvn package",
        "clang -c a.c",
    ]
    .iter()
    .enumerate()
    {
        context(&bash(cmd, &format!("s-{i}")), "PostToolUse");
    }
}

#[test]
fn error_hook_searches_the_error_text() {
    let f = Fixture::new();
    let input = f.input(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"}, "tool_use_id": "t1",
               "error": "Exit code 101\n   Compiling app v0.1.0 (/home/x/app)\nerror: linking with `cc` failed: exit status: 1\n  = note: /usr/bin/ld: cannot find -lssl: No such file or directory\n",
               "is_interrupt": false}),
    );
    let text = context(&f.hook("error", &input), "PostToolUseFailure");
    assert!(
        text.starts_with("helix: the team has knowledge matching this error"),
        "{text}"
    );
    assert!(
        text.contains(
            "- kb:build/linker-openssl.md · build · 2025-03-04 · Linker cannot find -lssl"
        ),
        "{text}"
    );
    // Too short, interrupted, or nothing searchable: nothing.
    for extra in [
        json!({"error": "Exit code 1"}),
        json!({"error": "Exit code 1\nno"}),
        json!({"error": "Exit code 130\ncannot find -lssl linking failed", "is_interrupt": true}),
        json!({"error": ["not", "a", "string"]}),
    ] {
        let mut v = input.clone();
        v.as_object_mut().expect("object").remove("is_interrupt");
        v.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        assert_eq!(f.hook("error", &v), "", "{extra}");
    }
}

#[test]
fn stop_reminds_once_after_an_unrecorded_failure() {
    let f = Fixture::new();
    // Each stop ends a new turn (a repeated identical input would be a duplicate).
    let turns = std::cell::Cell::new(0);
    let stop = |active: bool| {
        turns.set(turns.get() + 1);
        f.hook(
            "stop",
            &f.input(
                "Stop",
                json!({"stop_hook_active": active, "last_assistant_message": "done", "prompt_id": format!("p{}", turns.get())}),
            ),
        )
    };
    // No failure yet: nothing.
    assert_eq!(stop(false), "");
    let fail = f.input("PostToolUseFailure", json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101\nthread 'main' panicked at pool exhausted: timed out waiting for connection"}));
    f.hook("error", &fail);
    // Never while a stop hook is already active.
    assert_eq!(stop(true), "");
    let out = stop(false);
    let v: Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["decision"], "block");
    assert!(
        v["reason"]
            .as_str()
            .expect("reason")
            .contains("helix store"),
        "{out}"
    );
    assert_eq!(v.as_object().expect("object").len(), 2, "{out}");
    // At most once per session.
    assert_eq!(stop(false), "");
    // The state lives under the cache directory.
    assert!(f.home.join(".cache/helix/sessions/sess-1").is_file());
}

#[test]
fn stop_stays_quiet_when_the_session_stored_its_finding() {
    let f = Fixture::new();
    let fail = f.input("PostToolUseFailure", json!({"tool_name": "Bash", "tool_input": {"command": "make"}, "error": "Exit code 2\nundefined reference to `frobnicate_widget` in libwidget"}));
    f.hook("error", &fail);
    let store = f.input("PostToolUse", json!({"tool_name": "mcp__helix__store", "tool_input": {"topic": "build", "title": "x", "body": "y"}, "tool_response": {}}));
    assert_eq!(f.hook("post-build", &store), "");
    assert_eq!(
        f.hook("stop", &f.input("Stop", json!({"stop_hook_active": false}))),
        ""
    );
    // A failure in another session does not leak into this one either.
    let mut other = f.input("Stop", json!({"stop_hook_active": false}));
    other["session_id"] = json!("sess-2");
    assert_eq!(f.hook("stop", &other), "");
}

#[test]
fn pre_compact_prints_nothing_and_records_the_compaction() {
    let f = Fixture::new();
    let out = f.hook(
        "pre-compact",
        &f.input(
            "PreCompact",
            json!({"trigger": "auto", "custom_instructions": ""}),
        ),
    );
    assert_eq!(out, "");
    let state = std::fs::read_to_string(f.home.join(".cache/helix/sessions/sess-1"))
        .expect("session state");
    assert!(state.contains("compactions=1"), "{state}");
}

#[test]
fn subagent_start_lists_topics_and_how_to_search() {
    let f = Fixture::new();
    let out = f.hook(
        "subagent-start",
        &f.input(
            "SubagentStart",
            json!({"agent_id": "a1", "agent_type": "Explore"}),
        ),
    );
    let text = context(&out, "SubagentStart");
    assert!(text.contains("Topics: db (3), build (1), ci (1)"), "{text}");
    assert!(text.contains("helix search"), "{text}");
}

#[test]
fn approve_mcp_allows_helix_tools_only() {
    let f = Fixture::new();
    let out = f.hook(
        "approve-mcp",
        &f.input(
            "PermissionRequest",
            json!({"tool_name": "mcp__helix__search", "tool_input": {"query": "x"}}),
        ),
    );
    let v: Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(
        v,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
    );
    for tool in [
        json!("mcp__other__search"),
        json!("Bash"),
        json!("mcp__helix"),
        json!(7),
        Value::Null,
    ] {
        let out = f.hook(
            "approve-mcp",
            &f.input("PermissionRequest", json!({ "tool_name": tool })),
        );
        assert_eq!(out, "", "{tool}");
    }
}

/// Inputs no hook may fail on.
fn hostile_inputs(f: &Fixture) -> Vec<(&'static str, Vec<u8>)> {
    let valid = f
        .input(
            "UserPromptSubmit",
            json!({"prompt": "why do integration tests hang on the connection pool"}),
        )
        .to_string();
    let mut big = br#"{"prompt": ""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 10 << 20));
    big.extend(br#""}"#);
    let mut deep = "[".repeat(100_000);
    deep.push_str(&"]".repeat(100_000));
    vec![
        ("empty", Vec::new()),
        ("whitespace", b"  \n".to_vec()),
        ("truncated", valid.as_bytes()[..valid.len() / 2].to_vec()),
        ("not JSON", b"hello world".to_vec()),
        ("JSON array", b"[1, 2, 3]".to_vec()),
        ("JSON string", b"\"prompt\"".to_vec()),
        ("null", b"null".to_vec()),
        ("deep nesting", deep.into_bytes()),
        (
            "wrong types",
            json!({"session_id": 5, "cwd": ["x"], "prompt": {"a": 1}, "tool_name": 3, "tool_input": "str",
                   "error": false, "source": 1, "stop_hook_active": "yes", "hook_event_name": 9})
            .to_string()
            .into_bytes(),
        ),
        ("nulls", json!({"session_id": null, "cwd": null, "prompt": null, "tool_input": null}).to_string().into_bytes()),
        ("hostile session id", json!({"session_id": "../../etc/passwd", "cwd": f.root, "stop_hook_active": false}).to_string().into_bytes()),
        ("cwd elsewhere", json!({"cwd": "/nonexistent/dir", "prompt": "connection pool integration tests"}).to_string().into_bytes()),
        ("10 MB", big),
        ("binary", (0..=255u8).cycle().take(64 * 1024).collect()),
        ("invalid UTF-8 in JSON", b"{\"prompt\": \"\xff\xfe pool connection tests\"}".to_vec()),
    ]
}

#[test]
fn hostile_inputs_exit_zero_with_empty_or_valid_output() {
    let f = Fixture::new();
    for (name, bytes) in hostile_inputs(&f) {
        for event in EVENTS.iter().chain(&["unknown-event"]) {
            let out = f.hook_with(event, &bytes, &[]);
            empty_or_valid(&out, &format!("{event} with {name}"));
            if matches!(
                name,
                "empty"
                    | "not JSON"
                    | "truncated"
                    | "10 MB"
                    | "binary"
                    | "JSON array"
                    | "deep nesting"
            ) {
                assert_eq!(out, "", "{event} with {name}");
            }
        }
    }
}

/// A prompt, an ambient Read and a session start that would all answer with a good cache.
fn probes(f: &Fixture) -> Vec<(&'static str, Value)> {
    vec![
        ("session-start", f.input("SessionStart", json!({"source": "startup"}))),
        ("prompt", f.input("UserPromptSubmit", json!({"prompt": "why do integration tests hang on the connection pool"}))),
        ("ambient", f.input("PreToolUse", json!({"tool_name": "Read", "tool_input": {"file_path": f.root.join("src/db/pool.rs")}}))),
        ("error", f.input("PostToolUseFailure", json!({"tool_name": "Bash", "error": "Exit code 1\nld: cannot find -lssl linking failed"}))),
        ("subagent-start", f.input("SubagentStart", json!({"agent_type": "Explore"}))),
        ("stop", f.input("Stop", json!({"stop_hook_active": false}))),
    ]
}

#[test]
fn broken_caches_give_no_output_and_exit_zero() {
    let f = Fixture::new();
    let good = std::fs::read(f.cache_file()).expect("cache");
    let mut corrupt = good.clone();
    for b in corrupt.iter_mut().skip(64).step_by(7) {
        *b ^= 0x5a;
    }
    let cases: Vec<(&str, Option<Vec<u8>>)> = vec![
        ("missing", None),
        ("empty", Some(Vec::new())),
        ("truncated", Some(good[..good.len() / 3].to_vec())),
        ("header only", Some(good[..16.min(good.len())].to_vec())),
        ("corrupt", Some(corrupt)),
        ("garbage", Some(b"not an index at all".repeat(100))),
    ];
    for (name, bytes) in cases {
        let _ = std::fs::remove_file(f.cache_file());
        if let Some(b) = &bytes {
            std::fs::write(f.cache_file(), b).expect("write cache");
        }
        for (event, input) in probes(&f) {
            let out = f.hook(event, &input);
            empty_or_valid(&out, &format!("{event} with a {name} cache"));
            // `stop` answers from session state alone (the `error` probe recorded a failure).
            if event != "stop"
                && matches!(
                    name,
                    "missing" | "empty" | "truncated" | "header only" | "garbage"
                )
            {
                assert_eq!(out, "", "{event} with a {name} cache");
            }
        }
    }
}

#[test]
fn unreadable_or_missing_configuration_gives_no_output() {
    let f = Fixture::new();
    type Setup = Box<dyn Fn(&Path)>;
    let setups: Vec<(&str, Setup)> = vec![
        (
            "invalid TOML",
            Box::new(|root: &Path| {
                std::fs::write(root.join(".helix.toml"), "local = [unterminated").expect("write")
            }),
        ),
        (
            "unknown keys",
            Box::new(|root: &Path| {
                std::fs::write(root.join(".helix.toml"), "colour = \"blue\"\n").expect("write")
            }),
        ),
        (
            "binary",
            Box::new(|root: &Path| {
                std::fs::write(root.join(".helix.toml"), [0xffu8, 0, 0xfe, 7]).expect("write")
            }),
        ),
        (
            "a directory",
            Box::new(|root: &Path| std::fs::create_dir(root.join(".helix.toml")).expect("mkdir")),
        ),
        ("no .helix.toml", Box::new(|_: &Path| {})),
    ];
    for (name, setup) in setups {
        let p = f.root.join(".helix.toml");
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_dir(&p);
        setup(&f.root);
        for (event, input) in probes(&f) {
            let out = f.hook(event, &input);
            assert_eq!(out, "", "{event} with config: {name}");
        }
        let out = f.hook(
            "post-build",
            &f.input(
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"}}),
            ),
        );
        assert_eq!(out, "", "post-build with config: {name}");
    }
}

#[test]
fn process_cwd_is_used_when_stdin_has_none() {
    let f = Fixture::new();
    let mut input = f.input(
        "UserPromptSubmit",
        json!({"prompt": "why do integration tests hang on the connection pool"}),
    );
    input.as_object_mut().expect("object").remove("cwd");
    let text = context(&f.hook("prompt", &input), "UserPromptSubmit");
    assert!(text.contains("kb:db/pool-exhaustion.md"), "{text}");
}

/// `helix` starts at a C `main` without std's start-up, so what that start-up gave is
/// checked here through the real binary: a hook with closed standard descriptors or a
/// reader that is gone still exits 0 and keeps its state file clean, a printing command
/// into a closed pipe does not panic, and exit statuses and output survive.
#[test]
fn entry_point_keeps_what_std_start_up_guaranteed() {
    let f = Fixture::new();
    let fail = f.input(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"},
               "error": "Exit code 101\nerror: linking with `cc` failed: cannot find -lssl: No such file or directory"}),
    );
    std::fs::write(f.home.join("fail.json"), fail.to_string()).expect("write input");
    // `sh -c SCRIPT` with the fixture's environment, `$0` the helix binary.
    let sh = |script: &str| {
        let base = f.command();
        let mut cmd = Command::new("sh");
        cmd.current_dir(&f.root);
        for (k, v) in base.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("INPUT", f.home.join("fail.json"))
            .args(["-c", script, helix()])
            .output()
            .expect("run sh")
    };
    // Hook with stdout and stderr closed: exit 0, and the session's state file holds
    // state, not the hook's JSON answer.
    let out = sh(r#""$0" hook error < "$INPUT" >&- 2>&-; echo "status $?""#);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "status 0",
        "{out:?}"
    );
    let state = std::fs::read_to_string(f.home.join(".cache/helix/sessions/sess-1"))
        .expect("session state written");
    assert!(state.contains("failures=1"), "{state}");
    assert!(!state.contains("hookSpecificOutput"), "{state}");
    // A reader that is already gone: the hook still exits 0, quietly.
    let out = sh(
        r#"exec 3>&1; s=$( { "$0" hook error < "$INPUT"; echo $? >&3; } | (exec 0<&-) ); echo "$s""#,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).is_empty(), "{out:?}");
    // A printing command into a closed pipe dies quietly like any Unix filter: no panic.
    let out = sh(r#""$0" topics | (exec 0<&-); echo done"#);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{out:?}"
    );
    // Errors exit 2 with a message; output without a final newline is not lost.
    let out = f
        .command()
        .args(["read", "kb:nosuch.md"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("helix:"),
        "{out:?}"
    );
    let out = f.command().args(["topics"]).output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("db"),
        "{out:?}"
    );
}

/// Whether the page at `offset` of `map` is in the page cache.
#[allow(unsafe_code)]
fn page_resident(map: &memmap2::Mmap, offset: usize) -> bool {
    let page = offset / 4096 * 4096;
    let mut v = [0u8; 1];
    // SAFETY: a page-aligned address inside the live mapping; mincore writes one byte.
    let rc = unsafe {
        libc::mincore(
            map.as_ptr().add(page) as *mut libc::c_void,
            4096.min(map.len() - page),
            v.as_mut_ptr(),
        )
    };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    v[0] & 1 == 1
}

/// After a reboot or memory pressure the artifact is on disk only, and the first prompt
/// hook would wait for it fault by fault. `session-start` therefore asks for the parts
/// searches read (dictionary, postings, document lengths) to be paged in, without waiting.
/// Here the prefetch runs on an evicted artifact, and those pages must arrive. (Through
/// the hook the effect cannot be told apart on a machine whose read-ahead window, up to
/// 8 MB, already pulls a small artifact in on the hook's first page fault.)
#[test]
#[allow(unsafe_code)]
fn prefetch_pages_in_what_searches_read() {
    // Under target/, not /tmp: a tmpfs cannot evict pages, and this test needs to.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let kb = tmp.path().join("knowledge");
    for i in 0..3000 {
        let dir = kb.join(format!("t{}", i % 7));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let words: Vec<String> = (0..40)
            .map(|w| format!("w{}", (i * 31 + w * 17) % 5000))
            .collect();
        std::fs::write(
            dir.join(format!("note-{i}.md")),
            format!("# Note {i}\n\n{}\n", words.join(" ")),
        )
        .expect("write entry");
    }
    let path = tmp.path().join("index.hix");
    let mut cmd = Command::new(helix());
    let out = helix_test_support::isolate(&mut cmd, &tmp.path().join("home"))
        .args(["build", "--no-git", "--project", "kb", "-o"])
        .arg(&path)
        .arg(&kb)
        .output()
        .expect("helix build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Opened (header read) before the eviction: reading it afterwards would page the
    // whole file back in through the read-ahead window.
    let index = helix_client::knowledge::open_index(&path)
        .expect("open")
        .expect("exists");
    let file = std::fs::File::open(&path).expect("open artifact");
    file.sync_all().expect("fsync");
    // SAFETY: a plain advice call on an open descriptor.
    let rc = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(rc, 0, "posix_fadvise");
    let map = index.backing();
    let pages: Vec<usize> = index
        .search_ranges()
        .iter()
        .flat_map(|r| (r.start..r.end).step_by(4096 * 7))
        .collect();
    assert!(pages.len() > 10, "too small to tell: {} pages", pages.len());
    let resident = || pages.iter().filter(|&&p| page_resident(map, p)).count();
    assert!(
        resident() < pages.len() / 2,
        "eviction failed: {} of {} pages still resident",
        resident(),
        pages.len()
    );

    helix_client::knowledge::prefetch_search_ranges(&index);
    let start = std::time::Instant::now();
    while resident() < pages.len() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "only {} of {} pages paged in",
            resident(),
            pages.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Resident now: a second prefetch finds nothing to ask for, and the hook still answers.
    helix_client::knowledge::prefetch_search_ranges(&index);
}

/// A session's state and duplicate-call claims go once the session has been idle long enough
/// (three days, one day), however many sessions there are; session start looks for them at
/// most once an hour.
#[test]
fn session_start_sweeps_state_and_claims_of_idle_sessions() {
    let f = Fixture::new();
    let start = f.input("SessionStart", json!({"source": "startup"}));
    context(&f.hook("session-start", &start), "SessionStart");
    let prompt = f.input(
        "UserPromptSubmit",
        json!({"prompt": "why do integration tests hang on the connection pool?"}),
    );
    context(&f.hook("prompt", &prompt), "UserPromptSubmit");
    let seen = f.home.join(".cache/helix/sessions/sess-1.seen");
    let claims = f.home.join("run/helix/claims/sess-1");
    assert!(seen.is_file() && claims.is_dir());
    let age = |p: &Path, secs: u64| {
        std::fs::File::open(p)
            .and_then(|f| {
                f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs))
            })
            .expect("age");
    };
    // Another session starts: it sweeps (nothing is old yet) and stamps both directories.
    let mut other = start.clone();
    other["session_id"] = json!("sess-2");
    context(&f.hook("session-start", &other), "SessionStart");
    assert!(seen.exists() && claims.exists());
    // sess-1 has been idle for four days.
    age(&seen, 4 * 86_400);
    age(&claims, 4 * 86_400);
    // Within the hour of the last sweep, a session start looks at nothing.
    other["session_id"] = json!("sess-3");
    context(&f.hook("session-start", &other), "SessionStart");
    assert!(seen.exists() && claims.exists());
    // An hour later the next one sweeps.
    for stamp in [
        f.home.join(".cache/helix/sessions/.swept"),
        f.home.join("run/helix/claims/.swept"),
    ] {
        age(&stamp, 3_601);
    }
    other["session_id"] = json!("sess-4");
    context(&f.hook("session-start", &other), "SessionStart");
    assert!(!seen.exists(), "the idle session's state is gone");
    assert!(!claims.exists(), "and its claims");
    assert!(
        f.home.join("run/helix/claims/sess-3").is_dir(),
        "the new session's stay"
    );
}

/// The same hook installed twice (user and project settings, or the
/// plugin next to `hooks install`) gets the same stdin twice at the same moment. The second
/// process prints nothing, so nothing reaches the model twice.
#[test]
fn a_second_call_with_the_same_input_in_a_session_is_silent() {
    let f = Fixture::new();
    let start = f.input("SessionStart", json!({"source": "startup"}));
    context(&f.hook("session-start", &start), "SessionStart");
    assert_eq!(
        f.hook("session-start", &start),
        "",
        "the duplicate is silent"
    );
    // Another session, or another input in this one, answers.
    let mut other = start.clone();
    other["session_id"] = json!("sess-2");
    context(&f.hook("session-start", &other), "SessionStart");
    let ask_about = |id: &str, text: &str| {
        f.input("UserPromptSubmit", json!({"prompt_id": id, "prompt": text}))
    };
    let prompt = |id: &str| ask_about(id, "why do integration tests hang on the connection pool?");
    context(&f.hook("prompt", &prompt("p1")), "UserPromptSubmit");
    assert_eq!(f.hook("prompt", &prompt("p1")), "");
    // Another prompt (another id) is not a duplicate. (It asks about another entry: the
    // session has already been shown the pool entry, which is not repeated.)
    context(
        &f.hook(
            "prompt",
            &ask_about("p2", "the linker cannot find -lssl on a fresh machine"),
        ),
        "UserPromptSubmit",
    );
    // Claims sit in the runtime directory (memory), per session.
    let claims = f.home.join("run/helix/claims/sess-1");
    assert!(
        std::fs::read_dir(&claims).expect("claims").count() >= 3,
        "{claims:?}"
    );
    // Without a session id there is nothing to key on: every call answers.
    let mut anon = prompt("p3");
    anon.as_object_mut().expect("object").remove("session_id");
    context(&f.hook("prompt", &anon), "UserPromptSubmit");
    context(&f.hook("prompt", &anon), "UserPromptSubmit");
    // An allow is idempotent: approve-mcp answers every time.
    let ask = f.input(
        "PermissionRequest",
        json!({"tool_name": "mcp__helix__search", "tool_input": {"query": "x"}}),
    );
    for _ in 0..2 {
        assert!(f.hook("approve-mcp", &ask).contains("allow"));
    }
}

/// The hook texts name helix's MCP tools under the name the session has
/// them (`--mcp` on the installed command line), or only the CLI (`--mcp none`).
#[test]
fn hook_texts_name_the_mcp_tools_the_command_line_says_exist() {
    let f = Fixture::new();
    let run = |args: &[&str], session: &str| {
        let mut input = f.input("SessionStart", json!({"source": "startup"}));
        input["session_id"] = json!(session);
        let mut cmd = f.command();
        cmd.arg("hook")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        context(&String::from_utf8_lossy(&out.stdout), "SessionStart")
    };
    let t = run(&["session-start"], "a");
    assert!(
        t.contains("`mcp__helix__search`") && t.contains("`mcp__helix__store`"),
        "{t}"
    );
    let t = run(&["session-start", "--mcp", "none"], "b");
    assert!(
        !t.contains("mcp__") && t.contains("`helix search <words>`"),
        "{t}"
    );
    let t = run(
        &["session-start", "--mcp", "mcp__plugin_helix_helix__"],
        "c",
    );
    assert!(t.contains("`mcp__plugin_helix_helix__search`"), "{t}");
    // The plugin's tools are helix's too: approved, and a store through them counts.
    let ask = f.input(
        "PermissionRequest",
        json!({"tool_name": "mcp__plugin_helix_helix__store"}),
    );
    assert!(f.hook("approve-mcp", &ask).contains("allow"));
    let ask = f.input(
        "PermissionRequest",
        json!({"tool_name": "mcp__plugin_other_helix__store"}),
    );
    assert_eq!(f.hook("approve-mcp", &ask), "");
}
