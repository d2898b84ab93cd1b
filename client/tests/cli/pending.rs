//! Whose pending entries are whose: the queue of a store belongs to the server of the code
//! repository that made it (`servers/<server-key>/pending/<project>`), never to another
//! server's project of the same name nor to a local-mode project; the queue of earlier
//! versions (`pending/<project>`) moves, whole, to the first server that uses it.

use super::common::{Client, ProjectSpec, Server, Upstream, pending_dir_of, write_files};
use std::path::{Path, PathBuf};

const TEAM_ONE: &[(&str, &str)] = &[(
    "build/openssl-linker.md",
    "---\ntitle: Linker cannot find -lssl\nsources: [build.rs]\n---\n\n\
     `cargo build` fails with `cannot find -lssl` when libssl-dev is missing.\n",
)];

const TEAM_TWO: &[(&str, &str)] = &[(
    "security/rotate-keys.md",
    "# Rotate deploy keys yearly\n\nDeploy keys are rotated every January.\n",
)];

const TITLE: &str = "Arm runner needs a longer timeout";
const ID: &str = "ci/arm-runner-needs-a-longer-timeout.md";
const BODY: &str = "The arm runner is four times slower; raise the job timeout.";
const QUERY: &str = "arm runner timeout";

/// `$XDG_DATA_HOME/helix/servers/<server-key>/pending/<project>` spelled out: the layout
/// the documentation promises (`server_key` of `http://127.0.0.1:PORT` is `127.0.0.1_PORT`).
fn documented_pending_dir(c: &Client, url: &str, project: &str) -> PathBuf {
    let key = url.trim_start_matches("http://").replace(':', "_");
    c.data_home()
        .join("helix/servers")
        .join(key)
        .join("pending")
        .join(project)
}

fn ids(hits: &[serde_json::Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["id"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A code repository `name` of client `c` following `project` on `url`.
fn repo_following(c: &Client, name: &str, url: &str, project: &str) -> PathBuf {
    let dir = c.other_repo(name);
    std::fs::write(
        dir.join(".helix.toml"),
        format!("server = {url:?}\nprojects = [{project:?}]\n"),
    )
    .unwrap();
    dir
}

#[test]
fn a_store_for_one_server_never_reaches_another_servers_project_of_that_name() {
    let tmp = tempfile::tempdir().unwrap();
    let up1 = Upstream::new(&tmp.path().join("one"), TEAM_ONE);
    let up2 = Upstream::new(&tmp.path().join("two"), TEAM_TWO);
    // Two teams' servers, each with a project called `default`.
    let s1 = Server::start(&[ProjectSpec {
        name: "default",
        upstream: Some(&up1.bare),
    }]);
    let s2 = Server::start(&[ProjectSpec {
        name: "default",
        upstream: Some(&up2.bare),
    }]);
    // One developer, two code repositories: A follows server 1, B server 2.
    let c = Client::new();
    c.follow(&s1.url, &["default"]);
    let b = repo_following(&c, "repo-b", &s2.url, "default");
    c.run(&["sync"]).ok();
    c.run_in(&b, &["sync"]).ok();

    c.store("ci", TITLE, BODY);
    assert_eq!(
        c.pending_dir("default"),
        documented_pending_dir(&c, &s1.url, "default")
    );
    assert_eq!(ids(&c.search(QUERY)), [ID], "A sees its pending entry");
    assert!(
        !ids(&c.search_in(&b, QUERY)).contains(&ID.to_string()),
        "B's overlay must not hold A's entry"
    );

    // B's sync pushes nothing: the entry is for server 1.
    let r = c.run_in(&b, &["sync"]).ok();
    assert!(!r.stdout.contains("pushed"), "{}", r.stdout);
    assert!(
        !up2.files().contains(&ID.to_string()),
        "server 2's repository got team one's entry"
    );
    assert!(!ids(&c.search_in(&b, QUERY)).contains(&ID.to_string()));
    let st = c.run_in(&b, &["status", "--json"]).ok().json();
    assert_eq!(st["projects"][0]["pending"], 0, "{st}");

    // A's sync delivers it to server 1, and only there.
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    assert!(up1.files().contains(&ID.to_string()));
    assert!(!up2.files().contains(&ID.to_string()));
    let e = c.run(&["read", ID, "--json"]).ok().json();
    assert_eq!(e["pending"], false, "now from server 1's artifact: {e}");
    c.run_in(&b, &["sync"]).ok();
    assert!(!ids(&c.search_in(&b, QUERY)).contains(&ID.to_string()));
}

/// Turns the queue `c` has for `project` into what earlier versions of helix left: the same
/// files under `$XDG_DATA_HOME/helix/pending/<project>`, plus an entry a sync set aside in
/// `rejected/`. Returns the legacy directory.
fn make_legacy(c: &Client, project: &str) -> PathBuf {
    let current = c.pending_dir(project);
    let legacy = c.legacy_pending_dir(project);
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    std::fs::rename(&current, &legacy).unwrap();
    std::fs::remove_dir_all(c.data_home().join("helix/servers")).unwrap();
    write_files(
        &legacy,
        &[
            (
                "rejected/1700000000-000000000-00000000deadbeef.md",
                "---\ntopic: ops\ntitle: Refused once\n---\n\nKept aside.\n",
            ),
            (
                "rejected/1700000000-000000000-00000000deadbeef.reason",
                "422: invalid\n",
            ),
        ],
    );
    legacy
}

/// A server with project `backend`, a client following it with one entry stored, and that
/// queue turned into the legacy layout ([`make_legacy`]).
fn legacy_queue_of_backend() -> (tempfile::TempDir, Upstream, Server, Client, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(tmp.path(), TEAM_ONE);
    let s = Server::start(&[ProjectSpec {
        name: "backend",
        upstream: Some(&up.bare),
    }]);
    let c = Client::new();
    c.follow(&s.url, &["backend"]);
    c.run(&["sync"]).ok();
    c.store("ci", TITLE, BODY);
    let legacy = make_legacy(&c, "backend");
    (tmp, up, s, c, legacy)
}

fn queued(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_legacy_queue_moves_whole_to_the_first_server_that_uses_it_and_is_pushed_there() {
    let (_tmp, up, s, c, legacy) = legacy_queue_of_backend();
    assert_eq!(queued(&legacy), 1);
    let new = documented_pending_dir(&c, &s.url, "backend");
    assert!(!new.exists());

    // The first command of this server's repository moves it, in one piece.
    let st = c.run(&["status", "--json"]).ok();
    assert_eq!(st.stderr, "", "a move that works says nothing");
    let st = st.json();
    assert_eq!(st["projects"][0]["pending"], 1, "{st}");
    assert_eq!(st["projects"][0]["pending_dir"], new.display().to_string());
    assert!(!legacy.exists(), "the legacy queue is gone");
    assert!(
        !c.data_home().join("helix/pending").exists(),
        "and its emptied root"
    );
    assert_eq!(queued(&new), 1);
    assert!(
        new.join("rejected/1700000000-000000000-00000000deadbeef.reason")
            .exists()
    );
    assert_eq!(ids(&c.search(QUERY)), [ID], "the overlay moved with it");

    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    assert!(up.files().contains(&ID.to_string()));
    assert_eq!(queued(&new), 0);
    assert!(!legacy.exists());
}

#[test]
fn a_legacy_queue_of_a_project_followed_on_two_servers_is_left_to_the_user() {
    let (_tmp, up, s, c, legacy) = legacy_queue_of_backend();
    // This machine also synced a `backend` of another team's server: the old shared queue
    // may hold that team's entries.
    let other = c.cache_dir("http://10.9.8.7:7700", "backend");
    std::fs::create_dir_all(&other).unwrap();

    let st = c.run(&["status"]).ok();
    assert!(
        st.stderr.contains("helix cannot tell whose they are")
            && st.stderr.contains("10.9.8.7_7700")
            && st.stderr.contains(&legacy.display().to_string()),
        "{}",
        st.stderr
    );
    let r = c.run(&["sync"]);
    assert!(
        !r.stdout.contains("pushed"),
        "nothing is sent: {}",
        r.stdout
    );
    assert!(!up.files().contains(&ID.to_string()));
    assert_eq!(queued(&legacy), 1, "the legacy queue stays whole");
    let doctor = c.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("FIX   backend:") && doctor.stdout.contains("cannot tell"),
        "{}",
        doctor.stdout
    );

    // Moved by hand, as the message says, it is this server's.
    let new = documented_pending_dir(&c, &s.url, "backend");
    std::fs::create_dir_all(new.parent().unwrap()).unwrap();
    std::fs::rename(&legacy, &new).unwrap();
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    assert!(up.files().contains(&ID.to_string()));
}

#[test]
fn a_legacy_queue_that_cannot_move_stays_whole_and_is_reported_until_it_can() {
    let (_tmp, up, _server, c, legacy) = legacy_queue_of_backend();
    let before = std::fs::read_dir(&legacy).unwrap().count();
    // A file where the new layout needs a directory: the move cannot happen.
    let blocker = c.data_home().join("helix/servers");
    std::fs::write(&blocker, "in the way").unwrap();

    // The hooks' read path says nothing and changes nothing.
    let input = serde_json::json!({
        "session_id": "s1",
        "cwd": c.root,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "why does the arm runner time out?",
    });
    let mut hook = c
        .cmd(&["hook", "prompt"])
        .env("HELIX_SYNC_MAX_AGE", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut hook.stdin.take().unwrap(),
        input.to_string().as_bytes(),
    )
    .unwrap();
    let hook = hook.wait_with_output().unwrap();
    assert_eq!(hook.status.code(), Some(0));
    assert!(
        hook.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&hook.stderr)
    );
    // A command says so, and what to do.
    let st = c.run(&["status"]).ok();
    assert!(
        st.stderr
            .contains("could not move the pending entries of `backend`")
            && st.stderr.contains(&legacy.display().to_string()),
        "{}",
        st.stderr
    );
    let r = c.run(&["sync"]);
    assert!(r.stderr.contains("could not move"), "{r:?}");
    assert!(
        !up.files().contains(&ID.to_string()),
        "nothing sent meanwhile"
    );
    let doctor = c.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("FIX   backend: could not move the pending entries"),
        "{}",
        doctor.stdout
    );
    // Nothing was copied, moved or deleted.
    assert_eq!(std::fs::read_dir(&legacy).unwrap().count(), before);
    assert_eq!(queued(&legacy), 1);

    // Once the cause is gone, the next helix (here the read path the hooks use) moves it.
    std::fs::remove_file(&blocker).unwrap();
    assert_eq!(ids(&c.search(QUERY)), [ID]);
    assert!(!legacy.exists());
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("pushed 1 pending"), "{}", r.stdout);
    assert!(up.files().contains(&ID.to_string()));
}

#[test]
fn a_local_project_never_reads_a_server_queue_of_its_name() {
    let c = Client::new();
    // Repository A follows a server's project `notes` (unreachable: the store stays pending).
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    c.follow(&format!("http://127.0.0.1:{port}"), &["notes"]);
    c.store("ci", TITLE, BODY);
    assert_eq!(ids(&c.search(QUERY)), [ID]);
    // Repository B: local mode, its knowledge folder is called `notes` too.
    let b = c.other_repo("repo-b");
    write_files(&b.join("notes"), TEAM_ONE);
    std::fs::write(b.join(".helix.toml"), "local = \"notes\"\n").unwrap();
    c.run_in(&b, &["sync"]).ok();
    let st = c.run_in(&b, &["status", "--json"]).ok().json();
    assert_eq!(st["projects"][0]["name"], "notes");
    assert_eq!(st["projects"][0]["pending"], 0);
    assert!(st["projects"][0]["pending_dir"].is_null(), "{st}");

    assert_eq!(
        ids(&c.search_in(&b, "lssl linker")),
        ["build/openssl-linker.md"],
        "B reads its own knowledge"
    );
    assert!(
        ids(&c.search_in(&b, QUERY)).is_empty(),
        "B must not read A's pending overlay"
    );
    assert!(
        c.run_in(&b, &["read", ID]).code != Some(0),
        "nor read A's pending entry"
    );
}

#[test]
fn servers_under_two_paths_of_one_host_keep_queues_and_caches_of_their_own() {
    // A reverse proxy serving two teams' servers under two paths of one host and port. No
    // server answers: a store queues offline, and `status` reads only local state.
    let c = Client::new();
    let one = "http://127.0.0.1:9/team-one";
    let two = "http://127.0.0.1:9/team-two";
    c.follow(one, &["default"]);
    let b = repo_following(&c, "repo-b", two, "default");

    c.store("ci", TITLE, BODY);
    let a_dir = c.pending_dir("default");
    let b_dir = pending_dir_of(c.cmd_in(&b, &[]), "default");
    assert_ne!(a_dir, b_dir, "one queue for two servers");
    let queued = std::fs::read_dir(&a_dir).unwrap().flatten();
    assert_eq!(
        queued
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .count(),
        1,
        "{a_dir:?}"
    );
    let st = c.run_in(&b, &["status", "--json"]).json();
    assert_eq!(st["projects"][0]["pending"], 0, "B counts A's entry: {st}");
    let cache_b = st["projects"][0]["cache_dir"].as_str().unwrap().to_string();
    let st = c.run(&["status", "--json"]).json();
    assert_eq!(st["projects"][0]["pending"], 1, "{st}");
    assert_ne!(st["projects"][0]["cache_dir"].as_str().unwrap(), cache_b);
    assert!(!ids(&c.search_in(&b, QUERY)).contains(&ID.to_string()));
}
