//! Two `helix-server` replicas on one upstream behind a real haproxy (round robin, so
//! consecutive requests land on different replicas): syncs, stores and retries through the
//! balancer, every store landing exactly once, both replicas serving the same artifact (same
//! ETag and generation) for the same commit, and a webhook that reaches one replica reaching
//! the other within its poll interval (docs/operations.md, "Scaling out").
//!
//! Needs `haproxy` (`$HAPROXY`, on PATH or in /usr/sbin; Debian package `haproxy`, which
//! `.ci/run` installs). Without it the test fails and says so: a replica deployment that was
//! never run must not look tested.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::harness::{Dev, Server, Upstream, WAIT, wait_for};

const PROJECT: &str = "team";

/// haproxy in the foreground on a free loopback port; stopped on drop.
struct Balancer {
    url: String,
    child: Child,
}

impl Balancer {
    fn start(dir: &Path, replicas: &[&str]) -> Balancer {
        let bin = helix_test_support::find_program("haproxy").unwrap_or_else(|| {
            panic!(
                "haproxy is needed by the replica test and was found neither as $HAPROXY, \
                 on PATH nor in /usr/sbin: `apt-get install haproxy` (.ci/run installs it)"
            )
        });
        // A free port: bound and released just before haproxy binds it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let servers: String = replicas
            .iter()
            .enumerate()
            .map(|(i, url)| {
                let addr = url.trim_start_matches("http://");
                format!("  server r{i} {addr} check inter 500ms\n")
            })
            .collect();
        let cfg = dir.join("haproxy.cfg");
        std::fs::write(
            &cfg,
            format!(
                "global\n  maxconn 512\n\
                 defaults\n  mode http\n  timeout connect 5s\n  timeout client 120s\n  timeout server 120s\n\
                 frontend helix\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
                 backend replicas\n  balance roundrobin\n  option httpchk GET /healthz\n{servers}"
            ),
        )
        .expect("write haproxy.cfg");
        let child = Command::new(bin)
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn haproxy");
        let b = Balancer {
            url: format!("http://127.0.0.1:{port}"),
            child,
        };
        wait_for("haproxy to forward /healthz", || {
            (request(&b.url, "GET", "/healthz", &[], b"").ok()?.0 == 200).then_some(())
        });
        b
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request with `headers`: status, lower-cased headers and body.
fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(u16, BTreeMap<String, String>, Vec<u8>)> {
    let host = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(host)?;
    s.set_read_timeout(Some(WAIT))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let bad = || std::io::Error::other("malformed response");
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(bad)?;
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = text.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(bad)?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Ok((status, headers, buf[end + 4..].to_vec()))
}

/// `(ETag, X-Helix-Generation, X-Helix-Commit)` of a replica's index.
fn served(url: &str, token: &str) -> (String, String, String) {
    let auth = format!("Bearer {token}");
    let (code, h, _) = request(
        url,
        "GET",
        "/v1/projects/team/index",
        &[("Authorization", &auth)],
        b"",
    )
    .expect("index");
    assert_eq!(code, 200, "{url}");
    (
        h["etag"].clone(),
        h["x-helix-generation"].clone(),
        h["x-helix-commit"].clone(),
    )
}

#[test]
fn two_replicas_behind_haproxy_store_once_and_serve_one_artifact() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let up = Upstream::new(tmp.path());
    up.commit_as(
        "Alice",
        &[(
            "git/rebase.md",
            "# Rebase onto\n\nUse `git rebase --onto`.\n",
        )],
        "one",
    );
    up.commit_as(
        "Bob",
        &[("ci/arm.md", "# Arm runner\n\nIt is four times slower.\n")],
        "two",
    );
    let config = Server::configure(
        tmp.path(),
        &format!(
            "[[projects]]\nname = \"{PROJECT}\"\nupstream = {:?}\npoll_interval_secs = 2\n",
            up.bare.to_str().expect("utf-8")
        ),
    );
    let token = Server::token_add(&config, PROJECT, "writer", "read,write");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let replicas: Vec<Server> = (0..2)
        .map(|i| Server::start(&config, &tmp.path().join(format!("data{i}")), &home))
        .collect();
    let head = up.head();
    for r in &replicas {
        r.wait_serving(PROJECT, &token, &head);
    }
    // Compiled separately, the same commit is the same artifact.
    let (e0, e1) = (
        served(&replicas[0].url, &token),
        served(&replicas[1].url, &token),
    );
    assert_eq!(e0, e1);
    assert_eq!(e0.2, head);
    let lb = Balancer::start(tmp.path(), &[&replicas[0].url, &replicas[1].url]);

    let a = Dev::new("a", &lb.url, &[PROJECT], &token);
    let r = a.run(&["sync"]).ok("first sync through the balancer");
    assert!(
        r.stdout.contains("team: 2 entries") && r.stdout.contains("downloaded"),
        "{}",
        r.stdout
    );

    // Concurrent stores through the balancer, each with its own key, then every one retried
    // through the balancer and directly at each replica: the same answer, nothing new.
    let auth = format!("Bearer {token}");
    let post = |base: &str, i: usize| {
        let key = format!("replica-test-{i}");
        // Alike on purpose (the path is tested, not the content): past the duplicate check.
        let body = format!(
            r#"{{"topic":"load","title":"Stored note {i}","body":"Learned thing {i} the hard way.","force":true}}"#
        );
        let hdrs = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Idempotency-Key", &key),
        ];
        let (code, _, body) = request(
            base,
            "POST",
            "/v1/projects/team/entries",
            &hdrs,
            body.as_bytes(),
        )
        .expect("POST entry");
        (code, body)
    };
    const N: usize = 24;
    let (lb_url, post) = (lb.url.as_str(), &post);
    let first: Vec<(u16, Vec<u8>)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..N).map(|i| s.spawn(move || post(lb_url, i))).collect();
        hs.into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect()
    });
    for (i, (code, body)) in first.iter().enumerate() {
        assert_eq!(*code, 201, "store {i}: {}", String::from_utf8_lossy(body));
    }
    for (i, (_, body)) in first.iter().enumerate() {
        for base in [&lb.url, &replicas[0].url, &replicas[1].url] {
            let (code, again) = post(base, i);
            assert_eq!((code, &again), (200, body), "retry {i} at {base}");
        }
    }
    let landed = up
        .git(&["ls-tree", "-r", "--name-only", "main", "load/"])
        .lines()
        .count();
    assert_eq!(landed, N, "every store landed exactly once");

    // Both replicas end on the upstream's head with the same artifact.
    let head = up.head();
    for r in &replicas {
        let _ = request(
            &r.url,
            "POST",
            "/v1/projects/team/refresh?wait=1",
            &[("Authorization", &auth)],
            b"",
        );
        r.wait_serving(PROJECT, &token, &head);
    }
    let (e0, e1) = (
        served(&replicas[0].url, &token),
        served(&replicas[1].url, &token),
    );
    assert_eq!(e0, e1, "same commit, same artifact on both replicas");
    assert_eq!(e0.2, head);

    let r = a.run(&["sync"]).ok("second sync through the balancer");
    assert!(
        r.stdout.contains(&format!("updated 2 → {} entries", N + 2)),
        "{}",
        r.stdout
    );
    let b = Dev::new("b", &lb.url, &[PROJECT], &token);
    b.run(&["sync"]).ok("b's sync");
    let hits = b
        .run(&["search", "--json", "learned thing 7 hard way"])
        .ok("search")
        .json();
    assert!(hits.to_string().contains("load/stored-note-7.md"), "{hits}");

    // A webhook (here a token refresh) through the balancer reaches one replica; the other
    // fetches on its own within poll_interval_secs.
    let pushed = up.commit_as(
        "Carol",
        &[("db/pool.md", "# Pool\n\nGive CI 16 connections.\n")],
        "three",
    );
    let (code, _, _) = request(
        &lb.url,
        "POST",
        "/v1/projects/team/refresh",
        &[("Authorization", &auth)],
        b"",
    )
    .expect("refresh through the balancer");
    assert_eq!(code, 202);
    for r in &replicas {
        r.wait_serving(PROJECT, &token, &pushed);
    }
    assert_eq!(
        served(&replicas[0].url, &token),
        served(&replicas[1].url, &token)
    );
    // Whichever replica answers, the client holds an artifact it keeps: a patch.
    let r = a.run(&["sync"]).ok("third sync");
    assert!(r.stdout.contains(" patch"), "{}", r.stdout);
}
