//! `helix edit` without a server: pending edits with their base, the overlay hiding what a
//! pending edit supersedes at once, refusals before anything is queued, the editor path
//! (nothing typed is lost), local mode, and `helix check` on missing or cyclic supersedes.

use super::common::*;
use helix_index_format::{BuildInfo, Entry, build};

const SERVER: &str = "http://127.0.0.1:9";
const OLD_BLOB: &str = "1111111111111111111111111111111111111111";
const NEW_BLOB: &str = "2222222222222222222222222222222222222222";

/// A client following `kb` on an unreachable server, with a synced artifact (as a server
/// compiles it: with blob ids) of two entries in its cache.
fn client_with_cache() -> Client {
    let c = Client::new();
    c.follow(SERVER, &["kb"]);
    let entry = |id: &str, title: &str, body: &str, blob: &str| Entry {
        id: id.into(),
        topic: "build".into(),
        title: title.into(),
        body: body.into(),
        sources: vec!["Cargo.toml".into()],
        author: Some("Ana".into()),
        blob: blob.into(),
        ..Entry::default()
    };
    let bytes = build(
        &[
            entry(
                "build/gold.md",
                "Use the gold linker",
                "When the release linker runs out of memory, switch to gold.\n",
                OLD_BLOB,
            ),
            entry(
                "build/mold.md",
                "Use mold",
                "When the release linker runs out of memory, use mold and codegen-units.\n",
                NEW_BLOB,
            ),
        ],
        &BuildInfo {
            project: "kb".into(),
            commit: "abc123".into(),
            generation: 3,
            build_time: 1_780_000_000,
        },
    )
    .expect("builds");
    let dir = c.cache_dir(SERVER, "kb");
    std::fs::create_dir_all(&dir).expect("cache dir");
    std::fs::write(dir.join("index.hix"), bytes).expect("write artifact");
    c
}

fn ids(hits: &[serde_json::Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["id"].as_str().unwrap_or(""))
        .collect()
}

/// `(file name, text)` of every file in the pending directory's queue.
fn queued(c: &Client) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(c.pending_dir("kb"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read_to_string(e.path()).unwrap_or_default(),
                    )
                })
                .filter(|(n, _)| n.ends_with(".md") || n.ends_with(".edit.json"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn a_pending_edit_names_its_base_and_supersedes_at_once() {
    let c = client_with_cache();
    let mut before = ids(&c.search("release linker memory"))
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    before.sort();
    assert_eq!(before, ["build/gold.md", "build/mold.md"]);
    c.run(&["edit", "build/mold.md", "--supersedes", "build/gold.md"])
        .ok();
    let files = queued(&c);
    assert_eq!(files.len(), 2, "{files:?}");
    // `<key>.edit.json` sorts before `<key>.md`.
    let meta: serde_json::Value = serde_json::from_str(&files[0].1).expect("edit meta");
    assert_eq!(meta["id"], "build/mold.md");
    assert_eq!(meta["base"], NEW_BLOB);
    assert!(files[1].1.contains("supersedes:"), "{}", files[1].1);
    assert!(files[1].1.contains("author: \"Ana\""), "{}", files[1].1);

    // Superseded at once: out of search and of the source lookups the hooks use.
    assert_eq!(ids(&c.search("release linker memory")), ["build/mold.md"]);
    let all = c
        .run(&["search", "--all", "--json", "release", "linker", "memory"])
        .ok()
        .json();
    let gold = all["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["id"] == "build/gold.md")
        .expect("--all lists the superseded entry")
        .clone();
    assert_eq!(gold["hidden"], "superseded by build/mold.md");
    let read = c.run(&["read", "build/gold.md"]).ok();
    assert!(
        read.stdout.contains("switch to gold")
            && read.stdout.contains("superseded by build/mold.md"),
        "{}",
        read.stdout
    );
    let hook = c
        .cmd(&["hook", "ambient"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(
                serde_json::json!({
                    "session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Read",
                    "tool_input": {"file_path": c.root.join("Cargo.toml")}, "cwd": c.root,
                })
                .to_string()
                .as_bytes(),
            )?;
            child.wait_with_output()
        })
        .expect("hook runs");
    let out = String::from_utf8_lossy(&hook.stdout);
    assert!(
        out.contains("build/mold.md") && !out.contains("build/gold.md"),
        "{out}"
    );

    // Editing the superseded entry is refused, naming the one to edit.
    let r = c.run(&["edit", "build/gold.md", "--body", "Gold is fine."]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("superseded by build/mold.md; edit build/mold.md instead"),
        "{}",
        r.stderr
    );
    // A second edit of the queued one replaces it and keeps the version it started from.
    c.run(&["edit", "build/mold.md", "--title", "Use mold, not gold"])
        .ok();
    let files = queued(&c);
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[1].1.contains("Use mold, not gold") && files[1].1.contains("supersedes"));
    assert!(files[0].1.contains(NEW_BLOB));
    // A bad status is refused before anything is queued, naming it.
    let r = c.run(&["edit", "build/mold.md", "--status", "obsolete"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("\"obsolete\""), "{}", r.stderr);
    assert_eq!(queued(&c), files);
}

#[test]
fn the_editor_path_loses_nothing() {
    let c = client_with_cache();
    // Saved unchanged: nothing stored.
    let r: Run = c
        .cmd(&["edit", "build/gold.md"])
        .env("VISUAL", "true")
        .output()
        .expect("spawn")
        .into();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("unchanged"), "{}", r.stderr);
    assert!(queued(&c).is_empty());
    // The editor fails: nothing stored.
    let r: Run = c
        .cmd(&["edit", "build/gold.md"])
        .env("VISUAL", "false")
        .output()
        .expect("spawn")
        .into();
    assert_eq!(r.code, Some(2));
    assert!(queued(&c).is_empty());
    // Saved invalid: refused, and the text stays where the message says.
    let r: Run = c
        .cmd(&["edit", "build/gold.md"])
        .env("VISUAL", "sed -i 's/^title:/status: bogus\\ntitle:/'")
        .output()
        .expect("spawn")
        .into();
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("\"bogus\""), "{}", r.stderr);
    let kept = r
        .stderr
        .split("your text is in ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .expect("the message names the file");
    let text = std::fs::read_to_string(kept).expect("the text is kept");
    assert!(text.contains("status: bogus"), "{text}");
    assert!(queued(&c).is_empty());
    // Fixed, it goes in with --file.
    std::fs::write(kept, text.replace("status: bogus", "status: retired")).expect("fix");
    c.run(&["edit", "build/gold.md", "--file", kept]).ok();
    assert_eq!(ids(&c.search("release linker memory")), ["build/mold.md"]);
}

#[test]
fn local_mode_edits_the_file_and_check_diagnoses_supersedes() {
    let c = Client::new();
    let kb = c.root.join("kb");
    write_files(
        &kb,
        &[
            (
                "ops/a.md",
                "---\nsupersedes: ops/b.md\n---\n# A\n\nFirst.\n",
            ),
            ("ops/b.md", "# B\n\nSecond.\n"),
        ],
    );
    c.run(&["init", "--local", "kb"]).ok();
    c.run(&["sync"]).ok();
    assert!(c.search("second").is_empty(), "b is superseded by a");
    c.run(&["edit", "ops/a.md", "--body", "First, edited."])
        .ok();
    let text = std::fs::read_to_string(kb.join("ops/a.md")).expect("file");
    assert!(
        text.contains("First, edited.") && text.contains("supersedes"),
        "{text}"
    );
    assert_eq!(ids(&c.search("first edited")), ["ops/a.md"]);
    c.run(&["check", "kb"]).ok();

    write_files(
        &kb,
        &[
            (
                "ops/b.md",
                "---\nsupersedes: [ops/a.md]\n---\n# B\n\nSecond.\n",
            ),
            (
                "ops/c.md",
                "---\nsupersedes: ops/gone.md\n---\n# C\n\nThird.\n",
            ),
        ],
    );
    let r = c.run(&["check", "kb"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    for want in [
        "ops/a.md:1: supersedes forms a cycle between ops/a.md, ops/b.md",
        "ops/b.md:1: supersedes forms a cycle between ops/a.md, ops/b.md",
        "ops/c.md:1: supersedes \"ops/gone.md\", which is not an entry",
    ] {
        assert!(r.stdout.contains(want), "{want}\n{}", r.stdout);
    }
}
