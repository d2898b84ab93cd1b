//! Edits and supersedes end to end: `helix edit` (flags and `$EDITOR`) and MCP `edit`,
//! pushed by `helix sync` to the real server; two edits from the same version (the second
//! refused and kept with both versions); superseded and retired entries out of hooks,
//! search and MCP, still readable, listed by `--all`.

use serde_json::{Value, json};

use super::harness::{Dev, Server, Upstream, context, wait_for};

const PROJECT: &str = "kb";

const OOM_ID: &str = "build/linker-oom.md";
const OOM: &str = "---\ntitle: Release linker killed out of memory\nsources: [Cargo.toml]\n---\n\n\
The release build's linker is killed (signal 9) out of memory: set codegen-units = 4.\n";
const GOLD_ID: &str = "build/gold-linker.md";
const GOLD: &str = "---\ntitle: Release linker killed, use gold\nsources: [Cargo.toml]\n---\n\n\
When the release linker is killed out of memory, switch to the gold linker.\n";
/// An id the URL parser would cut (`#`, `?`) or misread (`%`) unless escaped.
const ODD_ID: &str = "notes/c# 50% off?.md";
const MIGRATE_ID: &str = "db/migrations.md";
const MIGRATE: &str = "---\ntitle: Run migrations before deploying\nsources: [db/migrate.rs]\n---\n\n\
Deploys fail on a missing column when migrations did not run first.\n";

fn ambient(dev: &Dev, file: &str) -> String {
    context(&dev.hook(
        "ambient",
        json!({
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": dev.root.join(file)},
            "tool_use_id": "toolu_01",
        }),
    ))
}

fn search_ids(dev: &Dev, args: &[&str]) -> Vec<String> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let v = dev.run(&all).ok("helix search").json();
    v["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["id"].as_str().unwrap_or("").to_string())
        .collect()
}

fn mcp_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The file `path` at the tip of the upstream's `main`.
fn upstream_file(up: &Upstream, path: &str) -> String {
    up.git(&["show", &format!("main:{path}")])
}

fn rejected_dir(dev: &Dev) -> std::path::PathBuf {
    dev.pending_dir(PROJECT).join("rejected")
}

#[test]
fn edits_conflicts_supersede_and_retire_across_cli_sync_mcp_and_hooks() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let up = Upstream::new(tmp.path());
    let seeded = up.commit_as(
        "Alice",
        &[
            (OOM_ID, OOM),
            (GOLD_ID, GOLD),
            (MIGRATE_ID, MIGRATE),
            (
                ODD_ID,
                "# Odd name\n\nA note whose file name needs escaping.\n",
            ),
        ],
        "seed",
    );
    let config = Server::configure(
        tmp.path(),
        &format!(
            "anonymous_loopback = false\n\n[[projects]]\nname = {PROJECT:?}\n\
             upstream = {:?}\nbranch = \"main\"\npoll_interval_secs = 3600\n",
            up.bare.to_str().expect("utf-8 path")
        ),
    );
    let token_a = Server::token_add(&config, PROJECT, "alice", "read,write");
    let token_b = Server::token_add(&config, PROJECT, "bob", "read,write");
    let server = Server::start(&config, &tmp.path().join("data"), tmp.path());
    server.wait_serving(PROJECT, &token_a, &seeded);
    let a = Dev::new("a", &server.url, &[PROJECT], &token_a);
    let b = Dev::new("b", &server.url, &[PROJECT], &token_b);
    for dev in [&a, &b] {
        dev.write("Cargo.toml", "[package]\nname = \"app\"\n");
        dev.write("db/migrate.rs", "fn main() {}\n");
        dev.run(&["sync"]).ok("first sync");
    }
    let ctx = ambient(&a, "Cargo.toml");
    assert!(ctx.contains(OOM_ID) && ctx.contains(GOLD_ID), "{ctx}");

    // Alice edits with flags: pending, visible at once, pushed by sync.
    a.run(&[
        "edit",
        OOM_ID,
        "--body",
        "The release linker is killed out of memory: set codegen-units = 4 and use mold.",
    ])
    .ok("helix edit");
    assert_eq!(search_ids(&a, &["mold", "codegen"])[0], OOM_ID);
    a.run(&["sync"]).ok("sync pushes the edit");
    let after_alice = upstream_file(&up, OOM_ID);
    assert!(after_alice.contains("and use mold"), "{after_alice}");
    assert!(
        after_alice.contains("title: \"Release linker killed out of memory\"")
            || after_alice.contains("title: Release linker killed out of memory"),
        "{after_alice}"
    );

    // Bob edits the version he synced before Alice's edit, in his editor: refused at sync,
    // kept with both versions, nothing overwritten.
    let editor = "sed -i s/codegen-units/lto/";
    let r = b
        .cmd(&["edit", OOM_ID])
        .env("VISUAL", editor)
        .output()
        .expect("spawn helix edit");
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let r = b.run(&["sync"]);
    assert!(r.stderr.contains("edit_conflict"), "{}", r.stderr);
    assert_eq!(
        upstream_file(&up, OOM_ID),
        after_alice,
        "Bob's edit overwrote Alice's"
    );
    let rejected = rejected_dir(&b);
    let files: Vec<String> = std::fs::read_dir(&rejected)
        .expect("rejected dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let key = files
        .iter()
        .find_map(|f| f.strip_suffix(".reason"))
        .expect("a reason file")
        .to_string();
    let reason = std::fs::read_to_string(rejected.join(format!("{key}.reason"))).expect("reason");
    let old_blob = up.git(&["rev-parse", &format!("{seeded}:{OOM_ID}")]);
    let new_blob = up.git(&["rev-parse", &format!("main:{OOM_ID}")]);
    assert!(
        reason.contains(old_blob.trim()) && reason.contains(new_blob.trim()),
        "{reason}"
    );
    let mine = std::fs::read_to_string(rejected.join(format!("{key}.md"))).expect("bob's text");
    assert!(mine.contains("set lto = 4"), "{mine}");
    let theirs = std::fs::read_to_string(rejected.join(format!("{key}.current.md")))
        .expect("the server's text");
    assert_eq!(theirs.trim_end(), after_alice.trim_end());

    // Bob, now synced, supersedes the gold advice over MCP.
    b.run(&["sync"]).ok("bob syncs alice's edit");
    let mut mcp = b.mcp();
    let res = mcp.call("edit", json!({"id": OOM_ID, "supersedes": [GOLD_ID]}));
    assert_ne!(res["isError"], true, "{res}");
    assert!(mcp_text(&res).contains(OOM_ID), "{res}");
    // At once, before any sync: the pending edit hides what it supersedes.
    let ctx = ambient(&b, "Cargo.toml");
    assert!(ctx.contains(OOM_ID) && !ctx.contains(GOLD_ID), "{ctx}");
    let hits = search_ids(&b, &["gold", "linker", "killed"]);
    assert!(!hits.contains(&GOLD_ID.to_string()), "{hits:?}");
    b.run(&["sync"]).ok("sync pushes the MCP edit");
    wait_for("the supersedes to reach the upstream", || {
        upstream_file(&up, OOM_ID).contains(GOLD_ID).then_some(())
    });
    b.run(&["sync"]).ok("sync pulls the compiled artifact");
    let ctx = ambient(&b, "Cargo.toml");
    assert!(ctx.contains(OOM_ID) && !ctx.contains(GOLD_ID), "{ctx}");
    let hits = search_ids(&b, &["gold", "linker", "killed"]);
    assert!(!hits.contains(&GOLD_ID.to_string()), "{hits:?}");
    let all = b
        .run(&["search", "--all", "gold", "linker", "killed"])
        .ok("search --all");
    assert!(
        all.stdout.contains(GOLD_ID) && all.stdout.contains(&format!("[superseded by {OOM_ID}]")),
        "{}",
        all.stdout
    );
    let read = b.run(&["read", GOLD_ID]).ok("read a superseded entry");
    assert!(
        read.stdout.contains("switch to the gold linker")
            && read.stdout.contains(&format!("superseded by {OOM_ID}")),
        "{}",
        read.stdout
    );
    let found = mcp_text(&mcp.call("search", json!({"query": "gold linker killed"})));
    assert!(!found.contains(GOLD_ID), "{found}");
    let found = mcp_text(&mcp.call(
        "search",
        json!({"query": "gold linker killed", "all": true}),
    ));
    assert!(
        found.contains(&format!("{GOLD_ID} — ")) && found.contains("superseded by"),
        "{found}"
    );
    let read = mcp_text(&mcp.call("read", json!({"id": GOLD_ID})));
    assert!(read.contains("switch to the gold linker"), "{read}");
    // Editing the superseded entry is refused with what to edit instead.
    let res = mcp.call("edit", json!({"id": GOLD_ID, "body": "Gold is fine."}));
    assert_eq!(res["isError"], true, "{res}");
    assert!(
        mcp_text(&res).contains(&format!("edit {OOM_ID} instead")),
        "{res}"
    );
    drop(mcp);

    // Alice retires the migrations note: out of hooks and search, still readable.
    a.run(&["sync"]).ok("alice syncs");
    assert!(ambient(&a, "db/migrate.rs").contains(MIGRATE_ID));
    a.run(&["edit", MIGRATE_ID, "--status", "retired"])
        .ok("retire");
    // At once, through the pending overlay.
    assert!(!ambient(&a, "db/migrate.rs").contains(MIGRATE_ID));
    a.run(&["sync"]).ok("push the retirement");
    a.run(&["sync"]).ok("pull it compiled");
    assert!(!ambient(&a, "db/migrate.rs").contains(MIGRATE_ID));
    assert!(search_ids(&a, &["migrations", "deploying"]).is_empty());
    assert_eq!(
        search_ids(&a, &["--all", "migrations", "deploying"]),
        [MIGRATE_ID]
    );
    let read = a.run(&["read", MIGRATE_ID]).ok("read a retired entry");
    assert!(read.stdout.contains("retired"), "{}", read.stdout);
    let brief = a.run(&["brief", "--json"]).ok("brief").json();
    assert_eq!(
        brief["entries"], 2,
        "retired and superseded entries are not counted: {brief}"
    );

    // An id with `#`, `%` and `?` reaches the server whole.
    a.run(&["edit", ODD_ID, "--body", "Escaped on the way."])
        .ok("edit an odd name");
    a.run(&["sync"]).ok("push it");
    assert!(
        upstream_file(&up, ODD_ID).contains("Escaped on the way."),
        "{}",
        upstream_file(&up, ODD_ID)
    );
}
