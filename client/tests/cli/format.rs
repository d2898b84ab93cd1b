//! The command line on knowledge dirs made here: `helix build`, `helix check`,
//! `helix search --index` (human and JSON output), plus local mode and pending entries.

use super::common::{Client, KNOWLEDGE, Upstream, write_files};

const INVALID: &[(&str, &str)] = &[
    (
        "bad/unclosed.md",
        "---\ntitle: Never closed\ntags: [a]\n\nbody text\n",
    ),
    ("bad/empty.md", ""),
];

fn knowledge_dir(c: &Client, with_invalid: bool) -> std::path::PathBuf {
    let dir = c.tmp.path().join("knowledge");
    write_files(&dir, KNOWLEDGE);
    if with_invalid {
        write_files(&dir, INVALID);
    }
    dir
}

#[test]
fn build_writes_artifact_despite_invalid_entries_and_search_finds_valid_ones() {
    let c = Client::new();
    let dir = knowledge_dir(&c, true);
    let out = c.tmp.path().join("kb.hix");
    let r = c
        .run(&[
            "build",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--project",
            "kb",
        ])
        .ok();
    assert!(out.exists(), "artifact written");
    assert!(
        r.stderr.contains("bad/unclosed.md:"),
        "diagnostic for the unclosed front matter: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("bad/empty.md:1:"),
        "diagnostic for the empty file: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("3 entries"),
        "summary counts the valid entries: {}",
        r.stderr
    );

    let r = c
        .run(&[
            "search",
            "--index",
            out.to_str().unwrap(),
            "--json",
            "rebase",
            "onto",
        ])
        .ok();
    let v = r.json();
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits[0]["id"], "git/rebase-onto.md");
    assert_eq!(hits[0]["project"], "kb");
    assert_eq!(hits[0]["topic"], "git");
    assert_eq!(hits[0]["title"], "Rebase a branch onto another with --onto");
    assert_eq!(hits[0]["date"], "2024-03-02");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("rebase")
    );
    assert!(
        hits.iter().all(|h| h["id"] != "README.md"),
        "root Markdown is not an entry"
    );

    // An entry without a front-matter date has `null`, never a made-up one (no git here).
    let r = c
        .run(&[
            "search",
            "--index",
            out.to_str().unwrap(),
            "--json",
            "pool",
            "exhausted",
        ])
        .ok();
    let v = r.json();
    assert_eq!(v["hits"][0]["id"], "db/pool-exhaustion.md");
    assert_eq!(v["hits"][0]["title"], "Connection pool exhausted in tests");
    assert!(v["hits"][0]["date"].is_null());

    // Human output names id and title.
    let r = c
        .run(&["search", "--index", out.to_str().unwrap(), "lssl"])
        .ok();
    assert!(r.stdout.contains("build/openssl-linker.md"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Linker cannot find -lssl"),
        "{}",
        r.stdout
    );
}

#[test]
fn search_limit_and_topic_filter() {
    let c = Client::new();
    let dir = knowledge_dir(&c, false);
    let out = c.tmp.path().join("kb.hix");
    c.run(&["build", dir.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    let idx = out.to_str().unwrap();
    // "cargo", "tests", "git" appear in different topics; OR fallback brings several.
    let all = c
        .run(&[
            "search", "--index", idx, "--json", "cargo", "tests", "rebase",
        ])
        .ok()
        .json();
    assert!(all["hits"].as_array().unwrap().len() >= 2, "{all}");
    let one = c
        .run(&[
            "search", "--index", idx, "--json", "--limit", "1", "cargo", "tests", "rebase",
        ])
        .ok()
        .json();
    assert_eq!(one["hits"].as_array().unwrap().len(), 1);
    let db = c
        .run(&[
            "search", "--index", idx, "--json", "--topic", "db", "cargo", "tests", "rebase",
        ])
        .ok()
        .json();
    let db = db["hits"].as_array().unwrap();
    assert!(!db.is_empty());
    assert!(db.iter().all(|h| h["topic"] == "db"), "{db:?}");
    let none = c
        .run(&["search", "--index", idx, "--json", "zebrafish"])
        .ok()
        .json();
    assert_eq!(none["hits"].as_array().unwrap().len(), 0);
}

/// Human output says where the entries with every query word end and those with only some
/// begin, since a later group may carry higher scores.
#[test]
fn search_marks_where_entries_with_every_word_end() {
    let c = Client::new();
    let dir = c.tmp.path().join("kb");
    write_files(
        &dir,
        &[
            (
                "tmux/kill-session.md",
                "# Kill a session\n\nUse tmux kill-session to kill one tmux session.\n",
            ),
            (
                "tmux/kill-server.md",
                "# Kill everything\n\ntmux kill-server kills every tmux pane and window, \
                 tmux tmux tmux kill kill.\n",
            ),
        ],
    );
    let out = c.tmp.path().join("kb.hix");
    c.run(&["build", dir.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    let r = c
        .run(&[
            "search",
            "--index",
            out.to_str().unwrap(),
            "tmux",
            "kill",
            "session",
        ])
        .ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not in {}", r.stdout))
    };
    let marker = at("(entries with only some of the words:)");
    assert!(at("tmux/kill-session.md") < marker, "{}", r.stdout);
    assert!(at("tmux/kill-server.md") > marker, "{}", r.stdout);
    // One word each: no groups, no marker.
    let r = c
        .run(&["search", "--index", out.to_str().unwrap(), "tmux"])
        .ok();
    assert!(!r.stdout.contains("only some"), "{}", r.stdout);
}

#[test]
fn check_prints_diagnostics_and_exit_codes() {
    let c = Client::new();
    let dir = knowledge_dir(&c, true);
    let r = c.run(&["check", dir.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "invalid entries exit 1: {r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "one line per invalid entry: {}", r.stdout);
    assert!(
        lines.iter().any(|l| l.starts_with("bad/empty.md:1: ")),
        "{}",
        r.stdout
    );
    assert!(
        lines.iter().any(|l| l.starts_with("bad/unclosed.md:")),
        "{}",
        r.stdout
    );
    for l in &lines {
        let mut parts = l.splitn(3, ':');
        let (_, line, reason) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        assert!(line.parse::<u32>().is_ok(), "path:line: reason — {l}");
        assert!(reason.trim().len() > 5, "a reason is given — {l}");
    }

    let clean = c.tmp.path().join("clean");
    write_files(&clean, KNOWLEDGE);
    let r = c.run(&["check", clean.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "");

    let r = c.run(&["check", c.tmp.path().join("missing").to_str().unwrap()]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("missing"), "{}", r.stderr);
}

/// Front matter that PyYAML reads — flow collections spread over lines,
/// closed at (or left of) the key's indentation, with comment lines — in a real git
/// repository. Every entry compiles, with its title.
const FLOW_FRONT_MATTER: &[(&str, &str, &str)] = &[
    (
        "ci/lint.md",
        "Run the linter",
        "---\ntitle: Run the linter\ntools:\n  lint:\n    command: eslint\n    args: [\n      \"--fix\",\n      # comment line\n      \"src/\"\n  ]\n---\nRun eslint with autofix on src before pushing.\n",
    ),
    (
        "ci/matrix.md",
        "Nightly only on Linux",
        "---\ntitle: Nightly only on Linux\nmatrix:\n  include: [\n    { os: linux, rust: stable },\n    # nightly only on linux\n    { os: linux,\n  rust: nightly },\n]\ntags: [ci]\n---\nThe nightly toolchain job runs on the linux runner only.\n",
    ),
    (
        "build/release.md",
        "Release flags",
        "---\ntitle: Release flags\nsteps:\n  - name: build\n    with: {\n  profile: release,\n      features: [tls,\nmetrics]\n    }\n---\nRelease builds enable tls and metrics features.\n",
    ),
    (
        "ops/deploy.md",
        "Deploy window",
        "---\ntitle: Deploy window\nnotes:\n  summary: \"deploys happen\non tuesdays\"\n  hosts: [\n  web1,\n  web2]\n---\nDeploy window is tuesday morning.\n",
    ),
    (
        "ci/format.md",
        "Format check",
        "---\ntitle: Format check\ntools:\n  fmt:\n    args: [\n      --check,\n    ]\n    command: rustfmt\n---\nRun rustfmt in check mode.\n",
    ),
];

#[test]
fn front_matter_flow_collections_under_the_key_indentation_compile() {
    let c = Client::new();
    let files: Vec<(&str, &str)> = FLOW_FRONT_MATTER
        .iter()
        .map(|(path, _, text)| (*path, *text))
        .chain(KNOWLEDGE.iter().copied())
        .collect();
    let repo = Upstream::new(c.tmp.path(), &files).work;
    let r = c.run(&["check", repo.to_str().unwrap()]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), ""), "{r:?}");

    let out = c.tmp.path().join("kb.hix");
    let r = c
        .run(&["build", repo.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    assert!(r.stderr.contains("8 entries"), "{}", r.stderr);
    for (path, title, text) in FLOW_FRONT_MATTER {
        let body = text.rsplit("---\n").next().unwrap();
        let query: Vec<&str> = body.split_whitespace().take(4).collect();
        let mut args = vec!["search", "--index", out.to_str().unwrap(), "--json"];
        args.extend(&query);
        let hits = c.run(&args).ok().json();
        assert_eq!(hits["hits"][0]["id"], *path, "{query:?}: {hits}");
        assert_eq!(hits["hits"][0]["title"], *title, "{hits}");
    }
}

/// Test credentials are assembled at run time: no literal secret in this file.
fn gitlab_token() -> String {
    ["glpat-", "Qm4xZ7pL2vR9tKs8Wd3N"].concat()
}

#[test]
fn store_refuses_a_gitlab_token_and_writes_nothing() {
    let c = Client::new();
    c.follow("http://127.0.0.1:9", &["backend"]);
    let token = gitlab_token();
    let body = format!("Deploys use a personal token.\nexport GITLAB_TOKEN={token}\n");
    let store = [
        "store",
        "--topic",
        "ci",
        "--title",
        "Deploy token for the mirror",
        "--body",
    ];
    let r = c.run(&[&store[..], &[body.as_str()]].concat());
    assert_eq!(r.code, Some(2), "an error: {r:?}");
    assert!(
        r.stderr.contains(
            "body line 2 contains what looks like a GitLab personal access token; remove it, or reference where the secret lives instead"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(&token[6..]) && !r.stdout.contains(&token[6..]));
    // Nothing written: no pending entry, no overlay, nothing to search.
    let pending = c.pending_dir("backend");
    let files: Vec<_> = std::fs::read_dir(&pending)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(files.is_empty(), "{files:?}");

    // The same text pointing at where the secret lives is fine, and so is AWS's documented
    // example key (a placeholder, not a credential).
    let example = ["AKIA", "IOSFODNN7EXAMPLE"].concat();
    let body = format!(
        "Deploys read GITLAB_TOKEN from Vault (kv/ci/mirror).\nThe docs' example key {example} is not a secret.\n"
    );
    c.store("ci", "Deploy token for the mirror", &body).ok();
    assert_eq!(c.search("mirror deploy token").len(), 1);
}

#[test]
fn check_reports_secrets_committed_by_hand() {
    let c = Client::new();
    let dir = c.tmp.path().join("leaky");
    write_files(&dir, KNOWLEDGE);
    let token = gitlab_token();
    let hook = [
        "https://hooks.slack.com/services/",
        "T4KQ7ZP2M/B07RJ3X9W2L/",
        "hZ3kQ8vT2mX9pL4wR7sN1bYc",
    ]
    .concat();
    let aws = ["AKIA", "Q3ZL7MHB5TW2RX6N"].concat();
    write_files(
        &dir,
        &[
            (
                "ops/deploy.md",
                &format!(
                    "---\ntitle: Deploying the mirror\ndeploy_token: {token}\n---\n\nPost to {hook} when done.\n"
                ),
            ),
            // Does not parse (unclosed front matter), and still holds a secret.
            (
                "ops/broken.md",
                &format!("---\ntitle: Broken\nkey: {aws}\n"),
            ),
        ],
    );
    let r = c.run(&["check", dir.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    let has = |prefix: &str, what: &str| {
        lines
            .iter()
            .any(|l| l.starts_with(prefix) && l.contains(what))
    };
    assert!(
        has(
            "ops/deploy.md:3: front matter contains what looks like a GitLab personal access token;",
            "revoke it"
        ),
        "{}",
        r.stdout
    );
    assert!(
        has(
            "ops/deploy.md:6: body contains what looks like a Slack webhook URL;",
            ""
        ),
        "{}",
        r.stdout
    );
    assert!(
        has(
            "ops/broken.md:3: front matter contains what looks like an AWS access key id;",
            ""
        ),
        "{}",
        r.stdout
    );
    assert!(has("ops/broken.md:", "front matter"), "{}", r.stdout);
    for secret in [&token[6..], &hook[40..], &aws[4..]] {
        assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
    }
    assert!(r.stderr.contains("3 secrets"), "{}", r.stderr);
}

#[test]
fn commands_without_config_say_which_file_to_create() {
    let c = Client::new();
    for args in [
        &["search", "x"][..],
        &["sync"],
        &["status"],
        &["topics"],
        &["store", "--topic", "t", "--title", "x", "--body", "y"],
    ] {
        let r = c.run(args);
        assert_ne!(r.code, Some(0), "{args:?}");
        assert!(r.stderr.contains(".helix.toml"), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("server = \"http://127.0.0.1:7700\""),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("local = "), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn init_writes_config_and_refuses_to_overwrite() {
    let c = Client::new();
    c.run(&[
        "init",
        "--server",
        "http://127.0.0.1:7700/",
        "--project",
        "backend",
        "--project",
        "org",
    ])
    .ok();
    let text = std::fs::read_to_string(c.root.join(".helix.toml")).unwrap();
    assert!(
        text.contains("server = \"http://127.0.0.1:7700\""),
        "{text}"
    );
    assert!(text.contains("projects = [\"backend\", \"org\"]"), "{text}");
    let r = c.run(&["init", "--local", "kb"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    // A knowledge directory that does not exist is refused now, not at the first `sync`.
    let r = c.run(&["init", "--local", "kb", "--force"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("kb: no such directory"), "{}", r.stderr);
    assert!(
        std::fs::read_to_string(c.root.join(".helix.toml"))
            .unwrap()
            .contains("server = "),
        "the old file is kept"
    );
    std::fs::create_dir_all(c.root.join("kb")).unwrap();
    c.run(&["init", "--local", "kb", "--force"]).ok();
    let text = std::fs::read_to_string(c.root.join(".helix.toml")).unwrap();
    assert!(text.contains("local = \"kb\""), "{text}");
    // Without flags and without a terminal there is nothing to ask: a clear error.
    let r = c.run(&["init", "--force"]);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains("--server URL --project NAME"),
        "{}",
        r.stderr
    );
}

#[test]
fn local_mode_sync_compiles_the_directory_and_store_writes_into_it() {
    let c = Client::new();
    write_files(&c.root.join("kb"), KNOWLEDGE);
    c.run(&["init", "--local", "kb"]).ok();
    let r = c.run(&["sync"]).ok();
    assert!(r.stdout.contains("kb: 3 entries from"), "{}", r.stdout);
    let hits = c.search("lssl linker");
    assert_eq!(hits[0]["id"], "build/openssl-linker.md");
    assert_eq!(hits[0]["project"], "kb");

    let r = c.store(
        "ci",
        "Arm runner is slow",
        "Raise the job timeout on the arm runner; retries do not help.",
    );
    assert!(
        r.stdout.contains("kb:ci/arm-runner-is-slow.md"),
        "{}",
        r.stdout
    );
    assert!(c.root.join("kb/ci/arm-runner-is-slow.md").exists());
    let hits = c.search("arm runner timeout");
    assert_eq!(hits[0]["id"], "ci/arm-runner-is-slow.md");
    // A nested topic is a folder within a folder, and keeps its whole name.
    let r = c.store(
        "ci/runners",
        "Runner disk fills up",
        "Prune the docker cache on the runner weekly.",
    );
    assert!(
        r.stdout.contains("kb:ci/runners/runner-disk-fills-up.md"),
        "{}",
        r.stdout
    );
    assert!(
        c.root
            .join("kb/ci/runners/runner-disk-fills-up.md")
            .exists()
    );
    let hits = c.search("runner disk docker cache");
    assert_eq!(hits[0]["id"], "ci/runners/runner-disk-fills-up.md");
    assert_eq!(hits[0]["topic"], "ci/runners");

    let topics = c.run(&["topics", "--json"]).ok().json();
    let names: Vec<&str> = topics["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["topic"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["build", "ci", "ci/runners", "db", "git"]);
    let brief = c.run(&["brief", "git"]).ok();
    assert!(
        brief
            .stdout
            .contains("2024-03-02  Rebase a branch onto another with --onto"),
        "{}",
        brief.stdout
    );
    let read = c
        .run(&["read", "build/openssl-linker.md", "--json"])
        .ok()
        .json();
    assert_eq!(read["sources"], serde_json::json!(["build.rs"]));
    assert!(read["body"].as_str().unwrap().contains("libssl-dev"));
}

#[test]
fn store_is_visible_at_once_through_the_overlay_and_validated() {
    let c = Client::new();
    // A server that is never contacted: store and search work offline.
    c.follow("http://127.0.0.1:9", &["backend"]);
    let r = c
        .run(&[
            "store",
            "--topic",
            "build",
            "--title",
            "Sccache breaks incremental builds",
            "--tags",
            "cargo,cache",
            "--source",
            "Cargo.toml",
            "--body",
            "Disable sccache for dev builds; it defeats incremental compilation.",
        ])
        .ok();
    assert!(
        r.stdout
            .contains("backend:build/sccache-breaks-incremental-builds.md"),
        "{}",
        r.stdout
    );
    let pending: Vec<_> = std::fs::read_dir(c.pending_dir("backend"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(pending.iter().any(|n| n == "overlay.hix"), "{pending:?}");
    assert_eq!(
        pending.iter().filter(|n| n.ends_with(".md")).count(),
        1,
        "{pending:?}"
    );

    let hits = c.search("sccache incremental");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["id"], "build/sccache-breaks-incremental-builds.md");
    assert_eq!(hits[0]["project"], "backend");
    let e = c
        .run(&[
            "read",
            "backend:build/sccache-breaks-incremental-builds.md",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(e["tags"], serde_json::json!(["cargo", "cache"]));
    assert_eq!(e["sources"], serde_json::json!(["Cargo.toml"]));
    assert_eq!(e["pending"], true);
    let st = c.run(&["status", "--json"]).ok().json();
    assert_eq!(st["projects"][0]["pending"], 1);

    // Body from stdin.
    let mut child = c
        .cmd(&["store", "--topic", "db", "--title", "Vacuum nightly"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Run VACUUM ANALYZE nightly or the planner goes wrong.\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(c.search("vacuum planner")[0]["id"], "db/vacuum-nightly.md");

    // Invalid input: nothing written, a reason given.
    let db_url = ["postgres://app:", "Vd8kq2Lx9Wp@db.internal/app"].concat();
    for (args, why) in [
        (
            vec!["--topic", "../etc", "--title", "x", "--body", "y"],
            "topic",
        ),
        (
            vec!["--topic", "t", "--title", "x", "--body", "   "],
            "empty",
        ),
        (
            vec!["--topic", "t", "--title", "x", "--body", &db_url],
            "postgresql connection string with a password",
        ),
        (
            vec![
                "--topic",
                "t",
                "--title",
                "x",
                "--body",
                "y",
                "--project",
                "other",
            ],
            "not followed",
        ),
    ] {
        let mut a = vec!["store"];
        a.extend(args);
        let r = c.run(&a);
        assert_ne!(r.code, Some(0), "{a:?}");
        assert!(r.stderr.to_lowercase().contains(why), "{a:?}: {}", r.stderr);
    }
    assert_eq!(
        c.run(&["status", "--json"]).ok().json()["projects"][0]["pending"],
        2
    );
}

#[test]
fn brief_status_read_and_doctor_outputs() {
    let c = Client::new();
    let d = c.run(&["doctor"]);
    assert_eq!(d.code, Some(1));
    assert!(d.stdout.contains("FIX   no configuration"), "{}", d.stdout);
    assert!(d.stdout.contains(".helix.toml"), "{}", d.stdout);

    write_files(&c.root.join("kb"), KNOWLEDGE);
    c.run(&["init", "--local", "kb", "--project", "team"]).ok();
    let st = c.run(&["status"]).ok();
    assert!(
        st.stdout
            .contains("team: not synced yet (run `helix sync`)"),
        "{}",
        st.stdout
    );
    c.run(&["sync"]).ok();

    let b = c.run(&["brief", "--json"]).ok().json();
    assert_eq!(b["entries"], 3);
    assert_eq!(b["topics"].as_array().unwrap().len(), 3);
    let b = c.run(&["brief"]).ok();
    assert!(
        b.stdout.starts_with("3 entries in 3 topics"),
        "{}",
        b.stdout
    );
    assert!(b.stdout.contains("team:git (1)"), "{}", b.stdout);
    let b = c.run(&["brief", "db", "--json"]).ok().json();
    assert_eq!(b["entries"][0]["id"], "db/pool-exhaustion.md");

    let st = c.run(&["status", "--json"]).ok().json();
    assert_eq!(st["mode"], "local");
    assert_eq!(st["projects"][0]["name"], "team");
    assert_eq!(st["projects"][0]["entries"], 3);
    let st = c.run(&["status"]).ok();
    assert!(st.stdout.contains("team: 3 entries"), "{}", st.stdout);

    let r = c.run(&["read", "team:git/rebase-onto.md"]).ok();
    assert!(
        r.stdout
            .starts_with("# Rebase a branch onto another with --onto\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("git rebase --onto main feature~3 feature"),
        "{}",
        r.stdout
    );
    let r = c.run(&["read", "git/nope.md"]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("no entry `git/nope.md`"), "{}", r.stderr);

    let d = c.run(&["doctor"]);
    assert!(
        d.stdout
            .contains("ok    cache team: 3 entries, checksum ok"),
        "{}",
        d.stdout
    );
    assert!(
        d.stdout.contains(
            "ok    project team: 3 entries, 0 invalid; 1 Markdown file is not an entry (1 README, index or template)"
        ),
        "{}",
        d.stdout
    );
}

#[test]
fn concurrent_stores_all_reach_the_overlay() {
    let c = Client::new();
    c.follow("http://127.0.0.1:9", &["backend"]);
    let children: Vec<_> = (0..8)
        .map(|i| {
            c.cmd(&[
                "store",
                "--topic",
                "ops",
                "--title",
                &format!("Runbook step {i}"),
                "--body",
                &format!("Step {i} of the quokka runbook."),
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
        })
        .collect();
    for mut ch in children {
        assert!(ch.wait().unwrap().success());
    }
    let r = c
        .run(&["search", "--json", "--limit", "20", "quokka"])
        .ok()
        .json();
    let mut ids: Vec<String> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let want: Vec<String> = (0..8).map(|i| format!("ops/runbook-step-{i}.md")).collect();
    assert_eq!(ids, want);
}

/// `helix` hands `sync`, `doctor` and `mcp` to `helix-net` beside it; installed alone, it
/// says what is missing instead of failing obscurely, and its local commands still work.
#[test]
fn network_commands_without_helix_net_say_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("helix");
    std::fs::copy(super::common::helix(), &lone).unwrap();
    // A process forked by a parallel test while the copy's file was still open for
    // writing holds that descriptor until it execs: running the copy can fail with
    // ETXTBSY for that moment. Retry it.
    let run = |arg: &str| {
        for _ in 0..100 {
            let mut cmd = std::process::Command::new(&lone);
            match helix_test_support::isolate(&mut cmd, &dir.path().join("home"))
                .arg(arg)
                .current_dir(dir.path())
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.expect("run the lone helix"),
            }
        }
        panic!("{} stayed busy (ETXTBSY)", lone.display());
    };
    let out = run("sync");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("helix-net") && err.contains("cargo install --locked --path client-net"),
        "{err}"
    );
    let out = run("--version");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("helix "),
        "{out:?}"
    );
}
