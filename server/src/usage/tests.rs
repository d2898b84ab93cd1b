//! The store under the handle: counted once per key across reopenings, totals per entry,
//! pruning past the retention, and summaries joined with an artifact.

use helix_index_format::wire::{UsageCount, UsageReport, UsageRow};
use helix_index_format::{BuildInfo, Index, build, parse_entry};

use super::store::{Db, Recorded, Report};
use super::*;

const TODAY: u32 = 20_400;

fn day(d: u32) -> String {
    day_text(d)
}

fn row(d: u32, id: &str, pairs: &[(&str, &str, u32)], sessions: u32, reads: u32) -> UsageRow {
    UsageRow {
        day: day(d),
        id: id.into(),
        injections: pairs
            .iter()
            .map(|(h, a, n)| UsageCount {
                hook: h.to_string(),
                agent: a.to_string(),
                n: *n,
            })
            .collect(),
        sessions,
        reads,
    }
}

fn record(db: &Db, project: &str, person: &str, key: &str, rows: Vec<UsageRow>) -> Recorded {
    let report = UsageReport {
        key: key.into(),
        rows,
    };
    let checked = report::check(&report, TODAY, db.first_kept(TODAY)).expect("valid");
    db.record(
        &Report {
            project,
            person,
            key,
            checked: &checked,
        },
        TODAY,
    )
    .expect("recorded")
}

#[test]
fn a_key_counts_once_across_reopenings_and_totals_add_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(FILE);
    let rows = vec![
        row(
            TODAY,
            "ops/a.md",
            &[("prompt", "claude", 3), ("error", "codex", 1)],
            2,
            1,
        ),
        row(TODAY - 1, "ops/a.md", &[("prompt", "claude", 1)], 1, 0),
        row(TODAY, "ops/b.md", &[], 0, 2),
    ];
    {
        let db = Db::open(&path, 400, TODAY).expect("open");
        assert_eq!(
            record(&db, "kb", "ann", "k1", rows.clone()),
            Recorded::New { rows: 3 }
        );
        assert_eq!(
            record(&db, "kb", "ann", "k1", rows.clone()),
            Recorded::Duplicate { rows: 3 }
        );
    }
    let db = Db::open(&path, 400, TODAY).expect("reopen");
    let mut reordered = rows.clone();
    reordered.reverse();
    assert_eq!(
        record(&db, "kb", "ann", "k1", reordered),
        Recorded::Duplicate { rows: 3 },
        "a retry after a restart, rows in another order"
    );
    assert_eq!(
        record(&db, "kb", "ben", "k1", rows.clone()),
        Recorded::Reused
    );
    assert_eq!(
        record(&db, "kb", "ann", "k1", rows[..1].to_vec()),
        Recorded::Reused
    );
    // The same key in another project is another report.
    assert_eq!(
        record(&db, "other", "ann", "k1", rows[..1].to_vec()),
        Recorded::New { rows: 1 }
    );
    assert_eq!(
        record(
            &db,
            "kb",
            "ben",
            "k2",
            vec![row(TODAY, "ops/a.md", &[("prompt", "claude", 2)], 1, 0)]
        ),
        Recorded::New { rows: 1 }
    );
    let t = db.totals("kb", TODAY - 29, TODAY).expect("totals");
    assert_eq!(t.people.len(), 2);
    let a = &t.entries["ops/a.md"];
    assert_eq!(
        (a.injections, a.sessions, a.reads, a.last_injected),
        (7, 4, 1, Some(TODAY))
    );
    assert_eq!(a.people.iter().collect::<Vec<_>>(), ["ann", "ben"]);
    assert_eq!(a.by_hook["prompt"], 6);
    assert_eq!(a.by_agent["codex"], 1);
    let b = &t.entries["ops/b.md"];
    assert_eq!((b.injections, b.reads, b.people.len()), (0, 2, 0));
    let only_today = db.totals("kb", TODAY, TODAY).expect("totals");
    assert_eq!(only_today.entries["ops/a.md"].injections, 6);
    // One entry's line agrees with the project's totals.
    let line = |id: &str, from: u32| db.entry_line("kb", id, from, TODAY).expect("line");
    let all = EntryLine {
        injections: 7,
        people: 2,
        sessions: 4,
        reads: 1,
    };
    assert_eq!(line("ops/a.md", TODAY - 29), all);
    assert_eq!(line("ops/a.md", TODAY).injections, 6);
    assert_eq!(
        line("ops/b.md", TODAY - 29),
        EntryLine {
            reads: 2,
            ..EntryLine::default()
        }
    );
    assert_eq!(line("ops/none.md", 0), EntryLine::default());
    assert!(
        db.totals("nope", 0, TODAY)
            .expect("totals")
            .entries
            .is_empty()
    );
}

#[test]
fn days_past_the_retention_and_their_keys_are_pruned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(FILE);
    let db = Db::open(&path, 30, TODAY).expect("open");
    record(
        &db,
        "kb",
        "ann",
        "old",
        vec![
            row(TODAY - 29, "ops/a.md", &[("prompt", "claude", 1)], 1, 0),
            row(TODAY, "ops/a.md", &[("prompt", "claude", 1)], 1, 0),
        ],
    );
    drop(db);
    // Ten days later: day TODAY - 29 is past the 30 days kept, and so is the report's key
    // (received on TODAY, kept until TODAY + 29).
    let later = TODAY + 10;
    let db = Db::open(&path, 30, later).expect("reopen");
    let t = db.totals("kb", 0, later).expect("totals");
    assert_eq!(t.entries["ops/a.md"].injections, 1);
    assert_eq!(
        db.entry_line("kb", "ops/a.md", 0, later)
            .expect("line")
            .injections,
        1
    );
    assert_eq!(t.entries["ops/a.md"].last_injected, Some(TODAY));
    drop(db);
    let db = Db::open(&path, 30, TODAY + 30).expect("reopen");
    assert!(
        db.totals("kb", 0, TODAY + 30)
            .expect("totals")
            .entries
            .is_empty()
    );
    assert_eq!(
        db.entry_line("kb", "ops/a.md", 0, TODAY + 30)
            .expect("line"),
        EntryLine::default(),
        "the entry index is pruned with the counts"
    );
    let again = UsageReport {
        key: "old".into(),
        rows: vec![row(
            TODAY + 30,
            "ops/a.md",
            &[("prompt", "claude", 1)],
            1,
            0,
        )],
    };
    let checked = report::check(&again, TODAY + 30, db.first_kept(TODAY + 30)).expect("valid");
    let r = Report {
        project: "kb",
        person: "ann",
        key: "old",
        checked: &checked,
    };
    assert_eq!(
        db.record(&r, TODAY + 30).expect("recorded"),
        Recorded::New { rows: 1 },
        "the pruned key is free again"
    );
}

fn artifact() -> Vec<u8> {
    let files = [
        (
            "ops/a.md",
            "---\ntitle: Deploys freeze on Friday\ndate: 2026-01-02\n---\nNo deploys.\n",
        ),
        (
            "ops/b.md",
            "---\ntitle: Backups run at night\ndate: 2025-03-04\n---\nAt two.\n",
        ),
        (
            "ops/c.md",
            "---\ntitle: Certificates renew\ndate: 2024-05-06\n---\nBy cron.\n",
        ),
        (
            "ops/old.md",
            "---\ntitle: Old way\nstatus: retired\n---\nGone.\n",
        ),
    ];
    let entries: Vec<_> = files
        .iter()
        .map(|(p, t)| parse_entry(p, t.as_bytes(), None).expect("entry"))
        .collect();
    build(
        &entries,
        &BuildInfo {
            project: "kb".into(),
            commit: "c0ffee".into(),
            generation: 1,
            build_time: 0,
        },
    )
    .expect("build")
}

#[test]
fn a_summary_lists_used_entries_most_injected_first_and_the_visible_unused_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(&dir.path().join(FILE), 400, TODAY).expect("open");
    record(
        &db,
        "kb",
        "ann",
        "k1",
        vec![
            row(TODAY, "ops/a.md", &[("prompt", "claude", 1)], 1, 0),
            row(
                TODAY,
                "ops/b.md",
                &[("prompt", "claude", 2), ("error", "gemini", 1)],
                2,
                1,
            ),
            row(TODAY, "ops/c.md", &[], 0, 1),
            row(TODAY - 5, "ops/old.md", &[("ambient", "claude", 1)], 1, 0),
            row(TODAY, "ops/gone.md", &[("prompt", "claude", 9)], 1, 0),
        ],
    );
    let bytes = artifact();
    let index = Index::open(bytes.as_slice()).expect("artifact");
    let totals = db.totals("kb", TODAY - 29, TODAY + 1).expect("totals");
    let s = summary::summarize("kb", 30, TODAY, totals, &index).expect("summary");
    let v = serde_json::to_value(&s).expect("json");
    assert_eq!(
        v,
        serde_json::json!({
            "project": "kb", "days": 30, "since": day(TODAY - 29), "people": 1,
            "entries": [
                {"id": "ops/b.md", "title": "Backups run at night", "injections": 3, "people": 1,
                 "sessions": 2, "reads": 1, "last_injected": day(TODAY),
                 "by_hook": {"error": 1, "prompt": 2}, "by_agent": {"claude": 2, "gemini": 1}},
                {"id": "ops/a.md", "title": "Deploys freeze on Friday", "injections": 1,
                 "people": 1, "sessions": 1, "reads": 0, "last_injected": day(TODAY),
                 "by_hook": {"prompt": 1}, "by_agent": {"claude": 1}},
                {"id": "ops/old.md", "title": "Old way", "injections": 1, "people": 1,
                 "sessions": 1, "reads": 0, "last_injected": day(TODAY - 5),
                 "by_hook": {"ambient": 1}, "by_agent": {"claude": 1}},
                {"id": "ops/c.md", "title": "Certificates renew", "injections": 0, "people": 0,
                 "sessions": 0, "reads": 1, "last_injected": "",
                 "by_hook": {}, "by_agent": {}},
            ],
            "not_injected": [
                {"id": "ops/c.md", "title": "Certificates renew", "date": "2024-05-06"},
            ],
        })
    );
}

#[test]
fn an_unopenable_store_leaves_usage_unavailable() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(FILE), b"not a redb file at all").expect("write");
    let usage = Usage::open(dir.path(), 400);
    let report = UsageReport {
        key: "k".into(),
        rows: vec![],
    };
    let e = usage
        .record("kb", "ann", &report, TODAY)
        .expect_err("unavailable");
    assert!(matches!(e, UsageError::Unavailable(_)), "{e}");
}
