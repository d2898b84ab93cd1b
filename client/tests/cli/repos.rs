//! `helix check` and `helix build` on repositories as forges hold them: they read what git
//! tracks (not a gitignored folder), count a flat folder's files, take agent files from
//! dot-folders, say what they skipped and why, fail a check that finds Markdown but no
//! entry, and date and credit entries as `git log` shows them.

use super::common::{Client, git, write_files};
use std::path::Path;
use std::process::Command;

/// Runs git in `dir` as `author` with extra environment (`GIT_AUTHOR_DATE`).
fn git_as(dir: &Path, author: &str, env: &[(&str, &str)], args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", "a@example.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .envs(env.iter().copied())
        .output()
        .expect("git");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A knowledge repository in git: topic folders, agent files, a gitignored `node_modules`
/// full of Markdown, a PR template, an MDX page and a flat folder of instruction files.
fn forge_repo(c: &Client) -> std::path::PathBuf {
    let repo = c.tmp.path().join("forge");
    write_files(
        &repo,
        &[
            (".gitignore", "node_modules/\n"),
            ("README.md", "# Knowledge\n"),
            (
                "AGENTS.md",
                "# Agents\n\nRun `make check` before pushing.\n",
            ),
            (
                ".github/copilot-instructions.md",
                "Prefer tabs in Go code.\n",
            ),
            (".github/PULL_REQUEST_TEMPLATE.md", "## What changed\n"),
            (
                "build/linker.md",
                "# Linker\n\nUse mold for faster links.\n",
            ),
            ("docs/site.mdx", "# Site\n"),
            (
                "instructions/python.instructions.md",
                "---\napplyTo: '**/*.py'\n---\n# Python\n\nUse ruff.\n",
            ),
            (
                "instructions/go.instructions.md",
                "# Go\n\nRun gofmt before committing.\n",
            ),
            ("instructions/README.md", "# Instructions\n"),
            (
                "node_modules/left-pad/README.md",
                "# left-pad\n\nPads strings on the left with linker magic.\n",
            ),
            (
                "node_modules/left-pad/docs/api.md",
                "# API\n\nleftPad(str, len)\n",
            ),
        ],
    );
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "knowledge"]);
    repo
}

fn summary(stderr: &str) -> &str {
    stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("helix: ")
                .filter(|l| l.contains(" entries, "))
        })
        .unwrap_or_else(|| panic!("no summary line in {stderr}"))
}

#[test]
fn check_and_build_read_what_git_tracks_and_count_alike() {
    let c = Client::new();
    let repo = forge_repo(&c);
    // A new entry not committed yet counts; one in the ignored folder never does.
    write_files(
        &repo,
        &[("ops/drain.md", "# Drain\n\nDrain workers first.\n")],
    );
    let r = c.run(&["check", repo.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let checked = summary(&r.stderr).to_string();
    assert_eq!(
        checked,
        "7 entries, 0 invalid; 3 Markdown files are not entries (1 README, index or template, 1 hidden, 1 MDX or MDC), 0 secrets"
    );
    let out = c.tmp.path().join("forge.hix");
    let r = c
        .run(&["build", repo.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    let built = summary(&r.stderr);
    assert!(
        built.ends_with(": 7 entries, 0 invalid; 3 Markdown files are not entries (1 README, index or template, 1 hidden, 1 MDX or MDC)"),
        "build and check count alike: {built}"
    );
    let index = helix_index_format::Index::open(std::fs::read(&out).unwrap()).unwrap();
    let mut ids: Vec<String> = (0..index.len())
        .map(|d| index.entry(d).unwrap().id.to_string())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            ".github/copilot-instructions.md",
            "AGENTS.md",
            "build/linker.md",
            "instructions/README.md",
            "instructions/go.instructions.md",
            "instructions/python.instructions.md",
            "ops/drain.md",
        ]
    );
    // Nothing from node_modules reaches a search.
    let hits = c
        .run(&[
            "search",
            "--index",
            out.to_str().unwrap(),
            "--json",
            "linker pads",
        ])
        .ok()
        .json();
    let hit_ids: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(hit_ids, ["build/linker.md"]);
    // A folder git ignores is read whole when asked for by name.
    let ignored = repo.join("node_modules/left-pad");
    let r = c.run(&["check", ignored.to_str().unwrap()]).ok();
    assert_eq!(
        summary(&r.stderr),
        "1 entries, 0 invalid; 1 Markdown file is not an entry (1 README, index or template), 0 secrets"
    );
}

#[test]
fn a_flat_folder_counts_and_markdown_without_entries_fails_the_check() {
    let c = Client::new();
    let repo = forge_repo(&c);
    let flat = repo.join("instructions");
    let r = c.run(&["check", flat.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        summary(&r.stderr),
        "2 entries, 0 invalid; 1 Markdown file is not an entry (1 README, index or template), 0 secrets"
    );
    let out = c.tmp.path().join("flat.hix");
    c.run(&["build", flat.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    let index = helix_index_format::Index::open(std::fs::read(&out).unwrap()).unwrap();
    let python = index
        .entry_by_id("python.instructions.md")
        .unwrap()
        .expect("root file of the folder is an entry");
    assert_eq!(python.topic, "instructions");
    assert_eq!(python.sources, ["**/*.py"]);

    // Markdown, but nothing helix reads as an entry: a warning, and check fails.
    let docs = repo.join("docs");
    let r = c.run(&["check", docs.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr
            .contains("warning: no entries among 1 Markdown file; 1 Markdown file is not an entry (1 MDX or MDC)"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
}

#[test]
fn build_dates_and_credits_entries_as_git_log_shows_them() {
    let c = Client::new();
    let repo = c.tmp.path().join("prs");
    write_files(&repo, &[("build/base.md", "# Base\n\nFirst note.\n")]);
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["checkout", "-q", "-b", "pr"]);
    write_files(
        &repo,
        &[("ops/tokyo.md", "# Tokyo\n\nFreeze at 18:00 JST.\n")],
    );
    git(&repo, &["add", "-A"]);
    let tokyo = [("GIT_AUTHOR_DATE", "2024-03-06T00:30:00+09:00")];
    git_as(
        &repo,
        "Carol Sato",
        &tokyo,
        &["commit", "-q", "-m", "tokyo"],
    );
    git(&repo, &["checkout", "-q", "main"]);
    write_files(
        &repo,
        &[("build/night.md", "# Night\n\nBuilds at 21:30 EST.\n")],
    );
    git(&repo, &["add", "-A"]);
    let ny = [("GIT_AUTHOR_DATE", "2024-03-04T21:30:00-05:00")];
    git_as(&repo, "Dan Night", &ny, &["commit", "-q", "-m", "night"]);
    git_as(
        &repo,
        "Bob Merger",
        &[],
        &["merge", "-q", "--no-ff", "--no-edit", "pr"],
    );

    let out = c.tmp.path().join("prs.hix");
    c.run(&["build", repo.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .ok();
    let index = helix_index_format::Index::open(std::fs::read(&out).unwrap()).unwrap();
    let meta = |id: &str| {
        let e = index.entry_by_id(id).unwrap().expect(id);
        (
            e.author.unwrap_or_default().to_string(),
            e.date
                .map(helix_index_format::format_day)
                .unwrap_or_default(),
        )
    };
    assert_eq!(
        meta("ops/tokyo.md"),
        ("Carol Sato".into(), "2024-03-06".into())
    );
    assert_eq!(
        meta("build/night.md"),
        ("Dan Night".into(), "2024-03-04".into())
    );
}

/// Local mode on a folder of Markdown that holds no entry: `helix sync` warns, and
/// `helix doctor` says what to fix.
#[test]
fn local_knowledge_without_entries_is_a_warning_in_sync_and_doctor() {
    let c = Client::new();
    write_files(
        &c.root.join("kb"),
        &[
            ("README.md", "# Our knowledge\n"),
            ("site/intro.mdx", "# Intro\n"),
        ],
    );
    c.run(&["init", "--local", "kb", "--project", "team"]).ok();
    let r = c.run(&["sync"]).ok();
    assert!(
        r.stderr
            .contains("warning: team: no entries among 2 Markdown files"),
        "{}",
        r.stderr
    );
    let d = c.run(&["doctor"]);
    assert_eq!(d.code, Some(1), "{d:?}");
    assert!(
        d.stdout.contains(
            "FIX   project team: no entries among 2 Markdown files; 2 Markdown files are not entries (1 README, index or template, 1 MDX or MDC)"
        ),
        "{}",
        d.stdout
    );
}
