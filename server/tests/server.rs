//! Integration tests: the real `helix-server` binary on a loopback port against real git
//! repositories made here with the `git` program (several authors and commits).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use helix_index_format::{Hidden, Index};
use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};

// ---------------------------------------------------------------- git fixtures

fn git(dir: &Path, args: &[&str]) -> String {
    git_as(dir, "Test Runner", args)
}

fn git_as(dir: &Path, author: &str, args: &[&str]) -> String {
    git_env(dir, author, &[], args)
}

/// Runs git in `dir` as `author`, with extra environment (`GIT_AUTHOR_DATE`…).
fn git_env(dir: &Path, author: &str, env: &[(&str, &str)], args: &[&str]) -> String {
    let email = format!("{}@example.com", author.to_lowercase().replace(' ', "."));
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(env.iter().copied())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A bare upstream repository and a working clone used to push commits to it.
struct Upstream {
    bare: PathBuf,
    work: PathBuf,
}

impl Upstream {
    /// Creates the upstream with a few commits by alice and bob.
    fn new(root: &Path, name: &str) -> Upstream {
        let bare = root.join(format!("{name}.git"));
        let work = root.join(format!("{name}-work"));
        std::fs::create_dir_all(&bare).expect("mkdir");
        git(&bare, &["init", "--bare", "-q", "-b", "main"]);
        git(
            root,
            &[
                "clone",
                "-q",
                bare.to_str().expect("utf8"),
                work.to_str().expect("utf8"),
            ],
        );
        git(&work, &["checkout", "-q", "-B", "main"]);
        let up = Upstream { bare, work };
        up.commit(
            "Alice Smith",
            &[
                ("README.md", "# knowledge\nNot an entry.\n"),
                ("build/cargo-lock.md", "# Cargo lock contention\n\nTwo builds share the target dir and block on the lock.\n"),
                ("git/rebase-onto.md", "---\ntitle: Rebase onto\ntags: [git, rebase]\n---\nUse `git rebase --onto` to move a branch.\n"),
            ],
            "Add first entries",
        );
        up.commit(
            "Bob Jones",
            &[(
                "db/migrations.md",
                "# Migrations\n\nRun migrations before deploying. [source: db/migrate.rs]\n",
            )],
            "Add migrations note",
        );
        up.commit(
            "Bob Jones",
            &[("broken/bad.md", "---\ntitle: [unclosed\n---\nbody\n")],
            "Add a broken entry",
        );
        up
    }

    fn url(&self) -> String {
        self.bare.display().to_string()
    }

    fn commit(&self, author: &str, files: &[(&str, &str)], msg: &str) -> String {
        if !git(&self.work, &["ls-remote", "origin", "main"])
            .trim()
            .is_empty()
        {
            git(&self.work, &["pull", "-q", "--rebase", "origin", "main"]);
        }
        for (p, c) in files {
            let path = self.work.join(p);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, c).expect("write");
            git(&self.work, &["add", p]);
        }
        git_as(&self.work, author, &["commit", "-q", "-m", msg]);
        git(&self.work, &["push", "-q", "origin", "HEAD:main"]);
        self.head()
    }

    fn head(&self) -> String {
        git(&self.bare, &["rev-parse", "refs/heads/main"])
            .trim()
            .to_string()
    }
}

/// Every file at the tip of `branch` in `repo` with its content.
fn tree_files(repo: &Path, branch: &str) -> BTreeMap<String, String> {
    let list = git(repo, &["ls-tree", "-r", "--name-only", branch]);
    list.lines()
        .map(|p| {
            let content = git(repo, &["show", &format!("{branch}:{p}")]);
            (p.to_string(), content)
        })
        .collect()
}

/// The server's mirror of `upstream` (`<data>/mirrors/<name>-<hash>.git`, shared by every
/// project that follows it).
fn mirror(data: &Path, upstream: &Path) -> PathBuf {
    let name = upstream.file_name().expect("name").to_string_lossy();
    let name = name.strip_suffix(".git").unwrap_or(&name).to_string();
    let found: Vec<PathBuf> = std::fs::read_dir(data.join("mirrors"))
        .expect("mirrors dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with(&format!("{name}-")))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one mirror of {}: {found:?}",
        upstream.display()
    );
    found.into_iter().next().expect("mirror")
}

fn fsck(repo: &Path) {
    git(repo, &["fsck", "--strict", "--no-dangling"]);
}

fn no_merges(repo: &Path) {
    assert_eq!(
        git(repo, &["rev-list", "--merges", "main"]).trim(),
        "",
        "history has merges"
    );
}

// ---------------------------------------------------------------- the server

struct Server {
    child: Child,
    url: String,
    config: PathBuf,
    data: PathBuf,
}

impl Server {
    fn start(config: &Path, data: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_helix-server"))
            .arg("--config")
            .arg(config)
            .args(["--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("server starts");
        let url = read_listen_line(&mut child);
        Server {
            child,
            url,
            config: config.to_path_buf(),
            data: data.to_path_buf(),
        }
    }

    fn restart(mut self) -> Server {
        let _ = self.child.kill();
        let _ = self.child.wait();
        Server::start(&self.config.clone(), &self.data.clone())
    }

    /// SIGKILL: no chance to clean up.
    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn u(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_listen_line(child: &mut Child) -> String {
    helix_test_support::listen_url(child, Duration::from_secs(60), "helix-server")
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// Polls `/status` until `pred` holds; panics after a generous limit so a bug cannot hang.
fn wait_status(s: &Server, project: &str, token: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let c = client();
    let start = Instant::now();
    loop {
        let r = c
            .get(s.u(&format!("/v1/projects/{project}/status")))
            .bearer_auth(token)
            .send();
        if let Ok(r) = r
            && r.status() == StatusCode::OK
        {
            let v: Value = r.json().expect("status json");
            if pred(&v) {
                return v;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "status never satisfied the condition"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn get_index(s: &Server, project: &str, token: &str) -> (StatusCode, String, Vec<u8>, String) {
    let r = client()
        .get(s.u(&format!("/v1/projects/{project}/index")))
        .bearer_auth(token)
        .send()
        .expect("get index");
    let status = r.status();
    let etag = header(&r, "etag");
    let commit = header(&r, "x-helix-commit");
    (status, etag, r.bytes().expect("body").to_vec(), commit)
}

fn header(r: &reqwest::blocking::Response, name: &str) -> String {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii").to_string())
        .unwrap_or_default()
}

fn entry_ids(bytes: &[u8]) -> BTreeSet<String> {
    let idx = Index::open(bytes).expect("artifact opens");
    idx.verify().expect("artifact verifies");
    (0..idx.len())
        .map(|d| idx.entry(d).expect("entry").id.to_string())
        .collect()
}

/// Config file text for projects `(name, upstream or "", tokens [(token name, hash, scopes)])`.
struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: PathBuf,
    data: PathBuf,
    tokens: BTreeMap<String, String>,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().to_path_buf();
        Fixture {
            config: root.join("helix-server.toml"),
            data: root.join("data"),
            root,
            _tmp: tmp,
            tokens: BTreeMap::new(),
        }
    }

    /// Writes the config: each project `(name, upstream)`, then creates tokens with the
    /// real `token add` command.
    fn configure(&mut self, projects: &[(&str, Option<&str>)], webhook: Option<&str>) {
        let mut text = String::new();
        for (name, up) in projects {
            text.push_str(&format!(
                "[[projects]]\nname = {name:?}\npoll_interval_secs = 3600\n"
            ));
            if let Some(u) = up {
                text.push_str(&format!("upstream = {u:?}\n"));
            }
            if let Some(w) = webhook {
                text.push_str(&format!("webhook_secret = {w:?}\n"));
            }
        }
        std::fs::write(&self.config, text).expect("write config");
        for (name, _) in projects {
            for (who, scope) in [
                ("alice", "read,write"),
                ("bob", "read,write"),
                ("reader", "read"),
            ] {
                let tok = helix_test_support::token_add(
                    Path::new(env!("CARGO_BIN_EXE_helix-server")),
                    &self.config,
                    name,
                    who,
                    scope,
                );
                self.tokens.insert(format!("{name}/{who}"), tok);
            }
        }
        let text = std::fs::read_to_string(&self.config).expect("read config");
        for t in self.tokens.values() {
            assert!(
                !text.contains(t.as_str()),
                "plaintext token stored in config"
            );
        }
    }

    fn tok(&self, key: &str) -> &str {
        &self.tokens[key]
    }

    fn start(&self) -> Server {
        Server::start(&self.config, &self.data)
    }
}

fn post_entry(
    c: &Client,
    s: &Server,
    project: &str,
    token: &str,
    key: Option<&str>,
    body: &Value,
) -> (StatusCode, Value) {
    let mut req = c
        .post(s.u(&format!("/v1/projects/{project}/entries")))
        .bearer_auth(token)
        .json(body);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let r = req.send().expect("post");
    let st = r.status();
    let v = r.json().unwrap_or(Value::Null);
    (st, v)
}

// ---------------------------------------------------------------- tests

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
fn embedded_default_serves_examples_to_loopback_without_token() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_helix-server"))
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

#[path = "server/deploy.rs"]
mod deploy;

#[path = "server/edits.rs"]
mod edits;

#[path = "server/faults.rs"]
mod faults;

#[path = "server/repos.rs"]
mod repos;

#[path = "server/review.rs"]
mod review;

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
