//! Review mode end to end: an entry stored over MCP becomes a proposal branch on the
//! upstream; its author keeps seeing it (once) until a reviewer's `helix review approve`
//! lands it and a sync brings the artifact; a rejected one is set aside with the reason.

use serde_json::{Value, json};

use super::harness::{Dev, Server, Upstream, context};

const PROJECT: &str = "team";

/// Hits of `helix search --json QUERY` on `dev`'s machine: their ids.
fn hits(dev: &Dev, query: &str) -> Vec<String> {
    let r = dev.run(&["search", "--json", query]).ok("helix search");
    r.json()["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|h| h["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_stored_entry_is_proposed_approved_once_and_a_rejected_one_set_aside() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(dir);
    let first = up.commit_as(
        "Admin",
        &[("git/rebase.md", "# Rebase onto\n\nUse git rebase --onto.\n")],
        "Seed",
    );
    let config = Server::configure(
        dir,
        &format!(
            "[[projects]]\nname = {PROJECT:?}\nupstream = {:?}\npoll_interval_secs = 3600\nwrites = \"review\"\n",
            up.bare.display().to_string()
        ),
    );
    let alice_token = Server::token_add(&config, PROJECT, "alice", "read,write");
    let rita_token = Server::token_add(&config, PROJECT, "rita", "read,review");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving(PROJECT, &alice_token, &first);
    let alice = Dev::new("alice", &server.url, &[PROJECT], &alice_token);
    let rita = Dev::new("rita", &server.url, &[PROJECT], &rita_token);
    alice.run(&["sync"]).ok("alice: first sync");
    rita.run(&["sync"]).ok("rita: first sync");

    // Alice's agent stores a gotcha over MCP; the sync makes it a proposal, not a commit on main.
    {
        let mut mcp = alice.mcp();
        let res = mcp.call(
            "store",
            json!({"topic": "deploy", "title": "Drain nodes before deploying",
                   "body": "Kubernetes deploys drop requests unless the node is drained first."}),
        );
        assert_ne!(res["isError"], true, "{res}");
    }
    let sync = alice.run(&["sync"]).ok("alice: sync pushes the proposal");
    let pending = alice.pending_dir(PROJECT);
    assert!(
        sync.stdout.contains("1 proposed awaiting review"),
        "{}",
        sync.stdout
    );
    let branch = "refs/heads/helix/proposals/alice/drain-nodes-before-deploying";
    let proposed = up.git(&["rev-parse", branch]);
    assert_eq!(up.git(&["rev-parse", &format!("{proposed}^")]), first);
    assert_eq!(up.head(), first, "main untouched by a proposal");
    // The author sees it (from the pending overlay), once; the reviewer's hooks do not.
    let id = "deploy/drain-nodes-before-deploying.md";
    assert_eq!(hits(&alice, "drain deploy"), [id]);
    rita.run(&["sync"]).ok("rita: sync");
    assert!(hits(&rita, "drain deploy").is_empty());

    // The reviewer lists and approves it through helix.
    let list = rita.run(&["review", "list"]).ok("rita: review list");
    assert!(
        list.stdout.starts_with("1  open  deploy/drain-nodes-before-deploying.md  \"Drain nodes before deploying\"  by alice  branch helix/proposals/alice/drain-nodes-before-deploying"),
        "{}",
        list.stdout
    );
    let json_list = rita
        .run(&["review", "list", "--json"])
        .ok("rita: review list --json");
    assert_eq!(json_list.json()["proposals"][0]["id"], "1");
    // Alice's token has no review scope: refused, saying what is needed.
    let refused = alice.run(&["review", "approve", "1"]);
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert!(
        refused.stderr.contains("403 forbidden") && refused.stderr.contains("--scope review"),
        "{}",
        refused.stderr
    );
    let approved = rita.run(&["review", "approve", "1"]).ok("rita: approve");
    assert!(
        approved.stdout.contains("1  approved") && approved.stdout.contains("approved by rita"),
        "{}",
        approved.stdout
    );
    assert_eq!(up.head(), proposed, "the proposal's commit landed on main");
    assert_eq!(
        up.git(&["for-each-ref", "refs/heads/helix"]),
        "",
        "proposal branch deleted"
    );
    let again = rita.run(&["review", "approve", "1"]);
    assert!(
        again.stderr.contains("409 proposal_decided"),
        "{}",
        again.stderr
    );

    // Alice's next sync: the artifact has it; the overlay no longer does; shown once.
    let sync = alice.run(&["sync"]).ok("alice: sync after approval");
    assert!(!sync.stdout.contains("awaiting review"), "{}", sync.stdout);
    assert_eq!(hits(&alice, "drain deploy"), [id]);
    let acked: Vec<_> = std::fs::read_dir(pending.join("acked"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(acked.is_empty(), "acked left behind: {acked:?}");
    rita.run(&["sync"]).ok("rita: sync");
    assert_eq!(hits(&rita, "drain deploy"), [id]);

    // A second proposal, rejected with a reason: Alice's client sets it aside, with the reason.
    alice
        .run(&[
            "store",
            "--topic",
            "deploy",
            "--title",
            "Deploy on Fridays",
            "--body",
            "Fridays are quiet, deploy then.",
        ])
        .ok("alice: store");
    alice.run(&["sync"]).ok("alice: sync");
    let rejected = rita
        .run(&[
            "review",
            "reject",
            "2",
            "--reason",
            "we freeze on Fridays",
            "--json",
        ])
        .ok("rita: reject");
    let v: Value = rejected.json();
    assert_eq!(
        (v["state"].as_str(), v["reason"].as_str()),
        (Some("rejected"), Some("we freeze on Fridays"))
    );
    let sync = alice.run(&["sync"]).ok("alice: sync after rejection");
    assert!(
        sync.stderr
            .contains("proposal 2 rejected by rita: we freeze on Fridays"),
        "{}",
        sync.stderr
    );
    assert!(hits(&alice, "fridays").is_empty());
    let reasons: Vec<String> = std::fs::read_dir(pending.join("rejected"))
        .expect("rejected dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "reason"))
        .map(|e| std::fs::read_to_string(e.path()).expect("reason"))
        .collect();
    assert_eq!(reasons.len(), 1);
    assert!(reasons[0].contains("we freeze on Fridays"));
    assert_eq!(up.head(), proposed, "a rejection leaves main as it was");
    assert_eq!(up.git(&["for-each-ref", "refs/heads/helix"]), "");
}

#[test]
fn a_project_that_shows_proposals_marks_them_in_teammates_hooks_until_approved() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(dir);
    let first = up.commit_as(
        "Admin",
        &[("git/rebase.md", "# Rebase onto\n\nUse git rebase --onto.\n")],
        "Seed",
    );
    let config = Server::configure(
        dir,
        &format!(
            "[[projects]]\nname = {PROJECT:?}\nupstream = {:?}\npoll_interval_secs = 3600\nwrites = \"review\"\nshow_proposals = true\n",
            up.bare.display().to_string()
        ),
    );
    let alice_token = Server::token_add(&config, PROJECT, "alice", "read,write");
    let bob_token = Server::token_add(&config, PROJECT, "bob", "read");
    let rita_token = Server::token_add(&config, PROJECT, "rita", "read,review");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving(PROJECT, &alice_token, &first);
    let alice = Dev::new("alice", &server.url, &[PROJECT], &alice_token);
    let bob = Dev::new("bob", &server.url, &[PROJECT], &bob_token);
    let rita = Dev::new("rita", &server.url, &[PROJECT], &rita_token);
    alice
        .run(&[
            "store",
            "--topic",
            "deploy",
            "--title",
            "Drain Kubernetes nodes before deploying",
            "--body",
            "Kubernetes deploys drop requests unless the node is drained first: run kubectl drain.",
        ])
        .ok("alice: store");
    alice.run(&["sync"]).ok("alice: sync");
    bob.run(&["sync"]).ok("bob: sync");
    let prompt = json!({
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Should I drain the Kubernetes nodes before deploying?",
    });
    let seen = context(&bob.hook("prompt", prompt.clone()));
    assert!(
        seen.contains("(proposed, unreviewed) Drain Kubernetes nodes before deploying"),
        "bob's hook: {seen:?}"
    );
    // The author's own copy is hers, not marked.
    let own = context(&alice.hook("prompt", prompt.clone()));
    assert!(
        own.contains("Drain Kubernetes nodes before deploying"),
        "{own:?}"
    );
    assert!(!own.contains("proposed, unreviewed"), "{own:?}");

    rita.run(&["review", "approve", "1"]).ok("rita: approve");
    bob.run(&["sync"]).ok("bob: sync after approval");
    let after = context(&bob.hook("prompt", prompt));
    assert!(
        after.contains("Drain Kubernetes nodes before deploying"),
        "{after:?}"
    );
    assert!(!after.contains("proposed, unreviewed"), "{after:?}");
    assert!(!bob.pending_dir(PROJECT).join("proposed.json").exists());
}
