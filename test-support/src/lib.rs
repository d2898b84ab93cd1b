//! Helpers shared by the workspace's integration tests: learn a freshly started
//! `helix-server`'s address, and speak minimal HTTP/1.1 without a client library.
//!
//! Only std: every test crate can depend on it without pulling anything into the builds
//! it tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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
    s.read_to_end(&mut buf).ok()?;
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    let mut body = buf[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Some((code, body))
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
    fn dechunk_joins_chunks_and_stops_at_the_end_or_truncation() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            b"hello world"
        );
        assert_eq!(dechunk(b"5\r\nhel"), b"");
        assert_eq!(dechunk(b"3\r\nabc\r\nzz\r\n"), b"abc");
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
