//! Faults and attacks found by adversarial testing: a long-running server following a moving
//! upstream, pushes that inflate to gigabytes, writes whose names collide with what is there,
//! idempotency keys reused for another body, idle connections, empty webhook secrets.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::common::*;

/// Commits `files` in the upstream's work clone and pushes, without the pull of
/// `Upstream::commit` (nothing else pushes in these tests between two rounds).
fn commit_and_push(up: &Upstream, files: &[(String, String)], msg: &str) -> String {
    for (p, c) in files {
        let path = up.work.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, c).expect("write");
    }
    git(&up.work, &["add", "-A"]);
    git(&up.work, &["commit", "-q", "-m", msg]);
    git(&up.work, &["push", "-q", "origin", "HEAD:main"]);
    up.head()
}

fn refresh_wait(c: &Client, s: &Server, project: &str, token: &str) -> (StatusCode, Value) {
    let r = c
        .post(s.u(&format!("/v1/projects/{project}/refresh?wait=1")))
        .bearer_auth(token)
        .send()
        .expect("refresh");
    let st = r.status();
    (st, r.json().unwrap_or(Value::Null))
}

/// Pack files of a bare repository (and `.keep` files, which stop git from consolidating).
fn pack_files(repo: &Path, ext: &str) -> usize {
    std::fs::read_dir(repo.join("objects/pack"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == ext))
                .count()
        })
        .unwrap_or(0)
}

/// gix's object store has a fixed number of pack slots (32 by default); every fetch that
/// brings a pack takes one. A server must keep following its upstream for weeks, so: many
/// rounds of upstream commits, each picked up by a refresh, small ones (loose objects) and
/// big ones (a pack each), then a write whose push must not be refused.
/// `HELIX_TEST_FETCH_ROUNDS` raises the number of rounds (500 for the figure in the docs).
#[test]
fn server_keeps_following_a_moving_upstream_through_many_fetches() {
    let rounds: usize = std::env::var("HELIX_TEST_FETCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(72);
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let c = client();
    let tok = fx.tok("kb/alice").to_string();
    let local = mirror(&fx.data, &up.bare);
    let started = Instant::now();
    for i in 0..rounds {
        // Every sixth round brings more objects than `fetch.unpackLimit`: a new pack.
        let n = if i % 6 == 5 { 120 } else { 1 };
        let files: Vec<(String, String)> = (0..n)
            .map(|j| {
                (
                    format!("rounds/r{i}-{j}.md"),
                    format!("# Round {i} file {j}\n\nFetched in round {i}.\n"),
                )
            })
            .collect();
        let head = commit_and_push(&up, &files, &format!("round {i}"));
        let (st, v) = refresh_wait(&c, &s, "kb", &tok);
        assert_eq!(st, StatusCode::OK, "round {i}: {v}");
        assert_eq!(v["commit"], head.as_str(), "round {i}: {v}");
        assert_eq!(pack_files(&local, "keep"), 0, "round {i}: .keep files left");
    }
    eprintln!(
        "{rounds} fetches in {:.1} s; {} packs in the server's repository",
        started.elapsed().as_secs_f64(),
        pack_files(&local, "pack")
    );
    // git consolidates packs; they never pile up one per fetch.
    assert!(pack_files(&local, "pack") <= 52, "packs pile up");
    let st = wait_status(&s, "kb", &tok, |_| true);
    assert!(st["last_fetch"]["error"].is_null(), "{st}");
    // The upstream moves once more without a refresh: the write's push is refused, the
    // server fetches, re-applies and lands it.
    let head = commit_and_push(
        &up,
        &[(
            "ops/last.md".into(),
            "# Last\n\nPushed behind the server's back.\n".into(),
        )],
        "behind the server's back",
    );
    let body = json!({"topic": "ops", "title": "After many fetches", "body": "Still lands."});
    let (st, v) = post_entry(&c, &s, "kb", &tok, Some("after-many"), &body);
    assert_eq!(st, StatusCode::CREATED, "{v}");
    let files = tree_files(&up.bare, "main");
    assert!(files.contains_key("ops/after-many-fetches.md"));
    assert!(files.contains_key("ops/last.md"));
    assert_eq!(
        git(&up.bare, &["rev-parse", "main~1"]).trim(),
        head,
        "the write sits on top of the upstream's commit"
    );
    fsck(&local);
}

/// Peak resident memory of a process, from `/proc` (Linux).
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM");
    kb * 1024
}

/// A push of a few hundred kilobytes that inflates to hundreds of megabytes (a run of zeros
/// in an entry file) is reported as too big; the server never holds it in memory.
#[test]
fn a_blob_that_inflates_to_hundreds_of_megabytes_costs_no_memory() {
    // `HELIX_TEST_ZEROS_MB` for the figure in the docs (1536: the 1.5 GB of the report).
    let zeros: u64 = std::env::var("HELIX_TEST_ZEROS_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
        << 20;
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let tok = fx.tok("kb/alice").to_string();
    let head = up.head();
    wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let before = peak_rss_bytes(s.child.id());
    // Written and added in a streaming way (no 384 MB buffer in this test either).
    let path = up.work.join("big/zeros.md");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(zeros).expect("sparse file of zeros");
    drop(f);
    git(
        &up.work,
        &["-c", "core.bigFileThreshold=1m", "add", "big/zeros.md"],
    );
    git(&up.work, &["commit", "-q", "-m", "zeros"]);
    git(&up.work, &["push", "-q", "origin", "HEAD:main"]);
    std::fs::remove_file(&path).expect("rm");
    let head = up.head();
    let (st, v) = refresh_wait(&client(), &s, "kb", &tok);
    assert_eq!(
        (st, v["commit"].as_str()),
        (StatusCode::OK, Some(head.as_str())),
        "{v}"
    );
    let status = wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let diag = status["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["path"] == "big/zeros.md")
        .unwrap_or_else(|| panic!("no diagnostic for the huge file: {status}"));
    assert!(
        diag["reason"]
            .as_str()
            .unwrap_or("")
            .contains(&zeros.to_string()),
        "{diag}"
    );
    let after = peak_rss_bytes(s.child.id());
    eprintln!(
        "server peak RSS: {} MiB before, {} MiB after",
        before >> 20,
        after >> 20
    );
    assert!(
        after < before + (64 << 20),
        "peak memory grew from {} MiB to {} MiB",
        before >> 20,
        after >> 20
    );
}

/// Topics and titles that collide with what the repository holds — a file, a symlink, a
/// submodule, a folder named like an entry file, a name differing only in case — never
/// replace or delete it: the topic is refused (409 `topic_conflict`), the title gets the
/// next free name. An idempotency key reused for another entry is refused (422).
#[test]
fn writes_never_replace_or_delete_existing_paths() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    let w = &up.work;
    for (p, c) in [
        (
            "ops/runbook",
            "not an entry: a plain file without extension\n",
        ),
        ("license", "MIT\n"),
        (
            "build/dir.md/inner.md",
            "# Inner\n\nAn entry inside a folder named dir.md.\n",
        ),
        ("build/Hello.md", "# Hello\n\nCapitalised file name.\n"),
        (
            "docs/target.md",
            "# Target\n\nWhat the symlink points at.\n",
        ),
        (
            "Runbooks/deploy.md",
            "# Deploy\n\nA folder whose name has a capital.\n",
        ),
    ] {
        let path = w.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, c).expect("write");
    }
    std::fs::create_dir_all(w.join("links")).expect("mkdir");
    std::os::unix::fs::symlink("../docs", w.join("links/docs")).expect("symlink");
    git(w, &["add", "-A"]);
    let sub = git(w, &["rev-parse", "HEAD"]).trim().to_string();
    git(
        w,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sub},vendor/lib"),
        ],
    );
    std::fs::write(
        w.join(".gitmodules"),
        "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = https://example.invalid/lib.git\n",
    )
    .expect("gitmodules");
    git(w, &["add", ".gitmodules"]);
    git(w, &["commit", "-q", "-m", "things in the way"]);
    git(w, &["push", "-q", "origin", "HEAD:main"]);
    let before = git(&up.bare, &["ls-tree", "-r", "main"]);
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let tok = fx.tok("kb/alice").to_string();
    let head = up.head();
    wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let c = client();

    for (topic, what) in [
        ("ops/runbook", "`ops/runbook` is a file"),
        ("license", "`license` is a file"),
        ("links/docs", "`links/docs` is a symlink"),
        ("vendor/lib", "`vendor/lib` is a submodule"),
        ("links/docs/deeper", "`links/docs` is a symlink"),
        ("runbooks", "`Runbooks` differs from it only in case"),
    ] {
        let body =
            json!({"topic": topic, "title": "Collides", "body": "Must not replace anything."});
        let (st, v) = post_entry(&c, &s, "kb", &tok, None, &body);
        assert_eq!(st, StatusCode::CONFLICT, "topic {topic}: {v}");
        assert_eq!(v["error"]["code"], "topic_conflict", "topic {topic}: {v}");
        let msg = v["error"]["message"].as_str().unwrap_or("");
        assert!(msg.contains(what), "topic {topic}: {msg}");
    }
    assert_eq!(up.head(), head, "nothing was committed for refused topics");

    for (title, expect) in [("dir", "build/dir-2.md"), ("hello", "build/hello-2.md")] {
        // Same titles on purpose: forced past the near-duplicate check to reach placement.
        let body =
            json!({"topic": "build", "title": title, "body": "Gets a free name.", "force": true});
        let (st, v) = post_entry(&c, &s, "kb", &tok, None, &body);
        assert_eq!(st, StatusCode::CREATED, "{title}: {v}");
        assert_eq!(v["path"], expect, "{title}: {v}");
    }
    // Two writes of one batch whose names differ only in case get distinct files.
    let (a, b) = std::thread::scope(|sc| {
        let post = |title: &'static str| {
            let (c, s, tok) = (&c, &s, &tok);
            sc.spawn(move || {
                post_entry(
                    c,
                    s,
                    "kb",
                    tok,
                    None,
                    &json!({"topic": "ci", "title": title, "body": "Same slug.", "force": true}),
                )
            })
        };
        let (a, b) = (post("Flaky"), post("FLAKY"));
        (a.join().expect("a"), b.join().expect("b"))
    });
    assert_eq!(
        (a.0, b.0),
        (StatusCode::CREATED, StatusCode::CREATED),
        "{a:?} {b:?}"
    );
    let mut paths = vec![
        a.1["path"].as_str().unwrap_or("").to_string(),
        b.1["path"].as_str().unwrap_or("").to_string(),
    ];
    paths.sort();
    assert_eq!(paths, ["ci/flaky-2.md", "ci/flaky.md"]);

    // Everything that was there is still there, unchanged.
    let after = git(&up.bare, &["ls-tree", "-r", "main"]);
    for line in before.lines() {
        assert!(
            after.contains(line),
            "lost or changed: {line}\nafter:\n{after}"
        );
    }
    fsck(&up.bare);

    // One key, one entry.
    let first = json!({"topic": "ops", "title": "Keyed", "body": "The first entry for this key."});
    let other = json!({"topic": "ops", "title": "Keyed", "body": "Another entry, same key."});
    let (st, v1) = post_entry(&c, &s, "kb", &tok, Some("key-1"), &first);
    assert_eq!(st, StatusCode::CREATED, "{v1}");
    let (st, v) = post_entry(&c, &s, "kb", &tok, Some("key-1"), &other);
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["error"]["code"], "idempotency_key_reused", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("ops/keyed.md"),
        "{v}"
    );
    // Another token holder reusing the key is refused too; the true retry still replays.
    let (st, v) = post_entry(&c, &s, "kb", fx.tok("kb/bob"), Some("key-1"), &first);
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (st, v) = post_entry(&c, &s, "kb", &tok, Some("key-1"), &first);
    assert_eq!((st, &v), (StatusCode::OK, &v1));
    // After a restart, the key is known from the log and from the commit trailer alike.
    std::fs::remove_file(fx.data.join("projects/kb/idempotency.jsonl")).expect("rm log");
    let s = s.restart();
    let (st, v) = post_entry(&client(), &s, "kb", &tok, Some("key-1"), &other);
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "after restart: {v}");
    let (st, v) = post_entry(&client(), &s, "kb", &tok, Some("key-1"), &first);
    assert_eq!(st, StatusCode::OK, "after restart: {v}");
    assert_eq!(v["path"], "ops/keyed.md");
}

/// An empty `webhook_secret` would make an HMAC under the empty key (or an empty
/// `X-Gitlab-Token`) a valid signature: the server refuses to start with it.
#[test]
fn an_empty_webhook_secret_is_a_configuration_error() {
    let fx = Fixture::new();
    std::fs::write(
        &fx.config,
        "[[projects]]\nname = \"kb\"\nwebhook_secret = \"\"\n",
    )
    .expect("config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helix-server"));
    let out = helix_test_support::isolate(&mut cmd, fx.root.as_path())
        .arg("--config")
        .arg(&fx.config)
        .args(["--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&fx.data)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("webhook_secret is empty"), "{err}");
    assert!(
        err.contains(&fx.config.display().to_string()),
        "names the file: {err}"
    );
}

/// `refresh?wait=1` whose fetch fails says so (503 and the reason) instead of "done"; the
/// last good artifact stays served and `/status` reports the failure.
#[test]
fn a_waited_refresh_whose_fetch_fails_answers_an_error() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let tok = fx.tok("kb/alice").to_string();
    let head = up.head();
    wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    std::fs::rename(&up.bare, fx.root.join("gone.git")).expect("move upstream away");
    let (st, v) = refresh_wait(&client(), &s, "kb", &tok);
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    let msg = v["error"]["message"].as_str().unwrap_or("");
    assert!(msg.contains("fetch"), "{msg}");
    let status = wait_status(&s, "kb", &tok, |_| true);
    assert_eq!(status["commit"], head.as_str(), "{status}");
    assert_eq!(status["entries"], 3, "{status}");
    assert!(status["last_fetch"]["error"].is_string(), "{status}");
}

/// Starts the server on `config` with debug logs captured in a file.
fn start_logged(fx: &Fixture, log: &Path) -> Server {
    let file = std::fs::File::create(log).expect("log file");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helix-server"));
    let mut child = helix_test_support::isolate(&mut cmd, fx.root.as_path())
        .arg("--config")
        .arg(&fx.config)
        .args(["--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&fx.data)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        .spawn()
        .expect("server starts");
    let url = read_listen_line(&mut child);
    Server {
        child,
        url,
        config: fx.config.clone(),
        data: fx.data.clone(),
    }
}

/// Connections that send nothing, or their headers a byte at a time, are closed after
/// `header_timeout_secs`; while they are open (even with every connection slot taken) other
/// clients are served, at worst after that timeout.
#[test]
fn idle_and_slow_connections_are_closed_and_never_starve_others() {
    use std::io::{Read, Write};
    let fx = Fixture::new();
    std::fs::write(
        &fx.config,
        "header_timeout_secs = 2\nmax_connections = 8\nanonymous_loopback = true\n[[projects]]\nname = \"kb\"\nseed_examples = true\n",
    )
    .expect("config");
    let s = fx.start();
    let addr = s.url.trim_start_matches("http://").to_string();
    let started = Instant::now();
    let mut idle: Vec<std::net::TcpStream> = (0..6)
        .map(|_| std::net::TcpStream::connect(&addr).expect("connect"))
        .collect();
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    let dripper = std::thread::spawn(move || {
        // One header byte every 300 ms, for longer than the timeout allows.
        for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaa" {
            if slow.write_all(&[*b]).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        false
    });
    // A kept-alive connection that finished one request, then idles.
    let mut kept = std::net::TcpStream::connect(&addr).expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let mut buf = [0u8; 512];
    let n = kept.read(&mut buf).expect("response");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // All 8 slots are taken now; a normal client still gets its answer.
    let r = client()
        .get(s.u("/healthz"))
        .send()
        .expect("served despite idle sockets");
    assert_eq!(r.status(), StatusCode::OK);
    // Every idle connection is closed by the server (read returns 0 or an error).
    idle.push(kept);
    for c in &mut idle {
        c.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let r = c.read(&mut buf);
        assert!(
            matches!(r, Ok(0) | Err(_))
                && !matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "idle connection still open after {:?}: {r:?}",
            started.elapsed()
        );
    }
    assert!(
        dripper.join().expect("dripper"),
        "the slow client was never cut off"
    );
    let r = client().get(s.u("/healthz")).send().expect("served");
    assert_eq!(r.status(), StatusCode::OK);
}

/// A token put in the query string (helix never reads it there) does not reach the logs,
/// even at debug level; a header token never did.
#[test]
fn query_string_tokens_never_reach_the_logs() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let log = fx.root.join("server.log");
    let s = start_logged(&fx, &log);
    let tok = fx.tok("kb/reader").to_string();
    let c = client();
    for q in [
        format!("?token={tok}"),
        format!("?access_token={tok}&x=1"),
        format!("?commit=abcd&api_key={tok}"),
    ] {
        let _ = c
            .get(s.u(&format!("/v1/projects/kb/status{q}")))
            .bearer_auth(&tok)
            .send()
            .expect("request");
    }
    let _ = c.get(s.u(&format!("/nowhere?token={tok}"))).send();
    drop(s);
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("/v1/projects/kb/status"),
        "requests are logged: {text}"
    );
    assert!(text.contains("token=[redacted]"), "{text}");
    assert!(!text.contains(&tok), "a token reached the log:\n{text}");
    assert!(
        !text.contains(&tok[tok.len() - 12..]),
        "part of a token reached the log"
    );
}
