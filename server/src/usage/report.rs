//! The rules of a usage report (docs/http-api.md, `POST …/usage`): what is refused and
//! why, naming the row and field; what is kept; and the report's fingerprint, which tells a
//! retry of a report from another report under the same key. No I/O.

use std::collections::{BTreeMap, HashMap};

use helix_index_format::wire::{MAX_USAGE_NAME, MAX_USAGE_ROWS, UsageReport, UsageRow};
use sha2::{Digest, Sha256};

/// Longest entry id a row may name, bytes.
pub const MAX_ID: usize = 512;
/// Largest count one row may carry (injections of one hook and agent, sessions, reads): a
/// day of one machine never comes near it.
pub const MAX_COUNT: u32 = 1_000_000;
/// Most (hook, agent) pairs one row may carry.
pub const MAX_PAIRS: usize = 64;

/// A report that breaks a rule: what and where, for the client's log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// A row that passed, with its day as a day number and its injections by (hook, agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub day: u32,
    pub id: String,
    pub injections: BTreeMap<(String, String), u32>,
    pub sessions: u32,
    pub reads: u32,
}

/// A report that passed: the rows to count, and those left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Rows within the retention with something to count, in the report's order.
    pub rows: Vec<Row>,
    /// Rows left out: of days before the first day kept (they would be pruned at once), or
    /// with nothing to count. They are acknowledged, not counted.
    pub left_out: usize,
    /// sha256 of every row in a canonical order: the same rows give the same fingerprint
    /// however a client orders them.
    pub fingerprint: [u8; 32],
}

/// Checks `report` received on day `today` by a server keeping days from `first_kept` on.
pub fn check(report: &UsageReport, today: u32, first_kept: u32) -> Result<Checked, Invalid> {
    if !helix_index_format::wire::is_valid_idempotency_key(&report.key) {
        return Err(Invalid(format!(
            "key {:?} must be 1 to 128 characters of [A-Za-z0-9._-]",
            clip(&report.key)
        )));
    }
    if report.rows.len() > MAX_USAGE_ROWS {
        return Err(Invalid(format!(
            "rows: {} rows; a report holds at most {MAX_USAGE_ROWS}: send several reports",
            report.rows.len()
        )));
    }
    let mut seen: HashMap<(u32, &str), usize> = HashMap::with_capacity(report.rows.len());
    let mut all = Vec::with_capacity(report.rows.len());
    for (i, r) in report.rows.iter().enumerate() {
        let row = check_row(i, r, today)?;
        if let Some(first) = seen.insert((row.day, r.id.as_str()), i) {
            return Err(Invalid(format!(
                "rows[{i}] repeats rows[{first}] (day {}, id {:?}): send one row per day and entry",
                r.day, r.id
            )));
        }
        all.push(row);
    }
    let fingerprint = fingerprint(&all);
    let total = all.len();
    let rows: Vec<Row> = all
        .into_iter()
        .filter(|r| r.day >= first_kept)
        .filter(|r| r.sessions > 0 || r.reads > 0 || r.injections.values().any(|n| *n > 0))
        .collect();
    let left_out = total - rows.len();
    Ok(Checked {
        rows,
        left_out,
        fingerprint,
    })
}

/// At most 80 characters of a value quoted in a message.
fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

fn check_row(i: usize, r: &UsageRow, today: u32) -> Result<Row, Invalid> {
    let day = helix_index_format::parse_day(&r.day).ok_or_else(|| {
        Invalid(format!(
            "rows[{i}].day {:?} is not a day (YYYY-MM-DD)",
            clip(&r.day)
        ))
    })?;
    if day > i64::from(today) + 1 {
        return Err(Invalid(format!(
            "rows[{i}].day {} is after tomorrow (UTC): is the client's clock right?",
            r.day
        )));
    }
    // Before 1970: older than any retention.
    let day = u32::try_from(day).unwrap_or(0);
    if let Some(why) = bad_id(&r.id) {
        return Err(Invalid(format!(
            "rows[{i}].id {:?} is not an entry id: {why}",
            clip(&r.id)
        )));
    }
    if r.injections.len() > MAX_PAIRS {
        return Err(Invalid(format!(
            "rows[{i}].injections: {} pairs; at most {MAX_PAIRS} (hook, agent) pairs per row",
            r.injections.len()
        )));
    }
    let mut injections = BTreeMap::new();
    for (j, c) in r.injections.iter().enumerate() {
        for (field, name) in [("hook", &c.hook), ("agent", &c.agent)] {
            if !is_name(name) {
                return Err(Invalid(format!(
                    "rows[{i}].injections[{j}].{field} {:?} must be 1 to {MAX_USAGE_NAME} characters of [a-z0-9_-]",
                    clip(name)
                )));
            }
        }
        count(c.n, || format!("rows[{i}].injections[{j}].n"))?;
        if injections
            .insert((c.hook.clone(), c.agent.clone()), c.n)
            .is_some()
        {
            return Err(Invalid(format!(
                "rows[{i}].injections[{j}] repeats hook {:?} and agent {:?}: one count per pair",
                c.hook, c.agent
            )));
        }
    }
    count(r.sessions, || format!("rows[{i}].sessions"))?;
    count(r.reads, || format!("rows[{i}].reads"))?;
    Ok(Row {
        day,
        id: r.id.clone(),
        injections,
        sessions: r.sessions,
        reads: r.reads,
    })
}

fn count(n: u32, field: impl Fn() -> String) -> Result<(), Invalid> {
    if n > MAX_COUNT {
        return Err(Invalid(format!("{} = {n} is over {MAX_COUNT}", field())));
    }
    Ok(())
}

/// A hook or agent name: helix's own short names.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_USAGE_NAME
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Why `id` cannot be an entry's id (a relative `/`-separated path of a Markdown file), or
/// `None` when it can. Whether the served artifact holds it does not matter: an entry may be
/// new, pending or gone since.
fn bad_id(id: &str) -> Option<&'static str> {
    if id.is_empty() || id.len() > MAX_ID {
        return Some("it must be 1 to 512 bytes");
    }
    if id.chars().any(|c| c.is_control() || c == '\\') {
        return Some("it holds a control character or a backslash");
    }
    if id.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Some("a relative path without empty, `.` or `..` parts is expected");
    }
    let ext = id.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if !["md", "markdown", "mdc"]
        .iter()
        .any(|m| ext.eq_ignore_ascii_case(m))
    {
        return Some("entries are `.md` files");
    }
    None
}

/// sha256 of the rows sorted by (day, id), every field length-prefixed.
fn fingerprint(rows: &[Row]) -> [u8; 32] {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| (a.day, &a.id).cmp(&(b.day, &b.id)));
    let mut h = Sha256::new();
    let text = |h: &mut Sha256, s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    h.update((sorted.len() as u64).to_le_bytes());
    for r in sorted {
        h.update(r.day.to_le_bytes());
        text(&mut h, &r.id);
        h.update(r.sessions.to_le_bytes());
        h.update(r.reads.to_le_bytes());
        h.update((r.injections.len() as u64).to_le_bytes());
        for ((hook, agent), n) in &r.injections {
            text(&mut h, hook);
            text(&mut h, agent);
            h.update(n.to_le_bytes());
        }
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use helix_index_format::wire::UsageCount;

    const TODAY: u32 = 20_000; // 2024-10-04

    fn day(offset: i64) -> String {
        helix_index_format::format_day((i64::from(TODAY) + offset) * 86_400)
    }

    fn row(offset: i64, id: &str, pairs: &[(&str, &str, u32)]) -> UsageRow {
        UsageRow {
            day: day(offset),
            id: id.into(),
            injections: pairs
                .iter()
                .map(|(h, a, n)| UsageCount {
                    hook: h.to_string(),
                    agent: a.to_string(),
                    n: *n,
                })
                .collect(),
            sessions: 1,
            reads: 0,
        }
    }

    fn report(rows: Vec<UsageRow>) -> UsageReport {
        UsageReport {
            key: "k-1".into(),
            rows,
        }
    }

    fn refusal(r: &UsageReport) -> String {
        check(r, TODAY, TODAY - 99).expect_err("refused").0
    }

    #[test]
    fn a_good_report_keeps_its_rows_and_leaves_out_old_and_empty_ones() {
        let mut empty = row(0, "ops/empty.md", &[]);
        empty.sessions = 0;
        let r = report(vec![
            row(
                0,
                "ops/a.md",
                &[("prompt", "claude", 2), ("error", "codex", 1)],
            ),
            row(1, "ops/b.md", &[("ambient", "claude", 1)]),
            row(-100, "ops/old.md", &[("prompt", "claude", 1)]),
            empty,
            row(-99, ".cursor/rules/style.mdc", &[("prompt", "cursor", 1)]),
        ]);
        let c = check(&r, TODAY, TODAY - 99).expect("valid");
        let ids: Vec<&str> = c.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["ops/a.md", "ops/b.md", ".cursor/rules/style.mdc"]);
        assert_eq!(c.left_out, 2);
        assert_eq!(
            c.rows[0].injections[&("prompt".to_string(), "claude".to_string())],
            2
        );
    }

    #[test]
    fn every_broken_rule_is_named_with_its_row_and_field() {
        let mut bad_key = report(vec![]);
        bad_key.key = "a b".into();
        assert!(refusal(&bad_key).starts_with("key \"a b\""));
        let many = report(vec![row(0, "a/b.md", &[]); MAX_USAGE_ROWS + 1]);
        assert!(
            refusal(&many).contains("at most 5000"),
            "{}",
            refusal(&many)
        );
        let cases: Vec<(UsageRow, &str)> = vec![
            (
                UsageRow {
                    day: "2024-13-01".into(),
                    ..row(0, "a/b.md", &[])
                },
                "rows[0].day \"2024-13-01\" is not a day",
            ),
            (row(2, "a/b.md", &[]), "is after tomorrow"),
            (
                row(0, "../etc/passwd.md", &[]),
                "rows[0].id \"../etc/passwd.md\"",
            ),
            (row(0, "a//b.md", &[]), "not an entry id"),
            (row(0, "a/b.txt", &[]), "entries are `.md` files"),
            (row(0, "a/b\n.md", &[]), "control character"),
            (
                row(0, &format!("a/{}.md", "x".repeat(600)), &[]),
                "1 to 512",
            ),
            (
                row(0, "a/b.md", &[("Prompt", "claude", 1)]),
                "rows[0].injections[0].hook \"Prompt\"",
            ),
            (
                row(0, "a/b.md", &[("prompt", &"c".repeat(33), 1)]),
                "rows[0].injections[0].agent",
            ),
            (
                row(0, "a/b.md", &[("prompt", "claude", MAX_COUNT + 1)]),
                "rows[0].injections[0].n = 1000001 is over 1000000",
            ),
            (
                row(
                    0,
                    "a/b.md",
                    &[("prompt", "claude", 1), ("prompt", "claude", 2)],
                ),
                "rows[0].injections[1] repeats hook \"prompt\" and agent \"claude\"",
            ),
            (
                UsageRow {
                    reads: MAX_COUNT + 1,
                    ..row(0, "a/b.md", &[])
                },
                "rows[0].reads",
            ),
        ];
        for (r, want) in cases {
            let got = refusal(&report(vec![r]));
            assert!(got.contains(want), "{got:?} should contain {want:?}");
        }
        let pairs: Vec<(String, String, u32)> = (0..=MAX_PAIRS)
            .map(|i| ("prompt".to_string(), format!("a{i}"), 1))
            .collect();
        let refs: Vec<(&str, &str, u32)> = pairs
            .iter()
            .map(|(h, a, n)| (h.as_str(), a.as_str(), *n))
            .collect();
        assert!(refusal(&report(vec![row(0, "a/b.md", &refs)])).contains("at most 64"));
        let twice = report(vec![
            row(0, "a/b.md", &[]),
            row(-1, "a/c.md", &[]),
            row(0, "a/b.md", &[]),
        ]);
        assert!(
            refusal(&twice).starts_with("rows[2] repeats rows[0]"),
            "{}",
            refusal(&twice)
        );
    }

    #[test]
    fn the_fingerprint_ignores_order_and_sees_any_count() {
        let a = row(
            0,
            "a/b.md",
            &[("prompt", "claude", 1), ("error", "claude", 2)],
        );
        let b = row(-1, "a/c.md", &[("prompt", "codex", 1)]);
        let mut a_swapped = a.clone();
        a_swapped.injections.reverse();
        let one = check(&report(vec![a.clone(), b.clone()]), TODAY, 0).unwrap();
        let two = check(&report(vec![b.clone(), a_swapped]), TODAY, 0).unwrap();
        assert_eq!(one.fingerprint, two.fingerprint);
        let mut more = a;
        more.reads = 1;
        let three = check(&report(vec![more, b]), TODAY, 0).unwrap();
        assert_ne!(one.fingerprint, three.fingerprint);
    }
}
