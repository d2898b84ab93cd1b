//! `helix mcp` driven over stdio by rmcp's own client: the real binary in a temp project with
//! isolated XDG dirs; tools listed with their schemas, every tool called, errors keep the session.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tempfile::TempDir;

use super::common::helix;

/// A code repository with `.helix.toml`, plus its own XDG config/cache/data homes.
struct Project {
    _tmp: TempDir,
    root: PathBuf,
    home: PathBuf,
}

const ENTRIES: &[(&str, &str)] = &[
    (
        "build/linker-openssl.md",
        "---\ntitle: Linker cannot find -lssl on fresh machines\ntags: [linker, openssl]\n\
         sources: [build.rs]\ndate: 2025-03-04\nauthor: Ada\n---\n\n\
         `cargo build` fails with `cannot find -lssl` when libssl-dev is missing.\n\
         Install libssl-dev (Debian) or openssl-devel (Fedora); the vendored feature is off on purpose.\n",
    ),
    (
        "db/pool-exhaustion.md",
        "---\ntitle: Connection pool exhausted in integration tests\ntags: [postgres]\n\
         sources: [src/db/pool.rs]\ndate: 2025-06-10\n---\n\n\
         Integration tests hang when max_connections is below the test thread count.\n\
         Set DATABASE_MAX_CONNECTIONS=16 in CI.\n",
    ),
    (
        "db/migration-order.md",
        "---\ntitle: Migrations run in file name order\ndate: 2024-11-02\n---\n\n\
         Name migrations with a UTC timestamp prefix; two branches adding 0042 collide.\n",
    ),
    (
        "ci/arm-runner-timeouts.md",
        "# CI times out on the arm runner\n\nThe arm runner is four times slower; \
         raise the job timeout, do not retry.\n",
    ),
];

impl Project {
    fn empty() -> Project {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("repo");
        let home = tmp.path().join("home");
        for d in [&root, &home] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        Project {
            _tmp: tmp,
            root,
            home,
        }
    }

    /// A server-mode project `kb` whose synced cache holds [`ENTRIES`]. The server URL
    /// points at a closed loopback port: stores stay pending and the overlay serves them.
    fn server_mode() -> Project {
        let p = Project::empty();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        };
        p.write(
            ".helix.toml",
            &format!("server = \"http://127.0.0.1:{port}\"\nprojects = [\"kb\"]\n"),
        );
        let cache = p
            .home
            .join(format!(".cache/helix/127.0.0.1_{port}/kb/index.hix"));
        p.compile_into(&cache);
        p
    }

    /// A serverless project `kb` reading `knowledge/`, compiled into the local cache.
    fn local_mode() -> Project {
        let p = Project::empty();
        p.write(".helix.toml", "local = \"knowledge\"\nproject = \"kb\"\n");
        p.compile_into(&super::common::first_cache_dir(p.command()).join("index.hix"));
        p
    }

    /// The pending entry files of project `kb`.
    fn pending_files(&self) -> Vec<PathBuf> {
        std::fs::read_dir(super::common::pending_dir_of(self.command(), "kb"))
            .expect("pending dir")
            .flatten()
            .map(|e| e.path())
            .filter(|f| f.extension().is_some_and(|x| x == "md"))
            .collect()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    /// Writes [`ENTRIES`] into `knowledge/` and compiles them with `helix build` (the same
    /// parser and builder as the server) straight into the cache path of the contract.
    fn compile_into(&self, artifact: &Path) {
        for (path, text) in ENTRIES {
            self.write(&format!("knowledge/{path}"), text);
        }
        let out = self
            .command()
            .args(["build", "knowledge", "--no-git", "--project", "kb", "-o"])
            .arg(artifact)
            .output()
            .expect("run helix build");
        assert!(
            out.status.success(),
            "helix build failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn command(&self) -> std::process::Command {
        super::common::ensure_net();
        let mut c = std::process::Command::new(helix());
        self.isolate(&mut c);
        c
    }

    fn isolate(&self, c: &mut std::process::Command) {
        helix_test_support::isolate(c.current_dir(&self.root), &self.home)
            .env_remove("CLAUDE_PROJECT_DIR");
    }

    /// Starts `helix mcp` in the project and completes the MCP handshake.
    async fn connect(&self) -> RunningService<RoleClient, ()> {
        self.connect_with(|_| {}).await
    }

    /// Like [`Project::connect`], with the command adjusted by `tweak` first.
    async fn connect_with(
        &self,
        tweak: impl FnOnce(&mut std::process::Command),
    ) -> RunningService<RoleClient, ()> {
        super::common::ensure_net();
        let mut std_cmd = std::process::Command::new(helix());
        self.isolate(&mut std_cmd);
        tweak(&mut std_cmd);
        let cmd = tokio::process::Command::from(std_cmd).configure(|c| {
            c.arg("mcp");
        });
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helix mcp");
        ().serve(transport).await.expect("MCP initialize")
    }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, got {other}"),
    }
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    a: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(a)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

/// All text content blocks of a result, joined.
fn text(r: &CallToolResult) -> String {
    let blocks = serde_json::to_value(&r.content).expect("serialize content");
    blocks
        .as_array()
        .expect("content is an array")
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of a successful result. There is no structured content: Claude Code would hand
/// the model that JSON instead of the text.
fn ok(r: &CallToolResult) -> String {
    assert_ne!(r.is_error, Some(true), "tool failed: {}", text(r));
    assert_eq!(
        r.structured_content, None,
        "no structuredContent: the model would get it instead of the text"
    );
    text(r)
}

/// The `project:id` of the first hit of a search result text (`1. kb:x/y.md — …`).
fn first_hit(t: &str) -> &str {
    t.lines()
        .find_map(|l| l.strip_prefix("1. "))
        .and_then(|l| l.split(" — ").next())
        .unwrap_or_else(|| panic!("no first hit in {t}"))
}

fn err(r: &CallToolResult) -> String {
    assert_eq!(
        r.is_error,
        Some(true),
        "expected a tool error, got: {}",
        text(r)
    );
    text(r)
}

fn required(schema: &Map<String, Value>) -> Vec<String> {
    let mut v: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn properties(schema: &Map<String, Value>) -> Vec<String> {
    let mut v: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test]
async fn mcp_initialize_names_helix_and_lists_tools_with_schemas() {
    let p = Project::server_mode();
    let client = p.connect().await;

    let info = client.peer_info().expect("server info after initialize");
    let server = info
        .server_info
        .as_ref()
        .expect("server implementation info");
    assert_eq!(server.name, "helix");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.as_deref().expect("instructions");
    for word in [
        "search",
        "store",
        "error",
        "root cause",
        "decision",
        "fragile",
    ] {
        assert!(
            instructions.contains(word),
            "instructions lack `{word}`: {instructions}"
        );
    }

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["brief", "edit", "read", "search", "store", "topics"]
    );
    let expect: &[(&str, &[&str], &[&str])] = &[
        (
            "search",
            &["query"],
            &["all", "limit", "project", "query", "topic"],
        ),
        (
            "edit",
            &["id"],
            &[
                "base",
                "body",
                "content",
                "id",
                "sources",
                "status",
                "supersedes",
                "tags",
                "title",
            ],
        ),
        (
            "store",
            &["body", "title", "topic"],
            &[
                "body", "force", "project", "sources", "tags", "title", "topic",
            ],
        ),
        ("read", &["id"], &["file", "id"]),
        ("brief", &[], &["topic"]),
        ("topics", &[], &[]),
    ];
    for (name, req, props) in expect {
        let tool = tools.iter().find(|t| t.name == *name).expect("tool listed");
        let schema = tool.input_schema.as_ref();
        assert_eq!(
            schema.get("type"),
            Some(&json!("object")),
            "{name} schema: {schema:?}"
        );
        assert_eq!(required(schema), *req, "{name} required fields");
        assert_eq!(properties(schema), *props, "{name} properties");
        let desc = tool.description.as_deref().unwrap_or("");
        assert!(
            desc.len() > 80,
            "{name} needs a precise description, got {desc:?}"
        );
    }
    let search = tools.iter().find(|t| t.name == "search").expect("search");
    let query = &search.input_schema["properties"]["query"];
    assert_eq!(query["type"], json!("string"));
    assert!(
        query["description"].as_str().is_some_and(|d| !d.is_empty()),
        "query described: {query}"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_search_read_brief_topics_answer_from_the_cache() {
    let p = Project::server_mode();
    let client = p.connect().await;

    let t = ok(&call(
        &client,
        "search",
        json!({"query": "cannot find -lssl linker"}),
    )
    .await);
    assert!(
        t.starts_with("1 hit for \"cannot find -lssl linker\":\n"),
        "{t}"
    );
    assert!(
        t.contains("1. kb:build/linker-openssl.md — Linker cannot find -lssl on fresh machines [build, 2025-03-04]"),
        "{t}"
    );
    // No score, no repeated project or path: the line says it once.
    assert!(
        !t.contains("score") && t.matches("linker-openssl").count() == 1,
        "{t}"
    );

    // Topic filter and limit.
    let t = ok(&call(
        &client,
        "search",
        json!({"query": "tests migrations connections", "topic": "db", "limit": 1}),
    )
    .await);
    assert!(t.starts_with("1 hit for"), "{t}");
    assert!(
        first_hit(&t).starts_with("kb:db/") && t.contains("[db, "),
        "{t}"
    );
    let t = ok(&call(&client, "search", json!({"query": "zyzzyva quokka"})).await);
    assert!(t.starts_with("No entries match"), "{t}");

    let t = ok(&call(&client, "read", json!({"id": "kb:db/pool-exhaustion.md"})).await);
    assert!(
        t.starts_with("# Connection pool exhausted in integration tests"),
        "{t}"
    );
    assert!(t.contains("sources: src/db/pool.rs"), "{t}");
    assert!(t.contains("DATABASE_MAX_CONNECTIONS=16"), "{t}");
    assert!(t.contains("\ntags: postgres\n"), "{t}");
    // A bare id works too.
    let t = ok(&call(&client, "read", json!({"id": "build/linker-openssl.md"})).await);
    assert!(t.contains(" · author: Ada\n"), "{t}");

    let t = ok(&call(&client, "topics", json!({})).await);
    assert_eq!(t, "kb — 4 entries, 3 topics: build (1), ci (1), db (2)");

    let t = ok(&call(&client, "brief", json!({})).await);
    assert!(t.starts_with("helix: 4 entries"), "{t}");
    assert!(t.contains("db (2)"), "{t}");
    assert!(
        t.contains("Use `brief` with a topic"),
        "the advice reaches the model: {t}"
    );
    let t = ok(&call(&client, "brief", json!({"topic": "db"})).await);
    assert!(t.starts_with("Topic `db`: 2 entries"), "{t}");
    // Newest first.
    let pool = t.find("kb:db/pool-exhaustion.md").expect("pool entry");
    let migration = t.find("kb:db/migration-order.md").expect("migration entry");
    assert!(pool < migration, "{t}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_store_then_search_finds_the_pending_entry() {
    let p = Project::server_mode();
    let client = p.connect().await;

    let t = ok(&call(
        &client,
        "store",
        json!({
            "topic": "build",
            "title": "Protobuf codegen needs protoc 25",
            "body": "build.rs fails with `unknown field edition` when protoc is older than 25. Install protoc 25 or newer.",
            "tags": ["protobuf"],
            "sources": ["proto/build.rs"],
        }),
    )
    .await);
    assert!(
        t.starts_with("Stored `kb:build/protobuf-codegen-needs-protoc-25.md` as a pending entry; search and hooks see it now."),
        "{t}"
    );
    let pending = p.pending_files();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let file = std::fs::read_to_string(&pending[0]).expect("pending file written");
    assert!(file.contains("unknown field edition"), "{file}");

    let t = ok(&call(
        &client,
        "search",
        json!({"query": "protoc unknown field edition"}),
    )
    .await);
    assert_eq!(
        first_hit(&t),
        "kb:build/protobuf-codegen-needs-protoc-25.md",
        "{t}"
    );
    let t = ok(&call(
        &client,
        "read",
        json!({"id": "kb:build/protobuf-codegen-needs-protoc-25.md"}),
    )
    .await);
    assert!(t.contains("Install protoc 25 or newer."), "{t}");
    assert!(t.contains("\nsources: proto/build.rs\n"), "{t}");
    // Cache and overlay counted together.
    let t = ok(&call(&client, "topics", json!({})).await);
    assert!(t.contains("build (2)"), "{t}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_bad_calls_are_errors_and_the_session_stays_usable() {
    let p = Project::server_mode();
    let client = p.connect().await;

    let e = client
        .call_tool(CallToolRequestParams::new("forget").with_arguments(args(json!({}))))
        .await
        .expect_err("unknown tool is a protocol error");
    assert!(e.to_string().contains("unknown tool `forget`"), "{e}");

    let m = err(&call(&client, "search", json!({})).await);
    assert!(m.contains("query"), "{m}");
    let m = err(&call(&client, "search", json!({"query": 42})).await);
    assert!(m.contains("invalid type"), "{m}");
    let m = err(&call(&client, "search", json!({"query": "x", "colour": "red"})).await);
    assert!(m.contains("colour"), "{m}");
    let m = err(&call(&client, "search", json!({"query": "   "})).await);
    assert!(m.contains("`query` is empty"), "{m}");
    let m = err(&call(
        &client,
        "search",
        json!({"query": "linker", "project": "nope"}),
    )
    .await);
    assert!(m.contains("unknown project `nope`"), "{m}");

    let m = err(&call(&client, "read", json!({"id": "kb:nope/missing.md"})).await);
    assert!(m.contains("no entry `kb:nope/missing.md`"), "{m}");
    let m = err(&call(&client, "brief", json!({"topic": "astrology"})).await);
    assert!(
        m.contains("no topic `astrology`") && m.contains("build, ci, db"),
        "{m}"
    );

    let big = "x".repeat(64 * 1024 + 1);
    let m = err(&call(
        &client,
        "store",
        json!({"topic": "build", "title": "Huge", "body": big}),
    )
    .await);
    assert!(m.contains("64 KiB"), "{m}");
    let m = err(&call(
        &client,
        "store",
        json!({"topic": "../etc", "title": "Escape", "body": "b"}),
    )
    .await);
    assert!(m.contains("topic"), "{m}");
    let m = err(&call(&client, "store", json!({"topic": "build", "title": "t"})).await);
    assert!(m.contains("body"), "{m}");
    // A header alone is documentation; key material makes it a key.
    let key = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
        "c3ludGhldGljIHRlc3Qga2V5IG1hdGVyaWFsLCBub3QgYSBrZXk6IGhlbGl4IGZpeHR1cmVzISE="
    );
    let m = err(&call(
        &client,
        "store",
        json!({"topic": "ops", "title": "Deploy key", "body": key}),
    )
    .await);
    assert!(
        m.to_lowercase().contains("private key") || m.contains("secret"),
        "{m}"
    );
    // Nothing was written by the rejected stores.
    assert!(
        !p.home.join(".local/share/helix/pending/kb").exists()
            || std::fs::read_dir(p.home.join(".local/share/helix/pending/kb"))
                .expect("dir")
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().ends_with(".md"))
    );

    // Still serving.
    let t = ok(&call(&client, "search", json!({"query": "linker"})).await);
    assert!(t.contains("kb:build/linker-openssl.md"), "{t}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_store_refuses_a_gitlab_token_and_writes_nothing() {
    // Assembled at run time: no literal secret in this file.
    let token = ["glpat-", "Qm4xZ7pL2vR9tKs8Wd3N"].concat();
    let body = format!("The mirror job needs a token.\n\n`GITLAB_TOKEN={token}`\n");
    for p in [Project::server_mode(), Project::local_mode()] {
        let client = p.connect().await;
        let m = err(&call(
            &client,
            "store",
            json!({"topic": "ci", "title": "Mirror token", "body": body}),
        )
        .await);
        assert!(
            m.contains("body line 3 contains what looks like a GitLab personal access token")
                && m.contains("reference where the secret lives"),
            "{m}"
        );
        assert!(!m.contains(&token[6..]), "{m}");
        // Nothing written: no pending entry, no file in the knowledge directory.
        let pending = p.home.join(".local/share/helix/pending/kb");
        assert!(
            std::fs::read_dir(&pending)
                .map(|d| d.flatten().count())
                .unwrap_or(0)
                == 0,
            "{pending:?}"
        );
        assert!(!p.root.join("knowledge/ci/mirror-token.md").exists());
        let t = ok(&call(&client, "search", json!({"query": "mirror token"})).await);
        assert!(!t.contains("mirror-token"), "{t}");
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn mcp_without_configuration_or_cache_says_what_to_do() {
    // No .helix.toml anywhere above the working directory.
    let p = Project::empty();
    let client = p.connect().await;
    let m = err(&call(&client, "search", json!({"query": "linker"})).await);
    assert!(m.contains("no .helix.toml found"), "{m}");
    let m = err(&call(
        &client,
        "store",
        json!({"topic": "build", "title": "t", "body": "b"}),
    )
    .await);
    assert!(m.contains("no .helix.toml found"), "{m}");
    client.cancel().await.expect("close");

    // Configured, never synced.
    p.write(
        ".helix.toml",
        "server = \"http://127.0.0.1:9\"\nprojects = [\"kb\"]\n",
    );
    let client = p.connect().await;
    let m = err(&call(&client, "topics", json!({})).await);
    assert!(m.contains("run `helix sync`"), "{m}");
    let m = err(&call(&client, "read", json!({"id": "build/x.md"})).await);
    assert!(m.contains("run `helix sync`"), "{m}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_store_in_local_mode_writes_the_knowledge_directory() {
    let p = Project::local_mode();
    let client = p.connect().await;
    let t = ok(&call(
        &client,
        "store",
        json!({"topic": "ci", "title": "Cache key must include the toolchain", "body": "Stale caches broke builds after a rustc bump; key the cache on rust-toolchain.toml."}),
    )
    .await);
    // The file as the repository names it, to commit.
    assert_eq!(
        t,
        "Stored `kb:ci/cache-key-must-include-the-toolchain.md` in knowledge/ and recompiled; \
         search and hooks see it now. Commit the file to share it."
    );
    let file = p
        .root
        .join("knowledge/ci/cache-key-must-include-the-toolchain.md");
    let written = std::fs::read_to_string(&file).expect("entry file in knowledge dir");
    assert!(written.contains("rust-toolchain.toml"), "{written}");
    let t = ok(&call(
        &client,
        "search",
        json!({"query": "stale cache rustc toolchain"}),
    )
    .await);
    assert_eq!(
        first_hit(&t),
        "kb:ci/cache-key-must-include-the-toolchain.md"
    );
    // Same title again: refused, nothing overwritten.
    let m = err(&call(
        &client,
        "store",
        json!({"topic": "ci", "title": "Cache key must include the toolchain", "body": "other"}),
    )
    .await);
    assert!(m.contains("already exists"), "{m}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("still there"),
        written
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_started_outside_the_repository_uses_claude_project_dir() {
    let p = Project::server_mode();
    let elsewhere = p.home.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let client = p
        .connect_with(|c| {
            c.current_dir(&elsewhere).env("CLAUDE_PROJECT_DIR", &p.root);
        })
        .await;
    let t = ok(&call(&client, "search", json!({"query": "pool exhausted"})).await);
    assert!(t.contains("kb:db/pool-exhaustion.md"), "{t}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_store_reaches_the_team_server_in_the_background() {
    use crate::common::{Client, KNOWLEDGE, ProjectSpec, Server, Upstream};
    let c = Client::new();
    let up = Upstream::new(c.tmp.path(), KNOWLEDGE);
    let server = Server::start(&[ProjectSpec {
        name: "kb",
        upstream: Some(&up.bare),
    }]);
    c.follow(&server.url, &["kb"]);
    c.run(&["sync"]).ok();
    let pending_dir = c.pending_dir("kb");
    let p = Project {
        _tmp: c.tmp,
        root: c.root,
        home: c.home,
    };
    let client = p.connect().await;

    let t = ok(&call(
        &client,
        "store",
        json!({
            "topic": "ops",
            "title": "Restart the worker after rotating the queue password",
            "body": "The worker caches its broker connection; after a password rotation it retries forever. Restart it.",
        }),
    )
    .await);
    assert!(
        t.contains("is pushing it to http://") && t.ends_with("in the background."),
        "{t}"
    );
    let path = "ops/restart-the-worker-after-rotating-the-queue-password.md";

    // The detached `helix sync` pushes it: it lands in the upstream git repository and the
    // pending file is removed. Poll (bounded) rather than assume a duration.
    let mut landed = false;
    for _ in 0..300 {
        let pending_left = std::fs::read_dir(&pending_dir)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".md"))
            })
            .unwrap_or(false);
        if !pending_left && up.files().iter().any(|f| f == path) {
            landed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(landed, "stored entry never reached the server's upstream");

    // Still found by search and read.
    let t = ok(&call(
        &client,
        "search",
        json!({"query": "rotating queue password worker"}),
    )
    .await);
    assert_eq!(first_hit(&t), format!("kb:{path}"), "{t}");
    let t = ok(&call(&client, "read", json!({"id": format!("kb:{path}")})).await);
    assert!(t.contains("retries forever"), "{t}");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn mcp_store_names_a_near_duplicate_and_stores_it_when_forced() {
    let p = Project::server_mode();
    let client = p.connect().await;
    let again = json!({
        "topic": "testing",
        "title": "Integration tests exhaust the connection pool",
        "body": "The integration tests hang: max_connections is below the test thread count. \
                 Set DATABASE_MAX_CONNECTIONS=16 in CI.",
    });
    let m = err(&call(&client, "store", again.clone()).await);
    assert!(
        m.contains(
            "Not stored: `kb:db/pool-exhaustion.md` (\"Connection pool exhausted in integration tests\") already says nearly the same"
        ),
        "{m}"
    );
    assert!(m.contains("`force: true`"), "{m}");
    assert!(
        !p.home.join(".local/share/helix/pending/kb").exists()
            || std::fs::read_dir(p.home.join(".local/share/helix/pending/kb"))
                .unwrap()
                .flatten()
                .all(|e| e.path().extension().is_none_or(|x| x != "md")),
        "nothing pending"
    );
    let mut forced = again;
    forced["force"] = json!(true);
    let t = ok(&call(&client, "store", forced).await);
    assert!(
        t.starts_with("Stored `kb:testing/integration-tests-exhaust-the-connection-pool.md`"),
        "{t}"
    );
    // The forced pending file keeps the flag, so `helix sync` sends it forced.
    let pending = p.pending_files();
    let file = std::fs::read_to_string(&pending[0]).expect("pending file");
    assert!(file.contains("\n\"helix_force\": true\n"), "{file}");
    client.cancel().await.expect("close");
}
