//! Edits through `PUT /v1/projects/{p}/entries/{id}` (compare-and-swap on the entry's blob,
//! the secret scan, missing entries), and `supersedes` / `status: retired` as the compiled
//! artifact, `/status` and the write path see them.

use helix_index_format::{Hidden, Index};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::common::*;

fn put_entry(
    s: &Server,
    project: &str,
    token: &str,
    id: &str,
    key: Option<&str>,
    base: &str,
    content: &str,
) -> (StatusCode, Value) {
    let mut req = client()
        .put(s.u(&format!("/v1/projects/{project}/entries/{id}")))
        .bearer_auth(token)
        .json(&json!({"base": base, "content": content}));
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let r = req.send().expect("put");
    let st = r.status();
    (st, r.json().unwrap_or(Value::Null))
}

/// The blob id the served artifact records for `id`, and whether it is hidden.
fn served(s: &Server, project: &str, token: &str, id: &str) -> (String, Option<Hidden>) {
    let (_, _, bytes, _) = get_index(s, project, token);
    let idx = Index::open(&bytes[..]).expect("opens");
    idx.verify().expect("verifies");
    let e = idx.entry_by_id(id).expect("reads").expect("entry present");
    let blob = idx.blob(e.doc).expect("blob").unwrap_or("").to_string();
    (blob, idx.hidden(e.doc))
}

fn search_ids(s: &Server, project: &str, token: &str, q: &str, all: bool) -> Vec<String> {
    let (_, _, bytes, _) = get_index(s, project, token);
    let idx = Index::open(&bytes[..]).expect("opens");
    let opts = helix_index_format::SearchOptions {
        include_hidden: all,
        ..Default::default()
    };
    idx.search(q, &opts)
        .expect("search")
        .into_iter()
        .map(|h| h.entry.id.to_string())
        .collect()
}

#[test]
fn edits_swap_on_the_blob_and_never_overwrite() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let (alice, bob, reader) = (fx.tok("kb/alice"), fx.tok("kb/bob"), fx.tok("kb/reader"));
    let head = up.head();
    wait_status(&s, "kb", reader, |v| v["commit"] == head.as_str());

    let id = "git/rebase-onto.md";
    let (base, hidden) = served(&s, "kb", reader, id);
    assert_eq!(
        base,
        git(&up.bare, &["rev-parse", &format!("main:{id}")]).trim(),
        "the artifact carries the file's git blob id"
    );
    assert_eq!(hidden, None);

    let alice_text = "---\ntitle: Rebase onto\ntags: [git, rebase]\n---\nUse `git rebase --onto main a b` to move b alone.\n";
    let (st, ack) = put_entry(&s, "kb", alice, id, Some("edit-a"), &base, alice_text);
    assert_eq!(st, StatusCode::OK, "{ack}");
    assert_eq!(ack["id"], id);
    assert_eq!(tree_files(&up.bare, "main")[id], alice_text);
    let subject = git(&up.bare, &["log", "-1", "--format=%s%n%b", "main"]);
    assert!(subject.starts_with(&format!("Edit {id}")), "{subject}");
    let now = git(&up.bare, &["rev-parse", &format!("main:{id}")]);
    let now = now.trim();
    assert_eq!(ack["blob"], now, "the answer names the new version");
    // The same key again is a replay, not a second commit.
    let (st, again) = put_entry(&s, "kb", alice, id, Some("edit-a"), &base, alice_text);
    assert_eq!((st, &again["commit"]), (StatusCode::OK, &ack["commit"]));

    // Bob started from the same version: refused, both versions named, nothing overwritten.
    let bob_text = "# Rebase onto\n\nBob's rewrite.\n";
    let (st, err) = put_entry(&s, "kb", bob, id, Some("edit-b"), &base, bob_text);
    assert_eq!(st, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["error"]["code"], "edit_conflict");
    let c = &err["error"]["conflict"];
    assert_eq!(
        (c["id"].as_str(), c["base"].as_str()),
        (Some(id), Some(base.as_str()))
    );
    assert_eq!(c["current"], now);
    assert_eq!(c["current_content"], alice_text);
    let msg = err["error"]["message"].as_str().unwrap_or("");
    assert!(msg.contains(&base) && msg.contains(now), "{msg}");
    assert_eq!(tree_files(&up.bare, "main")[id], alice_text);
    // Rebased on the current version, it goes through.
    let (st, _) = put_entry(&s, "kb", bob, id, Some("edit-b2"), now, bob_text);
    assert_eq!(st, StatusCode::OK);
    assert_eq!(tree_files(&up.bare, "main")[id], bob_text);

    // Missing entry, secret, unknown status, not an entry path: refused before git.
    let before = up.head();
    let (st, err) = put_entry(&s, "kb", alice, "git/nope.md", None, &base, bob_text);
    assert_eq!(
        (st, err["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("no_such_entry"))
    );
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("git/nope.md")
    );
    let leaked = "# Deploy\n\nUse token glpat-aB3dE6gH9jK2mN5pQ8sT before the deploy.\n";
    let (st, err) = put_entry(&s, "kb", alice, id, None, now, leaked);
    assert_eq!(
        (st, err["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("secret_detected")),
        "{err}"
    );
    assert!(!err.to_string().contains("glpat-aB3d"), "{err}");
    let (st, err) = put_entry(
        &s,
        "kb",
        alice,
        id,
        None,
        now,
        "---\nstatus: obsolete\n---\nBody\n",
    );
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("\"obsolete\""),
        "{err}"
    );
    let (st, _) = put_entry(&s, "kb", alice, "README.md", None, now, bob_text);
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = put_entry(&s, "kb", reader, id, None, now, bob_text);
    assert_eq!(st, StatusCode::FORBIDDEN);
    assert_eq!(up.head(), before, "nothing refused reached git");
}

#[test]
fn supersede_and_retire_leave_results_but_stay_readable() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    up.commit(
        "Alice Smith",
        &[
            (
                "git/squash-old.md",
                "# Squash with reset\n\nSquash commits with git reset --soft and a new commit.\n",
            ),
            (
                "git/squash-new.md",
                "# Squash with autosquash\n\nSquash commits with git rebase -i --autosquash.\n",
            ),
        ],
        "squash notes",
    );
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let (alice, reader) = (fx.tok("kb/alice"), fx.tok("kb/reader"));
    let head = up.head();
    wait_status(&s, "kb", reader, |v| v["commit"] == head.as_str());
    assert!(
        search_ids(&s, "kb", reader, "squash reset soft", false)
            .contains(&"git/squash-old.md".into())
    );

    let new_id = "git/squash-new.md";
    let (base, _) = served(&s, "kb", reader, new_id);
    // Superseding a missing entry is refused, naming it.
    let text = |sup: &str| {
        format!(
            "---\nsupersedes: {sup}\n---\n# Squash with autosquash\n\nSquash commits with git rebase -i --autosquash.\n"
        )
    };
    let (st, err) = put_entry(&s, "kb", alice, new_id, None, &base, &text("git/gone.md"));
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("git/gone.md"),
        "{err}"
    );

    let (st, ack) = put_entry(
        &s,
        "kb",
        alice,
        new_id,
        None,
        &base,
        &text("git/squash-old.md"),
    );
    assert_eq!(st, StatusCode::OK, "{ack}");
    let (old_base, hidden) = served(&s, "kb", reader, "git/squash-old.md");
    let (_, _, bytes, _) = get_index(&s, "kb", reader);
    let idx = Index::open(&bytes[..]).expect("opens");
    let by = idx
        .entry_by_id(new_id)
        .expect("reads")
        .expect("present")
        .doc as usize;
    assert_eq!(hidden, Some(Hidden::SupersededBy(by)));
    let found = search_ids(&s, "kb", reader, "squash reset soft", false);
    assert!(!found.contains(&"git/squash-old.md".into()), "{found:?}");
    assert_eq!(
        search_ids(&s, "kb", reader, "squash reset soft", true)[0],
        "git/squash-old.md"
    );
    // Editing the superseded entry is refused, naming what supersedes it.
    let (st, err) = put_entry(
        &s,
        "kb",
        alice,
        "git/squash-old.md",
        None,
        &old_base,
        "# Squash\n\nStill here.\n",
    );
    assert_eq!(
        (st, err["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("superseded")),
        "{err}"
    );
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains(new_id),
        "{err}"
    );

    // Retire, refuse an edit that keeps it retired, bring it back.
    let id = "db/migrations.md";
    let (base, _) = served(&s, "kb", reader, id);
    let retired = "---\nstatus: retired\n---\n# Migrations\n\nRun migrations before deploying.\n";
    let (st, _) = put_entry(&s, "kb", alice, id, None, &base, retired);
    assert_eq!(st, StatusCode::OK);
    let (base, hidden) = served(&s, "kb", reader, id);
    assert_eq!(hidden, Some(Hidden::Retired));
    assert!(search_ids(&s, "kb", reader, "migrations deploying", false).is_empty());
    let (st, err) = put_entry(
        &s,
        "kb",
        alice,
        id,
        None,
        &base,
        &retired.replace("before", "after"),
    );
    assert_eq!(
        (st, err["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("retired")),
        "{err}"
    );
    let (st, _) = put_entry(
        &s,
        "kb",
        alice,
        id,
        None,
        &base,
        "# Migrations\n\nRun migrations before deploying, again.\n",
    );
    assert_eq!(st, StatusCode::OK);
    assert_eq!(served(&s, "kb", reader, id).1, None);
    assert_eq!(
        search_ids(&s, "kb", reader, "migrations deploying", false)[0],
        id
    );
}

#[test]
fn missing_and_cyclic_supersedes_are_diagnosed() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "kb");
    up.commit(
        "Alice Smith",
        &[
            (
                "ops/a.md",
                "---\nsupersedes: ops/b.md\n---\n# A\n\nFirst.\n",
            ),
            (
                "ops/b.md",
                "---\nsupersedes: [ops/a.md]\n---\n# B\n\nSecond.\n",
            ),
            (
                "ops/c.md",
                "---\nsupersedes: ops/missing.md\n---\n# C\n\nThird.\n",
            ),
        ],
        "a cycle and a dangling supersedes, by hand",
    );
    fx.configure(&[("kb", Some(&up.url()))], None);
    let s = fx.start();
    let reader = fx.tok("kb/reader");
    let head = up.head();
    let st = wait_status(&s, "kb", reader, |v| v["commit"] == head.as_str());
    let diags: Vec<String> = st["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["path"].as_str().unwrap_or(""),
                d["reason"].as_str().unwrap_or("")
            )
        })
        .collect();
    let has = |path: &str, what: &str| {
        diags
            .iter()
            .any(|d| d.starts_with(path) && d.contains(what))
    };
    assert!(
        has("ops/a.md", "cycle between ops/a.md, ops/b.md"),
        "{diags:#?}"
    );
    assert!(
        has("ops/b.md", "cycle between ops/a.md, ops/b.md"),
        "{diags:#?}"
    );
    assert!(has("ops/c.md", "\"ops/missing.md\""), "{diags:#?}");
    // They still compile, and a cycle hides neither of its entries.
    assert_eq!(served(&s, "kb", reader, "ops/a.md").1, None);
    assert_eq!(served(&s, "kb", reader, "ops/b.md").1, None);
}
