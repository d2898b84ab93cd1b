//! The server process's lifecycle: SIGKILL mid-write and mid-ingest, SIGTERM, SIGHUP, restarts
//! with the upstream gone, and starting with no config file (the embedded default project).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::common::*;

#[test]
fn kill_during_writes_and_ingest_then_restart_keeps_everything_acknowledged() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let mut s = fx.start();
    let reader = fx.tok("kb/reader").to_string();
    let writer = fx.tok("kb/alice").to_string();
    let head = up.head();
    wait_status(&s, "kb", &reader, |v| v["commit"] == head.as_str());

    let url = s.u("/v1/projects/kb/entries");
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for i in 0..40 {
        let (url, writer, acked) = (url.clone(), writer.clone(), acked.clone());
        handles.push(std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5 * i as u64));
            let body = json!({"topic": "crash", "title": format!("Crash note {i}"), "body": format!("Marker c{i}x.")});
            let r = client()
                .post(&url)
                .bearer_auth(&writer)
                .header("Idempotency-Key", format!("crash-{i}"))
                .json(&body)
                .send();
            if let Ok(r) = r
                && r.status() == StatusCode::CREATED
            {
                let v: Value = r.json().expect("json");
                acked.lock().expect("lock").push((i, v));
            }
        }));
    }
    // Kill as soon as the first write is acknowledged: others are mid-commit or queued.
    let start = Instant::now();
    while acked.lock().expect("lock").is_empty() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    s.kill9();
    for h in handles {
        h.join().expect("thread");
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(!acked.is_empty());

    // Restart: the last good artifact is served at once, git is consistent.
    let s = s.restart();
    let (code, _, bytes, _) = get_index(&s, "kb", &reader);
    assert_eq!(
        code,
        StatusCode::OK,
        "last good artifact served after restart"
    );
    entry_ids(&bytes);
    fsck(&up.bare);
    fsck(&mirror(&fx.data, &up.bare));
    no_merges(&up.bare);
    let files = tree_files(&up.bare, "main");
    for (i, v) in &acked {
        let path = v["path"].as_str().expect("path");
        assert!(
            files
                .get(path)
                .is_some_and(|c| c.contains(&format!("Marker c{i}x."))),
            "acknowledged {path} missing"
        );
    }
    // Retrying every write after the crash: acknowledged ones answer 200 with the same body,
    // and every note ends up in git exactly once.
    let c = client();
    for i in 0..40 {
        let body = json!({"topic": "crash", "title": format!("Crash note {i}"), "body": format!("Marker c{i}x.")});
        let (st, v) = post_entry(&c, &s, "kb", &writer, Some(&format!("crash-{i}")), &body);
        if let Some((_, first)) = acked.iter().find(|(j, _)| *j == i) {
            assert_eq!(st, StatusCode::OK, "retry of acknowledged {i}: {v}");
            assert_eq!(v["path"], first["path"]);
        } else {
            assert!(
                st == StatusCode::CREATED || st == StatusCode::OK,
                "retry {i}: {st} {v}"
            );
        }
    }
    let files = tree_files(&up.bare, "main");
    for i in 0..40 {
        let n = files
            .values()
            .filter(|c| c.contains(&format!("Marker c{i}x.")))
            .count();
        assert_eq!(n, 1, "note {i} is in git {n} times");
    }
    let tip = up.head();
    wait_status(&s, "kb", &reader, |v| v["commit"] == tip.as_str());

    // Kill during an ingest: a refresh is requested and the server is killed at once.
    let mut s = s;
    let newer = up.commit(
        "Erin Gray",
        &[("ops/late.md", "# Late\n\nArrived during a crash.\n")],
        "late",
    );
    let r = c
        .post(s.u("/v1/projects/kb/refresh"))
        .bearer_auth(&writer)
        .send()
        .expect("refresh");
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    s.kill9();
    let s = s.restart();
    let (code, _, bytes, commit) = get_index(&s, "kb", &reader);
    assert_eq!(code, StatusCode::OK);
    assert!(commit == tip || commit == newer, "served {commit}");
    entry_ids(&bytes);
    wait_status(&s, "kb", &reader, |v| v["commit"] == newer.as_str());
    let (_, _, bytes, _) = get_index(&s, "kb", &reader);
    let ids = entry_ids(&bytes);
    assert!(ids.contains("ops/late.md"));
    for (_, v) in &acked {
        assert!(ids.contains(v["id"].as_str().expect("id")));
    }
}

#[test]
fn embedded_default_serves_examples_to_loopback_without_token() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helix-server"));
    let mut child = helix_test_support::isolate(&mut cmd, tmp.path())
        .current_dir(tmp.path())
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("server starts");
    let url = read_listen_line(&mut child);
    let s = Server {
        child,
        url,
        config: PathBuf::new(),
        data: tmp.path().join("helix-data"),
    };
    let c = client();
    assert_eq!(
        c.get(s.u("/healthz"))
            .send()
            .expect("get")
            .text()
            .expect("text"),
        "ok"
    );
    let examples = helix_server::project::EXAMPLES.len();
    let start = Instant::now();
    let list = loop {
        let v: Value = c
            .get(s.u("/v1/projects"))
            .send()
            .expect("get")
            .json()
            .expect("json");
        // Without embedded examples the repository stays empty until the first write.
        if v["projects"][0]["commit"].is_string() || examples == 0 {
            break v;
        }
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(list["projects"][0]["name"], "default");
    assert!(s.data.join("projects/default/repo.git").exists());
    let (st, v) = post_entry(
        &c,
        &s,
        "default",
        "",
        Some("first"),
        &json!({"topic": "notes", "title": "From loopback", "body": "No token needed."}),
    );
    // `bearer_auth("")` sends an empty token, which is refused; without the header it works.
    assert_eq!(st, StatusCode::UNAUTHORIZED, "{v}");
    let r = c
        .post(s.u("/v1/projects/default/entries"))
        .json(&json!({"topic": "notes", "title": "From loopback", "body": "No token needed."}))
        .send()
        .expect("post");
    assert_eq!(r.status(), StatusCode::CREATED);
    let v: Value = r.json().expect("json");
    assert_eq!(v["path"], "notes/from-loopback.md");
    let r = c
        .get(s.u("/v1/projects/default/index"))
        .send()
        .expect("get");
    assert_eq!(r.status(), StatusCode::OK);
    let ids = entry_ids(&r.bytes().expect("bytes"));
    assert!(ids.contains("notes/from-loopback.md"));
    assert!(
        ids.len() > examples.saturating_sub(1),
        "{} ids, {examples} examples",
        ids.len()
    );
}

#[test]
fn sigterm_finishes_in_flight_writes_then_exits() {
    let mut fx = Fixture::new();
    fx.configure(&[("solo", None)], None);
    let mut s = fx.start();
    let w = fx.tok("solo/alice").to_string();
    let url = s.u("/v1/projects/solo/entries");
    let mut handles = Vec::new();
    for i in 0..20 {
        let (url, w) = (url.clone(), w.clone());
        handles.push(std::thread::spawn(move || {
            let r = client()
                .post(&url)
                .bearer_auth(&w)
                .json(&json!({"topic": "t", "title": format!("Term {i}"), "body": format!("Marker t{i}x.")}))
                .send();
            r.ok().map(|r| (i, r.status()))
        }));
    }
    std::thread::sleep(Duration::from_millis(20));
    let pid = s.child.id().to_string();
    let st = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(st.success());
    let exit = s.child.wait().expect("wait");
    assert!(exit.success(), "exit status {exit:?}");
    let done: Vec<(usize, StatusCode)> = handles
        .into_iter()
        .filter_map(|h| h.join().expect("thread"))
        .collect();
    let repo = fx.data.join("projects/solo/repo.git");
    let files = if git(&repo, &["for-each-ref", "refs/heads/main"]).is_empty() {
        BTreeMap::new()
    } else {
        tree_files(&repo, "main")
    };
    for (i, st) in done {
        if st == StatusCode::CREATED {
            assert!(
                files
                    .values()
                    .any(|c| c.contains(&format!("Marker t{i}x."))),
                "acknowledged {i} missing"
            );
        }
    }
    fsck(&repo);
}

#[test]
fn restart_serves_last_good_artifact_while_upstream_is_gone_and_polling_resumes() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let text = std::fs::read_to_string(&fx.config).expect("config");
    std::fs::write(
        &fx.config,
        text.replace("poll_interval_secs = 3600", "poll_interval_secs = 1"),
    )
    .expect("config");
    let s = fx.start();
    let tok = fx.tok("kb/reader").to_string();
    let head = up.head();
    wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let (_, etag, _, _) = get_index(&s, "kb", &tok);
    // The upstream disappears; a restarted server still serves the last good artifact.
    let moved = fx.root.join("kb-away.git");
    std::fs::rename(&up.bare, &moved).expect("move upstream away");
    let s = s.restart();
    let (code, etag2, bytes, commit) = get_index(&s, "kb", &tok);
    assert_eq!(code, StatusCode::OK);
    assert_eq!((etag2, commit), (etag, head.clone()));
    assert_eq!(entry_ids(&bytes).len(), 3);
    let st = wait_status(&s, "kb", &tok, |v| v["last_fetch"]["error"].is_string());
    assert_eq!(st["commit"], head.as_str());
    // Back again, with a new commit: the poll picks it up without a refresh call.
    std::fs::rename(&moved, &up.bare).expect("move upstream back");
    let head2 = up.commit(
        "Bob Jones",
        &[("ops/polled.md", "# Polled\n\nFound by the poller.\n")],
        "polled",
    );
    let st = wait_status(&s, "kb", &tok, |v| v["commit"] == head2.as_str());
    assert!(st["last_fetch"]["error"].is_null(), "{st}");
    assert_eq!(st["entries"], 4);
}

/// SIGHUP reads the config again: a token added with `token add` works and a token removed
/// from the file stops working, without a restart; a broken file keeps the previous
/// credentials in force and the server running.
#[test]
fn sighup_puts_added_and_revoked_tokens_in_force_without_a_restart() {
    let mut fx = Fixture::new();
    fx.configure(&[("kb", None)], None);
    let mut s = Server::start(&fx.config, &fx.data);
    let c = client();
    let status = |tok: &str| {
        c.get(s.u("/v1/projects/kb/status"))
            .bearer_auth(tok)
            .send()
            .expect("status")
            .status()
    };
    let carol = helix_test_support::token_add(
        Path::new(env!("CARGO_BIN_EXE_helix-server")),
        &fx.config,
        "kb",
        "carol",
        "read",
    );
    // Revoke bob by deleting his entry from the file.
    let text = std::fs::read_to_string(&fx.config).expect("read config");
    let kept: Vec<&str> = text
        .split("[[projects.tokens]]")
        .filter(|block| !block.contains("name = \"bob\""))
        .collect();
    assert_eq!(kept.len(), text.split("[[projects.tokens]]").count() - 1);
    std::fs::write(&fx.config, kept.join("[[projects.tokens]]")).expect("write config");
    assert_eq!(
        status(&carol),
        StatusCode::UNAUTHORIZED,
        "not before the reload"
    );
    assert_eq!(status(fx.tok("kb/bob")), StatusCode::OK);

    let hup = |s: &Server| {
        let st = Command::new("kill")
            .args(["-HUP", &s.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(st.success());
    };
    hup(&s);
    let start = Instant::now();
    while status(&carol) != StatusCode::OK {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "carol's token never took effect"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status(fx.tok("kb/bob")), StatusCode::UNAUTHORIZED);
    assert_eq!(status(fx.tok("kb/alice")), StatusCode::OK);

    // A broken file: the previous credentials stay, and so does the server.
    std::fs::write(&fx.config, "[[projects]\nname = ").expect("write broken config");
    hup(&s);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(status(&carol), StatusCode::OK);
    assert_eq!(status(fx.tok("kb/bob")), StatusCode::UNAUTHORIZED);
    assert!(
        s.child.try_wait().expect("try_wait").is_none(),
        "server exited"
    );
    s.kill9();
}
