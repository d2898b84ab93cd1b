//! The per-session context budget through the real binary: a session whose hooks would
//! give more than its budget goes silent, session start after a compaction still speaks,
//! other sessions are unaffected, 0 means no cap, and `helix log --stats` counts exactly
//! the characters that were printed.

use serde_json::{Value, json};

use crate::hooks::Fixture;

/// A session's hook calls, in order: each speaks in a fresh session without a budget.
const CALLS: [&str; 6] = [
    "session-start",
    "prompt-pool",
    "error-linker",
    "read-migrate",
    "prompt-arm",
    "post-build",
];

fn config(f: &Fixture, budget: Option<u64>) {
    let hooks = budget.map_or(String::new(), |b| {
        format!("[hooks]\nsession_budget = {b}\n")
    });
    f.write(
        ".helix.toml",
        &format!("local = \"knowledge\"\nproject = \"kb\"\n{hooks}"),
    );
}

/// Runs the call `what` in `session` (each with its own ids, so none is a duplicate of an
/// earlier one); returns stdout.
fn call(f: &Fixture, session: &str, what: &str, env: &[(&str, &str)]) -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    const LINKER: &str = "Exit code 101\nerror: linking with `cc` failed: exit status: 1\n  \
        = note: /usr/bin/ld: cannot find -lssl: No such file or directory\n";
    let (hook, event, extra) = match what {
        "session-start" => (
            "session-start",
            "SessionStart",
            json!({"source": "startup"}),
        ),
        "session-compact" => (
            "session-start",
            "SessionStart",
            json!({"source": "compact"}),
        ),
        "prompt-pool" => (
            "prompt",
            "UserPromptSubmit",
            json!({"prompt": "why do our integration tests hang on the connection pool in CI?"}),
        ),
        "prompt-arm" => (
            "prompt",
            "UserPromptSubmit",
            json!({"prompt": "why does the CI job time out on the arm runner?"}),
        ),
        "error-linker" => (
            "error",
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"},
                   "is_interrupt": false, "error": LINKER}),
        ),
        "read-migrate" => (
            "ambient",
            "PreToolUse",
            json!({"tool_name": "Read",
                   "tool_input": {"file_path": f.root.join("src/db/migrate.rs")}}),
        ),
        "post-build" => (
            "post-build",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"},
                   "tool_response": {"stdout": "ok"}}),
        ),
        other => panic!("unknown call {other}"),
    };
    let mut input = f.input(event, extra);
    input["session_id"] = json!(session);
    input["prompt_id"] = json!(format!("p{n}"));
    input["tool_use_id"] = json!(format!("t{n}"));
    f.hook_with(hook, input.to_string().as_bytes(), env)
}

/// The characters of context in a hook's stdout, as the model reads them (0 for none).
fn chars(stdout: &str) -> u64 {
    if stdout.is_empty() {
        return 0;
    }
    let v: Value = serde_json::from_str(stdout).expect("JSON");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    text.chars().count() as u64
}

/// The entry lines in a hook's stdout.
fn entries(stdout: &str) -> u64 {
    stdout.matches("\\n- kb:").count() as u64
}

/// What each call prints in a session without a cap.
fn uncapped(f: &Fixture, session: &str) -> Vec<String> {
    let outs: Vec<String> = CALLS
        .iter()
        .map(|c| call(f, session, c, &[("HELIX_SESSION_BUDGET", "0")]))
        .collect();
    for (c, out) in CALLS.iter().zip(&outs) {
        assert!(chars(out) > 0, "{c} speaks: {out:?}");
    }
    outs
}

fn stats(f: &Fixture, session: &str) -> Value {
    let out = f
        .command()
        .args(["log", "--stats", "--json", "--session", session])
        .output()
        .expect("helix log --stats");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["sessions"][0].clone()
}

#[test]
fn a_session_goes_silent_once_its_budget_is_spent_but_not_after_a_compaction() {
    let f = Fixture::new();
    let probe = uncapped(&f, "probe");
    let len: Vec<u64> = probe.iter().map(|o| chars(o)).collect();
    // Room for the first three calls and half the fourth.
    let budget = len[0] + len[1] + len[2] + len[3] / 2;
    config(&f, Some(budget));
    let outs: Vec<String> = CALLS.iter().map(|c| call(&f, "s", c, &[])).collect();
    assert_eq!(
        outs[..3],
        probe[..3],
        "under the budget, every call speaks as before"
    );
    assert!(outs[1].contains("kb:db/pool-exhaustion.md"), "{}", outs[1]);
    assert!(
        outs[2].contains("kb:build/linker-openssl.md"),
        "{}",
        outs[2]
    );
    // The fourth would pass the budget: withheld whole, and the session stays silent,
    // also for calls that would fit.
    assert_eq!(outs[3..], ["", "", ""], "silent after the cap");
    // A compaction: session start speaks (the model just lost its context) ...
    let start = call(&f, "s", "session-compact", &[]);
    assert!(
        start.contains("All topics: db (3), build (1), ci (1)"),
        "{start}"
    );
    // ... and the rest of the session stays silent.
    assert_eq!(call(&f, "s", "prompt-arm", &[]), "");
    // An allow of helix's own tool is no context: it still answers.
    let mut allow = f.input(
        "PermissionRequest",
        json!({"tool_name": "mcp__helix__search", "tool_input": {"query": "x"}}),
    );
    allow["session_id"] = json!("s");
    assert!(f.hook("approve-mcp", &allow).contains("allow"));
    // A session of its own has its own budget.
    let other: Vec<String> = CALLS.iter().map(|c| call(&f, "t", c, &[])).collect();
    assert_eq!(other[..3], probe[..3]);
    assert_eq!(other[3..], ["", "", ""]);
    assert_eq!(
        call(&f, "u", "prompt-arm", &[]),
        probe[4],
        "a fresh session speaks"
    );

    // The log counts what was printed, and what was withheld.
    let s = stats(&f, "s");
    let printed = outs.iter().map(|o| chars(o)).sum::<u64>() + chars(&start);
    assert_eq!(s["chars"], json!(printed), "{s}");
    assert_eq!(s["calls"], json!(4), "{s}");
    let shown: u64 = outs.iter().map(|o| entries(o)).sum();
    assert_eq!(s["entries"], json!(shown), "{s}");
    assert_eq!(s["capped"], json!(true), "{s}");
    assert_eq!(
        s["withheld"],
        json!(len[3] + len[4] + len[5] + len[4]),
        "{s}"
    );
    let p = stats(&f, "probe");
    assert_eq!(p["chars"], json!(len.iter().sum::<u64>()), "{p}");
    assert_eq!(
        (p["calls"].clone(), p["capped"].clone()),
        (json!(6), json!(false))
    );
}

#[test]
fn a_budget_of_zero_is_no_cap_and_the_environment_overrides_the_file() {
    let f = Fixture::new();
    config(&f, Some(0));
    let probe = uncapped(&f, "probe");
    let outs: Vec<String> = CALLS.iter().map(|c| call(&f, "zero", c, &[])).collect();
    assert_eq!(outs, probe, "budget 0: no cap");
    // The environment wins over `.helix.toml`: a budget below the first answer silences
    // the session from its start ...
    assert_eq!(
        call(
            &f,
            "env",
            "session-start",
            &[("HELIX_SESSION_BUDGET", "50")]
        ),
        ""
    );
    // ... and `off` lifts a file's budget.
    config(&f, Some(10));
    assert_eq!(
        call(&f, "off", "prompt-pool", &[("HELIX_SESSION_BUDGET", "off")]),
        probe[1]
    );
    assert_eq!(call(&f, "ten", "prompt-pool", &[]), "");
}

#[test]
fn helix_log_stats_lists_sessions_newest_first_with_totals() {
    let f = Fixture::new();
    let first = uncapped(&f, "first");
    let a: u64 = first.iter().map(|o| chars(o)).sum();
    let second = call(&f, "second", "prompt-pool", &[]);
    let b = chars(&second);
    let shown: u64 = first.iter().chain([&second]).map(|o| entries(o)).sum();
    let out = f
        .command()
        .args(["log", "--stats"])
        .output()
        .expect("helix log --stats");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("chars") && lines[0].contains("session"),
        "{text}"
    );
    assert!(lines[1].ends_with(&format!("  {b}  second")), "{text}");
    assert!(lines[2].ends_with(&format!("  {a}  first")), "{text}");
    assert!(
        lines[3].starts_with(&format!(
            "2 sessions: 7 calls, {shown} entries, {} chars",
            a + b
        )),
        "{text}"
    );
    let one = f
        .command()
        .args(["log", "--stats", "-n", "1", "--json"])
        .output()
        .expect("helix log --stats");
    let v: Value = serde_json::from_slice(&one.stdout).expect("JSON");
    assert_eq!(v["sessions"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["totals"]["chars"], json!(b), "{v}");
}
