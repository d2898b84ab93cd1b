//! Faults and attacks found by adversarial testing: a long-running server following a moving
//! upstream, pushes that inflate to gigabytes, writes whose names collide with what is there,
//! idempotency keys reused for another body, idle connections, empty webhook secrets.

use super::*;

/// Commits `files` in the upstream's work clone and pushes, without the pull of
/// `Upstream::commit` (nothing else pushes in these tests between two rounds).
fn commit_and_push(up: &Upstream, files: &[(String, String)], msg: &str) -> String {
    for (p, c) in files {
        let path = up.work.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, c).expect("write");
    }
    git(&up.work, &["add", "-A"]);
    git(&up.work, &["commit", "-q", "-m", msg]);
    git(&up.work, &["push", "-q", "origin", "HEAD:main"]);
    up.head()
}

fn refresh_wait(c: &Client, s: &Server, project: &str, token: &str) -> (StatusCode, Value) {
    let r = c
        .post(s.u(&format!("/v1/projects/{project}/refresh?wait=1")))
        .bearer_auth(token)
        .send()
        .expect("refresh");
    let st = r.status();
    (st, r.json().unwrap_or(Value::Null))
}

/// Pack files of a bare repository (and `.keep` files, which stop git from consolidating).
fn pack_files(repo: &Path, ext: &str) -> usize {
    std::fs::read_dir(repo.join("objects/pack"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == ext))
                .count()
        })
        .unwrap_or(0)
}

/// gix's object store has a fixed number of pack slots (32 by default); every fetch that
/// brings a pack takes one. A server must keep following its upstream for weeks, so: many
/// rounds of upstream commits, each picked up by a refresh, small ones (loose objects) and
/// big ones (a pack each), then a write whose push must not be refused.
/// `HELIX_TEST_FETCH_ROUNDS` raises the number of rounds (500 for the figure in the docs).
#[test]
fn server_keeps_following_a_moving_upstream_through_many_fetches() {
    let rounds: usize = std::env::var("HELIX_TEST_FETCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(72);
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let c = client();
    let tok = fx.tok("kb/alice").to_string();
    let local = fx.data.join("projects/kb/repo.git");
    let started = Instant::now();
    for i in 0..rounds {
        // Every sixth round brings more objects than `fetch.unpackLimit`: a new pack.
        let n = if i % 6 == 5 { 120 } else { 1 };
        let files: Vec<(String, String)> = (0..n)
            .map(|j| {
                (
                    format!("rounds/r{i}-{j}.md"),
                    format!("# Round {i} file {j}\n\nFetched in round {i}.\n"),
                )
            })
            .collect();
        let head = commit_and_push(&up, &files, &format!("round {i}"));
        let (st, v) = refresh_wait(&c, &s, "kb", &tok);
        assert_eq!(st, StatusCode::OK, "round {i}: {v}");
        assert_eq!(v["commit"], head.as_str(), "round {i}: {v}");
        assert_eq!(pack_files(&local, "keep"), 0, "round {i}: .keep files left");
    }
    eprintln!(
        "{rounds} fetches in {:.1} s; {} packs in the server's repository",
        started.elapsed().as_secs_f64(),
        pack_files(&local, "pack")
    );
    // git consolidates packs; they never pile up one per fetch.
    assert!(pack_files(&local, "pack") <= 52, "packs pile up");
    let st = wait_status(&s, "kb", &tok, |_| true);
    assert!(st["last_fetch"]["error"].is_null(), "{st}");
    // The upstream moves once more without a refresh: the write's push is refused, the
    // server fetches, re-applies and lands it.
    let head = commit_and_push(
        &up,
        &[(
            "ops/last.md".into(),
            "# Last\n\nPushed behind the server's back.\n".into(),
        )],
        "behind the server's back",
    );
    let body = json!({"topic": "ops", "title": "After many fetches", "body": "Still lands."});
    let (st, v) = post_entry(&c, &s, "kb", &tok, Some("after-many"), &body);
    assert_eq!(st, StatusCode::CREATED, "{v}");
    let files = tree_files(&up.bare, "main");
    assert!(files.contains_key("ops/after-many-fetches.md"));
    assert!(files.contains_key("ops/last.md"));
    assert_eq!(
        git(&up.bare, &["rev-parse", "main~1"]).trim(),
        head,
        "the write sits on top of the upstream's commit"
    );
    fsck(&local);
}

/// Peak resident memory of a process, from `/proc` (Linux).
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM");
    kb * 1024
}

/// A push of a few hundred kilobytes that inflates to hundreds of megabytes (a run of zeros
/// in an entry file) is reported as too big; the server never holds it in memory.
#[test]
fn a_blob_that_inflates_to_hundreds_of_megabytes_costs_no_memory() {
    const ZEROS: u64 = 256 << 20;
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let tok = fx.tok("kb/alice").to_string();
    let head = up.head();
    wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let before = peak_rss_bytes(s.child.id());
    // Written and added in a streaming way (no 384 MB buffer in this test either).
    let path = up.work.join("big/zeros.md");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(ZEROS).expect("sparse file of zeros");
    drop(f);
    git(
        &up.work,
        &["-c", "core.bigFileThreshold=1m", "add", "big/zeros.md"],
    );
    git(&up.work, &["commit", "-q", "-m", "zeros"]);
    git(&up.work, &["push", "-q", "origin", "HEAD:main"]);
    std::fs::remove_file(&path).expect("rm");
    let head = up.head();
    let (st, v) = refresh_wait(&client(), &s, "kb", &tok);
    assert_eq!(
        (st, v["commit"].as_str()),
        (StatusCode::OK, Some(head.as_str())),
        "{v}"
    );
    let status = wait_status(&s, "kb", &tok, |v| v["commit"] == head.as_str());
    let diag = status["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["path"] == "big/zeros.md")
        .unwrap_or_else(|| panic!("no diagnostic for the huge file: {status}"));
    assert!(
        diag["reason"]
            .as_str()
            .unwrap_or("")
            .contains(&ZEROS.to_string()),
        "{diag}"
    );
    let after = peak_rss_bytes(s.child.id());
    eprintln!(
        "server peak RSS: {} MiB before, {} MiB after",
        before >> 20,
        after >> 20
    );
    assert!(
        after < before + (64 << 20),
        "peak memory grew from {} MiB to {} MiB",
        before >> 20,
        after >> 20
    );
}
