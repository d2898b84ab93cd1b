//! Shared test helpers: the real `helix` binary spawned with isolated HOME/XDG dirs, temp
//! knowledge dirs, built artifacts, and the real `helix-server` on a loopback port.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use tempfile::TempDir;

/// The `helix` binary under test.
/// The `helix` binary under test (in package `helix-client-net`, beside `helix-net`; built
/// first when missing or stale).
pub fn helix() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        helix_test_support::workspace_binary("helix")
            .to_str()
            .expect("a UTF-8 target directory")
            .to_string()
    })
}

/// Output of a finished command, as text.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code,
            Some(0),
            "command failed:\nstdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// One developer machine: its own HOME and XDG config/cache/data dirs, and a code
/// repository directory (`root`) where `.helix.toml` lives.
#[derive(Debug)]
pub struct Client {
    pub tmp: TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Client {
    pub fn new() -> Client {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("repo");
        let home = tmp.path().join("home");
        for d in [&root, &home] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        Client { tmp, root, home }
    }

    pub fn config_home(&self) -> PathBuf {
        self.home.join(".config")
    }
    pub fn cache_home(&self) -> PathBuf {
        self.home.join(".cache")
    }
    pub fn data_home(&self) -> PathBuf {
        self.home.join(".local/share")
    }
    /// `$XDG_CACHE_HOME/helix/<server-key>/<project>`.
    pub fn cache_dir(&self, server: &str, project: &str) -> PathBuf {
        let key = server
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .replace(':', "_");
        self.cache_home().join("helix").join(key).join(project)
    }
    /// The pending directory of `project` followed by the code repository (server mode:
    /// `$XDG_DATA_HOME/helix/servers/<server-key>/pending/<project>`), as `helix status
    /// --json` reports it: tests ask rather than spell out the layout.
    pub fn pending_dir(&self, project: &str) -> PathBuf {
        pending_dir_of(self.cmd(&[]), project)
    }
    /// `$XDG_DATA_HOME/helix/pending/<project>`: where helix kept pending entries before
    /// they were keyed by server (moved to the new place at first use).
    pub fn legacy_pending_dir(&self, project: &str) -> PathBuf {
        self.data_home().join("helix/pending").join(project)
    }

    /// Writes `.helix.toml` in the code repository.
    pub fn configure(&self, toml: &str) {
        std::fs::write(self.root.join(".helix.toml"), toml).expect("write .helix.toml");
    }

    pub fn follow(&self, server: &str, projects: &[&str]) {
        let list: Vec<String> = projects.iter().map(|p| format!("{p:?}")).collect();
        self.configure(&format!(
            "server = {server:?}\nprojects = [{}]\n",
            list.join(", ")
        ));
    }

    /// Another code repository on the same machine (same HOME and XDG dirs): `dir` under
    /// the client's temporary directory, created empty.
    pub fn other_repo(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        std::fs::create_dir_all(&dir).expect("create dir");
        dir
    }

    /// `helix ARGS` in the code repository, isolated from the real user.
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_in(&self.root, args)
    }

    /// `helix ARGS` in `dir` (another code repository of this machine), isolated from the
    /// real user.
    pub fn cmd_in(&self, dir: &Path, args: &[&str]) -> Command {
        ensure_net();
        let mut c = Command::new(helix());
        c.args(args).current_dir(dir).stdin(Stdio::null());
        helix_test_support::isolate(&mut c, &self.home);
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.cmd(args).output().expect("spawn helix").into()
    }

    /// [`Client::run`] in `dir`, another code repository of this machine.
    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Run {
        self.cmd_in(dir, args).output().expect("spawn helix").into()
    }

    /// Stores an entry with `helix store`, asserting success.
    pub fn store(&self, topic: &str, title: &str, body: &str) -> Run {
        self.run(&["store", "--topic", topic, "--title", title, "--body", body])
            .ok()
    }

    /// `helix search --json` hits.
    pub fn search(&self, query: &str) -> Vec<serde_json::Value> {
        self.search_in(&self.root, query)
    }

    /// `helix search --json` hits in `dir`, another code repository of this machine.
    pub fn search_in(&self, dir: &Path, query: &str) -> Vec<serde_json::Value> {
        let mut args = vec!["search", "--json"];
        args.extend(query.split_whitespace());
        let r = self.run_in(dir, &args).ok();
        r.json()["hits"].as_array().cloned().unwrap_or_default()
    }
}

/// `helix status --json` of `cmd` (a `helix` command isolated for a code repository).
fn status_json(mut cmd: Command) -> serde_json::Value {
    let out = cmd
        .args(["status", "--json"])
        .output()
        .expect("run helix status");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "helix status --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Where `helix` keeps the cache of the first project it follows, as `helix status --json`
/// reports it: tests ask rather than spell out the cache's layout.
pub fn first_cache_dir(cmd: Command) -> PathBuf {
    let v = status_json(cmd);
    PathBuf::from(
        v["projects"][0]["cache_dir"]
            .as_str()
            .expect("status names the cache directory"),
    )
}

/// The pending directory of `project` as `helix status --json` reports it (`cmd`: in server
/// mode).
pub fn pending_dir_of(cmd: Command, project: &str) -> PathBuf {
    let v = status_json(cmd);
    let p = v["projects"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == project)
        .unwrap_or_else(|| panic!("status lists no project {project}: {v}"));
    PathBuf::from(
        p["pending_dir"]
            .as_str()
            .unwrap_or_else(|| panic!("status names no pending directory for {project}: {v}")),
    )
}

/// Writes `(relative path, text)` files under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("file has a parent")).expect("create dir");
        std::fs::write(&p, text).expect("write file");
    }
}

/// A small realistic knowledge repository.
pub const KNOWLEDGE: &[(&str, &str)] = &[
    (
        "git/rebase-onto.md",
        "---\ntitle: Rebase a branch onto another with --onto\ntags: [git, rebase]\ndate: 2024-03-02\n---\n\n\
         Use `git rebase --onto main feature~3 feature` to move the last three commits.\n",
    ),
    (
        "build/openssl-linker.md",
        "---\ntitle: Linker cannot find -lssl\nsources: [build.rs]\ndate: 2025-01-10\n---\n\n\
         `cargo build` fails with `cannot find -lssl` when libssl-dev is missing. Install it.\n",
    ),
    (
        "db/pool-exhaustion.md",
        "# Connection pool exhausted in tests\n\nIntegration tests hang when max_connections is \
         below the test thread count. [source: src/db/pool.rs]\n",
    ),
    ("README.md", "# Team knowledge\n\nNot an entry.\n"),
];

/// Runs `git` in `dir`, asserting success.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("spawn git");
    assert!(
        o.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A bare upstream repository seeded with `files` on branch `main`, plus a work tree to
/// make more commits in (the pull-request path).
#[derive(Debug)]
pub struct Upstream {
    pub bare: PathBuf,
    pub work: PathBuf,
}

impl Upstream {
    pub fn new(dir: &Path, files: &[(&str, &str)]) -> Upstream {
        let bare = dir.join("upstream.git");
        let work = dir.join("upstream-work");
        std::fs::create_dir_all(&work).expect("create dir");
        git(
            dir,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                bare.to_str().expect("utf-8 path"),
            ],
        );
        git(&work, &["init", "-q", "-b", "main"]);
        write_files(&work, files);
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "seed"]);
        git(
            &work,
            &[
                "remote",
                "add",
                "origin",
                bare.to_str().expect("utf-8 path"),
            ],
        );
        git(&work, &["push", "-q", "origin", "main"]);
        Upstream { bare, work }
    }

    /// Commits `files` in the work tree and pushes them upstream.
    pub fn commit(&self, files: &[(&str, &str)], msg: &str) {
        git(&self.work, &["pull", "-q", "--rebase", "origin", "main"]);
        write_files(&self.work, files);
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", msg]);
        git(&self.work, &["push", "-q", "origin", "main"]);
    }

    /// Paths of the entries in the upstream's `main`.
    pub fn files(&self) -> Vec<String> {
        git(&self.work, &["pull", "-q", "--rebase", "origin", "main"]);
        git(&self.work, &["ls-files"])
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Path of the `helix-server` binary next to `helix` (built first if missing or stale).
pub fn server_binary() -> Option<PathBuf> {
    Some(helix_test_support::workspace_binary("helix-server"))
}

/// Makes sure `helix-net` (another package, which `helix` execs for sync, doctor and mcp)
/// is built and up to date beside `helix`.
pub fn ensure_net() {
    let net = helix_test_support::workspace_binary("helix-net");
    assert_eq!(
        net.parent(),
        Path::new(helix()).parent(),
        "helix-net must sit beside the helix under test"
    );
}

/// The real `helix-server` on 127.0.0.1, port 0; killed on drop.
#[derive(Debug)]
pub struct Server {
    pub url: String,
    pub child: Child,
    pub dir: PathBuf,
    /// `(project, token)` used by the test's own requests when loopback needs a token.
    auth: Vec<(String, String)>,
    _tmp: TempDir,
}

/// One project of a test server: name and upstream repository (if any).
pub struct ProjectSpec<'a> {
    pub name: &'a str,
    pub upstream: Option<&'a Path>,
}

impl Server {
    /// Starts a server with these projects; loopback needs no token.
    pub fn start(projects: &[ProjectSpec<'_>]) -> Server {
        Server::start_with_tokens(projects, true, &[]).0
    }

    /// Starts a server; `tokens` are `(project, holder, scopes)` created with
    /// `helix-server token add` before start. Returns the plaintext tokens in order.
    pub fn start_with_tokens(
        projects: &[ProjectSpec<'_>],
        anonymous_loopback: bool,
        tokens: &[(&str, &str, &str)],
    ) -> (Server, Vec<String>) {
        let bin = server_binary().expect(
            "helix-server binary not built: run `cargo build -p helix-server` (same target dir) first",
        );
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().to_path_buf();
        let mut cfg = format!("anonymous_loopback = {anonymous_loopback}\n");
        for p in projects {
            cfg.push_str(&format!(
                "\n[[projects]]\nname = {:?}\npoll_interval_secs = 3600\n",
                p.name
            ));
            if let Some(u) = p.upstream {
                cfg.push_str(&format!(
                    "upstream = {:?}\n",
                    u.to_str().expect("utf-8 path")
                ));
            }
        }
        let cfg_path = dir.join("server.toml");
        std::fs::write(&cfg_path, cfg).expect("write server config");
        let mut plain = Vec::new();
        for (project, name, scopes) in tokens {
            plain.push(helix_test_support::token_add(
                Path::new(&bin),
                &cfg_path,
                project,
                name,
                scopes,
            ));
        }
        let mut cmd = Command::new(bin);
        let mut child = helix_test_support::isolate(&mut cmd, &dir)
            .arg("--config")
            .arg(&cfg_path)
            .args(["--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .env("RUST_LOG", "error,tower_http=off")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "helix")
            .env("GIT_AUTHOR_EMAIL", "helix@example.invalid")
            .env("GIT_COMMITTER_NAME", "helix")
            .env("GIT_COMMITTER_EMAIL", "helix@example.invalid")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helix-server");
        let url = helix_test_support::listen_url(
            &mut child,
            std::time::Duration::from_secs(60),
            "helix-server",
        );
        let auth = tokens
            .iter()
            .zip(&plain)
            .map(|((p, _, _), t)| (p.to_string(), t.clone()))
            .collect();
        let server = Server {
            url,
            child,
            dir,
            auth,
            _tmp: tmp,
        };
        for p in projects {
            server.wait_ready(p.name);
        }
        (server, plain)
    }

    fn bearer(&self, project: &str) -> Option<&str> {
        self.auth
            .iter()
            .find(|(p, _)| p == project)
            .map(|(_, t)| t.as_str())
    }

    /// Waits until the project serves an artifact (ingest is asynchronous).
    pub fn wait_ready(&self, project: &str) {
        for _ in 0..300 {
            let path = format!("/v1/projects/{project}/index");
            let got = http_request(&self.url, "GET", &path, b"", self.bearer(project));
            if got.is_some_and(|(code, _)| code == 200) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("project {project} never became ready on {}", self.url);
    }

    /// Status code of a GET (a raw HTTP/1.1 request; no client library needed).
    pub fn http_status(&self, path: &str) -> Option<u16> {
        http_request(&self.url, "GET", path, b"", None).map(|(code, _)| code)
    }

    /// `POST /v1/projects/{p}/refresh` and wait until the served commit changes.
    pub fn refresh(&self, project: &str) {
        let before = self.commit(project);
        let _ = http_request(
            &self.url,
            "POST",
            &format!("/v1/projects/{project}/refresh"),
            b"",
            self.bearer(project),
        );
        for _ in 0..300 {
            if self.commit(project) != before {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("refresh of {project} did not produce a new commit");
    }

    /// The commit the server currently serves for `project`.
    pub fn commit(&self, project: &str) -> String {
        let path = format!("/v1/projects/{project}/status");
        let (_, body) =
            http_request(&self.url, "GET", &path, b"", self.bearer(project)).expect("status");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("status JSON");
        v["commit"].as_str().unwrap_or("").to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET `path` from `base` (`http://host:port`), returning status and body.
pub fn http_get(base: &str, path: &str) -> Option<(u16, Vec<u8>)> {
    http_request(base, "GET", path, b"", None)
}

/// A raw HTTP/1.1 request (no client library needed): status and body.
pub fn http_request(
    base: &str,
    method: &str,
    path: &str,
    body: &[u8],
    bearer: Option<&str>,
) -> Option<(u16, Vec<u8>)> {
    helix_test_support::http_request(
        base,
        method,
        path,
        body,
        bearer,
        std::time::Duration::from_secs(30),
    )
}
