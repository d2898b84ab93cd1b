//! Hostile and broken peers: servers that answer writes with something other than an
//! acknowledgement, redirect writes, never answer, drip-feed or flood a download; caches
//! rewritten in place under a running hook; leftovers of killed processes.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Reads one request (head and `Content-Length` body) from `s`; returns it as text.
fn read_request(s: &mut TcpStream) -> String {
    let mut buf = [0u8; 8192];
    let mut req = Vec::new();
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
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
    String::from_utf8_lossy(&req).into_owned()
}

/// A loopback server calling `handle` for every connection (on its own thread); returns its
/// URL and the requests it has read so far.
fn serve(
    handle: impl Fn(TcpStream, String) + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let seen = seen2.clone();
            let handle = handle.clone();
            std::thread::spawn(move || {
                let req = read_request(&mut s);
                seen.lock().unwrap().push(req.clone());
                handle(s, req);
            });
        }
    });
    (url, seen)
}

fn respond(mut s: TcpStream, status: &str, ctype: &str, body: &[u8]) {
    let _ = write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(body);
}

fn pending_count(c: &Client, project: &str) -> usize {
    std::fs::read_dir(c.pending_dir(project))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".md")))
                .count()
        })
        .unwrap_or(0)
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// A `200`/`201` that is not the documented acknowledgement — an SSO sign-in page, a
/// captive portal, another service's JSON, random bytes — proves nothing: every pending
/// entry stays queued, none is lost, and sync says why.
#[test]
fn writes_answered_without_an_acknowledgement_stay_pending() {
    for (status, ctype, body) in [
        (
            "200 OK",
            "text/html",
            &b"<!DOCTYPE html><html><title>Sign in - Example SSO</title></html>"[..],
        ),
        ("201 Created", "application/json", &br#"{"ok":true}"#[..]),
        (
            "200 OK",
            "application/octet-stream",
            &b"\x9f\x00\xffgarbage\x01\x02"[..],
        ),
        (
            "201 Created",
            "application/json",
            &br#"{"id":"../../etc/passwd","path":"x","commit":"zz","generation":1}"#[..],
        ),
    ] {
        let (url, seen) = serve(move |s, _| respond(s, status, ctype, body));
        let c = Client::new();
        c.follow(&url, &["backend"]);
        for t in ["One", "Two", "Three"] {
            c.store("ops", t, &format!("Entry {t} must survive."));
        }
        assert_eq!(pending_count(&c, "backend"), 3);
        let r = c.run(&["sync"]);
        assert_ne!(r.code, Some(0), "{ctype}: {r:?}");
        assert!(
            r.stderr.contains("without an acknowledgement"),
            "{ctype}: {}",
            r.stderr
        );
        assert_eq!(pending_count(&c, "backend"), 3, "{ctype}: entries lost");
        let st = c.run(&["status", "--json"]).ok().json();
        assert_eq!(st["projects"][0]["pending"], 3, "{ctype}: {st}");
        // Nothing went to acked/ or rejected/ either: the three are still the push queue.
        let dir = c.pending_dir("backend");
        assert!(!dir.join("acked").exists() || files_under(&dir.join("acked")).is_empty());
        assert!(!dir.join("rejected").exists());
        // The first POST failed; the others were not even tried.
        let posts = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.starts_with("POST"))
            .count();
        assert_eq!(posts, 1, "{ctype}");
    }
}

/// A write redirected elsewhere (a proxy, a moved server) is never followed: not as a GET
/// (302/303) nor by posting the entry again to another host (307/308); the entries stay.
#[test]
fn redirected_writes_are_not_followed_and_stay_pending() {
    let (other, other_seen) =
        serve(|s, _| respond(s, "200 OK", "text/html", b"<html>elsewhere</html>"));
    for code in [
        "302 Found",
        "303 See Other",
        "307 Temporary Redirect",
        "308 Permanent Redirect",
    ] {
        let target = format!("{other}/v1/projects/backend/entries");
        let (url, _) = serve(move |mut s, _| {
            let _ = write!(
                s,
                "HTTP/1.1 {code}\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        });
        let c = Client::new();
        c.follow(&url, &["backend"]);
        c.store("ops", "Redirected", "Must not be posted anywhere else.");
        let r = c.run(&["sync"]);
        assert_ne!(r.code, Some(0), "{code}: {r:?}");
        assert!(
            r.stderr.contains("redirected the write"),
            "{code}: {}",
            r.stderr
        );
        assert_eq!(pending_count(&c, "backend"), 1, "{code}");
    }
    assert!(
        other_seen.lock().unwrap().is_empty(),
        "the other host was contacted: {:?}",
        other_seen.lock().unwrap()
    );
}

/// A refusal that will never change (`409 topic_conflict`) sets the entry aside with the
/// reason, like a 422, and the entries after it are still pushed; a passing conflict
/// (`409 conflict`: the upstream kept moving) keeps everything queued.
#[test]
fn final_and_passing_conflicts_are_told_apart() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let (url, _) = serve(move |s, req| {
        if !req.starts_with("POST") {
            return respond(
                s,
                "503 Service Unavailable",
                "application/json",
                br#"{"error":{"code":"unavailable","message":"later"}}"#,
            );
        }
        if n2.fetch_add(1, Ordering::SeqCst) == 0 {
            respond(s, "409 Conflict", "application/json", br#"{"error":{"code":"topic_conflict","message":"topic `license` needs the folder `license`, but `license` is a file in the repository; choose another topic"}}"#)
        } else {
            respond(s, "201 Created", "application/json", br#"{"id":"ops/b.md","path":"ops/b.md","commit":"0123456789abcdef0123456789abcdef01234567","generation":3}"#)
        }
    });
    let c = Client::new();
    c.follow(&url, &["backend"]);
    c.store("license", "A", "Collides with a file.");
    c.store("ops", "B", "Lands.");
    let r = c.run(&["sync"]);
    assert!(r.stderr.contains("topic_conflict"), "{}", r.stderr);
    assert_eq!(pending_count(&c, "backend"), 0);
    let rejected = files_under(&c.pending_dir("backend").join("rejected"));
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert_eq!(
        files_under(&c.pending_dir("backend").join("acked")).len(),
        2
    );

    let (url, _) = serve(|s, _| {
        respond(
            s,
            "409 Conflict",
            "application/json",
            br#"{"error":{"code":"conflict","message":"the upstream branch kept moving"}}"#,
        )
    });
    let c = Client::new();
    c.follow(&url, &["backend"]);
    c.store("ops", "Retry later", "Stays queued.");
    let r = c.run(&["sync"]);
    assert_ne!(r.code, Some(0));
    assert_eq!(pending_count(&c, "backend"), 1, "{}", r.stderr);
}

/// A server that accepts and never answers, or drip-feeds the artifact, costs a bounded
/// time; nothing is left in the cache directory and the old artifact stays.
#[test]
fn silent_and_drip_feeding_servers_are_given_up_on() {
    let c = Client::new();
    let kb = c.tmp.path().join("kb");
    write_files(&kb, KNOWLEDGE);
    let hix = c.tmp.path().join("kb.hix");
    c.run(&[
        "build",
        kb.to_str().unwrap(),
        "-o",
        hix.to_str().unwrap(),
        "--project",
        "backend",
    ])
    .ok();
    let good = std::fs::read(&hix).unwrap();

    let (silent, _) = serve(|s, _| {
        std::thread::sleep(Duration::from_secs(30));
        drop(s);
    });
    let art = good.clone();
    let (drip, _) = serve(move |mut s, _| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index\r\nContent-Length: {}\r\nETag: \"d\"\r\n\r\n",
            art.len()
        );
        for b in &art {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    for (url, why) in [(&silent, "timed out"), (&drip, "too slow")] {
        c.follow(url, &["backend"]);
        let cache = c.cache_dir(url, "backend");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("index.hix"), &good).unwrap();
        let started = Instant::now();
        let r = c
            .cmd(&["sync"])
            .env("HELIX_STALL_TIMEOUT", "2")
            .output()
            .unwrap();
        let r = Run::from(r);
        eprintln!("{why}: gave up after {:?}", started.elapsed());
        assert_eq!(r.code, Some(1), "{r:?}");
        assert!(r.stderr.contains(why), "{}", r.stderr);
        assert!(r.stderr.contains(url.as_str()), "names the server: {r:?}");
        assert_eq!(
            files_under(&cache),
            ["index.hix", "last_sync.json"],
            "{why}"
        );
        assert_eq!(std::fs::read(cache.join("index.hix")).unwrap(), good);
    }
}

/// A body larger than the artifact declares, or than the limit, or not an artifact at all,
/// is refused as soon as that is known — not after writing it all to disk.
#[test]
fn oversized_and_foreign_downloads_stop_early() {
    let c = Client::new();
    let kb = c.tmp.path().join("kb");
    write_files(&kb, KNOWLEDGE);
    let hix = c.tmp.path().join("kb.hix");
    c.run(&[
        "build",
        kb.to_str().unwrap(),
        "-o",
        hix.to_str().unwrap(),
        "--project",
        "backend",
    ])
    .ok();
    let good = std::fs::read(&hix).unwrap();
    let sent = Arc::new(AtomicUsize::new(0));

    // Streams `prefix`, then zeros without end (no Content-Length), counting what it sent.
    let endless = |prefix: Vec<u8>, sent: Arc<AtomicUsize>| {
        move |mut s: TcpStream, _: String| {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index\r\nConnection: close\r\n\r\n");
            if s.write_all(&prefix).is_err() {
                return;
            }
            let chunk = vec![0u8; 64 * 1024];
            for _ in 0..16 * 1024 {
                // 1 GiB at most
                if s.write_all(&chunk).is_err() {
                    return;
                }
                sent.fetch_add(chunk.len(), Ordering::SeqCst);
            }
        }
    };
    let mut huge_declared = good[..helix_index_format::DECLARED_LEN_PREFIX].to_vec();
    huge_declared[24..32].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good.clone(), "more bytes than the artifact declares"),
        (huge_declared, "over the limit"),
        (
            b"<!DOCTYPE html><html><head><title>Portal</title>".to_vec(),
            "not a helix artifact",
        ),
    ];
    for (prefix, why) in cases {
        sent.store(0, Ordering::SeqCst);
        let (url, _) = serve(endless(prefix, sent.clone()));
        c.follow(&url, &["backend"]);
        let r = c.run(&["sync"]);
        assert_eq!(r.code, Some(1), "{why}: {r:?}");
        assert!(r.stderr.contains(why), "{why}: {}", r.stderr);
        let cache = c.cache_dir(&url, "backend");
        assert!(
            !files_under(&cache).iter().any(|f| f.ends_with(".tmp")),
            "{why}: temp file left"
        );
        let streamed = sent.load(Ordering::SeqCst);
        assert!(
            streamed < 64 << 20,
            "{why}: {streamed} bytes were streamed before stopping"
        );
    }
    // A Content-Length over the configured limit is refused before anything is written.
    let big = good.len();
    let (url, _) = serve(move |mut s, _| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {big}\r\nConnection: close\r\n\r\n"
        );
    });
    c.follow(&url, &["backend"]);
    let r = Run::from(
        c.cmd(&["sync"])
            .env("HELIX_MAX_ARTIFACT_BYTES", "1000")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stderr.contains("over the limit of 1000"), "{}", r.stderr);
}

/// Temporary files and half-recorded acknowledgements of killed `store`/`sync` processes
/// are removed by the next run; live processes' files and real entries are kept.
#[test]
fn leftovers_of_killed_processes_are_cleaned_up() {
    let (url, _) = serve(|s, _| {
        respond(
            s,
            "503 Service Unavailable",
            "application/json",
            br#"{"error":{"code":"unavailable","message":"later"}}"#,
        )
    });
    let c = Client::new();
    c.follow(&url, &["backend"]);
    c.store("ops", "Real entry", "Stays.");
    let pending = c.pending_dir("backend");
    let cache = c.cache_dir(&url, "backend");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(pending.join("acked")).unwrap();
    let dead = 999_999_999u32; // above any pid_max
    let alive = std::process::id();
    std::fs::write(
        cache.join(format!(".download.{dead}.0badf00d.tmp")),
        b"partial",
    )
    .unwrap();
    std::fs::write(
        pending.join(format!(".1700000000-x.md.{dead}.1f.tmp")),
        b"partial",
    )
    .unwrap();
    std::fs::write(
        pending.join(format!(".overlay.hix.{alive}.2a.tmp")),
        b"in use",
    )
    .unwrap();
    std::fs::write(
        pending.join("acked/1700000000-000000000-00000000deadbeef.json"),
        br#"{"id":"ops/x.md","generation":1}"#,
    )
    .unwrap();
    let r = c.run(&["sync"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let cache_files = files_under(&cache);
    assert!(
        !cache_files.iter().any(|f| f.contains(".download.")),
        "{cache_files:?}"
    );
    let left = files_under(&pending);
    assert!(
        !left.iter().any(|f| f.contains(&dead.to_string())),
        "{left:?}"
    );
    assert!(
        left.iter().any(|f| f.contains(&format!(".{alive}."))),
        "a live process's file was removed: {left:?}"
    );
    assert_eq!(pending_count(&c, "backend"), 1, "{left:?}");
    // The orphan acknowledgement goes with the next successful download.
    let kb = c.tmp.path().join("kb");
    write_files(&kb, KNOWLEDGE);
    let hix = c.tmp.path().join("kb.hix");
    c.run(&[
        "build",
        kb.to_str().unwrap(),
        "-o",
        hix.to_str().unwrap(),
        "--project",
        "backend",
    ])
    .ok();
    let good = std::fs::read(&hix).unwrap();
    let (url2, _) = serve(move |s, req| {
        if req.starts_with("POST") {
            respond(s, "201 Created", "application/json", br#"{"id":"ops/real-entry.md","path":"ops/real-entry.md","commit":"0123456789abcdef0123456789abcdef01234567","generation":1}"#)
        } else {
            respond(s, "200 OK", "application/vnd.helix.index", &good)
        }
    });
    // The queue is the server's: it goes with the test's switch to another server.
    c.follow(&url2, &["backend"]);
    let pending2 = c.pending_dir("backend");
    assert_ne!(pending2, pending, "a queue per server");
    std::fs::create_dir_all(pending2.parent().unwrap()).unwrap();
    std::fs::rename(&pending, &pending2).unwrap();
    c.run(&["sync"]).ok();
    let left = files_under(&pending2);
    assert!(!left.iter().any(|f| f.contains("deadbeef")), "{left:?}");
}

/// Another program rewriting the cached artifact in place (truncate, then write — as `cp`
/// over it does) while hooks run: every hook exits 0 and prints nothing or a whole answer.
#[test]
fn hooks_survive_a_cache_rewritten_in_place() {
    let c = Client::new();
    let kb = c.tmp.path().join("kb");
    // Big enough that a rewrite takes a while and a search reads many pages.
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..3000 {
        files.push((
            format!("t{}/note-{i}.md", i % 20),
            format!(
                "# Linker note {i}\n\nThe linker {} fails with relocation overflow {i}.\n",
                "word ".repeat(40)
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(&kb, &refs);
    c.configure(&format!(
        "local = {:?}\nproject = \"kb\"\n",
        kb.to_str().unwrap()
    ));
    c.run(&["sync"]).ok();
    let index = first_cache_dir(c.cmd(&[])).join("index.hix");
    let good = std::fs::read(&index).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let index2 = index.clone();
    let rewriter = std::thread::spawn(move || {
        let mut rounds = 0;
        while !stop2.load(Ordering::SeqCst) {
            // In place: same inode, truncated to nothing, then written back in pieces.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&index2)
                .unwrap();
            for chunk in good.chunks(64 * 1024) {
                f.write_all(chunk).unwrap();
            }
            drop(f);
            rounds += 1;
        }
        rounds
    });
    let input = format!(
        r#"{{"session_id":"s1","cwd":{:?},"hook_event_name":"UserPromptSubmit","prompt":"why does the linker fail with relocation overflow?"}}"#,
        c.root.to_str().unwrap()
    );
    let mut answered = 0;
    for i in 0..300 {
        let mut child = c
            .cmd(&["hook", "prompt"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "run {i}: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        if !text.trim().is_empty() {
            let v: serde_json::Value = serde_json::from_str(text.trim())
                .unwrap_or_else(|e| panic!("run {i}: {e}: {text}"));
            assert!(
                v["hookSpecificOutput"]["additionalContext"].is_string(),
                "{v}"
            );
            answered += 1;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let rounds = rewriter.join().unwrap();
    eprintln!("300 hooks during {rounds} in-place rewrites; {answered} answered");
    assert!(rounds > 10, "the rewriter barely ran");
}

/// A patch that does not apply, starts from another artifact, or gives other bytes than
/// its ETag names is never installed: the client downloads the whole artifact instead. A
/// patch nobody asked for, or a body whose hash is not its ETag's, is refused.
#[test]
fn bad_patches_fall_back_to_the_whole_artifact() {
    let c = Client::new();
    let kb = c.tmp.path().join("kb");
    write_files(&kb, KNOWLEDGE);
    let hix = c.tmp.path().join("kb.hix");
    let build = |dir: &Path, out: &Path| {
        c.run(&[
            "build",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--project",
            "backend",
        ])
        .ok();
        std::fs::read(out).unwrap()
    };
    let old = build(&kb, &hix);
    write_files(
        &kb,
        &[("ci/new.md", "# A new entry\n\nAbout arm runners.\n")],
    );
    let new = build(&kb, &c.tmp.path().join("kb2.hix"));
    let hash = |b: &[u8]| {
        use sha2::Digest;
        sha2::Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    let (old_hash, new_hash) = (hash(&old), hash(&new));
    let artifact_head = |etag: &str, len: usize| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index\r\nETag: {etag}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    // (patch headers besides the content type, patch body, what the fallback notice says)
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        (
            format!(
                "X-Helix-Patch-From: \"{old_hash}\"\r\nX-Helix-Artifact-Length: {}\r\n",
                new.len()
            ),
            b"not zstd at all".to_vec(),
            "does not apply",
        ),
        (
            format!(
                "X-Helix-Patch-From: \"{}\"\r\nX-Helix-Artifact-Length: {}\r\n",
                "1".repeat(64),
                new.len()
            ),
            b"x".to_vec(),
            "not from the cached artifact",
        ),
        // A well-formed zstd frame of the wrong bytes.
        (
            format!(
                "X-Helix-Patch-From: \"{old_hash}\"\r\nX-Helix-Artifact-Length: {}\r\n",
                old.len()
            ),
            zstd::encode_all(&old[..], 1).unwrap(),
            "is not the ETag's",
        ),
    ];
    for (extra, body, why) in cases {
        let (new2, body2, etag) = (new.clone(), body.clone(), format!("W/\"{new_hash}\""));
        let strong = format!("\"{new_hash}\"");
        let (url, seen) = serve(move |mut s, req| {
            if req.contains("from=") {
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index-patch\r\nETag: {etag}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body2.len()
                );
                let _ = s.write_all(&body2);
            } else {
                let _ = s.write_all(artifact_head(&strong, new2.len()).as_bytes());
                let _ = s.write_all(&new2);
            }
        });
        c.follow(&url, &["backend"]);
        let cache = c.cache_dir(&url, "backend");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("index.hix"), &old).unwrap();
        std::fs::write(cache.join("meta.json"), format!(r#"{{"etag":"\"{old_hash}\"","commit":"","generation":0,"fetched_at":0,"entries":3}}"#)).unwrap();
        let r = c.run(&["sync"]).ok();
        assert!(
            r.stderr.contains("patch rejected") && r.stderr.contains(why),
            "{why}: {}",
            r.stderr
        );
        assert!(r.stdout.contains("updated"), "{why}: {}", r.stdout);
        assert_eq!(
            std::fs::read(cache.join("index.hix")).unwrap(),
            new,
            "{why}"
        );
        let seen = seen.lock().unwrap();
        assert!(
            seen[0].contains(&format!("from={old_hash}")) && !seen[1].contains("from="),
            "{why}: {seen:?}"
        );
        assert!(
            seen[0]
                .to_ascii_lowercase()
                .contains("accept-encoding: zstd"),
            "{seen:?}"
        );
        assert_eq!(
            files_under(&cache),
            ["index.hix", "last_sync.json", "meta.json"],
            "{why}"
        );
    }
    // Refused outright, nothing installed: a patch without asking, a hash that is not the ETag's.
    let lying = format!("\"{}\"", "2".repeat(64));
    for (head, body, why) in [
        (
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.helix.index-patch\r\nETag: \"{new_hash}\"\r\nContent-Length: 3\r\n\r\n"
            ),
            b"abc".to_vec(),
            "not asked for",
        ),
        (
            artifact_head(&lying, new.len()),
            new.clone(),
            "is not the ETag's",
        ),
    ] {
        let (url, _) = serve(move |mut s, _| {
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
        });
        c.follow(&url, &["backend"]);
        let r = c.run(&["sync"]);
        assert_eq!(r.code, Some(1), "{why}: {r:?}");
        assert!(r.stderr.contains(why), "{why}: {}", r.stderr);
        assert!(
            !c.cache_dir(&url, "backend").join("index.hix").exists(),
            "{why}"
        );
    }
}
