//! Shared harness of the server tests: git fixtures (a bare upstream with a work clone), the
//! real `helix-server` started on a loopback port, HTTP helpers and waiting for `/status`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use helix_index_format::Index;
use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::Value;

// ---------------------------------------------------------------- git fixtures

pub fn git(dir: &Path, args: &[&str]) -> String {
    git_as(dir, "Test Runner", args)
}

pub fn git_as(dir: &Path, author: &str, args: &[&str]) -> String {
    git_env(dir, author, &[], args)
}

/// Runs git in `dir` as `author`, with extra environment (`GIT_AUTHOR_DATE`…).
pub fn git_env(dir: &Path, author: &str, env: &[(&str, &str)], args: &[&str]) -> String {
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
pub struct Upstream {
    pub bare: PathBuf,
    pub work: PathBuf,
}

impl Upstream {
    /// Creates the upstream with a few commits by alice and bob.
    pub fn new(root: &Path, name: &str) -> Upstream {
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

    pub fn url(&self) -> String {
        self.bare.display().to_string()
    }

    pub fn commit(&self, author: &str, files: &[(&str, &str)], msg: &str) -> String {
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

    pub fn head(&self) -> String {
        git(&self.bare, &["rev-parse", "refs/heads/main"])
            .trim()
            .to_string()
    }
}

/// Every file at the tip of `branch` in `repo` with its content.
pub fn tree_files(repo: &Path, branch: &str) -> BTreeMap<String, String> {
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
pub fn mirror(data: &Path, upstream: &Path) -> PathBuf {
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

pub fn fsck(repo: &Path) {
    git(repo, &["fsck", "--strict", "--no-dangling"]);
}

pub fn no_merges(repo: &Path) {
    assert_eq!(
        git(repo, &["rev-list", "--merges", "main"]).trim(),
        "",
        "history has merges"
    );
}

// ---------------------------------------------------------------- the server

pub struct Server {
    pub child: Child,
    pub url: String,
    pub config: PathBuf,
    pub data: PathBuf,
}

impl Server {
    pub fn start(config: &Path, data: &Path) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_helix-server"));
        let mut child = helix_test_support::isolate(&mut cmd, data.parent().unwrap_or(data))
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

    pub fn restart(mut self) -> Server {
        let _ = self.child.kill();
        let _ = self.child.wait();
        Server::start(&self.config.clone(), &self.data.clone())
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn u(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn read_listen_line(child: &mut Child) -> String {
    helix_test_support::listen_url(child, Duration::from_secs(60), "helix-server")
}

pub fn client() -> Client {
    helix_server::sys::install_crypto_provider();
    Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// Polls `/status` until `pred` holds; panics after a generous limit so a bug cannot hang.
pub fn wait_status(s: &Server, project: &str, token: &str, pred: impl Fn(&Value) -> bool) -> Value {
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

pub fn get_index(s: &Server, project: &str, token: &str) -> (StatusCode, String, Vec<u8>, String) {
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

pub fn header(r: &reqwest::blocking::Response, name: &str) -> String {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii").to_string())
        .unwrap_or_default()
}

pub fn entry_ids(bytes: &[u8]) -> BTreeSet<String> {
    let idx = Index::open(bytes).expect("artifact opens");
    idx.verify().expect("artifact verifies");
    (0..idx.len())
        .map(|d| idx.entry(d).expect("entry").id.to_string())
        .collect()
}

/// A server's files in a temporary directory: its config, its data directory and the
/// tokens [`Fixture::configure`] made (`project/user` → token).
pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub config: PathBuf,
    pub data: PathBuf,
    pub tokens: BTreeMap<String, String>,
}

impl Fixture {
    pub fn new() -> Fixture {
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
    pub fn configure(&mut self, projects: &[(&str, Option<&str>)], webhook: Option<&str>) {
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

    pub fn tok(&self, key: &str) -> &str {
        &self.tokens[key]
    }

    pub fn start(&self) -> Server {
        Server::start(&self.config, &self.data)
    }
}

pub fn post_entry(
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
