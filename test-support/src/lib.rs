//! Helpers shared by the workspace's integration tests: find (or build) the workspace's
//! binaries, learn a freshly started `helix-server`'s address, and speak minimal HTTP/1.1
//! without a client library.
//!
//! Only std: every test crate can depend on it without pulling anything into the builds
//! it tests.

mod exchange;
pub use exchange::{Answer, exchange, form};

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The packages whose binaries the integration tests run: `helix`, `helix-net` and
/// `helix-server`.
const BIN_PACKAGES: [&str; 3] = ["helix-client", "helix-client-net", "helix-server"];

/// Path of the workspace binary `name` (`helix`, `helix-net`, `helix-server`) of the profile
/// the running test was built with.
///
/// The test executable lives in `target/<profile>/deps/`; the binaries in `target/<profile>/`.
/// Another package's `CARGO_BIN_EXE_*` is not available to a test, so they are located next
/// to the test executable. `cargo test --workspace` builds them already (they are the bin
/// targets of packages under test); when one package is tested alone (`cargo test -p
/// helix-client`, which runs `helix-net` and `helix-server`) they may be missing or stale, so
/// `cargo build` runs once when a binary is missing or older than a source file of the
/// workspace. (Building unconditionally would relink them with other features — `cargo
/// build` leaves out dev-dependencies — and cost minutes.) `HELIX_TEST_NO_BUILD=1` skips it.
pub fn workspace_binary(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("path of the test executable");
        let deps = exe.parent().expect("test executable has a directory");
        let profile_dir = if deps.file_name().is_some_and(|n| n == "deps") {
            deps.parent().expect("deps has a parent")
        } else {
            deps
        }
        .to_path_buf();
        let bins: Vec<PathBuf> = ["helix", "helix-net", "helix-server"]
            .iter()
            .map(|b| profile_dir.join(format!("{b}{}", std::env::consts::EXE_SUFFIX)))
            .collect();
        let missing = bins.iter().any(|b| !b.exists());
        let skip = std::env::var_os("HELIX_TEST_NO_BUILD").is_some();
        if missing || (!skip && stale(&bins)) {
            build(&profile_dir);
        }
        for b in &bins {
            assert!(
                b.exists(),
                "binary not found after building: {}",
                b.display()
            );
        }
        profile_dir
    });
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Whether any source of the binaries is newer than the oldest of `bins`.
fn stale(bins: &[PathBuf]) -> bool {
    fn modified(p: &Path) -> Option<std::time::SystemTime> {
        std::fs::metadata(p).and_then(|m| m.modified()).ok()
    }
    fn newest(dir: &Path, acc: &mut std::time::SystemTime) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                newest(&p, acc);
            } else if let Some(t) = modified(&p) {
                *acc = (*acc).max(t);
            }
        }
    }
    let Some(oldest_bin) = bins.iter().filter_map(|b| modified(b)).min() else {
        return true;
    };
    let root = workspace_root();
    let mut src = std::time::SystemTime::UNIX_EPOCH;
    for dir in [
        "client/src",
        "client-net/src",
        "server/src",
        "index-format/src",
        "docs/examples/knowledge",
    ] {
        newest(&root.join(dir), &mut src);
    }
    for file in [
        "Cargo.lock",
        "Cargo.toml",
        "client/Cargo.toml",
        "client-net/build.rs",
        "client-net/hot-text.txt",
        "client-net/Cargo.toml",
        "server/Cargo.toml",
        "server/build.rs",
        "index-format/Cargo.toml",
    ] {
        if let Some(t) = modified(&root.join(file)) {
            src = src.max(t);
        }
    }
    src > oldest_bin
}

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("test-support sits in the workspace root")
        .to_path_buf()
}

/// `cargo build` of the binary packages into the target dir holding `profile_dir`.
fn build(profile_dir: &Path) {
    let target_dir = profile_dir.parent().expect("profile dir has a parent");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("debug");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.args(["build", "--quiet"]);
    for p in BIN_PACKAGES {
        c.args(["-p", p]);
    }
    c.arg("--target-dir")
        .arg(target_dir)
        .current_dir(workspace_root());
    match profile {
        "debug" => {}
        "release" => {
            c.arg("--release");
        }
        other => {
            c.args(["--profile", other]);
        }
    }
    let status = c
        .status()
        .expect("spawn cargo build for the binaries under test");
    assert!(
        status.success(),
        "cargo build of {BIN_PACKAGES:?} failed ({status})"
    );
}

/// The per-user directories a process under test gets, all inside `home`: `HOME` and
/// every XDG base directory helix reads (config, cache, data, state, runtime).
pub const ISOLATED_VARS: [(&str, &str); 6] = [
    ("HOME", ""),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_RUNTIME_DIR", "run"),
];

/// Points `cmd` at a machine of its own under `home`: `HOME` and every XDG base directory
/// inside it ([`ISOLATED_VARS`]), and no inherited `XDG_*` or `HELIX_*` variable (a
/// developer's own `XDG_STATE_HOME` or `HELIX_LOG` must not leak into a test, nor a test's
/// writes into them). Set test-specific `HELIX_*` variables after calling this.
pub fn isolate<'c>(cmd: &'c mut Command, home: &Path) -> &'c mut Command {
    let inherited = std::env::vars_os().map(|(k, _)| k);
    let explicit = cmd.get_envs().map(|(k, _)| k.to_os_string());
    let drop: Vec<_> = inherited
        .chain(explicit.collect::<Vec<_>>())
        .filter(|k| {
            k.to_str()
                .is_some_and(|k| k.starts_with("XDG_") || k.starts_with("HELIX_"))
        })
        .collect();
    for k in drop {
        cmd.env_remove(k);
    }
    for (var, rel) in ISOLATED_VARS {
        let dir = if rel.is_empty() {
            home.to_path_buf()
        } else {
            home.join(rel)
        };
        if var == "XDG_RUNTIME_DIR" {
            // helix creates it 0700 when missing, as a login session would.
            let _ = std::fs::create_dir_all(&dir);
        }
        cmd.env(var, dir);
    }
    cmd
}

/// The program `name`: from `$<NAME>` (upper case, `-` as `_`) when set, else the first
/// `name` on `PATH`, else in `/usr/sbin`, `/usr/local/sbin` or `/sbin` (not on a normal
/// user's PATH on Debian, where daemons such as haproxy install).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let var = name.to_ascii_uppercase().replace('-', "_");
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs `<server_bin> --config <config> token add` for `project`, as an operator would,
/// and returns the plaintext token it prints once. Panics with the command's stderr when
/// it fails or prints something that is not a token.
#[track_caller]
pub fn token_add(
    server_bin: &Path,
    config: &Path,
    project: &str,
    name: &str,
    scopes: &str,
) -> String {
    let out = Command::new(server_bin)
        .arg("--config")
        .arg(config)
        .args([
            "token",
            "add",
            "--project",
            project,
            "--name",
            name,
            "--scope",
            scopes,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", server_bin.display()));
    assert!(
        out.status.success(),
        "token add {project}/{name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        token.starts_with("hx_") && token.len() == 67,
        "token add printed {token:?}"
    );
    token
}

/// Reads the first line a just-spawned `helix-server` prints (`listening on http://…`) and
/// returns the URL. `child` must have a piped stdout. Panics naming `what` when the server
/// exits, prints something else, or says nothing within `within`, so that a server that
/// fails to start fails the test instead of hanging it.
#[track_caller]
pub fn listen_url(child: &mut Child, within: Duration, what: &str) -> String {
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("{what}: stdout must be piped"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(within)
        .unwrap_or_else(|_| panic!("{what}: no `listening on` line within {within:?}"));
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{what} did not start; its first line was {line:?}"))
        .to_string()
}

/// `METHOD path` on `base` (`http://host:port`) over a fresh connection (`Connection:
/// close`), with a JSON body and an optional bearer token: status and body (de-chunked).
/// The body ends at its `Content-Length` when there is one (chromedriver keeps the
/// connection open despite `Connection: close`), else when the server closes.
/// `None` when the connection fails or the answer is not HTTP.
pub fn http_request(
    base: &str,
    method: &str,
    path: &str,
    body: &[u8],
    bearer: Option<&str>,
    timeout: Duration,
) -> Option<(u16, Vec<u8>)> {
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(host).ok()?;
    s.set_read_timeout(Some(timeout)).ok()?;
    let auth = bearer
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    while !content_length_reached(&mut buf) {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    let mut body = buf[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Some((code, body))
}

/// Whether `buf` holds a whole answer with a `Content-Length` (cut to it when it does).
fn content_length_reached(buf: &mut Vec<u8>) -> bool {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length = head.lines().find_map(|l| {
        l.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    match length {
        Some(n) if buf.len() >= end + 4 + n => {
            buf.truncate(end + 4 + n);
            true
        }
        _ => false,
    }
}

/// The payload of a chunked HTTP/1.1 body; stops at the last chunk or at truncation.
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        let start = eol + 2;
        if size == 0 || b.len() < start + size {
            break;
        }
        out.extend_from_slice(&b[start..start + size]);
        b = &b[(start + size + 2).min(b.len())..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolate_overrides_every_inherited_directory() {
        let dir = std::env::temp_dir().join(format!("helix-isolate-{}", std::process::id()));
        let home = dir.as_path();
        let mut c = Command::new("true");
        c.env("XDG_STATE_HOME", "/outside/state")
            .env("XDG_DATA_DIRS", "/outside/share")
            .env("HELIX_LOG", "/outside/log");
        isolate(&mut c, home);
        let envs: std::collections::HashMap<_, _> = c
            .get_envs()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.map(PathBuf::from)))
            .collect();
        for (var, _) in ISOLATED_VARS {
            let v = envs[var].as_ref().expect("set");
            assert!(v.starts_with(home), "{var}={}", v.display());
        }
        assert_eq!(
            envs["XDG_DATA_DIRS"], None,
            "inherited XDG_ variables are removed"
        );
        assert_eq!(envs["HELIX_LOG"], None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn dechunk_joins_chunks_and_stops_at_the_end_or_truncation() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            b"hello world"
        );
        assert_eq!(dechunk(b"5\r\nhel"), b"");
        assert_eq!(dechunk(b"3\r\nabc\r\nzz\r\n"), b"abc");
    }

    #[test]
    fn http_request_stops_at_content_length_on_a_connection_left_open() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf).expect("read");
            // What chromedriver does: `Connection: close` announced, the socket kept open.
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length:2\r\nConnection:close\r\n\r\nok")
                .expect("write");
            let _ = wait.recv_timeout(Duration::from_secs(30));
        });
        let started = std::time::Instant::now();
        let got = http_request(
            &format!("http://{addr}"),
            "GET",
            "/status",
            b"",
            None,
            Duration::from_secs(20),
        );
        assert_eq!(got, Some((200, b"ok".to_vec())));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "did not wait for the close"
        );
        done.send(()).expect("server waits");
        server.join().expect("server thread");
    }

    #[test]
    fn http_request_reads_status_and_body_from_a_real_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            // The whole request (head, then the two-byte body) before answering: closing
            // with unread bytes would reset the connection under the client.
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.ends_with(b"\r\n\r\n{}") {
                let n = s.read(&mut buf).expect("read");
                assert!(
                    n > 0,
                    "request cut short: {:?}",
                    String::from_utf8_lossy(&req)
                );
                req.extend_from_slice(&buf[..n]);
            }
            let req = String::from_utf8_lossy(&req).to_string();
            s.write_all(
                b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            )
            .expect("write");
            req
        });
        let got = http_request(
            &format!("http://{addr}"),
            "POST",
            "/v1/x",
            b"{}",
            Some("tok"),
            Duration::from_secs(5),
        );
        assert_eq!(got, Some((201, b"ok".to_vec())));
        let req = server.join().expect("server thread");
        assert!(req.starts_with("POST /v1/x HTTP/1.1\r\n"), "{req}");
        assert!(req.contains("Authorization: Bearer tok\r\n"), "{req}");
    }
}
