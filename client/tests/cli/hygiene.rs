//! Knowledge hygiene: `check --stale` on a real code repository,
//! near-duplicates refused on every write path and listed by `check`, and the hook marks for
//! review-due entries and missing sources.

use super::common::{Client, ProjectSpec, Server, Upstream, git, http_request, write_files};
use super::hooks::Fixture;
use serde_json::json;

/// A code repository with a local knowledge directory `kb/` whose entries (dated 2020) name
/// sources that were then renamed, deleted, changed by 13 commits, left alone, or never
/// existed here.
fn stale_repo() -> Client {
    let c = Client::new();
    git(&c.root, &["init", "-q", "-b", "main"]);
    write_files(
        &c.root,
        &[
            ("src/old.rs", "fn old() {}\n"),
            ("src/gone.rs", "fn gone() {}\n"),
            ("src/busy.rs", "fn busy() {}\n"),
            ("src/fine.rs", "fn fine() {}\n"),
        ],
    );
    git(&c.root, &["add", "."]);
    git(&c.root, &["commit", "-q", "-m", "first version"]);
    git(&c.root, &["mv", "src/old.rs", "src/new.rs"]);
    git(&c.root, &["commit", "-q", "-m", "move old to new"]);
    git(&c.root, &["rm", "-q", "src/gone.rs"]);
    git(&c.root, &["commit", "-q", "-m", "drop gone"]);
    for i in 1..=12 {
        write_files(
            &c.root,
            &[("src/busy.rs", &format!("fn busy() {{ {i} }}\n"))],
        );
        git(
            &c.root,
            &["commit", "-q", "-am", &format!("busy change {i}")],
        );
    }
    let entry = |title: &str, source: &str| {
        format!(
            "---\ntitle: {title}\nsources: [{source}]\ndate: 2020-01-01\n---\n\nAbout {source}.\n"
        )
    };
    write_files(
        &c.root,
        &[
            ("kb/code/renamed.md", &entry("Old module", "src/old.rs")),
            ("kb/code/deleted.md", &entry("Gone module", "src/gone.rs")),
            ("kb/code/busy.md", &entry("Busy module", "src/busy.rs")),
            ("kb/code/fine.md", &entry("Fine module", "src/fine.rs")),
            (
                "kb/code/elsewhere.md",
                &entry("Other repo", "lib/not-here.rs"),
            ),
        ],
    );
    c.configure("local = \"kb\"\n");
    c.run(&["sync"]).ok();
    c
}

#[test]
fn check_stale_names_renamed_deleted_and_busy_sources() {
    let c = stale_repo();
    let r = c.run(&["check", "--stale"]);
    assert_eq!(r.code, Some(1), "findings exit 1: {r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with(
            "kb:code/renamed.md: source src/old.rs no longer exists; renamed to src/new.rs in "
        ) && l.ends_with("(move old to new)")),
        "{}",
        r.stdout
    );
    assert!(
        lines.iter().any(|l| l
            .starts_with("kb:code/deleted.md: source src/gone.rs no longer exists; deleted in ")
            && l.ends_with("(drop gone)")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "kb:code/busy.md: source src/busy.rs changed by 13 commits since the entry's date 2020-01-01 (more than 10):"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" busy change 12\n"), "{}", r.stdout);
    assert!(r.stdout.contains(" first version\n"), "{}", r.stdout);
    for quiet in ["fine.md", "elsewhere.md", "not-here"] {
        assert!(!r.stdout.contains(quiet), "{quiet}: {}", r.stdout);
    }
    assert!(
        r.stderr.contains("5 entries name 4 files") || r.stderr.contains("4 entries name 4 files"),
        "{}",
        r.stderr
    );

    let v = c.run(&["check", "--stale", "--json"]).json();
    let f = v["findings"].as_array().expect("findings");
    assert_eq!(f.len(), 3, "{v}");
    let renamed = f
        .iter()
        .find(|x| x["id"] == "code/renamed.md")
        .expect("renamed");
    assert_eq!(renamed["finding"], "missing");
    assert_eq!(renamed["renamed_to"], "src/new.rs");
    assert_eq!(renamed["gone_in"]["subject"], "move old to new");
    let busy = f.iter().find(|x| x["id"] == "code/busy.md").expect("busy");
    assert_eq!(busy["finding"], "changed");
    assert_eq!(busy["commits"].as_array().map(Vec::len), Some(13));
    assert_eq!(busy["commits"][0]["subject"], "busy change 12");

    // The bar: a flag, else `[check] stale_commits` of .helix.toml.
    let r = c.run(&["check", "--stale", "--max-commits", "13"]);
    assert!(!r.stdout.contains("busy.md"), "{}", r.stdout);
    assert_eq!(r.code, Some(1), "the missing sources remain");
    c.configure("local = \"kb\"\n[check]\nstale_commits = 20\n");
    let r = c.run(&["check", "--stale", "--json"]);
    assert_eq!(r.json()["findings"].as_array().map(Vec::len), Some(2));

    // Outside a git work tree: a clear error.
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join(".helix.toml"), "local = \"kb\"\n").unwrap();
    let r: super::common::Run = c
        .cmd(&["check", "--stale"])
        .current_dir(out.path())
        .output()
        .unwrap()
        .into();
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("git work tree"), "{}", r.stderr);
}

const PSQL: &str = "The psql terminal has no built-in way to clear the screen. Run the shell's \
                    clear command from psql with `\\! clear`; it keeps the session running.";
const PSQL_AGAIN: &str = "To clear the screen in psql, run `\\! clear`: psql runs the shell's \
                          clear command and the session keeps running.";

#[test]
fn store_refuses_a_near_duplicate_unless_forced_and_check_lists_pairs() {
    let c = Client::new();
    c.configure("local = \"kb\"\n");
    write_files(
        &c.root,
        &[
            (
                "kb/postgres/clear-the-screen.md",
                &format!("# Clear the screen in psql\n\n{PSQL}\n"),
            ),
            (
                "kb/postgres/count.md",
                "# Count records by type\n\nGroup by the type column: `select type, count(*) from t group by type`.\n",
            ),
        ],
    );
    c.run(&["sync"]).ok();
    let r = c.run(&[
        "store",
        "--topic",
        "psql",
        "--title",
        "Clearing the psql screen",
        "--body",
        PSQL_AGAIN,
    ]);
    assert_ne!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr.contains(
            "kb:postgres/clear-the-screen.md (\"Clear the screen in psql\") says nearly the same"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("helix edit postgres/clear-the-screen.md"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert!(!c.root.join("kb/psql").exists(), "nothing written");
    // A different note on the same topic goes through.
    c.run(&[
        "store",
        "--topic",
        "postgres",
        "--title",
        "Vacuum nightly",
        "--body",
        "Run VACUUM ANALYZE nightly or the planner misestimates row counts.",
    ])
    .ok();
    let r = c
        .run(&[
            "store",
            "--topic",
            "psql",
            "--title",
            "Clearing the psql screen",
            "--body",
            PSQL_AGAIN,
            "--force",
        ])
        .ok();
    assert!(
        r.stdout
            .contains("stored kb:psql/clearing-the-psql-screen.md"),
        "{}",
        r.stdout
    );
    let text = std::fs::read_to_string(c.root.join("kb/psql/clearing-the-psql-screen.md")).unwrap();
    assert!(
        !text.contains("force"),
        "local files carry no force flag: {text}"
    );

    // `check` lists the pair it now holds, and only that one; pairs do not fail the check.
    let r = c.run(&["check", "kb"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let pairs: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("near-duplicate"))
        .collect();
    assert_eq!(pairs.len(), 1, "{}", r.stdout);
    assert!(
        pairs[0].starts_with("postgres/clear-the-screen.md: near-duplicate of psql/clearing-the-psql-screen.md (similarity 0."),
        "{}",
        pairs[0]
    );
    assert!(
        r.stderr.contains("0 secrets, 1 near-duplicate pair\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn server_answers_409_for_a_duplicate_and_sync_keeps_the_refused_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let up = Upstream::new(
        tmp.path(),
        &[(
            "postgres/clear-the-screen.md",
            &format!("# Clear the screen in psql\n\n{PSQL}\n"),
        )],
    );
    let server = Server::start(&[ProjectSpec {
        name: "team",
        upstream: Some(&up.bare),
    }]);
    server.wait_ready("team");
    let post = |body: serde_json::Value| {
        let (code, bytes) = http_request(
            &server.url,
            "POST",
            "/v1/projects/team/entries",
            body.to_string().as_bytes(),
            None,
        )
        .expect("server answers");
        (
            code,
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_default(),
        )
    };
    let dup = json!({"topic": "psql", "title": "Clearing the psql screen", "body": PSQL_AGAIN});
    let (code, v) = post(dup.clone());
    assert_eq!(code, 409, "{v}");
    assert_eq!(v["error"]["code"], "duplicate_entry");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "postgres/clear-the-screen.md (\"Clear the screen in psql\") says nearly the same"
        ),
        "{msg}"
    );
    assert!(msg.contains("\"force\": true"), "{msg}");
    assert!(
        !up.files().iter().any(|f| f.starts_with("psql/")),
        "nothing reached git"
    );
    let mut forced = dup.clone();
    forced["force"] = json!(true);
    let (code, v) = post(forced);
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["id"], "psql/clearing-the-psql-screen.md");

    // A client whose cache predates the entry stores a near-duplicate without knowing; the
    // server refuses it at sync and the entry waits in rejected/ with the reason.
    let c = Client::new();
    c.follow(&server.url, &["team"]);
    c.store(
        "terminal",
        "Clear the psql screen",
        "In psql, `\\! clear` runs the shell's clear command and clears the screen; the session keeps running.",
    );
    let r = c.run(&["sync"]);
    assert!(r.stderr.contains("rejected"), "{r:?}");
    let rejected = c.pending_dir("team").join("rejected");
    let reasons: Vec<_> = std::fs::read_dir(&rejected)
        .expect("rejected dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "reason"))
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    let why = std::fs::read_to_string(&reasons[0]).unwrap();
    assert!(
        why.contains("409 duplicate_entry: psql/clearing-the-psql-screen.md")
            && why.contains("says nearly the same"),
        "{why}"
    );
    let kept = std::fs::read_to_string(reasons[0].with_extension("md")).unwrap();
    assert!(kept.contains("the session keeps running"), "{kept}");
}

#[test]
fn hooks_mark_review_due_entries_and_missing_sources() {
    let f = Fixture::bare();
    f.write(".helix.toml", "local = \"knowledge\"\nproject = \"kb\"\n");
    f.write("src/present.rs", "fn present() {}\n");
    f.write(
        "knowledge/deploy/canary.md",
        "---\ntitle: Canary deploys need the feature gate\nsources: [src/present.rs, src/missing.rs]\n\
         review_after: 2020-01-01\n---\n\nThe canary rollout skips hosts without the feature gate flag.\n",
    );
    f.write(
        "knowledge/deploy/rollback.md",
        "---\ntitle: Rollback keeps the canary gate\nsources: [src/present.rs]\n---\n\n\
         A rollback of the canary keeps the feature gate flag on the hosts.\n",
    );
    f.compile();
    let out = f.hook(
        "prompt",
        &f.input(
            "UserPromptSubmit",
            json!({"prompt": "why does the canary rollout skip hosts without the feature gate flag?"}),
        ),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let canary = text
        .lines()
        .find(|l| l.contains("kb:deploy/canary.md"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        canary.contains("Canary deploys need the feature gate (review due) (source src/missing.rs no longer exists)"),
        "{canary}"
    );
    assert!(!canary.contains("present.rs"), "{canary}");
    if let Some(rollback) = text.lines().find(|l| l.contains("kb:deploy/rollback.md")) {
        assert!(
            !rollback.contains("review due") && !rollback.contains("no longer"),
            "{rollback}"
        );
    }
}
