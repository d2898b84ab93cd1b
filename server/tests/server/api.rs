//! The HTTP API and the ingest/refresh flow: index and ETags, refresh and webhooks, writes
//! under load and against a moving or refusing upstream, errors for bad input, subdirs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use helix_index_format::Index;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::common::*;

#[test]
fn upstream_commit_becomes_new_artifact_after_refresh_with_etag_flow() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], Some("hook-secret"));
    let s = fx.start();
    let tok = fx.tok("kb/reader").to_string();
    let head1 = up.head();
    let st = wait_status(&s, "kb", &tok, |v| v["commit"] == head1.as_str());
    assert_eq!(st["entries"], 3, "{st}");
    let diags = st["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags.len(), 1, "{st}");
    assert_eq!(diags[0]["path"], "broken/bad.md");
    assert!(
        st["last_fetch"]["at"].is_i64() && st["last_fetch"]["error"].is_null(),
        "{st}"
    );

    let (code, etag1, bytes1, commit) = get_index(&s, "kb", &tok);
    assert_eq!(code, StatusCode::OK);
    assert_eq!(commit, head1);
    assert!(etag1.starts_with('"') && etag1.len() == 66, "{etag1}");
    let ids = entry_ids(&bytes1);
    assert_eq!(
        ids,
        [
            "build/cargo-lock.md",
            "db/migrations.md",
            "git/rebase-onto.md"
        ]
        .map(String::from)
        .into()
    );
    // Authors and dates come from git history.
    let idx = Index::open(&bytes1[..]).expect("open");
    let e = idx
        .entry_by_id("db/migrations.md")
        .expect("read")
        .expect("present");
    assert_eq!(e.author, Some("Bob Jones"));
    assert!(e.date.is_some_and(|d| d > 1_600_000_000));
    let e = idx
        .entry_by_id("git/rebase-onto.md")
        .expect("read")
        .expect("present");
    assert_eq!(e.author, Some("Alice Smith"));

    let c = client();
    let r = c
        .get(s.u("/v1/projects/kb/index"))
        .bearer_auth(&tok)
        .header("If-None-Match", &etag1)
        .send()
        .expect("get");
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&r, "etag"), etag1);
    assert_eq!(header(&r, "x-helix-commit"), head1);

    // A new upstream commit, then a refresh with a write token.
    let head2 = up.commit(
        "Carol White",
        &[(
            "ops/deploy-freeze.md",
            "# Deploy freeze\n\nNo deploys on Fridays after 3pm.\n",
        )],
        "Add deploy freeze",
    );
    let r = c
        .post(s.u("/v1/projects/kb/refresh?wait=1"))
        .bearer_auth(fx.tok("kb/alice"))
        .send()
        .expect("refresh");
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().expect("json");
    assert_eq!(v["commit"], head2.as_str());

    let r = c
        .get(s.u("/v1/projects/kb/index"))
        .bearer_auth(&tok)
        .header("If-None-Match", &etag1)
        .send()
        .expect("get");
    assert_eq!(r.status(), StatusCode::OK);
    let etag2 = header(&r, "etag");
    assert_ne!(etag2, etag1);
    assert_eq!(header(&r, "x-helix-commit"), head2);
    assert_eq!(header(&r, "content-type"), "application/vnd.helix.index");
    let bytes2 = r.bytes().expect("body");
    let idx = Index::open(&bytes2[..]).expect("open");
    let e = idx
        .entry_by_id("ops/deploy-freeze.md")
        .expect("read")
        .expect("new entry");
    assert_eq!(e.author, Some("Carol White"));
    assert_eq!(idx.meta().expect("meta").commit, head2);
    let r = c
        .get(s.u("/v1/projects/kb/index"))
        .bearer_auth(&tok)
        .header("If-None-Match", &etag2)
        .send()
        .expect("get");
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);

    // The older artifact stays available to pinned clients.
    let r = c
        .get(s.u(&format!("/v1/projects/kb/index?commit={head1}")))
        .bearer_auth(&tok)
        .send()
        .expect("get pinned");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "etag"), etag1);
    let r = c
        .get(s.u("/v1/projects/kb/index?commit=0123456789abcdef"))
        .bearer_auth(&tok)
        .send()
        .expect("get pinned");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    // Webhook: a GitHub-style signature refreshes without a token; a bad one is refused.
    let head3 = up.commit(
        "Alice Smith",
        &[("ops/pager.md", "# Pager\n\nRotate weekly.\n")],
        "pager",
    );
    let body = br#"{"ref":"refs/heads/main"}"#;
    let sig = helix_server::auth::sign("hook-secret", body);
    let r = c
        .post(s.u("/v1/projects/kb/refresh"))
        .header("X-Hub-Signature-256", "sha256=00")
        .body(body.to_vec())
        .send()
        .expect("hook");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .post(s.u("/v1/projects/kb/refresh"))
        .header("X-Hub-Signature-256", sig)
        .body(body.to_vec())
        .send()
        .expect("hook");
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    wait_status(&s, "kb", &tok, |v| v["commit"] == head3.as_str());

    // GitLab sends the secret itself in X-Gitlab-Token; a wrong one is refused, a push to
    // another branch is acknowledged and ignored, a push to the followed branch refreshes.
    let head4 = up.commit(
        "Alice Smith",
        &[("ops/oncall.md", "# On call\n\nHand over on Mondays.\n")],
        "oncall",
    );
    let gitlab = |token: &str, body: &[u8]| {
        c.post(s.u("/v1/projects/kb/refresh"))
            .header("X-Gitlab-Token", token)
            .header("X-Gitlab-Event", "Push Hook")
            .body(body.to_vec())
            .send()
            .expect("gitlab hook")
    };
    let r = gitlab("not-the-secret", body);
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let v: Value = r.json().expect("json");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("X-Gitlab-Token"),
        "{v}"
    );
    let r = gitlab(
        "hook-secret",
        br#"{"object_kind":"push","ref":"refs/heads/feature"}"#,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let v: Value = r.json().expect("json");
    assert_eq!(v["status"], "ignored", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or("")
            .contains("refs/heads/feature"),
        "{v}"
    );
    let r = gitlab(
        "hook-secret",
        br#"{"object_kind":"push","ref":"refs/heads/main"}"#,
    );
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let v: Value = r.json().expect("json");
    assert_eq!(v["status"], "refreshing", "{v}");
    wait_status(&s, "kb", &tok, |v| v["commit"] == head4.as_str());

    // Projects list and metrics.
    let v: Value = c
        .get(s.u("/v1/projects"))
        .bearer_auth(&tok)
        .send()
        .expect("list")
        .json()
        .expect("json");
    assert_eq!(v["projects"][0]["name"], "kb");
    assert_eq!(v["projects"][0]["entries"], 6);
    let m = c
        .get(s.u("/metrics"))
        .send()
        .expect("metrics")
        .text()
        .expect("text");
    assert!(m.contains("helix_http_requests_total{route=\"/v1/projects/{project}/index\",method=\"GET\",status=\"304\"}"), "{m}");
    assert!(m.contains("helix_artifact_bytes{project=\"kb\"}"), "{m}");
    assert!(
        m.contains("helix_ingest_duration_seconds_count{project=\"kb\"}"),
        "{m}"
    );
}

#[test]
fn two_hundred_concurrent_posts_land_exactly_once() {
    let mut fx = Fixture::new();
    let a = Upstream::new(&fx.root, "alpha");
    let b = Upstream::new(&fx.root, "beta");
    // Plain path, `file://` URL and a server-owned repository.
    let b_url = format!("file://{}", b.url());
    fx.configure(
        &[
            ("alpha", Some(&a.url())),
            ("beta", Some(&b_url)),
            ("gamma", None),
        ],
        None,
    );
    let s = fx.start();
    for (p, up) in [("alpha", &a), ("beta", &b)] {
        let head = up.head();
        wait_status(&s, p, fx.tok(&format!("{p}/reader")), |v| {
            v["commit"] == head.as_str()
        });
    }
    let projects = ["alpha", "beta", "gamma"];
    let c = client();
    let results = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for i in 0..200 {
        let project = projects[i % 3];
        let who = if i % 2 == 0 { "alice" } else { "bob" };
        let token = fx.tok(&format!("{project}/{who}")).to_string();
        let url = s.u(&format!("/v1/projects/{project}/entries"));
        let c = c.clone();
        let results = results.clone();
        handles.push(std::thread::spawn(move || {
            // Every fifth title repeats, so slugs collide and get -2, -3… suffixes.
            let title = if i % 5 == 0 {
                "Shared title".to_string()
            } else {
                format!("Note number {i}")
            };
            let body = json!({
                "topic": format!("topic{}", i % 4),
                "title": title,
                "body": format!("Marker m{i}x: something learned the hard way.\n"),
                "tags": ["load"],
                "sources": [format!("src/file{i}.rs")],
                // Alike on purpose (the load, not the content, is tested): past the
                // near-duplicate check.
                "force": true,
            });
            let key = format!("key-{project}-{i}");
            let r = c
                .post(&url)
                .bearer_auth(&token)
                .header("Idempotency-Key", &key)
                .json(&body)
                .send()
                .expect("post");
            let st = r.status();
            let v: Value = r.json().expect("json");
            results
                .lock()
                .expect("lock")
                .push((i, project, key, token, st, v));
        }));
    }
    for h in handles {
        h.join().expect("thread");
    }
    let results = results.lock().expect("lock").clone();
    assert_eq!(results.len(), 200);
    let mut per_project: BTreeMap<&str, Vec<(usize, String)>> = BTreeMap::new();
    for (i, project, _, _, st, v) in &results {
        assert_eq!(*st, StatusCode::CREATED, "post {i} to {project}: {v}");
        let path = v["path"].as_str().expect("path").to_string();
        assert_eq!(v["id"].as_str(), Some(path.as_str()));
        assert!(v["commit"].as_str().is_some_and(|c| c.len() == 40));
        per_project.entry(project).or_default().push((*i, path));
    }
    // A retry with the same key answers 200 with the same body and adds nothing.
    // (Results are in completion order: rebuild the entry from its number, titles included.)
    let (i, project, key, token, _, first) = results[7].clone();
    let body = json!({
        "topic": format!("topic{}", i % 4),
        "title": if i % 5 == 0 { "Shared title".to_string() } else { format!("Note number {i}") },
        "body": format!("Marker m{i}x: something learned the hard way.\n"),
        "tags": ["load"],
        "sources": [format!("src/file{i}.rs")],
    });
    let (st, v) = post_entry(&c, &s, project, &token, Some(&key), &body);
    assert_eq!(st, StatusCode::OK, "retry of {i}: {v}");
    assert_eq!(v, first);
    // The same key with another entry is refused, never silently answered with the first.
    let other = json!({"topic": "x", "title": "retry", "body": "another entry"});
    let (st, v) = post_entry(&c, &s, project, &token, Some(&key), &other);
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "reuse of {i}: {v}");

    for project in projects {
        let repo = match project {
            "alpha" => a.bare.clone(),
            "beta" => b.bare.clone(),
            _ => fx.data.join("projects/gamma/repo.git"),
        };
        let files = tree_files(&repo, "main");
        for (i, path) in &per_project[project] {
            let marker = format!("Marker m{i}x:");
            let holders: Vec<&String> = files
                .iter()
                .filter(|(_, c)| c.contains(&marker))
                .map(|(p, _)| p)
                .collect();
            assert_eq!(holders, vec![path], "entry {i} in {project}");
            assert!(files[path].contains("title:"), "{}", files[path]);
        }
        fsck(&repo);
        no_merges(&repo);
        let tok = fx.tok(&format!("{project}/reader")).to_string();
        let tip = git(&repo, &["rev-parse", "main"]).trim().to_string();
        wait_status(&s, project, &tok, |v| v["commit"] == tip.as_str());
        let (code, _, bytes, _) = get_index(&s, project, &tok);
        assert_eq!(code, StatusCode::OK);
        let ids = entry_ids(&bytes);
        for (_, path) in &per_project[project] {
            assert!(ids.contains(path), "{path} missing from {project} artifact");
        }
    }
    fsck(&mirror(&fx.data, &a.bare));
    let m = c
        .get(s.u("/metrics"))
        .send()
        .expect("metrics")
        .text()
        .expect("text");
    assert!(
        m.contains("helix_writes_total{project=\"gamma\",outcome=\"created\"}"),
        "{m}"
    );
}

#[test]
fn upstream_moving_between_fetch_and_push_still_lands_linearly() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let head = up.head();
    wait_status(&s, "kb", fx.tok("kb/reader"), |v| {
        v["commit"] == head.as_str()
    });
    // The server fetched `head`; someone else pushes before the server's next write.
    let moved = up.commit(
        "Dave Brown",
        &[("ops/oncall.md", "# Oncall\n\nPage twice.\n")],
        "oncall",
    );
    let c = client();
    let (st, v) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        Some("k-moved-1"),
        &json!({"topic": "ops", "title": "Oncall", "body": "Written through the server."}),
    );
    assert_eq!(st, StatusCode::CREATED, "{v}");
    // Same slug as the file pushed meanwhile: re-applied onto the new tip with a suffix.
    assert_eq!(v["path"], "ops/oncall-2.md");
    let tip = up.head();
    assert_eq!(v["commit"], tip.as_str());
    assert_eq!(git(&up.bare, &["rev-parse", "main~1"]).trim(), moved);
    no_merges(&up.bare);
    fsck(&up.bare);
    let files = tree_files(&up.bare, "main");
    assert!(files["ops/oncall.md"].contains("Page twice"));
    assert!(files["ops/oncall-2.md"].contains("Written through the server."));
    assert!(
        files["ops/oncall-2.md"].contains("author: \"alice\"")
            || files["ops/oncall-2.md"].contains("author: alice")
    );
    let log = git(&up.bare, &["log", "-1", "--format=%an", "main"]);
    assert_eq!(log.trim(), "alice");
    let tok = fx.tok("kb/reader").to_string();
    wait_status(&s, "kb", &tok, |v| v["commit"] == tip.as_str());
    let (_, _, bytes, _) = get_index(&s, "kb", &tok);
    let ids = entry_ids(&bytes);
    assert!(
        ids.contains("ops/oncall.md") && ids.contains("ops/oncall-2.md"),
        "{ids:?}"
    );

    // A write of an earlier run whose push finished late (after this run fetched) carries
    // its key in the commit message: the retry is recognised, not applied a second time.
    let late = up.commit(
        "alice",
        &[(
            "ops/late-push.md",
            "---\ntitle: Late push\n---\nPushed late.\n",
        )],
        "Add ops/late-push.md\n\nHelix-Idempotency-Key: late-1 ops/late-push.md",
    );
    let (st, v) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        Some("late-1"),
        &json!({"topic": "ops", "title": "Late push", "body": "Pushed late."}),
    );
    assert_eq!(st, StatusCode::OK, "{v}");
    assert_eq!(v["path"], "ops/late-push.md");
    assert_eq!(v["commit"], late.as_str());
    assert_eq!(up.head(), late);
    let files = tree_files(&up.bare, "main");
    assert!(
        !files.contains_key("ops/late-push-2.md"),
        "{:?}",
        files.keys()
    );
    wait_status(&s, "kb", &tok, |v| v["commit"] == late.as_str());
}

#[test]
fn bad_input_gets_clear_errors_and_nothing_reaches_git() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    let other = Upstream::new(&fx.root, "other");
    fx.configure(
        &[("kb", Some(&up.url())), ("other", Some(&other.url()))],
        None,
    );
    let s = fx.start();
    let head = up.head();
    wait_status(&s, "kb", fx.tok("kb/reader"), |v| {
        v["commit"] == head.as_str()
    });
    let c = client();
    let w = fx.tok("kb/alice").to_string();
    let entries = s.u("/v1/projects/kb/entries");
    let good = json!({"topic": "ops", "title": "Fine", "body": "ok"});
    let big = "x".repeat(300 * 1024);
    // Credentials are assembled at run time: no literal secret in this file.
    let aws = "AKIA".to_string() + "Q3ZL7MHB5TW2RX6N";
    let pem = "-----BEGIN RSA PRIVATE KEY-----\n".to_string()
        + "c3ludGhldGljIHRlc3Qga2V5IG1hdGVyaWFsLCBub3QgYSBrZXk6IGhlbGl4IGZpeHR1cmVzISE=\n"
        + "-----END RSA PRIVATE KEY-----";
    let glpat = "glpat-".to_string() + "Qm4xZ7pL2vR9tKs8Wd3N";
    let db_url = "postgres://app:".to_string() + "Vd8kq2Lx9Wp@db.internal/app";
    type Case = (
        &'static str,
        String,
        Option<String>,
        String,
        StatusCode,
        &'static str,
        &'static str,
    );
    let j = |v: Value| v.to_string();
    let cases: Vec<Case> = vec![
        (
            "malformed json",
            entries.clone(),
            Some(w.clone()),
            "{\"topic\": ".into(),
            StatusCode::BAD_REQUEST,
            "bad_request",
            "JSON",
        ),
        (
            "missing field",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "title",
        ),
        (
            "oversized body",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": big})),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "larger than",
        ),
        (
            "dotdot topic",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "../etc", "title": "t", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "topic",
        ),
        (
            "absolute topic",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "/etc", "title": "t", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "topic",
        ),
        (
            "nul in topic",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops\u{0}x", "title": "t", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "topic",
        ),
        (
            "nul in body",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": "a\u{0}b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "body",
        ),
        (
            "reserved topic",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "con", "title": "t", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "reserved",
        ),
        (
            "dot git topic",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": ".git", "title": "t", "body": "b"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "topic",
        ),
        (
            "traversal source",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": "b", "sources": ["../../etc/passwd"]})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_entry",
            "sources",
        ),
        (
            "aws key",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": format!("key {aws}")})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret_detected",
            "an AWS access key id",
        ),
        (
            "private key",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": pem})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret_detected",
            "an RSA private key",
        ),
        (
            "gitlab token",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": format!("ok\nGITLAB_TOKEN={glpat}")})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret_detected",
            "body line 2 contains what looks like a GitLab personal access token; remove it, or reference where the secret lives instead",
        ),
        (
            "password in a connection string, in a source",
            entries.clone(),
            Some(w.clone()),
            j(json!({"topic": "ops", "title": "t", "body": "b", "sources": [db_url]})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret_detected",
            "sources[0] line 1 contains what looks like a PostgreSQL connection string with a password",
        ),
        (
            "unknown project",
            s.u("/v1/projects/nope/entries"),
            Some(w.clone()),
            j(good.clone()),
            StatusCode::NOT_FOUND,
            "not_found",
            "nope",
        ),
        (
            "read-only token",
            entries.clone(),
            Some(fx.tok("kb/reader").into()),
            j(good.clone()),
            StatusCode::FORBIDDEN,
            "forbidden",
            "write",
        ),
        (
            "other project's token",
            entries.clone(),
            Some(fx.tok("other/alice").into()),
            j(good.clone()),
            StatusCode::FORBIDDEN,
            "forbidden",
            "kb",
        ),
        (
            "no token",
            entries.clone(),
            None,
            j(good.clone()),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "token",
        ),
        (
            "wrong token",
            entries.clone(),
            Some("hx_0000".into()),
            j(good.clone()),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "token",
        ),
    ];
    for (name, url, token, body, status, code, needle) in cases {
        let mut req = c
            .post(&url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().expect("send");
        assert_eq!(r.status(), status, "case {name}");
        let v: Value = r
            .json()
            .unwrap_or_else(|e| panic!("case {name}: error body is not JSON: {e}"));
        assert_eq!(v["error"]["code"], code, "case {name}: {v}");
        let msg = v["error"]["message"].as_str().unwrap_or("");
        assert!(
            msg.to_lowercase().contains(&needle.to_lowercase()),
            "case {name}: message {msg:?} lacks {needle:?}"
        );
        for secret in [&aws[4..], &glpat[6..], &pem[40..80], "Vd8kq2Lx9Wp"] {
            assert!(!msg.contains(secret), "case {name}: secret echoed");
        }
    }
    // Bad idempotency key and reads with wrong tokens.
    let r = c
        .post(&entries)
        .bearer_auth(&w)
        .header("Idempotency-Key", "has space")
        .json(&good)
        .send()
        .expect("send");
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = c
        .get(s.u("/v1/projects/kb/index"))
        .bearer_auth(fx.tok("other/reader"))
        .send()
        .expect("send");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = c.get(s.u("/v1/projects/kb/status")).send().expect("send");
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // Nothing reached git.
    assert_eq!(up.head(), head);
    assert_eq!(
        git(&mirror(&fx.data, &up.bare), &["rev-parse", "main"]).trim(),
        head
    );
}

#[test]
fn failed_push_is_reported_undone_and_retry_succeeds() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let head = up.head();
    wait_status(&s, "kb", fx.tok("kb/reader"), |v| {
        v["commit"] == head.as_str()
    });
    // The upstream refuses every push (not a non-fast-forward: a hook says no).
    let hook = up.bare.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'pushes are frozen' >&2\nexit 1\n").expect("hook");
    let mut perm = std::fs::metadata(&hook).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&hook, perm).expect("chmod");
    let c = client();
    let body = json!({"topic": "ops", "title": "Frozen", "body": "Written while frozen."});
    let (st, v) = post_entry(&c, &s, "kb", fx.tok("kb/alice"), Some("frozen-1"), &body);
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    assert_eq!(v["error"]["code"], "unavailable");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("push"),
        "{v}"
    );
    // Nothing reached the upstream and the server's branch was put back.
    assert_eq!(up.head(), head);
    let local = mirror(&fx.data, &up.bare);
    assert_eq!(git(&local, &["rev-parse", "main"]).trim(), head);
    // Thawed: the retry with the same key creates the entry once.
    std::fs::remove_file(&hook).expect("unhook");
    let (st, v) = post_entry(&c, &s, "kb", fx.tok("kb/alice"), Some("frozen-1"), &body);
    assert_eq!(st, StatusCode::CREATED, "{v}");
    assert_eq!(v["path"], "ops/frozen.md");
    assert_eq!(up.head(), v["commit"].as_str().expect("commit"));
    fsck(&up.bare);
}

#[test]
fn subdir_project_reads_and_writes_only_under_its_folder() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "mono");
    let huge = format!("# Huge\n\n{}\n", "word ".repeat(230_000));
    up.commit(
        "Alice Smith",
        &[
            (
                "knowledge/build/linker.md",
                "# Linker\n\nUse mold for faster links.\n",
            ),
            ("knowledge/README.md", "# Not an entry\n"),
            ("knowledge/big/huge.md", &huge),
        ],
        "knowledge folder",
    );
    fx.configure(&[("mono", Some(&up.url()))], None);
    let text = std::fs::read_to_string(&fx.config).expect("config");
    let text = text.replacen(
        "name = \"mono\"",
        "name = \"mono\"\nsubdir = \"knowledge\"",
        1,
    );
    std::fs::write(&fx.config, text).expect("config");
    let s = fx.start();
    let tok = fx.tok("mono/reader").to_string();
    let head = up.head();
    let st = wait_status(&s, "mono", &tok, |v| v["commit"] == head.as_str());
    assert_eq!(st["entries"], 1, "{st}");
    let d = &st["diagnostics"][0];
    assert_eq!(d["path"], "big/huge.md", "{st}");
    assert!(d["reason"].as_str().unwrap_or("").contains("bytes"), "{st}");
    let (_, _, bytes, _) = get_index(&s, "mono", &tok);
    assert_eq!(entry_ids(&bytes), ["build/linker.md".to_string()].into());
    let (st, v) = post_entry(
        &client(),
        &s,
        "mono",
        fx.tok("mono/bob"),
        None,
        &json!({"topic": "build", "title": "Linker", "body": "Also try lld.", "force": true}),
    );
    assert_eq!(st, StatusCode::CREATED, "{v}");
    assert_eq!(v["id"], "build/linker-2.md");
    assert_eq!(v["path"], "knowledge/build/linker-2.md");
    assert!(tree_files(&up.bare, "main").contains_key("knowledge/build/linker-2.md"));
}
