use super::*;
use serde_json::json;

const H: i64 = 3_600_000;
/// 2026-03-02T00:00:00Z in milliseconds.
const DAY2: i64 = 1_772_409_600_000;

/// A journal record as the hooks and `append_read` write it (built from JSON: the fields
/// this module does not read keep their defaults).
fn rec(t: i64, hook: &str, session: Option<&str>, agent: Option<&str>, ids: &[&str]) -> Record {
    let entries: Vec<_> = ids
        .iter()
        .map(|id| json!({"id": id, "score": 3.5, "signal": "separation", "points": 4.0}))
        .collect();
    serde_json::from_value(json!({
        "t": t, "hook": hook, "session": session, "agent": agent,
        "cwd": "/home/ann/code/secret-project", "entries": entries,
    }))
    .unwrap()
}

fn at(mut r: Record, cwd: Option<&str>, file: Option<&str>) -> Record {
    r.cwd = cwd.map(str::to_string);
    r.file = file.map(str::to_string);
    r
}

fn read(t: i64, agent: Option<&str>, cwd: &str, id: &str) -> Record {
    at(rec(t, READ_HOOK, None, agent, &[id]), Some(cwd), None)
}

fn row<'a>(b: &'a Built, day: &str, id: &str) -> &'a UsageRow {
    b.rows
        .iter()
        .find(|r| r.day == day && r.id == id)
        .unwrap_or_else(|| panic!("no row {day} {id} in {:#?}", b.rows))
}

fn counts(r: &UsageRow) -> Vec<(&str, &str, u32)> {
    r.injections
        .iter()
        .map(|c| (c.hook.as_str(), c.agent.as_str(), c.n))
        .collect()
}

#[test]
fn injections_count_by_hook_and_agent_with_distinct_sessions() {
    let t = DAY2 + 10 * H;
    let log = vec![
        rec(
            t,
            "prompt",
            Some("s1"),
            Some("codex"),
            &["p:a.md", "p:b.md"],
        ),
        rec(t + 1, "prompt", Some("s1"), Some("codex"), &["p:a.md"]),
        rec(t + 2, "error", Some("s2"), Some("codex"), &["p:a.md"]),
        // No agent: Claude Code's. No session: a session of its own, each.
        rec(t + 3, "ambient", None, None, &["p:a.md"]),
        rec(t + 4, "ambient", None, None, &["p:a.md"]),
        // Another project, and one whose name starts alike: not this project's.
        rec(
            t + 5,
            "prompt",
            Some("s3"),
            Some("codex"),
            &["q:a.md", "px:a.md"],
        ),
    ];
    let b = build(&log, "p", None);
    assert_eq!(b.until, Some(t + 5));
    assert_eq!(b.rows.len(), 2, "{:#?}", b.rows);
    let a = row(&b, "2026-03-02", "a.md");
    assert_eq!(
        counts(a),
        [
            ("ambient", "claude", 2),
            ("error", "codex", 1),
            ("prompt", "codex", 2)
        ]
    );
    assert_eq!((a.sessions, a.reads), (4, 0));
    let bm = row(&b, "2026-03-02", "b.md");
    assert_eq!(counts(bm), [("prompt", "codex", 1)]);
    assert_eq!(bm.sessions, 1);
    assert_eq!(b.entries(), 2);
    // The project with the other name has rows of its own.
    assert_eq!(build(&log, "px", None).rows.len(), 1);
}

#[test]
fn days_are_utc_days_and_a_session_across_midnight_counts_on_both() {
    let log = vec![
        rec(DAY2 - 1, "prompt", Some("s"), Some("claude"), &["p:a.md"]),
        rec(DAY2, "prompt", Some("s"), Some("claude"), &["p:a.md"]),
        rec(DAY2 + 1, "prompt", Some("s"), Some("claude"), &["p:a.md"]),
    ];
    let b = build(&log, "p", None);
    let days: Vec<_> = b.rows.iter().map(|r| r.day.as_str()).collect();
    assert_eq!(days, ["2026-03-01", "2026-03-02"]);
    assert_eq!(counts(&b.rows[0]), [("prompt", "claude", 1)]);
    assert_eq!(counts(&b.rows[1]), [("prompt", "claude", 2)]);
    assert!(b.rows.iter().all(|r| r.sessions == 1));
}

#[test]
fn a_read_counts_once_per_session_and_entry_after_an_injection_in_the_same_place() {
    let t = DAY2 + 9 * H;
    let repo = "/home/ann/code/app";
    let inj = |t, s, agent, id| {
        at(
            rec(t, "prompt", Some(s), Some(agent), &[id]),
            Some(repo),
            None,
        )
    };
    let log = vec![
        // Read before any injection: nothing to attribute it to.
        read(t - 1, None, repo, "p:a.md"),
        inj(t, "s1", "claude", "p:a.md"),
        // Read from a subdirectory (MCP's cwd is the repository, a hook's may be below).
        read(t + 1, None, &format!("{repo}/src"), "p:a.md"),
        // Again in the same session: counted once.
        read(t + 2, Some("claude"), repo, "p:a.md"),
        // Another repository: not this injection's.
        read(t + 3, None, "/home/ann/code/other", "p:a.md"),
        // Another agent named: not Claude Code's injection.
        read(t + 4, Some("codex"), repo, "p:a.md"),
        // An ambient injection of b (its file inside the repository) read by codex.
        at(
            rec(t + 5, "ambient", Some("s2"), Some("codex"), &["p:b.md"]),
            None,
            Some(&format!("{repo}/src/main.rs")),
        ),
        read(t + 6, Some("codex"), repo, "p:b.md"),
        // A new session injects a again: its read counts again.
        inj(t + 7, "s3", "claude", "p:a.md"),
        read(t + 8, None, repo, "p:a.md"),
        // Ambient logs a file of the repository relative to it: no place, any read's.
        at(
            rec(t + 8, "ambient", Some("s5"), None, &["p:d.md"]),
            None,
            Some("src/lib.rs"),
        ),
        read(t + 8, None, "/somewhere/else", "p:d.md"),
        // Past the window after the last injection of c: nothing.
        inj(t + 9, "s4", "claude", "p:c.md"),
        read(t + 9 + READ_WINDOW_MS + 1, None, repo, "p:c.md"),
    ];
    let b = build(&log, "p", None);
    let a = row(&b, "2026-03-02", "a.md");
    assert_eq!((a.sessions, a.reads), (2, 2));
    assert_eq!(
        counts(a),
        [("prompt", "claude", 2)],
        "reads are no injections"
    );
    assert_eq!(row(&b, "2026-03-02", "b.md").reads, 1);
    assert_eq!(row(&b, "2026-03-02", "d.md").reads, 1);
    let c = row(&b, "2026-03-02", "c.md");
    assert_eq!((c.sessions, c.reads), (1, 0));
}

#[test]
fn a_read_naming_a_session_counts_for_that_session_only() {
    let t = DAY2;
    let mut r = read(t + 2, None, "/nowhere", "p:a.md");
    r.session = Some("s1".into());
    let mut other = r.clone();
    other.session = Some("s9".into());
    let log = vec![
        rec(t, "prompt", Some("s1"), None, &["p:a.md"]),
        r.clone(),
        other,
        r,
    ];
    assert_eq!(row(&build(&log, "p", None), "2026-03-02", "a.md").reads, 1);
}

#[test]
fn a_read_after_midnight_counts_on_its_own_day() {
    let repo = "/w";
    let log = vec![
        at(
            rec(DAY2 - 60_000, "prompt", Some("s"), None, &["p:a.md"]),
            Some(repo),
            None,
        ),
        read(DAY2 + 60_000, None, repo, "p:a.md"),
    ];
    let b = build(&log, "p", None);
    let before = row(&b, "2026-03-01", "a.md");
    assert_eq!((before.sessions, before.reads), (1, 0));
    let after = row(&b, "2026-03-02", "a.md");
    assert_eq!((after.sessions, after.reads), (0, 1));
    assert!(after.injections.is_empty());
}

#[test]
fn after_the_cursor_nothing_is_counted_twice() {
    let repo = "/w";
    let t = DAY2 + H;
    let inj = |t, s| {
        at(
            rec(t, "prompt", Some(s), None, &["p:a.md"]),
            Some(repo),
            None,
        )
    };
    let log = vec![
        inj(t, "s1"),
        read(t + 1, None, repo, "p:a.md"),
        // Cursor here.
        inj(t + 2, "s1"),
        read(t + 3, None, repo, "p:a.md"),
        inj(t + 4, "s2"),
    ];
    let all = build(&log, "p", None);
    let a = row(&all, "2026-03-02", "a.md");
    assert_eq!((counts(a)[0].2, a.sessions, a.reads), (3, 2, 1));
    let first = build(&log[..2], "p", None);
    let rest = build(&log, "p", first.until);
    assert_eq!(first.until, Some(t + 1));
    assert_eq!(rest.until, Some(t + 4));
    let r = row(&rest, "2026-03-02", "a.md");
    // s1 was counted for that day and entry by the first report, and its read too.
    assert_eq!((counts(r)[0].2, r.sessions, r.reads), (2, 1, 0));
    // Nothing after the newest record: nothing to report, no cursor.
    assert_eq!(build(&log, "p", Some(t + 4)), Built::default());
}

#[test]
fn unknown_names_become_other_and_odd_ids_are_left_out() {
    let long = "x".repeat(MAX_USAGE_NAME + 1);
    let log = vec![
        rec(
            DAY2,
            "Prompt Hook",
            None,
            Some(&long),
            &[
                "p:a.md",
                "p:",
                "p:bad\nid.md",
                "p:../up.md",
                "p:a//b.md",
                "p:notes.txt",
            ],
        ),
        rec(DAY2, "prompt", None, Some("my agent"), &["p:a.md"]),
    ];
    let b = build(&log, "p", None);
    assert_eq!(b.rows.len(), 1);
    assert_eq!(
        counts(&b.rows[0]),
        [("other", "other", 1), ("prompt", "other", 1)]
    );
}

#[test]
fn reports_split_at_the_row_limit_with_keys_of_their_own() {
    let n = MAX_USAGE_ROWS + 1;
    let ids: Vec<String> = (0..n).map(|i| format!("p:t/e{i:05}.md")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let b = build(&[rec(DAY2, "prompt", None, None, &refs)], "p", None);
    assert_eq!(b.rows.len(), n);
    let reports = b.into_reports();
    let sizes: Vec<_> = reports.iter().map(|r| r.rows.len()).collect();
    assert_eq!(sizes, [MAX_USAGE_ROWS, 1]);
    assert_eq!(reports[1].rows[0].id, format!("t/e{:05}.md", n - 1));
    assert_ne!(reports[0].key, reports[1].key);
    assert!(
        reports
            .iter()
            .all(|r| helix_index_format::wire::is_valid_idempotency_key(&r.key))
    );
    assert!(Built::default().into_reports().is_empty());
}

/// A report carries counts, entry ids, days and helix's own hook and agent names: nothing
/// of the prompt, directory, file, score or signal the log holds.
#[test]
fn a_report_carries_nothing_but_the_allowed_fields() {
    let mut r = rec(DAY2, "error", Some("sess-7f3a"), Some("codex"), &["p:a.md"]);
    r.file = Some("/home/ann/code/secret-project/src/payroll.rs".into());
    let log = vec![
        r,
        read(DAY2 + 1, None, "/home/ann/code/secret-project", "p:a.md"),
    ];
    let report = build(&log, "p", None).into_reports().remove(0);
    let text = serde_json::to_string(&report).unwrap();
    for never in [
        "home",
        "ann",
        "secret",
        "payroll",
        "sess-7f3a",
        "separation",
        "3.5",
        "/src",
    ] {
        assert!(!text.contains(never), "{never:?} in {text}");
    }
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&v), ["key", "rows"]);
    let row = &v["rows"][0];
    assert_eq!(keys(row), ["day", "id", "injections", "reads", "sessions"]);
    assert_eq!(keys(&row["injections"][0]), ["agent", "hook", "n"]);
    assert_eq!(
        row,
        &json!({"day": "2026-03-02", "id": "a.md", "sessions": 1, "reads": 1,
                "injections": [{"hook": "error", "agent": "codex", "n": 1}]})
    );
}

#[test]
fn the_state_survives_a_round_trip_and_settles_to_the_pending_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("usage/p.json");
    assert_eq!(UsageState::load(&path).unwrap(), UsageState::default());
    let mut s = UsageState {
        cursor: Some(5),
        pending: Some(Pending {
            until: 9,
            reports: vec![UsageReport {
                key: new_key(),
                rows: vec![],
            }],
            warned: false,
        }),
        paused_until: Some(100),
        log_written: Some(7),
    };
    s.save(&path).unwrap();
    assert_eq!(UsageState::load(&path).unwrap(), s);
    assert!(s.paused(99) && !s.paused(100));
    s.settle();
    assert_eq!((s.cursor, s.pending.is_none()), (Some(9), true));
    std::fs::write(&path, "{not json").unwrap();
    assert!(UsageState::load(&path).is_err());
}

#[test]
fn one_process_at_a_time_holds_a_projects_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("usage/p.json");
    let held = try_lock(&path).unwrap();
    assert!(held.is_some());
    assert!(try_lock(&path).unwrap().is_none());
    drop(held);
    assert!(try_lock(&path).unwrap().is_some());
}
