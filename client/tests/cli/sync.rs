//! `helix sync` end to end against the real `helix-server` on loopback with real upstream
//! git repositories, and against a raw TCP peer serving damaged artifacts.

use super::common::{Client, ProjectSpec, Server, Upstream, write_files};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

const BACKEND: &[(&str, &str)] = &[
    (
        "build/openssl-linker.md",
        "---\ntitle: Linker cannot find -lssl\nsources: [build.rs]\n---\n\n\
         `cargo build` fails with `cannot find -lssl` when libssl-dev is missing.\n",
    ),
    (
        "git/rebase-onto.md",
        "# Rebase onto another branch\n\nUse `git rebase --onto main old feature`.\n",
    ),
];

const ORG: &[(&str, &str)] = &[(
    "security/rotate-keys.md",
    "# Rotate deploy keys yearly\n\nDeploy keys are rotated every January; the linker script reads them.\n",
)];

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn store_on_a_syncs_to_b_and_upstream_commits_reach_both() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), BACKEND);
    let server = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let (a, b) = (Client::new(), Client::new());
    a.follow(&server.url, &["backend"]);
    b.follow(&server.url, &["backend"]);

    let r = a.run(&["sync"]).ok();
    assert!(
        r.stdout.starts_with("backend: 2 entries, commit "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("downloaded"), "{}", r.stdout);
    let r = a.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("up to date"),
        "second sync is a 304: {}",
        r.stdout
    );

    a.store(
        "ci",
        "Arm runner needs a longer timeout",
        "The arm runner is four times slower; raise the job timeout.",
    );
    assert_eq!(
        a.search("arm runner timeout")[0]["id"],
        "ci/arm-runner-needs-a-longer-timeout.md"
    );
    let r = a.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("updated 2 → 3 entries (+1)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    // Acknowledged: the pending file is gone, the overlay with it; the entry now comes from the cache.
    let left: Vec<_> = std::fs::read_dir(a.pending_dir("backend"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().ends_with(".md") && n != "overlay.hix"),
        "{left:?}"
    );
    let hits = a.search("arm runner timeout");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["id"], "ci/arm-runner-needs-a-longer-timeout.md");

    b.run(&["sync"]).ok();
    let hits = b.search("arm runner timeout");
    assert_eq!(hits[0]["id"], "ci/arm-runner-needs-a-longer-timeout.md");
    assert_eq!(hits[0]["project"], "backend");
    let e = b
        .run(&["read", "ci/arm-runner-needs-a-longer-timeout.md", "--json"])
        .ok()
        .json();
    assert!(e["body"].as_str().unwrap().contains("four times slower"));
    assert_eq!(e["pending"], false);
    // The server pushed the write to the upstream repository.
    assert!(
        up.files()
            .contains(&"ci/arm-runner-needs-a-longer-timeout.md".to_string())
    );

    // The pull-request path: a commit straight in the upstream reaches both after refresh.
    up.commit(
        &[(
            "db/vacuum.md",
            "# Vacuum nightly\n\nRun VACUUM ANALYZE nightly or the planner misestimates.\n",
        )],
        "add vacuum",
    );
    server.refresh("backend");
    for c in [&a, &b] {
        let r = c.run(&["sync"]).ok();
        assert!(r.stdout.contains("→ 4 entries (+1)"), "{}", r.stdout);
        assert_eq!(c.search("vacuum planner")[0]["id"], "db/vacuum.md");
    }
    let st = b.run(&["status", "--json"]).ok().json();
    assert_eq!(st["projects"][0]["entries"], 4);
    assert_eq!(
        st["projects"][0]["commit"].as_str().unwrap(),
        server.commit("backend")
    );
    assert_eq!(st["projects"][0]["last_sync"]["ok"], true);
}

/// A new server-owned project, created empty: `helix sync` succeeds at once and says it is
/// empty, `helix doctor` finds nothing to fix, and the first store fills it.
#[test]
fn an_empty_project_syncs_and_says_so() {
    let server = Server::start(&[ProjectSpec {
        name: "docs",
        upstream: None,
    }]);
    server.wait_ready("docs");
    let c = Client::new();
    c.follow(&server.url, &["docs"]);
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout
            .starts_with("docs: 0 entries, no commit yet, downloaded")
            && r.stdout
                .contains("the project is empty: `helix store` adds its first entry"),
        "{}",
        r.stdout
    );
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("up to date"), "{}", r.stdout);
    // Nothing to fix about the project or its cache (the hooks are not installed here).
    let doctor = c.run(&["doctor"]);
    let fixes: Vec<&str> = doctor
        .stdout
        .lines()
        .filter(|l| l.starts_with("FIX") && !l.contains("hooks installed"))
        .collect();
    assert!(fixes.is_empty(), "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains("cache docs: 0 entries"),
        "{}",
        doctor.stdout
    );
    c.store("ops", "Deploy freeze", "No deploys on Friday afternoons.");
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("updated 0 → 1 entries (+1), commit ")
            && r.stdout.contains("pushed 1 pending")
            && !r.stdout.contains("empty"),
        "{}",
        r.stdout
    );
}

#[test]
fn server_down_sync_fails_clearly_and_leaves_cache_and_pending_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), BACKEND);
    let server = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let url = server.url.clone();
    let c = Client::new();
    c.follow(&url, &["backend"]);
    c.run(&["sync"]).ok();
    drop(server); // killed and reaped: the port now refuses connections

    c.store(
        "ci",
        "Cache the cargo registry",
        "Cache ~/.cargo/registry keyed on Cargo.lock.",
    );
    let cache = c.cache_dir(&url, "backend");
    let (index, meta) = (
        read(&cache.join("index.hix")),
        read(&cache.join("meta.json")),
    );
    let pending: Vec<_> = std::fs::read_dir(c.pending_dir("backend"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();

    let r = c.run(&["sync"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr
            .contains("backend: offline: connection refused (http://127.0.0.1:"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("), using cache from"), "{}", r.stderr);
    assert!(r.stderr.contains("1 pending kept"), "{}", r.stderr);
    let q = c.run(&["sync", "--quiet"]);
    assert_eq!(q.code, Some(1));
    assert_eq!(q.stdout, "");
    assert!(
        q.stderr.contains("offline"),
        "failures are reported even with --quiet: {}",
        q.stderr
    );

    assert_eq!(read(&cache.join("index.hix")), index, "cache untouched");
    assert_eq!(
        read(&cache.join("meta.json")),
        meta,
        "cache metadata untouched"
    );
    for p in &pending {
        assert!(p.exists(), "pending kept: {}", p.display());
    }
    assert_eq!(
        c.search("lssl")[0]["id"],
        "build/openssl-linker.md",
        "search answers from the cache"
    );
    assert_eq!(
        c.search("cargo registry")[0]["id"],
        "ci/cache-the-cargo-registry.md",
        "and the overlay"
    );
    let st = c.run(&["status", "--json"]).ok().json();
    assert_eq!(st["projects"][0]["last_sync"]["ok"], false);
    assert_eq!(st["projects"][0]["pending"], 1);
}

#[test]
fn retry_after_crash_between_ack_and_cleanup_does_not_duplicate() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), BACKEND);
    let server = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let c = Client::new();
    c.follow(&server.url, &["backend"]);
    c.store(
        "db",
        "Pool size must exceed test threads",
        "Set max_connections above the test thread count.",
    );
    let pending: Vec<_> = std::fs::read_dir(c.pending_dir("backend"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    assert_eq!(pending.len(), 1);
    let saved = read(&pending[0]);

    c.run(&["sync"]).ok();
    assert!(!pending[0].exists(), "removed after the acknowledgement");
    // The state a crash right after the server's answer leaves: the file still there.
    std::fs::write(&pending[0], &saved).unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("pushed 1 pending"),
        "the retry is acknowledged: {}",
        r.stdout
    );
    assert!(!pending[0].exists());

    let hits = c.search("pool size test threads");
    let ids: Vec<&str> = hits
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .filter(|id| id.starts_with("db/"))
        .collect();
    assert_eq!(
        ids,
        vec!["db/pool-size-must-exceed-test-threads.md"],
        "exactly one copy"
    );
    let files: Vec<String> = up
        .files()
        .into_iter()
        .filter(|f| f.starts_with("db/"))
        .collect();
    assert_eq!(
        files,
        vec!["db/pool-size-must-exceed-test-threads.md"],
        "one file upstream"
    );
}

#[test]
fn two_projects_followed_give_labelled_results_from_both() {
    let tmp = tempfile::tempdir().unwrap();
    let up1 = Upstream::new(&tmp.path().join("b"), BACKEND);
    let up2 = Upstream::new(&tmp.path().join("o"), ORG);
    let server = Server::start(&[
        ProjectSpec {
            name: "backend",
            upstream: Some(&up1.bare),
        },
        ProjectSpec {
            name: "org",
            upstream: Some(&up2.bare),
        },
    ]);
    let c = Client::new();
    c.follow(&server.url, &["backend", "org"]);
    let r = c.run(&["sync"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(lines[0].starts_with("backend: 2 entries"), "{}", r.stdout);
    assert!(
        lines[1].starts_with("org: 1 entries") || lines[1].starts_with("org: 1 entry"),
        "{}",
        r.stdout
    );

    let hits = c.search("linker");
    let mut got: Vec<(String, String)> = hits
        .iter()
        .map(|h| {
            (
                h["project"].as_str().unwrap().into(),
                h["id"].as_str().unwrap().into(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("backend".to_string(), "build/openssl-linker.md".to_string()),
            ("org".to_string(), "security/rotate-keys.md".to_string())
        ]
    );
    let human = c.run(&["search", "linker"]).ok();
    assert!(
        human.stdout.contains("backend:build/openssl-linker.md"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("org:security/rotate-keys.md"),
        "{}",
        human.stdout
    );
    let e = c
        .run(&["read", "org:security/rotate-keys.md", "--json"])
        .ok()
        .json();
    assert_eq!(e["project"], "org");
    let topics = c.run(&["topics", "--json"]).ok().json();
    let pairs: Vec<String> = topics["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}:{}",
                t["project"].as_str().unwrap(),
                t["topic"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(pairs, vec!["backend:build", "backend:git", "org:security"]);

    // `--project` stores into the second project.
    c.run(&[
        "store",
        "--project",
        "org",
        "--topic",
        "security",
        "--title",
        "No keys in CI logs",
        "--body",
        "Mask them.",
    ])
    .ok();
    c.run(&["sync"]).ok();
    assert_eq!(c.search("keys CI logs mask")[0]["project"], "org");
    assert!(
        up2.files()
            .contains(&"security/no-keys-in-ci-logs.md".to_string())
    );
}

/// Serves each of `responses` (status line, headers, body) to one connection in turn.
fn serve_raw(responses: Vec<(String, Vec<u8>)>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut responses = responses.into_iter();
        loop {
            let Ok((mut s, _)) = l.accept() else { return };
            let mut buf = [0u8; 8192];
            let mut req = Vec::new();
            // Read the head and any body (Content-Length) so closing never resets the peer.
            loop {
                if let Some(end) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&req[..end]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        break;
                    }
                }
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            // The embedding model's manifest, asked after a project synced: none here, and
            // not one of the scripted answers.
            if req.starts_with(b"GET /v1/model") {
                let _ = s.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                continue;
            }
            let Some((head, body)) = responses.next() else {
                return;
            };
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
            let _ = s.flush();
        }
    });
    url
}

fn ok_response(body: &[u8], declared_len: usize, etag: &str) -> (String, Vec<u8>) {
    (
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index\r\nContent-Length: {declared_len}\r\n\
             ETag: \"{etag}\"\r\nConnection: close\r\n\r\n"
        ),
        body.to_vec(),
    )
}

fn artifact(c: &Client, project: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let dir = c.tmp.path().join(format!("src-{project}"));
    write_files(&dir, files);
    let out = c.tmp.path().join(format!("{project}.hix"));
    c.run(&[
        "build",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--project",
        project,
    ])
    .ok();
    read(&out)
}

#[test]
fn corrupt_truncated_and_foreign_downloads_are_rejected_and_the_old_artifact_kept() {
    let c = Client::new();
    let good = artifact(&c, "backend", BACKEND);
    let newer = artifact(&c, "backend", &[BACKEND[0], BACKEND[1], ORG[0]]);
    let foreign = artifact(&c, "org", ORG);
    let mut flipped = newer.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let truncated = newer[..newer.len() - 100].to_vec();

    let url = serve_raw(vec![
        ok_response(&good, good.len(), "good"),
        ok_response(&flipped, flipped.len(), "flipped"),
        ok_response(&truncated, truncated.len(), "cut"),
        ok_response(&truncated, newer.len(), "short-read"),
        ok_response(&foreign, foreign.len(), "foreign"),
    ]);
    c.follow(&url, &["backend"]);
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("backend: 2 entries"), "{}", r.stdout);
    let cache = c.cache_dir(&url, "backend");
    let installed = read(&cache.join("index.hix"));
    assert_eq!(installed, good);
    let meta = read(&cache.join("meta.json"));

    for (what, why) in [
        ("bit flip", "checksum"),
        ("truncated body", "download rejected"),
        ("connection closed early", "download"),
        (
            "wrong project",
            "artifact is for project `org`, expected `backend`",
        ),
    ] {
        let r = c.run(&["sync"]);
        assert_eq!(r.code, Some(1), "{what}: {r:?}");
        assert!(r.stderr.contains(why), "{what}: {}", r.stderr);
        assert_eq!(
            read(&cache.join("index.hix")),
            good,
            "{what}: old artifact kept"
        );
        assert_eq!(
            read(&cache.join("meta.json")),
            meta,
            "{what}: metadata kept"
        );
        let temps: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(temps.is_empty(), "{what}: no temp files left: {temps:?}");
        assert_eq!(
            c.search("lssl")[0]["id"],
            "build/openssl-linker.md",
            "{what}: search still answers"
        );
    }
}

#[test]
fn tokens_from_env_user_config_and_token_command() {
    let tmp = tempfile::tempdir().unwrap();
    let up1 = Upstream::new(&tmp.path().join("b"), BACKEND);
    let up2 = Upstream::new(&tmp.path().join("o"), ORG);
    let (server, tokens) = Server::start_with_tokens(
        &[
            ProjectSpec {
                name: "backend",
                upstream: Some(&up1.bare),
            },
            ProjectSpec {
                name: "org",
                upstream: Some(&up2.bare),
            },
        ],
        false,
        &[
            ("backend", "reader", "read"),
            ("backend", "ada", "read,write"),
            ("org", "orgbot", "read"),
        ],
    );
    let (read_tok, write_tok, org_tok) = (&tokens[0], &tokens[1], &tokens[2]);
    let c = Client::new();
    c.follow(&server.url, &["backend"]);

    // No token: a clear 401 that says where a token goes.
    let r = c.run(&["sync"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stderr.contains("401 unauthorized"), "{}", r.stderr);
    assert!(r.stderr.contains("HELIX_TOKEN"), "{}", r.stderr);
    assert!(r.stderr.contains("config.toml"), "{}", r.stderr);

    // A token of another project: 403.
    let r: super::common::Run = c
        .cmd(&["sync"])
        .env("HELIX_TOKEN", org_tok)
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, Some(1));
    assert!(r.stderr.contains("403"), "{}", r.stderr);

    // HELIX_TOKEN with read scope: downloads; pushing a store is forbidden and the entry kept.
    let r: super::common::Run = c
        .cmd(&["sync"])
        .env("HELIX_TOKEN", read_tok)
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, Some(0), "{r:?}");
    c.store(
        "ci",
        "Pin the toolchain",
        "Pin rust-toolchain.toml so CI and laptops agree.",
    );
    let r: super::common::Run = c
        .cmd(&["sync"])
        .env("HELIX_TOKEN", read_tok)
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stderr.contains("403"), "{}", r.stderr);
    assert!(r.stderr.contains("1 pending kept"), "{}", r.stderr);

    // Token in the user config for this server: the push goes through.
    let cfg_dir = c.config_home().join("helix");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    std::fs::write(
        cfg_dir.join("config.toml"),
        format!("[servers.{:?}]\ntoken = {write_tok:?}\n", server.url),
    )
    .unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    assert!(up1.files().contains(&"ci/pin-the-toolchain.md".to_string()));

    // token_command: the command's output is the token.
    std::fs::write(
        cfg_dir.join("config.toml"),
        format!(
            "[servers.{:?}]\ntoken_command = \"echo {read_tok}\"\n",
            server.url
        ),
    )
    .unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("up to date"), "{}", r.stdout);
    let d = c.run(&["doctor"]);
    assert!(d.stdout.contains("ok    token for"), "{}", d.stdout);
    assert!(
        d.stdout.contains("ok    project backend readable"),
        "{}",
        d.stdout
    );
    assert!(
        d.stdout
            .contains("ok    project backend: 3 entries, 0 invalid"),
        "the server's counts: {}",
        d.stdout
    );
    assert!(d.stdout.contains("checksum ok"), "{}", d.stdout);

    // Server tokens are per project: following both projects needs one token each, and a
    // project's own entry wins over the server-wide token.
    c.follow(&server.url, &["backend", "org"]);
    std::fs::write(
        cfg_dir.join("config.toml"),
        format!(
            "[servers.{url:?}]\ntoken = {read_tok:?}\n[servers.{url:?}.projects.org]\ntoken_command = \"echo {org_tok}\"\n",
            url = server.url
        ),
    )
    .unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("backend: "), "{}", r.stdout);
    assert!(r.stdout.contains("org: "), "{}", r.stdout);
    let d = c.run(&["doctor"]);
    assert!(
        d.stdout.contains("ok    project org readable"),
        "{}",
        d.stdout
    );
}

#[test]
fn acknowledged_entry_stays_visible_until_the_synced_artifact_has_it() {
    let c = Client::new();
    let with_entry = artifact(
        &c,
        "backend",
        &[
            BACKEND[0],
            (
                "ci/pin-the-toolchain.md",
                "---\ntitle: Pin the toolchain\n---\nPin rust-toolchain.toml.\n",
            ),
        ],
    );
    // `artifact` builds generation 0; rebuild the same tree as generation 7.
    let src = c.tmp.path().join("src-backend");
    let g7 = c.tmp.path().join("g7.hix");
    c.run(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        g7.to_str().unwrap(),
        "--project",
        "backend",
        "--generation",
        "7",
    ])
    .ok();
    let g7 = read(&g7);
    assert_ne!(g7, with_entry);
    let created = br#"{"id":"ci/pin-the-toolchain.md","path":"ci/pin-the-toolchain.md","commit":"0123456789abcdef0123456789abcdef01234567","generation":7}"#;
    let url = serve_raw(vec![
        (
            format!(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                created.len()
            ),
            created.to_vec(),
        ),
        (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 63\r\nConnection: close\r\n\r\n"
                .to_string(),
            br#"{"error":{"code":"unavailable","message":"no artifact yet..."}}"#.to_vec(),
        ),
        ok_response(&g7, g7.len(), "g7"),
    ]);
    c.follow(&url, &["backend"]);
    c.store("ci", "Pin the toolchain", "Pin rust-toolchain.toml.");

    // Pushed and acknowledged, but the download failed: not pending, still searchable.
    let r = c.run(&["sync"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr.contains("503 unavailable: no artifact yet"),
        "{}",
        r.stderr
    );
    assert_eq!(
        c.run(&["status", "--json"]).ok().json()["projects"][0]["pending"],
        0
    );
    assert_eq!(c.search("toolchain")[0]["id"], "ci/pin-the-toolchain.md");

    // The artifact of generation 7 arrives: the overlay copy is dropped, the cache answers.
    c.run(&["sync"]).ok();
    assert!(!c.pending_dir("backend").join("overlay.hix").exists());
    let hits = c.search("toolchain");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["id"], "ci/pin-the-toolchain.md");
    let e = c
        .run(&["read", "ci/pin-the-toolchain.md", "--json"])
        .ok()
        .json();
    assert_eq!(e["pending"], false);
}

#[test]
fn a_damaged_cache_is_downloaded_again_instead_of_kept_by_a_304() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), BACKEND);
    let server = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let c = Client::new();
    c.follow(&server.url, &["backend"]);
    c.run(&["sync"]).ok();
    let index = c.cache_dir(&server.url, "backend").join("index.hix");
    let good = read(&index);
    std::fs::write(&index, &good[..good.len() / 3]).unwrap();
    assert!(
        c.search("lssl").is_empty(),
        "a damaged cache is skipped, not trusted"
    );
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("downloaded"), "{}", r.stdout);
    assert_eq!(read(&index), good);
    assert_eq!(c.search("lssl")[0]["id"], "build/openssl-linker.md");
}

#[test]
fn an_entry_the_server_refuses_is_kept_aside_with_the_reason() {
    let c = Client::new();
    let good = artifact(&c, "backend", BACKEND);
    let refusal = br#"{"error":{"code":"invalid_entry","message":"topic: reserved name"}}"#;
    let url = serve_raw(vec![
        (
            format!(
                "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                refusal.len()
            ),
            refusal.to_vec(),
        ),
        ok_response(&good, good.len(), "good"),
    ]);
    c.follow(&url, &["backend"]);
    c.store(
        "ops",
        "Restart order",
        "Restart the queue before the workers.",
    );
    let r = c.run(&["sync"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr.contains("`Restart order` rejected"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("422 invalid_entry: topic: reserved name"),
        "{}",
        r.stderr
    );
    let rejected = c.pending_dir("backend").join("rejected");
    let names: Vec<String> = std::fs::read_dir(&rejected)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".md")).count(),
        1,
        "{names:?}"
    );
    let reason = names.iter().find(|n| n.ends_with(".reason")).unwrap();
    let reason = std::fs::read_to_string(rejected.join(reason)).unwrap();
    assert!(reason.contains("topic: reserved name"), "{reason}");
    // Out of the push queue: no longer pending, and doctor says what to do.
    assert_eq!(
        c.run(&["status", "--json"]).ok().json()["projects"][0]["pending"],
        0
    );
    let d = c.run(&["doctor"]);
    assert!(
        d.stdout
            .contains("1 entries rejected by the server are kept in"),
        "{}",
        d.stdout
    );
    // Once the author has dealt with them and deleted the files, doctor stops saying so.
    for n in &names {
        std::fs::remove_file(rejected.join(n)).unwrap();
    }
    let d = c.run(&["doctor"]);
    assert!(!d.stdout.contains("rejected by the server"), "{}", d.stdout);
}

/// After a one-entry commit the client gets a patch from the artifact it holds and ends
/// with the server's artifact byte for byte; a base the server does not know gets the
/// whole artifact, zstd-coded.
#[test]
fn one_entry_commits_arrive_as_patches_and_unknown_bases_in_full() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), BACKEND);
    let server = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let c = Client::new();
    c.follow(&server.url, &["backend"]);
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("downloaded") && r.stdout.contains(" zstd"),
        "{}",
        r.stdout
    );
    let cache = c.cache_dir(&server.url, "backend");
    let served = || {
        let (code, body) =
            super::common::http_get(&server.url, "/v1/projects/backend/index").expect("index");
        assert_eq!(code, 200);
        body
    };
    assert_eq!(read(&cache.join("index.hix")), served());

    up.commit(
        &[(
            "ci/arm-timeouts.md",
            "# Arm runner timeouts\n\nThe arm runner is four times slower than x86.\n",
        )],
        "one entry",
    );
    server.refresh("backend");
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("updated 2 → 3 entries (+1)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(" patch\n"), "{}", r.stdout);
    assert!(r.stderr.is_empty(), "no fallback: {}", r.stderr);
    assert_eq!(read(&cache.join("index.hix")), served());
    assert_eq!(c.search("arm runner slower")[0]["id"], "ci/arm-timeouts.md");
    let meta: serde_json::Value = serde_json::from_slice(&read(&cache.join("meta.json"))).unwrap();
    assert!(meta["etag"].as_str().unwrap().starts_with("W/\""), "{meta}");

    // A cache whose artifact the server no longer keeps: the whole artifact, coded.
    up.commit(
        &[(
            "ci/cache-keys.md",
            "# Cache keys\n\nKey caches by lock file hash.\n",
        )],
        "another",
    );
    server.refresh("backend");
    let mut m = meta.clone();
    m["etag"] = format!("W/\"{}\"", "0".repeat(64)).into();
    std::fs::write(cache.join("meta.json"), m.to_string()).unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stdout.contains("updated 3 → 4 entries (+1)") && r.stdout.ends_with(" zstd\n"),
        "{}",
        r.stdout
    );
    assert_eq!(read(&cache.join("index.hix")), served());
}

/// Two code repositories whose knowledge folders share a name (`docs/knowledge`, so both
/// projects are called `knowledge`) keep their own local caches: syncing one does not
/// replace what the other's hooks and searches read.
#[test]
fn local_projects_with_the_same_folder_name_keep_their_own_caches() {
    let mut c = Client::new();
    let one = c.root.clone();
    let two = c.tmp.path().join("repo2");
    for (root, title) in [
        (&one, "Rebuild the search index nightly"),
        (&two, "Rotate the signing keys yearly"),
    ] {
        let note = format!("# {title}\n\nWritten for this repository only.\n");
        write_files(&root.join("docs/knowledge"), &[("ops/note.md", &note)]);
        std::fs::write(root.join(".helix.toml"), "local = \"docs/knowledge\"\n")
            .expect("write .helix.toml");
    }
    c.run(&["sync"]).ok();
    c.root = two;
    c.run(&["sync"]).ok();
    let titles = |c: &Client| -> Vec<String> {
        c.search("written repository")
            .iter()
            .map(|h| h["title"].as_str().unwrap_or("?").to_string())
            .collect()
    };
    assert_eq!(titles(&c), ["Rotate the signing keys yearly"]);
    // Back in the first repository: its own knowledge, not the one synced last.
    c.root = one;
    assert_eq!(titles(&c), ["Rebuild the search index nightly"]);
}
