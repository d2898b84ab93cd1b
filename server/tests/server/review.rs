//! Review mode: writes become pushed proposal branches; approve (also twice at once),
//! reject, forge merges, the pull/merge request calls checked against a loopback stand-in
//! of the forge's API, a forge that is down or refuses the token, a force-pushed proposal
//! branch, and the review scope.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use helix_index_format::Index;
use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::common::*;

/// One request the forge stand-in received.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

/// A loopback stand-in of the GitHub and GitLab REST APIs: records every request, answers
/// a pull/merge request with a number and address, a label call with the labels, and 401
/// to any token but `token`.
struct Forge {
    url: String,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

impl Forge {
    fn start(token: &str) -> Forge {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (rec, token) = (seen.clone(), token.to_string());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { return };
                let mut r = BufReader::new(s.try_clone().expect("clone"));
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let (method, path) = (
                    parts.next().unwrap_or("").to_string(),
                    parts.next().unwrap_or("").to_string(),
                );
                let mut headers = BTreeMap::new();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                    }
                }
                let len: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; len];
                let _ = r.read_exact(&mut body);
                let authorised = headers.get("authorization") == Some(&format!("Bearer {token}"))
                    || headers.get("private-token") == Some(&token);
                let (status, answer) = if !authorised {
                    ("401 Unauthorized", json!({"message": "Bad credentials"}))
                } else if path.ends_with("/pulls") {
                    (
                        "201 Created",
                        json!({"number": 7, "html_url": "https://forge.test/acme/kb/pull/7"}),
                    )
                } else if path.ends_with("/labels") {
                    ("200 OK", json!([{"name": "helix-proposal"}]))
                } else if path.ends_with("/merge_requests") {
                    (
                        "201 Created",
                        json!({"iid": 3, "web_url": "https://forge.test/acme/kb/-/merge_requests/3"}),
                    )
                } else {
                    ("404 Not Found", json!({"message": "Not Found"}))
                };
                rec.lock().expect("lock").push(Recorded {
                    method,
                    path,
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                });
                let text = answer.to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        Forge { url, seen }
    }

    fn seen(&self) -> Vec<Recorded> {
        self.seen.lock().expect("lock").clone()
    }
}

/// A project in review mode on `up`, with `forge` (a `[projects.forge]` body) if given, and
/// the tokens alice (read, write), rita (review) and reader (read).
fn review_project(fx: &mut Fixture, name: &str, up: &Upstream, forge: Option<String>) {
    let mut text = std::fs::read_to_string(&fx.config).unwrap_or_default();
    text.push_str(&format!(
        "\n[[projects]]\nname = {name:?}\npoll_interval_secs = 3600\nupstream = {:?}\nwrites = \"review\"\n",
        up.url()
    ));
    if let Some(f) = forge {
        text.push_str(&format!("[projects.forge]\n{f}"));
    }
    std::fs::write(&fx.config, text).expect("write config");
    for (who, scope) in [
        ("alice", "read,write"),
        ("rita", "review"),
        ("reader", "read"),
    ] {
        let tok = helix_test_support::token_add(
            Path::new(env!("CARGO_BIN_EXE_helix-server")),
            &fx.config,
            name,
            who,
            scope,
        );
        fx.tokens.insert(format!("{name}/{who}"), tok);
    }
}

fn entry(title: &str, body: &str) -> Value {
    json!({"topic": "ops", "title": title, "body": body, "tags": ["deploy"], "sources": ["deploy/run.sh"]})
}

/// `git ls-remote` of one branch on the bare upstream: its commit, or "" when absent.
fn remote_branch(up: &Upstream, branch: &str) -> String {
    git(
        &up.bare,
        &["ls-remote", ".", &format!("refs/heads/{branch}")],
    )
    .split_whitespace()
    .next()
    .unwrap_or("")
    .to_string()
}

/// Stores "Pin versions" in `project` as alice: the (201) answer.
fn pin_versions(c: &Client, s: &Server, fx: &Fixture, project: &str) -> Value {
    let (st, ack) = post_entry(
        c,
        s,
        project,
        fx.tok(&format!("{project}/alice")),
        None,
        &entry("Pin versions", "Pin the versions."),
    );
    assert_eq!(st, StatusCode::CREATED, "{ack}");
    ack
}

fn call(c: &Client, method: &str, url: String, token: &str, body: Option<Value>) -> (u16, Value) {
    let mut rb = match method {
        "GET" => c.get(url),
        _ => c.post(url),
    }
    .bearer_auth(token);
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let r = rb.send().expect("request");
    let st = r.status().as_u16();
    (st, r.json().unwrap_or(Value::Null))
}

#[test]
fn review_mode_proposes_opens_a_pull_request_and_approves_once() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    let token_file = fx.root.join("forge-token");
    std::fs::write(&token_file, "ghp_test_forge_token\n").expect("token file");
    let forge = Forge::start("ghp_test_forge_token");
    review_project(
        &mut fx,
        "kb",
        &up,
        Some(format!(
            "kind = \"github\"\napi = {:?}\nrepository = \"acme/kb\"\ntoken_file = {:?}\nlabel = \"agent-note\"\n",
            forge.url,
            token_file.display().to_string()
        )),
    );
    let config = std::fs::read_to_string(&fx.config).expect("config");
    assert!(!config.contains("ghp_test_forge_token"));
    let s = fx.start();
    let c = client();
    let main_before = up.head();
    wait_status(&s, "kb", fx.tok("kb/reader"), |v| {
        v["commit"] == main_before.as_str()
    });

    let (st, ack) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        Some("k-1"),
        &entry("Drain before deploy", "Drain the node before you deploy."),
    );
    assert_eq!(st, StatusCode::CREATED, "{ack}");
    let branch = "helix/proposals/alice/drain-before-deploy";
    assert_eq!(ack["proposal"]["branch"], branch, "{ack}");
    assert_eq!(ack["proposal"]["id"], "1");
    assert_eq!(ack["generation"], 0);
    assert_eq!(ack["id"], "ops/drain-before-deploy.md");
    assert_eq!(
        ack["proposal"]["forge"]["url"], "https://forge.test/acme/kb/pull/7",
        "{ack}"
    );
    // The branch is on the upstream with the entry, its parent the branch tip; main is as it was.
    let pushed = remote_branch(&up, branch);
    assert_eq!(pushed, ack["commit"].as_str().expect("commit"));
    assert_eq!(up.head(), main_before);
    assert_eq!(
        git(&up.bare, &["rev-parse", &format!("{pushed}^")]).trim(),
        main_before
    );
    let files = tree_files(&up.bare, &pushed);
    assert!(files["ops/drain-before-deploy.md"].contains("Drain the node"));
    // The same key again: the same proposal, no second branch.
    let (st, again) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        Some("k-1"),
        &entry("Drain before deploy", "Drain the node before you deploy."),
    );
    assert_eq!(st, StatusCode::OK);
    assert_eq!(again["proposal"]["id"], "1");
    // Even when the key log is lost (a crash before it was saved), the retry finds its
    // proposal: no second branch, no second pull request.
    let mut s = s;
    s.kill9();
    std::fs::remove_file(fx.data.join("projects/kb/idempotency.jsonl")).expect("key log");
    let s = fx.start();
    let (st, again) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        Some("k-1"),
        &entry("Drain before deploy", "Drain the node before you deploy."),
    );
    assert_eq!(st, StatusCode::OK, "{again}");
    assert_eq!(again["proposal"]["id"], "1");
    assert_eq!(again["commit"], pushed.as_str());
    assert_eq!(
        git(
            &up.bare,
            &["for-each-ref", "--format=%(refname)", "refs/heads/helix"]
        )
        .trim(),
        format!("refs/heads/{branch}")
    );

    // The forge got the pull request and the label, with the token and the entry.
    let seen = forge.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/repos/acme/kb/pulls")
    );
    assert_eq!(
        seen[0].headers["authorization"],
        "Bearer ghp_test_forge_token"
    );
    assert_eq!(seen[0].headers["accept"], "application/vnd.github+json");
    assert_eq!(seen[0].body["head"], branch);
    assert_eq!(seen[0].body["base"], "main");
    assert_eq!(seen[0].body["title"], "helix: Drain before deploy");
    let desc = seen[0].body["body"].as_str().expect("body");
    assert!(
        desc.contains("Drain the node before you deploy.")
            && desc.contains("helix review approve 1"),
        "{desc}"
    );
    assert_eq!(
        (seen[1].method.as_str(), seen[1].path.as_str()),
        ("POST", "/repos/acme/kb/issues/7/labels")
    );
    assert_eq!(seen[1].body, json!({"labels": ["agent-note"]}));

    // Not served before it is approved.
    let (_, _, bytes, _) = get_index(&s, "kb", fx.tok("kb/reader"));
    assert!(!entry_ids(&bytes).contains("ops/drain-before-deploy.md"));

    // The review scope: a writer may neither list nor decide; the reader may follow one.
    let u = |p: &str| s.u(&format!("/v1/projects/kb/proposals{p}"));
    let (st, e) = call(&c, "GET", u(""), fx.tok("kb/alice"), None);
    assert_eq!((st, e["error"]["code"].as_str()), (403, Some("forbidden")));
    let (st, _) = call(&c, "POST", u("/1/approve"), fx.tok("kb/alice"), None);
    assert_eq!(st, 403);
    let (st, one) = call(&c, "GET", u("/1"), fx.tok("kb/reader"), None);
    assert_eq!((st, one["state"].as_str()), (200, Some("open")));
    let (st, list) = call(&c, "GET", u(""), fx.tok("kb/rita"), None);
    assert_eq!(st, 200);
    assert_eq!(list["proposals"].as_array().expect("list").len(), 1);
    assert_eq!(
        list["proposals"][0]["forge"]["url"],
        "https://forge.test/acme/kb/pull/7"
    );

    // Two reviewers approve at the same time: it lands once, the other hears it is decided.
    let answers: Vec<(u16, Value)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|_| sc.spawn(|| call(&client(), "POST", u("/1/approve"), fx.tok("kb/rita"), None)))
            .collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.0).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 409], "{answers:?}");
    let ok = &answers.iter().find(|a| a.0 == 200).expect("one approval").1;
    let refused = &answers.iter().find(|a| a.0 == 409).expect("one refusal").1;
    assert_eq!(refused["error"]["code"], "proposal_decided");
    assert!(
        refused["error"]["message"]
            .as_str()
            .expect("msg")
            .contains("already approved (rita)")
    );
    assert_eq!(ok["state"], "approved");
    assert_eq!(ok["decided_by"], "rita");
    // The branch had not moved: the proposal's own commit is main's tip now.
    assert_eq!(up.head(), pushed);
    assert_eq!(ok["landed"]["commit"], pushed.as_str());
    assert_eq!(
        remote_branch(&up, branch),
        "",
        "proposal branch deleted upstream"
    );
    let log = git(&up.bare, &["log", "--format=%s", "main"]);
    assert_eq!(
        log.matches("Propose ops/drain-before-deploy.md").count(),
        1,
        "{log}"
    );
    let (_, _, bytes, _) = get_index(&s, "kb", fx.tok("kb/reader"));
    assert!(entry_ids(&bytes).contains("ops/drain-before-deploy.md"));
    let (st, e) = call(&c, "POST", u("/1/reject"), fx.tok("kb/rita"), None);
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (409, Some("proposal_decided"))
    );
    let (st, e) = call(&c, "POST", u("/99/approve"), fx.tok("kb/rita"), None);
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (404, Some("proposal_not_found"))
    );
    let (_, list) = call(&c, "GET", u(""), fx.tok("kb/rita"), None);
    assert_eq!(list["proposals"], json!([]));

    // The branch moves before the next approval: the entry is written again on the tip.
    let (st, ack2) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        None,
        &entry("Warm the cache", "Warm the cache after deploy."),
    );
    assert_eq!(st, StatusCode::CREATED, "{ack2}");
    let moved = up.commit(
        "Bob Jones",
        &[("db/vacuum.md", "# Vacuum\n\nVacuum weekly.\n")],
        "Add vacuum",
    );
    let (st, ok2) = call(&c, "POST", u("/2/approve"), fx.tok("kb/rita"), None);
    assert_eq!(st, 200, "{ok2}");
    assert_eq!(
        git(&up.bare, &["rev-parse", "main^"]).trim(),
        moved,
        "re-applied on top of the moved branch"
    );
    no_merges(&up.bare);
    let main_files = tree_files(&up.bare, "main");
    assert!(main_files["ops/warm-the-cache.md"].contains("Warm the cache after deploy."));
    assert!(main_files.contains_key("db/vacuum.md"));
    assert_eq!(ok2["landed"]["id"], "ops/warm-the-cache.md");

    // Merged on the forge (by hand here): no longer open, shown as merged.
    let (st, ack3) = post_entry(
        &c,
        &s,
        "kb",
        fx.tok("kb/alice"),
        None,
        &entry("Tag releases", "Tag every release."),
    );
    assert_eq!(st, StatusCode::CREATED, "{ack3}");
    let b3 = ack3["proposal"]["branch"]
        .as_str()
        .expect("branch")
        .to_string();
    git(
        &up.work,
        &[
            "fetch",
            "-q",
            "origin",
            &format!("{b3}:refs/remotes/origin/p3"),
            "main:refs/remotes/origin/main",
        ],
    );
    // The reviewer edits the entry on the branch before merging: still recognised.
    git(&up.work, &["checkout", "-q", "-B", "p3", "origin/p3"]);
    let tag = up.work.join("ops/tag-releases.md");
    let edited = std::fs::read_to_string(&tag).expect("entry") + "Sign the tags.\n";
    std::fs::write(&tag, edited).expect("edit");
    git(&up.work, &["commit", "-q", "-am", "Sign them too"]);
    git(&up.work, &["checkout", "-q", "-B", "main", "origin/main"]);
    git(
        &up.work,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge pull request #9",
            "p3",
        ],
    );
    git(&up.work, &["push", "-q", "origin", "HEAD:main"]);
    let r = c
        .post(s.u("/v1/projects/kb/refresh?wait=1"))
        .bearer_auth(fx.tok("kb/alice"))
        .send()
        .expect("refresh");
    assert_eq!(r.status(), StatusCode::OK);
    let (_, list) = call(&c, "GET", u(""), fx.tok("kb/rita"), None);
    assert_eq!(list["proposals"], json!([]), "{list}");
    let (_, three) = call(&c, "GET", u("/3"), fx.tok("kb/reader"), None);
    assert_eq!(three["state"], "merged", "{three}");
    assert_eq!(three["landed"]["id"], "ops/tag-releases.md");
    let (_, _, bytes, _) = get_index(&s, "kb", fx.tok("kb/reader"));
    assert!(entry_ids(&bytes).contains("ops/tag-releases.md"));
    fsck(&up.bare);
}

#[test]
fn rejects_forge_failures_and_moved_branches_leave_nothing_half_done() {
    let mut fx = Fixture::new();
    let forge = Forge::start("glpat-right");
    // A forge that is down: a port nobody listens on.
    let down = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("http://{}", l.local_addr().expect("addr"))
    };
    let wrong = fx.root.join("wrong-token");
    std::fs::write(&wrong, "ghp_wrong").expect("write");
    let right = fx.root.join("right-token");
    std::fs::write(&right, "glpat-right").expect("write");
    let ups: Vec<Upstream> = ["down", "refused", "gl"]
        .iter()
        .map(|n| Upstream::new(&fx.root, n))
        .collect();
    review_project(
        &mut fx,
        "down",
        &ups[0],
        Some(format!(
            "kind = \"github\"\napi = {down:?}\nrepository = \"acme/kb\"\ntoken_file = {:?}\n",
            wrong.display().to_string()
        )),
    );
    review_project(
        &mut fx,
        "refused",
        &ups[1],
        Some(format!(
            "kind = \"github\"\napi = {:?}\nrepository = \"acme/kb\"\ntoken_file = {:?}\n",
            forge.url,
            wrong.display().to_string()
        )),
    );
    review_project(
        &mut fx,
        "gl",
        &ups[2],
        Some(format!(
            "kind = \"gitlab\"\napi = \"{}/api/v4\"\nrepository = \"acme/kb\"\ntoken_file = {:?}\n",
            forge.url,
            right.display().to_string()
        )),
    );
    let s = fx.start();
    let c = client();

    // Down: the proposal stands, and the answer says the request was not opened and why.
    let ack = pin_versions(&c, &s, &fx, "down");
    let err = ack["proposal"]["forge"]["error"]
        .as_str()
        .expect("forge error");
    assert!(err.contains("cannot reach the forge"), "{err}");
    let branch = ack["proposal"]["branch"].as_str().expect("branch");
    assert_eq!(
        remote_branch(&ups[0], branch),
        ack["commit"].as_str().expect("commit")
    );
    let (_, one) = call(
        &c,
        "GET",
        s.u("/v1/projects/down/proposals/1"),
        fx.tok("down/reader"),
        None,
    );
    assert!(
        one["forge"]["error"]
            .as_str()
            .expect("recorded")
            .contains("cannot reach the forge")
    );

    // Refused token: said, branch kept.
    let ack = pin_versions(&c, &s, &fx, "refused");
    let err = ack["proposal"]["forge"]["error"]
        .as_str()
        .expect("forge error");
    assert!(
        err.contains("401") && err.contains("Bad credentials"),
        "{err}"
    );
    assert_ne!(
        remote_branch(&ups[1], ack["proposal"]["branch"].as_str().expect("b")),
        ""
    );

    // GitLab: one merge request call with the label and the token header.
    let ack = pin_versions(&c, &s, &fx, "gl");
    assert_eq!(
        ack["proposal"]["forge"]["url"],
        "https://forge.test/acme/kb/-/merge_requests/3"
    );
    let seen: Vec<Recorded> = forge
        .seen()
        .into_iter()
        .filter(|r| r.path.contains("merge_requests"))
        .collect();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/api/v4/projects/acme%2Fkb/merge_requests")
    );
    assert_eq!(seen[0].headers["private-token"], "glpat-right");
    assert_eq!(
        seen[0].body["source_branch"],
        "helix/proposals/alice/pin-versions"
    );
    assert_eq!(seen[0].body["target_branch"], "main");
    assert_eq!(seen[0].body["labels"], "helix-proposal");
    assert!(
        seen[0].body["description"]
            .as_str()
            .expect("d")
            .contains("Pin the versions.")
    );

    // A restart keeps the proposals: their records, and their branches in the mirror
    // (which otherwise holds only the followed branch).
    let s = s.restart();
    let local = mirror(&fx.data, &ups[0].bare);
    assert_eq!(
        git(
            &local,
            &["for-each-ref", "--format=%(refname)", "refs/heads/helix"]
        )
        .trim(),
        format!("refs/heads/{branch}")
    );

    // Reject: the branch goes, upstream and here; a second decision is refused.
    let main_before = ups[0].head();
    let u = |p: &str| s.u(&format!("/v1/projects/down/proposals{p}"));
    let (st, rej) = call(
        &c,
        "POST",
        u("/1/reject"),
        fx.tok("down/rita"),
        Some(json!({"reason": "too vague"})),
    );
    assert_eq!(st, 200, "{rej}");
    assert_eq!(
        (rej["state"].as_str(), rej["reason"].as_str()),
        (Some("rejected"), Some("too vague"))
    );
    assert_eq!(remote_branch(&ups[0], branch), "");
    assert_eq!(
        git(&local, &["for-each-ref", "refs/heads/helix"]),
        "",
        "deleted in the mirror too"
    );
    assert_eq!(ups[0].head(), main_before);
    let (st, e) = call(&c, "POST", u("/1/approve"), fx.tok("down/rita"), None);
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (409, Some("proposal_decided")),
        "{e}"
    );

    // A proposal branch force-pushed upstream by someone else: approve and reject refuse,
    // naming it; main stays as it was.
    let (_, ack) = post_entry(
        &c,
        &s,
        "down",
        fx.tok("down/alice"),
        None,
        &entry("Rotate logs", "Rotate logs daily."),
    );
    let b2 = ack["proposal"]["branch"]
        .as_str()
        .expect("branch")
        .to_string();
    let work = &ups[0].work;
    git(
        work,
        &[
            "fetch",
            "-q",
            "origin",
            &format!("{b2}:refs/remotes/origin/p2"),
        ],
    );
    git(work, &["checkout", "-q", "-B", "p2", "origin/p2"]);
    std::fs::write(
        work.join("ops/rotate-logs.md"),
        "# Rotate logs\n\nRotate logs hourly, really.\n",
    )
    .expect("write");
    git(work, &["commit", "-q", "-am", "Someone else's change"]);
    git(
        work,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("HEAD:refs/heads/{b2}"),
        ],
    );
    git(work, &["checkout", "-q", "main"]);
    for action in ["approve", "reject"] {
        let (st, e) = call(
            &c,
            "POST",
            u(&format!("/2/{action}")),
            fx.tok("down/rita"),
            None,
        );
        assert_eq!(
            (st, e["error"]["code"].as_str()),
            (409, Some("proposal_branch_moved")),
            "{e}"
        );
        assert!(
            e["error"]["message"].as_str().expect("m").contains(&b2),
            "{e}"
        );
    }
    assert_eq!(ups[0].head(), main_before);
    let (_, two) = call(&c, "GET", u("/2"), fx.tok("down/reader"), None);
    assert_eq!(two["state"], "open");

    // Deleted upstream: approve says so.
    git(
        &ups[0].bare,
        &["update-ref", "-d", &format!("refs/heads/{b2}")],
    );
    let (st, e) = call(&c, "POST", u("/2/approve"), fx.tok("down/rita"), None);
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (409, Some("proposal_branch_gone")),
        "{e}"
    );
    assert_eq!(ups[0].head(), main_before);
    // ...and reject forgets it.
    let (st, _) = call(&c, "POST", u("/2/reject"), fx.tok("down/rita"), None);
    assert_eq!(st, 200);
}

/// `PUT` of an entry's file in review mode.
fn put_edit(
    c: &Client,
    s: &Server,
    token: &str,
    id: &str,
    base: &str,
    content: &str,
) -> (u16, Value) {
    let r = c
        .put(s.u(&format!("/v1/projects/kb/entries/{id}")))
        .bearer_auth(token)
        .json(&json!({"base": base, "content": content}))
        .send()
        .expect("put");
    let st = r.status().as_u16();
    (st, r.json().unwrap_or(Value::Null))
}

/// The blob id the served artifact records for `id`.
fn served_blob(s: &Server, token: &str, id: &str) -> String {
    let (_, _, bytes, _) = get_index(s, "kb", token);
    let idx = Index::open(&bytes[..]).expect("opens");
    let e = idx.entry_by_id(id).expect("reads").expect("entry present");
    idx.blob(e.doc).expect("blob").unwrap_or("").to_string()
}

#[test]
fn edits_in_review_mode_are_proposals_that_land_as_edits() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    let original = "---\ntitle: Drain before deploy\n---\nDrain the node first.\n";
    up.commit("Ann", &[("ops/drain.md", original)], "add drain");
    review_project(&mut fx, "kb", &up, None);
    let s = fx.start();
    let c = client();
    let head = up.head();
    wait_status(&s, "kb", fx.tok("kb/reader"), |v| {
        v["commit"] == head.as_str()
    });
    let base = served_blob(&s, fx.tok("kb/reader"), "ops/drain.md");
    assert_eq!(base.len(), 40, "{base}");
    let refresh = || {
        let url = s.u("/v1/projects/kb/refresh?wait=1");
        assert_eq!(call(&c, "POST", url, fx.tok("kb/alice"), None).0, 200);
    };
    let approve = |id: &str| {
        let url = s.u(&format!("/v1/projects/kb/proposals/{id}/approve"));
        call(&c, "POST", url, fx.tok("kb/rita"), None)
    };

    // The edit becomes a proposal: the team's branch keeps the old text.
    let edited = "---\ntitle: Drain before deploy\n---\nDrain the node first, then wait 30 s.\n";
    let (st, ack) = put_edit(&c, &s, fx.tok("kb/alice"), "ops/drain.md", &base, edited);
    assert_eq!(st, 200, "{ack}");
    let branch = ack["proposal"]["branch"]
        .as_str()
        .expect("a proposal")
        .to_string();
    assert_eq!(ack["generation"], 0);
    assert_eq!(up.head(), head);
    let proposed = remote_branch(&up, &branch);
    assert_eq!(tree_files(&up.bare, &proposed)["ops/drain.md"], edited);

    // The branch moves on (another file), then the proposal is approved: it is applied
    // again as the edit of ops/drain.md, not stored as a second entry beside it.
    up.commit(
        "Bob",
        &[("ops/other.md", "---\ntitle: Other\n---\nOther.\n")],
        "other",
    );
    refresh();
    let id = ack["proposal"]["id"].as_str().expect("id").to_string();
    let (st, done) = approve(&id);
    assert_eq!(st, 200, "{done}");
    let files = tree_files(&up.bare, "main");
    assert_eq!(files["ops/drain.md"], edited);
    assert_eq!(
        files.keys().filter(|k| k.starts_with("ops/drain")).count(),
        1,
        "{:?}",
        files.keys()
    );
    assert_eq!(remote_branch(&up, &branch), "");

    // An edit proposal from a version that changed before approval is refused when it
    // lands, naming both blobs; the team's branch keeps the newer text.
    let base2 = served_blob(&s, fx.tok("kb/reader"), "ops/drain.md");
    let second = "---\ntitle: Drain before deploy\n---\nDrain, wait, then deploy.\n";
    let (st, ack2) = put_edit(&c, &s, fx.tok("kb/alice"), "ops/drain.md", &base2, second);
    assert_eq!(st, 200, "{ack2}");
    let newer = "---\ntitle: Drain before deploy\n---\nDrain with kubectl drain.\n";
    up.commit("Bob", &[("ops/drain.md", newer)], "bob edits drain");
    refresh();
    let id2 = ack2["proposal"]["id"].as_str().expect("id").to_string();
    let (st, refused) = approve(&id2);
    assert_eq!(st, 409, "{refused}");
    let msg = refused["error"]["message"].as_str().expect("message");
    assert!(msg.contains(&base2), "{msg}");
    assert_eq!(tree_files(&up.bare, "main")["ops/drain.md"], newer);
}
