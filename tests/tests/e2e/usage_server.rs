//! The server's half of usage reports over real HTTP: reports counted once and summarised
//! exactly (`GET …/usage`), a project with `usage = false` refusing them, one project's
//! figures never shown to another's token, the web view's entry line and usage page, and
//! twenty clients reporting through a `kill -9` of the server: every acknowledged count
//! there once, none twice.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Server, Upstream, WAIT, wait_for};
use super::web::executable_markup;

const ALPHA: &str = "alpha";
const BRAVO: &str = "bravo";
const QUIET: &str = "quiet";

const FREEZE: &str = "ops/deploy-freeze.md";
const BACKUPS: &str = "ops/backups.md";
const PRINTER: &str = "ops/printer.md";
const RUNNER: &str = "ci/runner.md";
const FLAGS: &str = "ci/flags.md";

/// `YYYY-MM-DD` of `offset` days from today (UTC), as the server counts days.
fn day(offset: i64) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64;
    // Howard Hinnant's civil_from_days.
    let z = secs.div_euclid(86_400) + offset + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A row of a report: `(hook, agent, n)` injections, sessions and reads of entry `id`.
fn row(offset: i64, id: &str, pairs: &[(&str, &str, u32)], sessions: u32, reads: u32) -> Value {
    let injections: Vec<Value> = pairs
        .iter()
        .map(|(h, a, n)| json!({"hook": h, "agent": a, "n": n}))
        .collect();
    json!({"day": day(offset), "id": id, "injections": injections,
           "sessions": sessions, "reads": reads})
}

fn post(server: &Server, project: &str, token: &str, key: &str, rows: &[Value]) -> (u16, Value) {
    let body = json!({"key": key, "rows": rows}).to_string();
    let (code, answer) = server
        .request(
            "POST",
            &format!("/v1/projects/{project}/usage"),
            body.as_bytes(),
            Some(token),
        )
        .expect("an answer");
    let v = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&answer)));
    (code, v)
}

/// A page of the web view, read with a bearer token.
fn page(server: &Server, path: &str, token: &str) -> (u16, String) {
    let bearer = format!("Bearer {token}");
    let a = helix_test_support::exchange(
        &server.url,
        "GET",
        path,
        &[("Authorization", &bearer)],
        b"",
        WAIT,
    )
    .unwrap_or_else(|| panic!("GET {path}: no answer"));
    (a.status, a.text())
}

struct Team {
    /// Dropped before the directory it lives in.
    server: Server,
    tmp: tempfile::TempDir,
    /// Alpha's readers ann, ben, cid and dee.
    alpha: Vec<String>,
    bravo: String,
    quiet: String,
}

/// Alpha (six entries: a retired one, a superseded one, a title full of markup) and quiet
/// (`usage = false`) on one upstream, bravo on another.
fn team() -> Team {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(dir);
    let head = up.commit_as(
        "Ada",
        &[
            (FREEZE, "---\ntitle: Deploys freeze on Friday\ndate: 2026-01-02\n---\nNo deploys after Friday noon.\n"),
            (BACKUPS, "---\ntitle: Backups run at two\ndate: 2025-03-04\n---\nThe nightly backup starts at 02:00 UTC.\n"),
            (PRINTER, "---\ntitle: The <b>printer</b> & its toner\ndate: 2024-01-05\n---\nNobody asks about the printer.\n"),
            ("ci/runner-old.md", "---\ntitle: The old runner\ndate: 2023-01-01\n---\nIt needed docker.\n"),
            (RUNNER, "---\ntitle: The runner\ndate: 2025-09-09\nsupersedes: ci/runner-old.md\n---\nIt needs nothing.\n"),
            (FLAGS, "---\ntitle: Runner flags\nstatus: retired\ndate: 2023-05-01\n---\nOld flags.\n"),
        ],
        "Seed",
    );
    let other = Upstream::new(&dir.join("other"));
    let other_head = other.commit_as(
        "Zed",
        &[(
            "plans/q1.md",
            "---\ntitle: Bravo plans\n---\nOnly bravo reads this.\n",
        )],
        "Bravo",
    );
    let config = Server::configure(
        dir,
        &format!(
            "[[projects]]\nname = {ALPHA:?}\nupstream = {a:?}\npoll_interval_secs = 3600\n\n\
             [[projects]]\nname = {BRAVO:?}\nupstream = {b:?}\npoll_interval_secs = 3600\n\n\
             [[projects]]\nname = {QUIET:?}\nupstream = {a:?}\npoll_interval_secs = 3600\nusage = false\n",
            a = up.bare.display().to_string(),
            b = other.bare.display().to_string(),
        ),
    );
    let alpha: Vec<String> = ["ann", "ben", "cid", "dee"]
        .iter()
        .map(|n| Server::token_add(&config, ALPHA, n, "read"))
        .collect();
    let bravo = Server::token_add(&config, BRAVO, "bob", "read");
    let quiet = Server::token_add(&config, QUIET, "quinn", "read");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving(ALPHA, &alpha[0], &head);
    server.wait_serving(BRAVO, &bravo, &other_head);
    server.wait_serving(QUIET, &quiet, &head);
    Team {
        tmp,
        server,
        alpha,
        bravo,
        quiet,
    }
}

#[test]
fn reports_are_summarised_exactly_refused_when_off_and_shown_on_the_pages() {
    let t = team();
    let s = &t.server;
    let (ann, ben) = (&t.alpha[0], &t.alpha[1]);
    let ann_rows = [
        row(
            0,
            FREEZE,
            &[("prompt", "claude", 3), ("error", "codex", 1)],
            2,
            1,
        ),
        row(-1, BACKUPS, &[("ambient", "claude", 1)], 1, 0),
        row(0, FLAGS, &[("prompt", "claude", 1)], 1, 0),
        row(-40, RUNNER, &[("prompt", "gemini", 2)], 1, 0),
        row(-500, PRINTER, &[("prompt", "claude", 9)], 1, 0),
    ];
    let (code, ack) = post(s, ALPHA, ann, "ann-1", &ann_rows);
    assert_eq!(
        (code, ack),
        (200, json!({"key": "ann-1", "rows": 4, "duplicate": false})),
        "the row past the 400 days kept is acknowledged, not counted"
    );
    let ben_rows = [
        row(0, FREEZE, &[("prompt", "claude", 2)], 1, 0),
        row(0, BACKUPS, &[], 0, 1),
    ];
    assert_eq!(
        post(s, ALPHA, ben, "ben-1", &ben_rows),
        (200, json!({"key": "ben-1", "rows": 2, "duplicate": false}))
    );
    assert_eq!(
        post(s, ALPHA, ben, "ben-1", &ben_rows),
        (200, json!({"key": "ben-1", "rows": 2, "duplicate": true})),
        "a retry is answered, and counts nothing"
    );

    let summary = s.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/usage"),
        Some(ann),
        200,
    );
    let used = |id: &str,
                title: &str,
                n: u64,
                people: u32,
                sessions: u64,
                reads: u64,
                last: &str,
                hooks: Value,
                agents: Value| {
        json!({"id": id, "title": title, "injections": n, "people": people, "sessions": sessions,
               "reads": reads, "last_injected": last, "by_hook": hooks, "by_agent": agents})
    };
    assert_eq!(
        summary,
        json!({
            "project": ALPHA, "days": 30, "since": day(-29), "people": 2,
            "entries": [
                used(FREEZE, "Deploys freeze on Friday", 6, 2, 3, 1, &day(0),
                     json!({"error": 1, "prompt": 5}), json!({"claude": 5, "codex": 1})),
                used(FLAGS, "Runner flags", 1, 1, 1, 0, &day(0),
                     json!({"prompt": 1}), json!({"claude": 1})),
                used(BACKUPS, "Backups run at two", 1, 1, 1, 1, &day(-1),
                     json!({"ambient": 1}), json!({"claude": 1})),
            ],
            "not_injected": [
                {"id": RUNNER, "title": "The runner", "date": "2025-09-09"},
                {"id": PRINTER, "title": "The <b>printer</b> & its toner", "date": "2024-01-05"},
            ],
        })
    );
    let quarter = s.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/usage?days=90"),
        Some(ben),
        200,
    );
    assert_eq!(quarter["entries"][1]["id"], RUNNER, "{quarter}");
    assert_eq!(
        quarter["not_injected"],
        json!([{"id": PRINTER, "title": "The <b>printer</b> & its toner", "date": "2024-01-05"}])
    );

    // usage = false: reports and summaries are refused with a code the client knows.
    for (method, body) in [
        ("POST", json!({"key": "q-1", "rows": []}).to_string()),
        ("GET", String::new()),
    ] {
        let (code, answer) = s
            .request(
                method,
                &format!("/v1/projects/{QUIET}/usage"),
                body.as_bytes(),
                Some(&t.quiet),
            )
            .expect("an answer");
        let v: Value = serde_json::from_slice(&answer).expect("json");
        assert_eq!(
            (code, v["error"]["code"].as_str()),
            (403, Some("usage_disabled")),
            "{method}"
        );
    }
    let (code, body) = page(s, &format!("/p/{QUIET}/usage"), &t.quiet);
    assert_eq!(code, 200);
    assert!(body.contains("<code>usage = false</code>"), "{body}");

    // Bravo's token learns nothing of alpha's figures.
    let (code, answer) = s
        .request(
            "GET",
            &format!("/v1/projects/{ALPHA}/usage"),
            b"",
            Some(&t.bravo),
        )
        .expect("an answer");
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(code, 403, "{text}");
    assert!(
        !text.contains("freeze") && !text.contains("entries"),
        "{text}"
    );
    let (code, _) = post(
        s,
        ALPHA,
        &t.bravo,
        "b-1",
        &[row(0, FREEZE, &[("prompt", "claude", 1)], 1, 0)],
    );
    assert_eq!(code, 403);
    let hidden = page(s, &format!("/p/{ALPHA}/usage"), &t.bravo);
    let missing = page(s, "/p/no-such-project/usage", &t.bravo);
    assert_eq!(hidden.0, 404);
    assert_eq!(
        hidden, missing,
        "another team's usage page is answered as a missing one"
    );
    let hidden_entry = page(s, &format!("/p/{ALPHA}/e/{FREEZE}"), &t.bravo);
    assert_eq!(hidden_entry.0, 404);
    assert!(!hidden_entry.1.contains("Injected"), "{}", hidden_entry.1);

    // The entry pages say the figures of the last 30 days.
    for (id, line) in [
        (
            FREEZE,
            "Injected 6 times to 2 people in the last 30 days, read in full once.",
        ),
        (
            BACKUPS,
            "Injected once to 1 person in the last 30 days, read in full once.",
        ),
        (
            FLAGS,
            "Injected once to 1 person in the last 30 days, never read in full.",
        ),
        (RUNNER, "Not injected in the last 30 days."),
        (PRINTER, "Not injected in the last 30 days."),
    ] {
        let (code, body) = page(s, &format!("/p/{ALPHA}/e/{id}"), ben);
        assert_eq!(code, 200, "{id}: {body}");
        assert!(body.contains(line), "{id} should say {line:?}: {body}");
    }

    // The usage page: most used, injected but never read, not injected in 90 days.
    let (code, body) = page(s, &format!("/p/{ALPHA}/usage"), ann);
    assert_eq!(code, 200, "{body}");
    assert_eq!(executable_markup(&body), None, "{body}");
    assert!(
        body.contains("Reported by 2 people in the last 30 days"),
        "{body}"
    );
    let section = |heading: &str| -> String {
        let at = body
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading:?}: {body}"));
        let rest = &body[at..];
        rest[..rest.find("</section>").expect("section end")].to_string()
    };
    let links = |html: &str| -> Vec<String> {
        html.split(&format!("<a href=\"/p/{ALPHA}/e/"))
            .skip(1)
            .map(|r| r[..r.find('"').expect("end of href")].to_string())
            .collect()
    };
    let most = section("Most used (last 30 days)");
    assert_eq!(links(&most), [FREEZE, FLAGS, BACKUPS]);
    assert!(
        most.contains(&format!(
            "<td>6</td><td>2</td><td>3</td><td>1</td><td>{}</td>",
            day(0)
        )),
        "{most}"
    );
    assert_eq!(links(&section("Injected but never read in full")), [FLAGS]);
    let quiet = section("Not injected in the last 90 days (1)");
    assert_eq!(links(&quiet), [PRINTER]);
    assert!(
        quiet
            .contains("The &lt;b&gt;printer&lt;/b&gt; &amp; its toner</a></td><td>2024-01-05</td>"),
        "{quiet}"
    );
    let (code, project_page) = page(s, &format!("/p/{ALPHA}"), ann);
    assert_eq!(code, 200);
    assert!(
        project_page.contains(&format!("<a href=\"/p/{ALPHA}/usage\">Usage</a>")),
        "the project page links its usage: {project_page}"
    );

    let (_, metrics) = s.request("GET", "/metrics", b"", None).expect("metrics");
    let metrics = String::from_utf8_lossy(&metrics);
    for line in [
        "helix_usage_reports_total{project=\"alpha\",outcome=\"accepted\"} 2",
        "helix_usage_reports_total{project=\"alpha\",outcome=\"duplicate\"} 1",
        "helix_usage_reports_total{project=\"quiet\",outcome=\"refused\"} 1",
        "helix_usage_rows_total{project=\"alpha\"} 6",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

const CLIENTS: usize = 20;
const REPORTS: usize = 25;
const ENTRIES: [&str; 4] = [FREEZE, BACKUPS, PRINTER, RUNNER];
const HOOKS: [&str; 3] = ["prompt", "error", "ambient"];
const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

/// Client `c`'s report `r`: two or three rows with counts that differ from report to report.
fn kill_report(c: usize, r: usize) -> Vec<Value> {
    let mut rows = Vec::new();
    for (k, id) in ENTRIES.iter().enumerate() {
        if (c + r + k) % 4 == 3 {
            continue;
        }
        let n = ((c * 7 + r * 3 + k) % 5) as u32 + 1;
        let mut pairs = vec![(HOOKS[(c + k) % 3], AGENTS[(r + k) % 3], n)];
        if (c + r).is_multiple_of(2) {
            pairs.push((HOOKS[(c + k + 1) % 3], AGENTS[(r + k) % 3], 1));
        }
        rows.push(row(
            -((r % 2) as i64),
            id,
            &pairs,
            1 + (r % 2) as u32,
            ((c + k) % 3) as u32,
        ));
    }
    rows
}

/// One entry's figures in a summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Figures {
    injections: u64,
    sessions: u64,
    reads: u64,
    people: usize,
    by_hook: BTreeMap<String, u64>,
    by_agent: BTreeMap<String, u64>,
}

/// Twenty clients report as fast as they can; the server is killed with SIGKILL while
/// their requests are in flight and started again on the same data directory. Each client
/// sends the same report (same key) again on any failure until it is answered. Afterwards
/// the summary holds exactly what the clients sent: nothing acknowledged lost, nothing
/// counted twice.
#[test]
fn kill_9_during_twenty_clients_reports_loses_nothing_and_counts_nothing_twice() {
    let mut t = team();
    let url = t.server.url.clone();
    let tokens: Arc<Vec<String>> = Arc::new(t.alpha.clone());
    let acked = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let duplicates = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (url, tokens) = (url.clone(), tokens.clone());
            let (acked, failed, duplicates) = (acked.clone(), failed.clone(), duplicates.clone());
            std::thread::spawn(move || {
                let token = &tokens[c % tokens.len()];
                for r in 0..REPORTS {
                    let key = format!("c{c}-r{r}");
                    let rows = kill_report(c, r);
                    let body = json!({"key": key, "rows": rows}).to_string();
                    let deadline = Instant::now() + WAIT;
                    loop {
                        let answer = helix_test_support::http_request(
                            &url,
                            "POST",
                            &format!("/v1/projects/{ALPHA}/usage"),
                            body.as_bytes(),
                            Some(token),
                            WAIT,
                        );
                        match answer {
                            Some((200, b)) => {
                                let ack: Value = serde_json::from_slice(&b).expect("ack");
                                assert_eq!(ack["key"], key.as_str());
                                assert_eq!(ack["rows"].as_u64(), Some(rows.len() as u64), "{ack}");
                                if ack["duplicate"] == true {
                                    duplicates.fetch_add(1, Ordering::Relaxed);
                                }
                                acked.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            // The connection broke or was refused (the server is down or
                            // starting): the answer may be lost, the same report goes again.
                            None | Some((503, _)) => {
                                failed.fetch_add(1, Ordering::Relaxed);
                                assert!(
                                    Instant::now() < deadline,
                                    "{key}: no answer within {WAIT:?}"
                                );
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Some((code, b)) => {
                                panic!("{key}: {code} {}", String::from_utf8_lossy(&b))
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let total = CLIENTS * REPORTS;
    wait_for("a third of the reports to be acknowledged", || {
        (acked.load(Ordering::Relaxed) >= total / 3).then_some(())
    });
    let home = t.tmp.path().to_path_buf();
    let before = acked.load(Ordering::Relaxed);
    // SIGKILL, as `kill -9`, with twenty clients sending; then the same data directory.
    t.server.restart(&home);
    let after_kill = failed.load(Ordering::Relaxed);
    for c in clients {
        c.join().expect("a client thread panicked");
    }
    assert_eq!(acked.load(Ordering::Relaxed), total);
    assert!(before < total, "the kill came before the clients were done");
    assert!(
        after_kill > 0,
        "requests were interrupted by the kill ({before} of {total} acknowledged before it)"
    );
    // An answer lost in the crash, sent again after it: counted once already.
    let (code, ack) = post(&t.server, ALPHA, &t.alpha[0], "c0-r0", &kill_report(0, 0));
    assert_eq!(
        (code, ack["duplicate"].as_bool()),
        (200, Some(true)),
        "{ack}"
    );
    eprintln!(
        "kill -9: {before} of {total} reports acknowledged before the kill, {} failed attempts, \
         {} retries answered as duplicates",
        failed.load(Ordering::Relaxed),
        duplicates.load(Ordering::Relaxed),
    );

    let mut want: BTreeMap<String, Figures> = BTreeMap::new();
    let mut who: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for c in 0..CLIENTS {
        for r in 0..REPORTS {
            for row in kill_report(c, r) {
                let id = row["id"].as_str().expect("id").to_string();
                who.entry(id.clone()).or_default().insert(c % t.alpha.len());
                let e = want.entry(id).or_default();
                e.sessions += row["sessions"].as_u64().expect("sessions");
                e.reads += row["reads"].as_u64().expect("reads");
                for p in row["injections"].as_array().expect("injections") {
                    let n = p["n"].as_u64().expect("n");
                    e.injections += n;
                    *e.by_hook
                        .entry(p["hook"].as_str().expect("hook").into())
                        .or_default() += n;
                    *e.by_agent
                        .entry(p["agent"].as_str().expect("agent").into())
                        .or_default() += n;
                }
            }
        }
    }
    for (id, e) in &mut want {
        e.people = who[id].len();
    }
    let summary = t.server.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/usage"),
        Some(&t.alpha[1]),
        200,
    );
    assert_eq!(summary["people"], 4);
    let counts = |v: &Value| -> BTreeMap<String, u64> {
        v.as_object()
            .expect("object")
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().expect("count")))
            .collect()
    };
    let got: BTreeMap<String, Figures> = summary["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let n = |f: &str| e[f].as_u64().unwrap_or_else(|| panic!("{f} in {e}"));
            let figures = Figures {
                injections: n("injections"),
                sessions: n("sessions"),
                reads: n("reads"),
                people: n("people") as usize,
                by_hook: counts(&e["by_hook"]),
                by_agent: counts(&e["by_agent"]),
            };
            (e["id"].as_str().expect("id").to_string(), figures)
        })
        .collect();
    assert_eq!(
        got, want,
        "acknowledged counts are the sum of what the clients sent"
    );
}
