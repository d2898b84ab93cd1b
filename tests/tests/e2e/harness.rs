//! Test harness: finds (or builds) the real binaries, makes git repositories, runs
//! `helix-server` on a loopback port and isolated developer machines running `helix`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// How long any single wait in these tests may take before it fails with a message.
pub const WAIT: Duration = Duration::from_secs(60);

/// Paths of the binaries under test.
#[derive(Debug)]
pub struct Bins {
    pub helix: PathBuf,
    pub server: PathBuf,
}

/// The `helix` and `helix-server` binaries of this workspace and profile (built first when
/// missing or stale: `helix_test_support::workspace_binary`).
pub fn bins() -> &'static Bins {
    static BINS: OnceLock<Bins> = OnceLock::new();
    BINS.get_or_init(|| Bins {
        helix: helix_test_support::workspace_binary("helix"),
        server: helix_test_support::workspace_binary("helix-server"),
    })
}

/// Polls `f` until it returns `Some`, failing with `what` after [`WAIT`].
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Output of a finished command, as text.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts exit status 0.
    #[track_caller]
    pub fn ok(self, what: &str) -> Run {
        assert_eq!(
            self.code,
            Some(0),
            "{what} failed:\nstdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn json(&self) -> Value {
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

/// Runs `git` in `dir` as `author`, asserting success; returns trimmed stdout.
#[track_caller]
pub fn git_as(dir: &Path, author: &str, args: &[&str]) -> String {
    let email = format!("{}@example.invalid", author.to_lowercase());
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("spawn git");
    assert!(
        o.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Writes `(relative path, text)` files under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("file has a parent")).expect("create dir");
        std::fs::write(&p, text).expect("write file");
    }
}

/// A bare upstream knowledge repository on `main`, and a clone to commit into as any author
/// (the review-and-merge path of a pull request).
#[derive(Debug)]
pub struct Upstream {
    pub bare: PathBuf,
    pub work: PathBuf,
}

impl Upstream {
    pub fn new(dir: &Path) -> Upstream {
        let bare = dir.join("knowledge.git");
        let work = dir.join("knowledge-work");
        std::fs::create_dir_all(&work).expect("create dir");
        let bare_s = bare.to_str().expect("utf-8 path");
        git_as(
            dir,
            "Admin",
            &["init", "-q", "--bare", "-b", "main", bare_s],
        );
        git_as(&work, "Admin", &["init", "-q", "-b", "main"]);
        git_as(&work, "Admin", &["remote", "add", "origin", bare_s]);
        Upstream { bare, work }
    }

    /// Commits `files` as `author` on top of the upstream's `main` and pushes.
    pub fn commit_as(&self, author: &str, files: &[(&str, &str)], msg: &str) -> String {
        if !self.heads().is_empty() {
            git_as(
                &self.work,
                author,
                &["pull", "-q", "--rebase", "origin", "main"],
            );
        }
        write_files(&self.work, files);
        git_as(&self.work, author, &["add", "-A"]);
        git_as(&self.work, author, &["commit", "-q", "-m", msg]);
        git_as(&self.work, author, &["push", "-q", "origin", "main"]);
        self.head()
    }

    fn heads(&self) -> String {
        self.git(&["for-each-ref", "refs/heads"])
    }

    /// `git ARGS` in the bare repository.
    pub fn git(&self, args: &[&str]) -> String {
        git_as(&self.bare, "Reader", args)
    }

    /// The commit id of the upstream's `main`.
    pub fn head(&self) -> String {
        self.git(&["rev-parse", "main"])
    }
}

/// The real `helix-server` on 127.0.0.1 (port 0); killed on drop.
#[derive(Debug)]
pub struct Server {
    pub url: String,
    child: Option<Child>,
    pub config: PathBuf,
    pub data: PathBuf,
}

impl Server {
    /// Writes `config_toml` to `dir/server.toml`.
    pub fn configure(dir: &Path, config_toml: &str) -> PathBuf {
        let path = dir.join("server.toml");
        std::fs::write(&path, config_toml).expect("write server config");
        path
    }

    /// `helix-server --config FILE token add ...`: the printed plaintext token.
    #[track_caller]
    pub fn token_add(config: &Path, project: &str, name: &str, scopes: &str) -> String {
        helix_test_support::token_add(&bins().server, config, project, name, scopes)
    }

    /// Starts `helix-server --config FILE --listen 127.0.0.1:0 --data-dir DIR`.
    pub fn start(config: &Path, data: &Path, home: &Path) -> Server {
        Server::start_on("127.0.0.1:0", config, data, home)
    }

    /// Starts the server again on the address it had, with the same config and data.
    pub fn restart(&mut self, home: &Path) {
        self.stop();
        let addr = self.url.trim_start_matches("http://").to_string();
        *self = Server::start_on(&addr, &self.config, &self.data, home);
    }

    fn start_on(listen: &str, config: &Path, data: &Path, home: &Path) -> Server {
        let mut cmd = Command::new(&bins().server);
        let mut child = helix_test_support::isolate(&mut cmd, home)
            .arg("--config")
            .arg(config)
            .args(["--listen", listen, "--data-dir"])
            .arg(data)
            .env("RUST_LOG", "warn")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helix-server");
        let url = helix_test_support::listen_url(&mut child, WAIT, "helix-server");
        Server {
            url,
            child: Some(child),
            config: config.to_path_buf(),
            data: data.to_path_buf(),
        }
    }

    /// Sends SIGHUP: the server reads its config again (tokens in force at once).
    pub fn reload(&self) {
        let pid = self.child.as_ref().expect("running server").id();
        let ok = Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -HUP {pid}");
    }

    /// `METHOD path` on this server with an optional bearer token.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        token: Option<&str>,
    ) -> Option<(u16, Vec<u8>)> {
        http_request(&self.url, method, path, body, token)
    }

    /// JSON body of a request that must answer `want`.
    #[track_caller]
    pub fn json(&self, method: &str, path: &str, token: Option<&str>, want: u16) -> Value {
        let (code, body) = self
            .request(method, path, b"", token)
            .unwrap_or_else(|| panic!("{method} {path}: no answer from {}", self.url));
        assert_eq!(
            code,
            want,
            "{method} {path}: {}",
            String::from_utf8_lossy(&body)
        );
        serde_json::from_slice(&body).unwrap_or_else(|e| {
            panic!(
                "{method} {path}: not JSON ({e}): {}",
                String::from_utf8_lossy(&body)
            )
        })
    }

    /// Waits until `project` serves an artifact of `commit`; returns its status.
    pub fn wait_serving(&self, project: &str, token: &str, commit: &str) -> Value {
        let path = format!("/v1/projects/{project}/status");
        wait_for(&format!("{project} to serve commit {commit}"), || {
            let (code, body) = self.request("GET", &path, b"", Some(token))?;
            let v: Value = serde_json::from_slice(&body).ok()?;
            (code == 200 && v["commit"] == commit).then_some(v)
        })
    }

    /// Stops the server (SIGKILL: the cache must not depend on a clean goodbye) and waits
    /// until its port refuses connections.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let host = self.url.trim_start_matches("http://").to_string();
        wait_for("the stopped server's port to close", || {
            std::net::TcpStream::connect(&host).is_err().then_some(())
        });
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A minimal HTTP/1.1 request over std TCP (connection: close): status and body.
pub fn http_request(
    base: &str,
    method: &str,
    path: &str,
    body: &[u8],
    bearer: Option<&str>,
) -> Option<(u16, Vec<u8>)> {
    helix_test_support::http_request(base, method, path, body, bearer, WAIT)
}

/// One developer machine: its own HOME and XDG config/cache/data directories, and a code
/// repository (`root`) holding `.helix.toml`.
#[derive(Debug)]
pub struct Dev {
    _tmp: TempDir,
    pub name: String,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Dev {
    /// A developer following `projects` on `server` with `token` in their user config.
    pub fn new(name: &str, server: &str, projects: &[&str], token: &str) -> Dev {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("code");
        let home = tmp.path().join("home");
        for d in [&root, &home] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        let dev = Dev {
            _tmp: tmp,
            name: name.to_string(),
            root,
            home,
        };
        let list: Vec<String> = projects.iter().map(|p| format!("{p:?}")).collect();
        dev.write(
            ".helix.toml",
            &format!("server = {server:?}\nprojects = [{}]\n", list.join(", ")),
        );
        let cfg = dev.config_home().join("helix");
        std::fs::create_dir_all(&cfg).expect("create config dir");
        std::fs::write(
            cfg.join("config.toml"),
            format!("[servers.{server:?}]\ntoken = {token:?}\n"),
        )
        .expect("write user config");
        dev
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
    /// The pending directory of `project` (`$XDG_DATA_HOME/helix/servers/<server-key>/pending/
    /// <project>`), as `helix status --json` reports it.
    pub fn pending_dir(&self, project: &str) -> PathBuf {
        let status = self.run(&["status", "--json"]).ok("status").json();
        let dir = status["projects"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == project)
            .and_then(|p| p["pending_dir"].as_str())
            .unwrap_or_else(|| panic!("status names no pending directory for {project}: {status}"));
        PathBuf::from(dir)
    }

    /// Writes a file of the code repository.
    pub fn write(&self, rel: &str, text: &str) {
        write_files(&self.root, &[(rel, text)]);
    }

    /// `helix ARGS` in the code repository, isolated from the real user and each other.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&bins().helix);
        helix_test_support::isolate(c.args(args).current_dir(&self.root), &self.home)
            // A hook must not start a background sync behind the test's back.
            .env("HELIX_SYNC_MAX_AGE", "off")
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.cmd(args).output().expect("spawn helix").into()
    }

    /// `helix hook EVENT` with `input` (plus `session_id`, `cwd`) on stdin. The hook must
    /// exit 0 and print nothing or one JSON object; returns that object (`Null` for nothing).
    /// Each call is its own session unless `input` names one: within a session the hooks
    /// do not show an entry twice, and these tests look at each call on its own.
    #[track_caller]
    pub fn hook(&self, event: &str, mut input: Value) -> Value {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        if input.get("session_id").is_none() {
            let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            input["session_id"] = json!(format!("{}-session-{n}", self.name));
        }
        input["transcript_path"] = json!(self.home.join("transcript.jsonl"));
        input["cwd"] = json!(self.root);
        let mut child = self
            .cmd(&["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn helix hook");
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write hook input");
        let r: Run = child
            .wait_with_output()
            .expect("wait for helix hook")
            .into();
        assert_eq!(
            r.code,
            Some(0),
            "hook {event} exited non-zero: {}",
            r.stderr
        );
        let out = r.stdout.trim();
        if out.is_empty() {
            return Value::Null;
        }
        serde_json::from_str(out)
            .unwrap_or_else(|e| panic!("hook {event} printed non-JSON ({e}): {out:?}"))
    }

    /// Starts `helix mcp` in the code repository and completes the MCP handshake.
    pub fn mcp(&self) -> Mcp {
        let mut child = self
            .cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helix mcp");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mcp = Mcp {
            child,
            stdin: Some(stdin),
            lines: rx,
            next_id: 1,
        };
        let init = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "helix-e2e", "version": "0.1.0"},
            }),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "helix",
            "initialize answer: {init}"
        );
        mcp.notify("notifications/initialized", json!({}));
        mcp
    }
}

/// A `helix mcp` child spoken to in line-delimited JSON-RPC 2.0 over its stdio.
#[derive(Debug)]
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Mcp {
    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("MCP stdin open");
        writeln!(stdin, "{msg}").expect("write to helix mcp");
        stdin.flush().expect("flush helix mcp stdin");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns the response with its id (skipping notifications).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => panic!("helix mcp: no answer to {method}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("helix mcp closed stdout before answering {method}")
                }
            };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("helix mcp printed non-JSON-RPC ({e}): {line:?}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// `tools/call` of `tool`; returns the `result` (asserting no protocol error).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(v["error"].is_null(), "{tool}: JSON-RPC error {v}");
        v["result"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        // Closing stdin ends the session; kill if it lingers.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `additionalContext` a hook answered, or "" when it printed nothing.
pub fn context(answer: &Value) -> String {
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
