//! The whole team story: a server following an upstream written by several authors, two
//! developers' clients, a fix stored over MCP, a pull request, and hooks answering offline.

use serde_json::{Value, json};

use super::harness::{Dev, Server, Upstream, context, git_as};

const PROJECT: &str = "team";

/// The knowledge repository before the story starts, one commit per author. None of it is
/// about protoc or the gateway, so the build failure below matches nothing yet.
const ALICE: &[(&str, &str)] = &[
    (
        "README.md",
        "# Team knowledge\n\nOne Markdown file per entry.\n",
    ),
    (
        "git/rebase-onto.md",
        "# Rebase a branch onto another with --onto\n\n\
         Use `git rebase --onto main feature~3 feature` to move the last three commits.\n",
    ),
];
const BOB: &[(&str, &str)] = &[(
    "db/pool-exhaustion.md",
    "---\ntitle: Connection pool exhausted in integration tests\ntags: [postgres]\n\
     sources: [src/db/pool.rs]\n---\n\n\
     Integration tests hang when max_connections is below the test thread count.\n\
     Give DATABASE_MAX_CONNECTIONS=16 to CI.\n",
)];
const CAROL: &[(&str, &str)] = &[(
    "ci/arm-runner-timeouts.md",
    "---\ntitle: CI times out on the arm runner\ntags: [ci]\n---\n\n\
     The arm runner is four times slower; raise the job timeout, do not retry.\n",
)];

/// The file both new entries are about.
const GATEWAY_BUILD_RS: &str = "crates/gateway/build.rs";

/// What Claude Code passes to `PostToolUseFailure` when `cargo test` fails on protoc.
const PROTOC_FAILURE: &str = "Exit code 101\n\
   Compiling gateway v0.3.0 (/home/dev/app/crates/gateway)\n\
error: failed to run custom build command for `gateway v0.3.0`\n\n\
Caused by:\n  process didn't exit successfully: \
`/home/dev/app/target/debug/build/gateway-1f2e3d4c5b6a7980/build-script-build` (exit status: 1)\n\
  --- stderr\n\
  Error: Custom { kind: NotFound, error: \"Could not find `protoc`. If `protoc` is installed, \
try setting the `PROTOC` environment variable to the path of the `protoc` binary.\" }\n";

/// The entry from the "pull request", committed straight into the upstream by Dave.
const DAVE_PATH: &str = "build/gateway-needs-protoc-25.md";
const DAVE_TITLE: &str = "Gateway needs protoc 25 or newer";
const DAVE_ENTRY: &str = "---\ntitle: Gateway needs protoc 25 or newer\ntags: [protoc, gateway]\n\
sources: [crates/gateway/build.rs]\n---\n\n\
The gateway protos use proto3 optional fields: protoc older than 25 rejects them even when \
the `protoc` binary is found. Ubuntu 22.04 ships 3.12; take protoc from the release page.\n";

/// What developer A stores through `helix mcp` after fixing the failure.
const A_TITLE: &str = "Gateway build script cannot find protoc";
const A_BODY: &str = "`cargo test` fails in the gateway build script with \
\"Could not find `protoc`\": prost-build runs protoc at build time. Install protobuf-compiler \
or point the PROTOC environment variable at the protoc binary.";

/// What developer B stores while the server is down.
const B_TITLE: &str = "CI image pins protoc 25.1 for the gateway";
const B_BODY: &str = "The CI image installs protoc 25.1 from the GitHub release; keep the \
version in sync with the gateway's minimum when bumping prost.";

fn error_input() -> Value {
    json!({
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "cargo test -p gateway", "description": "Run the gateway tests"},
        "tool_use_id": "toolu_01",
        "error": PROTOC_FAILURE,
        "is_interrupt": false,
    })
}

fn prompt_input() -> Value {
    json!({
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Why does the gateway fail to compile its protos with protoc on my machine?",
    })
}

fn ambient_input(dev: &Dev) -> Value {
    json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": dev.root.join(GATEWAY_BUILD_RS)},
        "tool_use_id": "toolu_02",
    })
}

/// Asserts that a hook's context names both entries by `project:id` and title.
#[track_caller]
fn assert_both(hook: &str, answer: &Value, event: &str, entries: &[(&str, &str)]) {
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"], event,
        "{hook}: {answer}"
    );
    let ctx = context(answer);
    for (id, title) in entries {
        assert!(
            ctx.contains(&format!("{PROJECT}:{id}")),
            "{hook} context lacks {PROJECT}:{id}:\n{ctx}"
        );
        assert!(
            ctx.contains(title),
            "{hook} context lacks {title:?}:\n{ctx}"
        );
    }
}

/// How many commits of the upstream's `main` add `path`.
fn commits_adding(up: &Upstream, path: &str) -> usize {
    up.git(&["log", "main", "--diff-filter=A", "--format=%H", "--", path])
        .lines()
        .filter(|l| !l.is_empty())
        .count()
}

#[test]
fn team_story_store_sync_pull_request_and_offline_hooks() {
    let tmp = tempfile::tempdir().expect("temp dir");

    // Upstream knowledge repository written by three people.
    let up = Upstream::new(tmp.path());
    up.commit_as("Alice", ALICE, "git: rebase --onto");
    up.commit_as("Bob", BOB, "db: pool exhaustion in tests");
    let seeded = up.commit_as("Carol", CAROL, "ci: arm runner timeouts");

    // The server follows it; tokens only (no anonymous loopback), polling off in practice.
    let config = Server::configure(
        tmp.path(),
        &format!(
            "anonymous_loopback = false\n\n[[projects]]\nname = {PROJECT:?}\n\
             upstream = {:?}\nbranch = \"main\"\npoll_interval_secs = 3600\n",
            up.bare.to_str().expect("utf-8 path")
        ),
    );
    let token_a = Server::token_add(&config, PROJECT, "dev-a", "read,write");
    let token_b = Server::token_add(&config, PROJECT, "dev-b", "read,write");
    let token_ci = Server::token_add(&config, PROJECT, "ci-webhook", "write");
    let token_reader = Server::token_add(&config, PROJECT, "dashboard", "read");
    let cfg_text = std::fs::read_to_string(&config).expect("read server config");
    for t in [&token_a, &token_b, &token_ci, &token_reader] {
        assert!(
            !cfg_text.contains(t.as_str()),
            "plaintext token stored in config"
        );
    }
    let mut server = Server::start(&config, &tmp.path().join("data"), tmp.path());
    let status = server.wait_serving(PROJECT, &token_a, &seeded);
    assert_eq!(status["entries"], 3, "status: {status}");

    let a = Dev::new("a", &server.url, &[PROJECT], &token_a);
    let b = Dev::new("b", &server.url, &[PROJECT], &token_b);
    for dev in [&a, &b] {
        dev.write(GATEWAY_BUILD_RS, "fn main() {\n    prost_build::compile_protos(&[\"proto/gw.proto\"], &[\"proto\"]).unwrap();\n}\n");
    }

    // Developer A: first sync downloads the three entries.
    let r = a.run(&["sync"]).ok("A: helix sync");
    assert!(
        r.stdout.contains(&format!("{PROJECT}: 3 entries")) && r.stdout.contains("downloaded"),
        "A: first sync: {}",
        r.stdout
    );
    // A's `cargo test` fails; the team knows nothing about it yet.
    let before = a.hook("error", error_input());
    assert!(
        context(&before).is_empty(),
        "A: error hook found something before anyone stored the fix: {before}"
    );

    // A stores the fix through `helix mcp`.
    let stored = {
        let mut mcp = a.mcp();
        let res = mcp.call(
            "store",
            json!({
                "topic": "build",
                "title": A_TITLE,
                "body": A_BODY,
                "tags": ["protoc", "gateway"],
                "sources": [GATEWAY_BUILD_RS],
            }),
        );
        assert_ne!(res["isError"], true, "A: MCP store failed: {res}");
        // The result is text for the model (no structured content): "Stored `team:<path>` …".
        assert!(res.get("structuredContent").is_none(), "{res}");
        let text = res["content"][0]["text"].as_str().unwrap_or_default();
        let id = text
            .strip_prefix("Stored `")
            .and_then(|t| t.split('`').next())
            .unwrap_or_else(|| panic!("A: store result names no id: {res}"));
        let (project, path) = id
            .split_once(':')
            .unwrap_or_else(|| panic!("A: store result id {id}"));
        assert_eq!(project, PROJECT, "A: store result: {res}");
        // Visible at once through the same MCP session.
        let found = mcp.call("search", json!({"query": "protoc gateway build script"}));
        let text = found["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(A_TITLE), "A: MCP search after store: {found}");
        path.to_string()
    };
    let a_path = stored;
    assert!(
        a_path.starts_with("build/") && a_path.ends_with(".md"),
        "A: stored path {a_path}"
    );
    // A's own hooks see the pending entry before any sync (the overlay).
    let mine = a.hook("error", error_input());
    assert!(
        context(&mine).contains(A_TITLE),
        "A: error hook after store does not show the pending entry: {mine}"
    );

    // A syncs: the pending entry reaches the server and the upstream, exactly once (the
    // store also started a background sync; both carry the same idempotency key).
    let r = a.run(&["sync"]).ok("A: helix sync after store");
    assert!(r.stdout.contains(PROJECT), "A: sync: {}", r.stdout);
    assert_eq!(
        commits_adding(&up, &a_path),
        1,
        "A's entry {a_path} must be added to the upstream exactly once:\n{}",
        up.git(&["log", "main", "--format=%h %an: %s", "--name-only"])
    );
    let pushed = up.git(&["show", &format!("main:{a_path}")]);
    assert!(
        pushed.contains(A_TITLE) && pushed.contains("PROTOC environment variable"),
        "upstream copy of A's entry: {pushed}"
    );
    let author = up.git(&["log", "main", "-1", "--format=%an", "--", &a_path]);
    assert_eq!(author, "dev-a", "git author of A's entry");
    let a_pending = std::fs::read_dir(a.pending_dir(PROJECT))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(a_pending, 0, "A: entries still queued after sync");

    // A pull request by Dave is merged: a commit lands directly in the upstream.
    let merged = up.commit_as(
        "Dave",
        &[(DAVE_PATH, DAVE_ENTRY)],
        "build: gateway needs protoc 25 (#42)",
    );
    assert_eq!(
        commits_adding(&up, &a_path),
        1,
        "rebasing Dave's work duplicated A's entry"
    );
    // The forge's webhook (a write token here) makes the server refresh now; a reader's
    // token or no token at all may not.
    let refresh = format!("/v1/projects/{PROJECT}/refresh");
    let denied = server.json("POST", &refresh, Some(&token_reader), 403);
    assert_eq!(
        denied["error"]["code"], "forbidden",
        "refresh with a read token: {denied}"
    );
    let denied = server.json("POST", &refresh, None, 401);
    assert_eq!(
        denied["error"]["code"], "unauthorized",
        "refresh without a token: {denied}"
    );
    let refreshed = server.json(
        "POST",
        &format!("/v1/projects/{PROJECT}/refresh?wait=1"),
        Some(&token_ci),
        200,
    );
    assert_eq!(refreshed["commit"], merged, "refresh answer: {refreshed}");
    let status = server.wait_serving(PROJECT, &token_reader, &merged);
    assert_eq!(
        status["entries"], 5,
        "status after the pull request: {status}"
    );
    assert_eq!(
        status["diagnostics"],
        json!([]),
        "diagnostics after the pull request: {status}"
    );

    // Developer B syncs and sees both entries in every hook.
    let r = b.run(&["sync"]).ok("B: helix sync");
    assert!(
        r.stdout.contains(&format!("{PROJECT}: 5 entries")) && r.stdout.contains(&merged[..7]),
        "B: sync: {}",
        r.stdout
    );
    let both = [(a_path.as_str(), A_TITLE), (DAVE_PATH, DAVE_TITLE)];
    let prompt = b.hook("prompt", prompt_input());
    assert_both("B: prompt", &prompt, "UserPromptSubmit", &both);
    let ambient = b.hook("ambient", ambient_input(&b));
    assert_both("B: ambient", &ambient, "PreToolUse", &both);
    // The error hook shows what explains this failure (A's entry, which quotes it); the
    // relevance gate lets a runner-up through only when it scores nearly as well.
    let error = b.hook("error", error_input());
    assert_both("B: error", &error, "PostToolUseFailure", &both[..1]);
    // Unrelated knowledge stays out of the error context.
    assert!(
        !context(&error).contains("pool-exhaustion"),
        "B: error hook shows unrelated entries: {error}"
    );
    // Authors come from git for entries without front-matter authors.
    let read = b.run(&["read", "--json", DAVE_PATH]).ok("B: helix read");
    let entry = read.json();
    assert_eq!(entry["author"], "Dave", "B: read {DAVE_PATH}: {entry}");
    let read = b
        .run(&["read", "--json", "db/pool-exhaustion.md"])
        .ok("B: helix read");
    assert_eq!(
        read.json()["author"],
        "Bob",
        "B: read db/pool-exhaustion.md"
    );

    // The server goes away; B's hooks answer exactly as before, from the cache.
    server.stop();
    let r = b.run(&["sync"]);
    assert_eq!(r.code, Some(1), "B: sync with the server down: {r:?}");
    assert!(
        r.stderr.contains("offline"),
        "B: sync with the server down says why: {}",
        r.stderr
    );
    assert_eq!(
        b.hook("prompt", prompt_input()),
        prompt,
        "B: prompt offline"
    );
    assert_eq!(
        b.hook("ambient", ambient_input(&b)),
        ambient,
        "B: ambient offline"
    );
    assert_eq!(b.hook("error", error_input()), error, "B: error offline");
    let search = b
        .run(&["search", "--json", "protoc"])
        .ok("B: helix search offline");
    let hits = search.json()["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(hits.len(), 2, "B: offline search hits: {}", search.stdout);

    // Offline, B stores what they learn; it is visible at once and kept for later.
    let r = b
        .run(&[
            "store",
            "--topic",
            "ci",
            "--title",
            B_TITLE,
            "--tags",
            "ci,protoc",
            "--source",
            GATEWAY_BUILD_RS,
            "--body",
            B_BODY,
        ])
        .ok("B: helix store offline");
    assert!(
        r.stdout.contains(&format!("{PROJECT}:ci/")),
        "B: store: {}",
        r.stdout
    );
    let prompt = b.hook(
        "prompt",
        json!({
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Which protoc does the CI image install for the gateway?",
        }),
    );
    assert!(
        context(&prompt).contains(B_TITLE),
        "B: prompt hook does not show the offline store: {prompt}"
    );
    let r = b.run(&["sync"]);
    assert_eq!(r.code, Some(1), "B: offline sync after store: {r:?}");
    assert!(
        r.stderr.contains("1 pending kept"),
        "B: offline sync keeps the pending entry: {}",
        r.stderr
    );

    // The server comes back on the same address and serves its last artifact at once.
    server.restart(tmp.path());
    let status = server.json(
        "GET",
        &format!("/v1/projects/{PROJECT}/status"),
        Some(&token_reader),
        200,
    );
    assert_eq!(status["commit"], merged, "restarted server: {status}");
    assert_eq!(status["entries"], 5, "restarted server: {status}");
    let r = b.run(&["sync"]).ok("B: sync after the restart");
    assert!(
        r.stdout.contains("pushed 1 pending") && r.stdout.contains("6 entries"),
        "B: sync after the restart: {}",
        r.stdout
    );
    let b_path = up
        .git(&[
            "log",
            "main",
            "--diff-filter=A",
            "--format=",
            "--name-only",
            "--",
            "ci/",
        ])
        .lines()
        .find(|l| l.contains("protoc"))
        .unwrap_or_else(|| panic!("B's entry is not in the upstream"))
        .to_string();
    assert_eq!(
        commits_adding(&up, &b_path),
        1,
        "B's entry {b_path} added once"
    );
    assert_eq!(
        up.git(&["log", "main", "-1", "--format=%an", "--", &b_path]),
        "dev-b",
        "git author of B's entry"
    );

    // A catches up: B's entry arrives, and A's own entry shows once (the synced copy has
    // replaced the pending one).
    let r = a.run(&["sync"]).ok("A: final sync");
    assert!(
        r.stdout.contains("6 entries"),
        "A: final sync: {}",
        r.stdout
    );
    let ambient = a.hook("ambient", ambient_input(&a));
    let ctx = context(&ambient);
    for (id, title) in [
        (a_path.as_str(), A_TITLE),
        (DAVE_PATH, DAVE_TITLE),
        (b_path.as_str(), B_TITLE),
    ] {
        assert_eq!(
            ctx.matches(&format!("{PROJECT}:{id}")).count(),
            1,
            "A: ambient must list {id} once:\n{ctx}"
        );
        assert!(ctx.contains(title), "A: ambient lacks {title:?}:\n{ctx}");
    }

    // Nothing was lost or duplicated along the way.
    for path in [&a_path, &b_path] {
        assert_eq!(commits_adding(&up, path), 1, "{path} in the upstream");
    }
    assert_eq!(
        commits_adding(&up, DAVE_PATH),
        1,
        "{DAVE_PATH} in the upstream"
    );
    let files = git_as(&up.work, "Reader", &["ls-files"]);
    assert!(
        files.contains(&a_path),
        "the pull request's clone lacks {a_path}: {files}"
    );
    let tree = up.git(&["ls-tree", "-r", "--name-only", "main"]);
    assert_eq!(
        tree.lines().filter(|l| l.ends_with(".md")).count(),
        7,
        "upstream tree (README plus six entries):\n{tree}"
    );
}
