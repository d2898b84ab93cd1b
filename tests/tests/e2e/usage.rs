//! Usage reports end to end (docs/usage.md): a developer's injection log — lines written as
//! the hooks write them, reads made with the real `helix read` and MCP `read` — reaches the
//! real server through `helix sync` as counts, exactly once: a second sync sends nothing,
//! a report whose answer was lost is sent again with its key and counted once, `[usage]
//! report = false` sends nothing, a project whose server refuses reports leaves the sync
//! green, and `helix usage` prints the figures.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::harness::{Dev, Server, Upstream, WAIT};

const TEAM: &str = "team";
const QUIET: &str = "quiet";

const LINKER: &str = "build/linker-oom.md";
const REBASE: &str = "git/rebase-onto.md";
const DRAIN: &str = "ops/drain-nodes.md";
const OLD: &str = "ops/old-runbook.md";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// A loopback TCP proxy in front of a server. While `lose` is set, a connection that starts
/// with a usage report is forwarded to the server, which counts it, and closed as soon as
/// the answer comes, without passing it on: a report whose answer was lost.
struct Proxy {
    url: String,
    lose: Arc<AtomicBool>,
}

impl Proxy {
    fn start(server: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy address"));
        let target = server.trim_start_matches("http://").to_string();
        let lose = Arc::new(AtomicBool::new(false));
        let flag = lose.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (target, lose) = (target.clone(), flag.clone());
                std::thread::spawn(move || forward(conn, &target, &lose));
            }
        });
        Proxy { url, lose }
    }
}

fn forward(client: TcpStream, target: &str, lose: &AtomicBool) {
    let Ok(server) = TcpStream::connect(target) else {
        return;
    };
    let _ = client.set_read_timeout(Some(WAIT));
    // The request line: a report's connection carries nothing else.
    let mut head = [0u8; 128];
    let mut n = 0;
    for _ in 0..100 {
        n = client.peek(&mut head).unwrap_or(0);
        if n == 0 || head[..n].windows(2).any(|w| w == b"\r\n") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let line = String::from_utf8_lossy(&head[..n]).into_owned();
    let report = line.starts_with("POST ") && line.contains("/usage ");
    let (Ok(mut from_client), Ok(mut to_server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_server);
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let (mut from_server, mut to_client) = (server, client);
    if report && lose.load(Ordering::SeqCst) {
        let mut answer = [0u8; 1];
        let _ = from_server.read(&mut answer);
        let _ = to_client.shutdown(Shutdown::Both);
        return;
    }
    let _ = std::io::copy(&mut from_server, &mut to_client);
    let _ = to_client.shutdown(Shutdown::Write);
}

/// The code repository's directory as a process sees it (`getcwd`: symlinks resolved).
fn real(dir: &Path) -> String {
    dir.canonicalize()
        .expect("canonical path")
        .to_string_lossy()
        .into_owned()
}

/// Appends journal lines to `dev`'s injection log, as the hooks write them.
fn log(dev: &Dev, records: &[Value]) {
    let dir = dev.cache_home().join("helix");
    std::fs::create_dir_all(&dir).expect("create cache dir");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("injections.log"))
        .expect("open injection log");
    for r in records {
        writeln!(f, "{r}").expect("append to the injection log");
    }
}

fn injection(
    t: i64,
    hook: &str,
    session: Option<&str>,
    agent: Option<&str>,
    ids: &[&str],
) -> Value {
    let entries: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "score": 4.2, "signal": "separation", "points": 5.0}))
        .collect();
    let mut v = json!({"t": t, "hook": hook, "entries": entries,
                       "chars": 300});
    if let Some(s) = session {
        v["session"] = json!(s);
    }
    if let Some(a) = agent {
        v["agent"] = json!(a);
    }
    v
}

/// The usage state files of `dev`'s machine: `$XDG_STATE_HOME/helix/servers/*/usage/P.json`.
fn state_file(dev: &Dev, project: &str) -> Option<PathBuf> {
    let servers = dev.home.join(".local/state/helix/servers");
    std::fs::read_dir(servers)
        .ok()?
        .flatten()
        .map(|e| e.path().join("usage").join(format!("{project}.json")))
        .find(|p| p.exists())
}

fn state(dev: &Dev, project: &str) -> Value {
    let path = state_file(dev, project).expect("a usage state file");
    serde_json::from_slice(&std::fs::read(&path).expect("read usage state")).expect("JSON state")
}

/// The server's summary of `project` (30 days), and its entry `id` (`Null` when absent).
fn summary(server: &Server, token: &str, project: &str) -> Value {
    server.json(
        "GET",
        &format!("/v1/projects/{project}/usage?days=30"),
        Some(token),
        200,
    )
}

fn entry(summary: &Value, id: &str) -> Value {
    summary["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// (injections, sessions, reads, people) of one entry.
fn figures(summary: &Value, id: &str) -> (u64, u64, u64, u64) {
    let e = entry(summary, id);
    let n = |k: &str| e[k].as_u64().unwrap_or(0);
    (n("injections"), n("sessions"), n("reads"), n("people"))
}

struct Team {
    _tmp: tempfile::TempDir,
    server: Server,
    proxy: Proxy,
    alice: String,
    bob: String,
    carol: String,
}

fn team() -> Team {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(&dir.join("team"));
    let head = up.commit_as(
        "Admin",
        &[
            (LINKER, "# Linker OOM in release builds\n\nUse lld.\n"),
            (REBASE, "# Rebase onto\n\nUse git rebase --onto.\n"),
            (
                DRAIN,
                "# Drain nodes before deploying\n\nOr requests drop.\n",
            ),
            (OLD, "# The old runbook\n\nNobody reads it.\n"),
        ],
        "Seed",
    );
    let quiet = Upstream::new(&dir.join("quiet"));
    let quiet_head = quiet.commit_as("Admin", &[("a/b.md", "# B\n\nText.\n")], "Seed");
    let config = Server::configure(
        dir,
        &format!(
            "[[projects]]\nname = {TEAM:?}\nupstream = {:?}\npoll_interval_secs = 3600\n\
             [[projects]]\nname = {QUIET:?}\nupstream = {:?}\npoll_interval_secs = 3600\nusage = false\n",
            up.bare.display().to_string(),
            quiet.bare.display().to_string()
        ),
    );
    let alice = Server::token_add(&config, TEAM, "alice", "read,write");
    let bob = Server::token_add(&config, TEAM, "bob", "read");
    let carol = Server::token_add(&config, QUIET, "carol", "read");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving(TEAM, &alice, &head);
    server.wait_serving(QUIET, &carol, &quiet_head);
    let proxy = Proxy::start(&server.url);
    Team {
        _tmp: tmp,
        server,
        proxy,
        alice,
        bob,
        carol,
    }
}

#[test]
fn a_sync_reports_counts_once_and_helix_usage_prints_them() {
    let t = team();
    let alice = Dev::new("alice", &t.proxy.url, &[TEAM], &t.alice);
    alice.run(&["sync"]).ok("alice: first sync");
    let root = real(&alice.root);
    let base = now_ms() - 60_000;
    let mut r1 = injection(
        base,
        "prompt",
        Some("s1"),
        Some("claude"),
        &["team:build/linker-oom.md", "team:git/rebase-onto.md"],
    );
    r1["cwd"] = json!(root);
    let mut r2 = injection(
        base + 1,
        "prompt",
        Some("s1"),
        Some("claude"),
        &["team:build/linker-oom.md"],
    );
    r2["cwd"] = json!(root);
    let mut r3 = injection(
        base + 2,
        "error",
        Some("s2"),
        Some("codex"),
        &["team:build/linker-oom.md"],
    );
    r3["cwd"] = json!(root);
    // An ambient call of a hook from before agents were named, without a session.
    let mut r4 = injection(
        base + 3,
        "ambient",
        None,
        None,
        &["team:ops/drain-nodes.md"],
    );
    r4["file"] = json!(format!("{root}/src/main.rs"));
    // Another project's entry of the same path.
    let r5 = injection(
        base + 4,
        "prompt",
        Some("s9"),
        Some("claude"),
        &["other:build/linker-oom.md"],
    );
    log(&alice, &[r1, r2, r3, r4, r5]);
    // The agent reads the linker entry in full, twice in the same session: one read.
    alice
        .run(&["read", "team:build/linker-oom.md"])
        .ok("helix read");
    alice.run(&["read", LINKER]).ok("helix read again");
    let journal = std::fs::read_to_string(alice.cache_home().join("helix/injections.log"))
        .expect("read the injection log");
    let reads: Vec<Value> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["hook"] == "read")
        .collect();
    assert_eq!(reads.len(), 2, "{journal}");
    assert_eq!(reads[0]["cwd"], json!(root));
    assert_eq!(reads[0]["entries"][0]["id"], "team:build/linker-oom.md");
    // `helix log` shows read records with the rest.
    let logged = alice.run(&["log"]).ok("helix log");
    assert!(logged.stdout.contains("read"), "{}", logged.stdout);

    let sync = alice.run(&["sync"]).ok("alice: sync with a report");
    assert!(
        sync.stderr.contains("team: reported usage of 3 entries"),
        "{}",
        sync.stderr
    );
    let s = summary(&t.server, &t.alice, TEAM);
    assert_eq!(s["people"], 1, "{s}");
    assert_eq!(figures(&s, LINKER), (3, 2, 1, 1), "{s}");
    assert_eq!(figures(&s, REBASE), (1, 1, 0, 1), "{s}");
    assert_eq!(figures(&s, DRAIN), (1, 1, 0, 1), "{s}");
    let linker = entry(&s, LINKER);
    assert_eq!(linker["by_hook"], json!({"prompt": 2, "error": 1}));
    assert_eq!(linker["by_agent"], json!({"claude": 2, "codex": 1}));
    assert_eq!(entry(&s, DRAIN)["by_agent"], json!({"claude": 1}));
    let unused: Vec<&str> = s["not_injected"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(unused, [OLD], "{s}");

    // Nothing new: nothing sent, nothing counted twice.
    let again = alice.run(&["sync"]).ok("alice: sync with nothing new");
    assert!(!again.stderr.contains("usage"), "{}", again.stderr);
    assert_eq!(summary(&t.server, &t.alice, TEAM), s);

    // MCP `read` of the rebase entry (injected in session s1), and a new session.
    {
        let mut mcp = alice.mcp();
        let res = mcp.call("read", json!({"id": "team:git/rebase-onto.md"}));
        assert_ne!(res["isError"], true, "{res}");
    }
    let mut r6 = injection(
        now_ms(),
        "prompt",
        Some("s3"),
        Some("claude"),
        &["team:git/rebase-onto.md"],
    );
    r6["cwd"] = json!(root);
    log(&alice, &[r6]);
    // The report reaches the server; its answer is lost on the way back.
    t.proxy.lose.store(true, Ordering::SeqCst);
    let lost = alice
        .run(&["sync"])
        .ok("alice: sync whose report's answer is lost");
    t.proxy.lose.store(false, Ordering::SeqCst);
    assert!(
        lost.stderr.contains("team: usage report not sent ("),
        "{}",
        lost.stderr
    );
    assert_eq!(
        lost.stderr.lines().filter(|l| l.contains("usage")).count(),
        1
    );
    let kept = state(&alice, TEAM);
    assert!(
        kept["pending"]["reports"][0]["key"].is_string(),
        "the report is kept with its key: {kept}"
    );
    assert_eq!(
        figures(&summary(&t.server, &t.alice, TEAM), REBASE),
        (2, 2, 1, 1)
    );
    // The next sync sends it again, with its key: counted once; then what is new since.
    let mut r7 = injection(
        now_ms(),
        "prompt",
        Some("s4"),
        Some("claude"),
        &["team:ops/drain-nodes.md"],
    );
    r7["cwd"] = json!(root);
    log(&alice, &[r7]);
    let resent = alice.run(&["sync"]).ok("alice: sync resends the report");
    assert!(
        resent.stderr.contains("team: reported usage of 2 entries"),
        "{}",
        resent.stderr
    );
    let after = state(&alice, TEAM);
    assert!(after["pending"].is_null(), "{after}");
    assert!(
        after["cursor"].as_i64() > kept["cursor"].as_i64(),
        "{after}"
    );
    let s = summary(&t.server, &t.alice, TEAM);
    assert_eq!(figures(&s, REBASE), (2, 2, 1, 1), "{s}");
    assert_eq!(figures(&s, LINKER), (3, 2, 1, 1), "{s}");
    assert_eq!(figures(&s, DRAIN), (2, 2, 0, 1), "{s}");
    // `helix usage`: the figures, the entries injected but never read, the unused ones.
    let table = alice.run(&["usage"]).ok("helix usage");
    let line = table
        .stdout
        .lines()
        .find(|l| l.starts_with(LINKER))
        .unwrap_or_else(|| panic!("no line for {LINKER}:\n{}", table.stdout));
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1..5], ["3", "1", "2", "1"], "{line}");
    assert!(
        table
            .stdout
            .starts_with("team: 3 entries used in the last 30 days"),
        "{}",
        table.stdout
    );
    let never = table
        .stdout
        .split("injected but never read")
        .nth(1)
        .unwrap_or_else(|| panic!("no unread section:\n{}", table.stdout));
    assert!(
        never.contains(DRAIN) && !never.contains(LINKER) && !never.contains(REBASE),
        "{never}"
    );
    let unused = alice
        .run(&["usage", "--unused", "--days", "7"])
        .ok("helix usage --unused");
    assert!(
        unused.stdout.contains(OLD) && unused.stdout.contains("The old runbook"),
        "{}",
        unused.stdout
    );
    assert!(!unused.stdout.contains(LINKER), "{}", unused.stdout);
    let json_out = alice
        .run(&["usage", "--json"])
        .ok("helix usage --json")
        .json();
    assert_eq!(json_out, s);
}

#[test]
fn reports_turned_off_or_refused_never_fail_a_sync() {
    let t = team();
    // Bob turned reports off: his log stays on his machine.
    let bob = Dev::new("bob", &t.proxy.url, &[TEAM], &t.bob);
    let config = bob.config_home().join("helix/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("read user config");
    text.push_str("\n[usage]\nreport = false\n");
    std::fs::write(&config, text).expect("write user config");
    let root = real(&bob.root);
    let mut r = injection(
        now_ms() - 1000,
        "prompt",
        Some("b1"),
        None,
        &["team:build/linker-oom.md"],
    );
    r["cwd"] = json!(root);
    log(&bob, &[r]);
    let sync = bob.run(&["sync"]).ok("bob: sync without reports");
    assert!(!sync.stderr.contains("usage"), "{}", sync.stderr);
    assert!(state_file(&bob, TEAM).is_none());
    let s = summary(&t.server, &t.bob, TEAM);
    assert_eq!(
        (s["people"].as_u64(), entry(&s, LINKER)),
        (Some(0), Value::Null),
        "{s}"
    );

    // Carol's project keeps no usage (`usage = false`): the sync stays green, says so once,
    // drops the report and does not offer one again for a day.
    let carol = Dev::new("carol", &t.proxy.url, &[QUIET], &t.carol);
    let mut r = injection(
        now_ms() - 1000,
        "prompt",
        Some("c1"),
        None,
        &["quiet:a/b.md"],
    );
    r["cwd"] = json!(real(&carol.root));
    log(&carol, &[r]);
    let sync = carol.run(&["sync"]).ok("carol: sync refused reports");
    assert!(
        sync.stderr
            .contains("quiet: the server takes no usage reports"),
        "{}",
        sync.stderr
    );
    let st = state(&carol, QUIET);
    assert!(st["pending"].is_null() && st["cursor"].is_i64(), "{st}");
    assert!(
        st["paused_until"].as_i64() > Some(now_ms() / 1000 + 3600),
        "{st}"
    );
    let mut r = injection(now_ms(), "prompt", Some("c2"), None, &["quiet:a/b.md"]);
    r["cwd"] = json!(real(&carol.root));
    log(&carol, &[r]);
    let again = carol.run(&["sync"]).ok("carol: sync while paused");
    assert!(!again.stderr.contains("usage"), "{}", again.stderr);
    assert_eq!(state(&carol, QUIET), st);
    let refused = carol.run(&["usage"]);
    assert_eq!(refused.code, Some(2), "{}", refused.stdout);
    assert!(
        refused.stderr.contains("usage_disabled") && refused.stderr.contains("usage = false"),
        "{}",
        refused.stderr
    );

    // A wrong token and an unreachable server: errors that say what is wrong.
    let mallory = Dev::new("mallory", &t.server.url, &[TEAM], "hx_not-a-token");
    let r = mallory.run(&["usage"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("401"), "{}", r.stderr);
    let nobody = Dev::new("nobody", "http://127.0.0.1:9", &[TEAM], &t.bob);
    let r = nobody.run(&["usage"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("cannot reach http://127.0.0.1:9"),
        "{}",
        r.stderr
    );
}
