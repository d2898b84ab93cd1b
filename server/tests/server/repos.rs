//! Repositories as forges hold them: knowledge flat in a folder, agent instruction files in
//! dot-folders, Markdown that is not knowledge (counted by reason), pull requests merged by
//! someone else than their author, authors in other time zones, and hundreds of branches.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use helix_index_format::Index;
use reqwest::StatusCode;
use serde_json::json;

use super::common::*;

/// Writes `files` into the work clone and stages them.
fn write_files(up: &Upstream, files: &[(&str, &str)]) {
    for (p, c) in files {
        let path = up.work.join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, c).expect("write");
        git(&up.work, &["add", p]);
    }
}

/// Adds `[[projects]]` blocks after the fixture's config was written (tokens included):
/// `(name, upstream, subdir)`, each with reader and writer tokens.
fn add_projects(fx: &mut Fixture, projects: &[(&str, &str, Option<&str>)]) {
    let mut text = std::fs::read_to_string(&fx.config).unwrap_or_default();
    for (name, up, subdir) in projects {
        text.push_str(&format!(
            "\n[[projects]]\nname = {name:?}\npoll_interval_secs = 3600\nupstream = {up:?}\n"
        ));
        if let Some(s) = subdir {
            text.push_str(&format!("subdir = {s:?}\n"));
        }
    }
    std::fs::write(&fx.config, text).expect("write config");
    for (name, _, _) in projects {
        for (who, scope) in [("reader", "read"), ("alice", "read,write")] {
            let tok = helix_test_support::token_add(
                Path::new(env!("CARGO_BIN_EXE_helix-server")),
                &fx.config,
                name,
                who,
                scope,
            );
            fx.tokens.insert(format!("{name}/{who}"), tok);
        }
    }
}

/// `(id, topic, sources)` of every entry of an artifact.
fn entries_of(bytes: &[u8]) -> BTreeMap<String, (String, Vec<String>)> {
    let idx = Index::open(bytes).expect("artifact opens");
    (0..idx.len())
        .map(|d| {
            let e = idx.entry(d).expect("entry");
            (
                e.id.to_string(),
                (
                    e.topic.to_string(),
                    e.sources.iter().map(|s| s.to_string()).collect(),
                ),
            )
        })
        .collect()
}

/// A repository laid out as forges hold agent knowledge, read whole and through folders:
/// flat folders count (ADRs, instruction files), agent files in dot-folders are entries,
/// every other Markdown file is counted by reason, and a project whose folder holds
/// Markdown but no entry says so in `/status`.
#[test]
fn forge_layouts_count_and_every_skipped_file_is_reported() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "forge");
    let ci = "---\napplyTo: '.github/workflows/*.yml'\n---\nPin every action to a commit SHA.\n";
    up.commit(
        "Alice Smith",
        &[
            (
                "AGENTS.md",
                "# Agents\n\nRun `make check` before pushing.\n",
            ),
            (
                "CONTRIBUTING.md",
                "# Contributing\n\nOpen a pull request.\n",
            ),
            (".github/copilot-instructions.md", "Use tabs in Go code.\n"),
            (".github/instructions/ci.instructions.md", ci),
            (".github/PULL_REQUEST_TEMPLATE.md", "## What changed\n"),
            (
                "instructions/python.instructions.md",
                "---\napplyTo: '**/*.py'\n---\nUse ruff.\n",
            ),
            ("instructions/go.instructions.md", "# Go\n\nRun gofmt.\n"),
            (
                "instructions/README.md",
                "# Instructions\n\nIndex of the files here.\n",
            ),
            (
                "docs/adr/0001-record-decisions.md",
                "# Record decisions\n\nWe write ADRs.\n",
            ),
            ("docs/adr/README.md", "# ADRs\n\n- 0001\n"),
            ("docs/adr/template.md", "# Title\n\n## Context\n"),
            ("docs/intro.mdx", "import X from 'x'\n\n# Intro\n"),
            ("site/index.mdx", "# Site\n"),
            ("site/README.md", "# Site\n"),
        ],
        "forge layout",
    );
    let url = up.url();
    add_projects(
        &mut fx,
        &[
            ("whole", &url, None),
            ("instr", &url, Some("instructions")),
            ("adr", &url, Some("docs/adr")),
            ("site", &url, Some("site")),
        ],
    );
    let s = fx.start();
    let head = up.head();
    let status = |p: &str| {
        let tok = fx.tok(&format!("{p}/reader")).to_string();
        let st = wait_status(&s, p, &tok, |v| v["commit"] == head.as_str());
        let (_, _, bytes, _) = get_index(&s, p, &tok);
        (st, entries_of(&bytes))
    };

    let (st, entries) = status("whole");
    let topics: BTreeMap<&str, &str> = entries
        .iter()
        .map(|(id, (t, _))| (id.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        topics,
        BTreeMap::from([
            (".github/copilot-instructions.md", "copilot"),
            (".github/instructions/ci.instructions.md", "copilot"),
            ("AGENTS.md", "agents"),
            ("build/cargo-lock.md", "build"),
            ("db/migrations.md", "db"),
            ("docs/adr/0001-record-decisions.md", "docs"),
            ("docs/adr/README.md", "docs"),
            ("docs/adr/template.md", "docs"),
            ("git/rebase-onto.md", "git"),
            ("instructions/README.md", "instructions"),
            ("instructions/go.instructions.md", "instructions"),
            ("instructions/python.instructions.md", "instructions"),
            ("site/README.md", "site"),
        ])
    );
    assert_eq!(
        entries[".github/instructions/ci.instructions.md"].1,
        [".github/workflows/*.yml"]
    );
    assert_eq!(
        st["skipped"],
        json!({"readme_or_index": 1, "repository_root": 1, "hidden": 1, "not_plain_markdown": 2}),
        "{st}"
    );
    assert_eq!(st["warnings"], json!([]), "{st}");

    let (st, entries) = status("instr");
    assert_eq!(
        entries.keys().collect::<Vec<_>>(),
        ["go.instructions.md", "python.instructions.md"]
    );
    assert!(
        entries.values().all(|(t, _)| t == "instructions"),
        "{entries:?}"
    );
    assert_eq!(entries["python.instructions.md"].1, ["**/*.py"]);
    assert_eq!(st["skipped"], json!({"readme_or_index": 1}), "{st}");

    let (st, entries) = status("adr");
    assert_eq!(
        entries.into_iter().collect::<Vec<_>>(),
        [(
            "0001-record-decisions.md".to_string(),
            ("adr".to_string(), vec![])
        )]
    );
    assert_eq!(st["skipped"], json!({"readme_or_index": 2}), "{st}");

    let (st, entries) = status("site");
    assert!(entries.is_empty());
    assert_eq!(st["entries"], 0);
    assert_eq!(
        st["skipped"],
        json!({"readme_or_index": 1, "not_plain_markdown": 1}),
        "{st}"
    );
    let warning = st["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("no entries among 2 Markdown files"),
        "{st}"
    );
}

/// `git log -1 --format=… -- <path>` in the upstream: what a person reads there.
fn git_log_says(repo: &Path, path: &str) -> (String, String) {
    let out = git(
        repo,
        &[
            "log",
            "-1",
            "--format=%an%x01%ad",
            "--date=short",
            "main",
            "--",
            path,
        ],
    );
    let (author, day) = out.trim().split_once('\u{1}').expect("log line");
    (author.to_string(), day.to_string())
}

/// Pull requests merged with `--no-ff` by someone else credit their author, and dates are
/// days as their author saw them (commits made at night in New York, and just after
/// midnight in Tokyo, fall on another UTC day): what `git log` shows, entry by entry.
#[test]
fn authors_and_dates_are_those_git_log_shows() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "prs");
    let w = &up.work;
    // Carol's pull request, written just after midnight in Tokyo (15:30 UTC the day before).
    git(w, &["checkout", "-q", "-b", "carol-tokyo"]);
    write_files(
        &up,
        &[("ops/tokyo.md", "# Tokyo\n\nDeploys freeze at 18:00 JST.\n")],
    );
    let tokyo = [("GIT_AUTHOR_DATE", "2024-03-06T00:30:00+09:00")];
    git_env(
        w,
        "Carol Sato",
        &tokyo,
        &["commit", "-q", "-m", "tokyo note"],
    );
    // Meanwhile on main: Dan, at night in New York (02:30 UTC the next day).
    git(w, &["checkout", "-q", "main"]);
    write_files(
        &up,
        &[("build/night.md", "# Night build\n\nRuns at 21:30 EST.\n")],
    );
    let ny = [("GIT_AUTHOR_DATE", "2024-03-04T21:30:00-05:00")];
    git_env(w, "Dan Night", &ny, &["commit", "-q", "-m", "night note"]);
    // Erin edits an existing entry on her branch; both are merged by Bob with --no-ff.
    git(w, &["checkout", "-q", "-b", "erin-edit", "HEAD~1"]);
    write_files(
        &up,
        &[(
            "git/rebase-onto.md",
            "---\ntitle: Rebase onto\n---\nUse `git rebase --onto` (Erin's fix).\n",
        )],
    );
    git_env(
        w,
        "Erin Park",
        &[],
        &["commit", "-q", "-m", "fix rebase note"],
    );
    git(w, &["checkout", "-q", "main"]);
    let merge_env = [("GIT_AUTHOR_DATE", "2024-03-08T12:00:00+00:00")];
    for branch in ["carol-tokyo", "erin-edit"] {
        git_env(
            w,
            "Bob Jones",
            &merge_env,
            &["merge", "-q", "--no-ff", "--no-edit", branch],
        );
    }
    git(w, &["push", "-q", "origin", "main"]);
    assert_ne!(git(w, &["rev-list", "--merges", "main"]).trim(), "");

    fx.configure(&[("prs", Some(&up.url()))], None);
    let s = fx.start();
    let tok = fx.tok("prs/reader").to_string();
    let head = up.head();
    wait_status(&s, "prs", &tok, |v| v["commit"] == head.as_str());
    let (_, _, bytes, _) = get_index(&s, "prs", &tok);
    let idx = Index::open(&bytes[..]).expect("opens");
    let mut seen = Vec::new();
    for d in 0..idx.len() {
        let e = idx.entry(d).expect("entry");
        let day = e
            .date
            .map(helix_index_format::format_day)
            .unwrap_or_default();
        let got = (e.author.unwrap_or_default().to_string(), day);
        assert_eq!(got, git_log_says(&up.bare, e.id), "{}", e.id);
        seen.push((e.id.to_string(), got));
    }
    let seen: BTreeMap<String, (String, String)> = seen.into_iter().collect();
    assert_eq!(
        seen["ops/tokyo.md"],
        ("Carol Sato".into(), "2024-03-06".into())
    );
    assert_eq!(
        seen["build/night.md"],
        ("Dan Night".into(), "2024-03-04".into())
    );
    assert_eq!(seen["git/rebase-onto.md"].0, "Erin Park");
    assert_eq!(seen["db/migrations.md"].0, "Bob Jones");
}

/// Adds `n` branches to bare repository `bare`, each with a commit of its own (a pull
/// request's file), in one `git fast-import`.
fn add_branches(bare: &Path, n: usize) -> Vec<String> {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(bare)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import");
    let mut input = String::new();
    for i in 0..n {
        let body = format!("# PR {i}\n\nWork in progress on branch pr-{i}.\n");
        input.push_str(&format!(
            "commit refs/heads/pr-{i}\nmark :{m}\nauthor Bot <bot@example.com> 1700000000 +0000\ncommitter Bot <bot@example.com> 1700000000 +0000\ndata 6\npr {i:02}\nfrom refs/heads/main^0\nM 100644 inline prs/pr-{i}.md\ndata {}\n{body}\n",
            body.len(),
            m = i + 1
        ));
    }
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write");
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    (0..n)
        .map(|i| {
            git(bare, &["rev-parse", &format!("refs/heads/pr-{i}")])
                .trim()
                .to_string()
        })
        .collect()
}

/// Three projects on one upstream — the whole repository, one of its folders, and another
/// branch — share one mirror (an old per-project mirror is adopted, not downloaded again),
/// which holds their two branches and none of the upstream's 500 others; a write through
/// the folder is in the whole repository's artifact at once.
#[test]
fn projects_on_one_upstream_share_one_mirror_of_their_branches_only() {
    let mut fx = Fixture::new();
    let up = Upstream::new(&fx.root, "shared");
    up.commit(
        "Alice Smith",
        &[(
            "knowledge/ops/drain.md",
            "# Drain\n\nDrain the workers first.\n",
        )],
        "knowledge folder",
    );
    git(
        &up.work,
        &["push", "-q", "origin", "HEAD:refs/heads/drafts"],
    );
    let prs = add_branches(&up.bare, 500);
    assert_eq!(
        git(&up.bare, &["for-each-ref", "refs/heads"])
            .lines()
            .count(),
        502
    );
    // A mirror in the layout of earlier versions, for the first project.
    let old = fx.data.join("projects/whole/repo.git");
    std::fs::create_dir_all(old.parent().expect("parent")).expect("mkdir");
    git(
        &fx.root,
        &[
            "clone",
            "-q",
            "--bare",
            &up.url(),
            old.to_str().expect("utf8"),
        ],
    );
    let url = up.url();
    add_projects(
        &mut fx,
        &[("whole", &url, None), ("sub", &url, Some("knowledge"))],
    );
    let text = std::fs::read_to_string(&fx.config).expect("config");
    std::fs::write(
        &fx.config,
        format!("{text}\n[[projects]]\nname = \"drafts\"\nbranch = \"drafts\"\npoll_interval_secs = 3600\nupstream = {url:?}\n"),
    )
    .expect("config");
    let drafts_tok = helix_test_support::token_add(
        Path::new(env!("CARGO_BIN_EXE_helix-server")),
        &fx.config,
        "drafts",
        "reader",
        "read",
    );
    let s = fx.start();
    let head = up.head();
    for p in ["whole", "sub"] {
        let st = wait_status(&s, p, fx.tok(&format!("{p}/reader")), |v| {
            v["commit"] == head.as_str()
        });
        assert!(st["last_fetch"]["error"].is_null(), "{st}");
    }
    let drafts = git(&up.bare, &["rev-parse", "drafts"]).trim().to_string();
    wait_status(&s, "drafts", &drafts_tok, |v| {
        v["commit"] == drafts.as_str()
    });

    let mirrors: Vec<_> = std::fs::read_dir(fx.data.join("mirrors"))
        .expect("mirrors")
        .flatten()
        .collect();
    assert_eq!(mirrors.len(), 1, "one mirror for the three projects");
    let m = mirror(&fx.data, &up.bare);
    for p in ["whole", "sub", "drafts"] {
        assert!(
            !fx.data.join(format!("projects/{p}/repo.git")).exists(),
            "{p}"
        );
    }
    assert_eq!(
        git(&m, &["for-each-ref", "--format=%(refname)"]).trim(),
        "refs/heads/drafts\nrefs/heads/main"
    );
    // The adopted mirror's other branches are gone; a mirror made from scratch never
    // receives their commits.
    let fresh = fx.root.join("fresh-data");
    let text = std::fs::read_to_string(&fx.config).expect("config");
    let fresh_cfg = fx.root.join("fresh.toml");
    std::fs::write(&fresh_cfg, &text).expect("config");
    let s2 = Server::start(&fresh_cfg, &fresh);
    wait_status(&s2, "whole", fx.tok("whole/reader"), |v| {
        v["commit"] == head.as_str()
    });
    let m2 = mirror(&fresh, &up.bare);
    for pr in [&prs[0], &prs[499]] {
        let present = Command::new("git")
            .args(["cat-file", "-e", pr])
            .current_dir(&m2)
            .stderr(Stdio::null())
            .status()
            .expect("git")
            .success();
        assert!(!present, "pull-request commit {pr} fetched");
    }
    drop(s2);

    // A write through the folder is in the whole repository's artifact without a refresh.
    let (st, v) = post_entry(
        &client(),
        &s,
        "sub",
        fx.tok("sub/alice"),
        None,
        &json!({"topic": "ops", "title": "Drain again", "body": "Drain twice on Fridays."}),
    );
    assert_eq!(st, StatusCode::CREATED, "{v}");
    let commit = v["commit"].as_str().expect("commit").to_string();
    wait_status(&s, "whole", fx.tok("whole/reader"), |v| {
        v["commit"] == commit.as_str()
    });
    let (_, _, bytes, _) = get_index(&s, "whole", fx.tok("whole/reader"));
    assert!(entry_ids(&bytes).contains("knowledge/ops/drain-again.md"));
}
