use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use super::*;

const ALL: Limits = Limits {
    max_changes: usize::MAX,
    max_commits: usize::MAX,
};

/// A work repository whose commits are then copied into a bare one, the kind the
/// server reads.
struct Fixture {
    _dir: tempfile::TempDir,
    work: PathBuf,
    bare: PathBuf,
    /// Seconds added to every commit's date, so each commit has its own.
    clock: i64,
}

const EPOCH: i64 = 1_700_000_000;

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let work = dir.path().join("work");
        let bare = dir.path().join("kb.git");
        std::fs::create_dir_all(&work).expect("mkdir");
        let f = Fixture {
            work,
            bare,
            clock: 0,
            _dir: dir,
        };
        f.git(&["init", "-q", "-b", "main"]);
        f
    }

    fn cmd(&self, author: &OsStr, date: &str) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(&self.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("HOME", &self.work)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", author)
            .env("GIT_AUTHOR_EMAIL", email(author))
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_NAME", "Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_COMMITTER_DATE", date);
        cmd
    }

    fn run(&self, mut cmd: Command, args: &[&str]) -> String {
        let out = cmd.args(args).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn git(&self, args: &[&str]) -> String {
        self.run(self.cmd(OsStr::new("Nobody"), "1600000000 +0000"), args)
    }

    fn write(&self, path: &str, content: &str) {
        let p = self.work.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    /// Commits everything in the work tree as `author`, one minute after the last
    /// commit, in UTC+2; returns the commit's time.
    fn commit(&mut self, author: impl AsRef<OsStr>, message: &str) -> i64 {
        self.clock += 60;
        let time = EPOCH + self.clock;
        self.git(&["add", "-A"]);
        let cmd = self.cmd(author.as_ref(), &format!("{time} +0200"));
        self.run(cmd, &["commit", "-q", "--allow-empty", "-m", message]);
        time
    }

    fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", rev])
    }

    /// The bare copy, with every branch of the work repository.
    fn publish(&self) -> &Path {
        if self.bare.exists() {
            std::fs::remove_dir_all(&self.bare).expect("rm");
        }
        let bare = self.bare.to_str().expect("utf-8 path");
        self.git(&["clone", "-q", "--bare", ".", bare]);
        &self.bare
    }
}

fn email(author: &OsStr) -> String {
    format!(
        "{}@example.com",
        author
            .to_string_lossy()
            .to_lowercase()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(20)
            .collect::<String>()
    )
}

/// What `git log --first-parent -- path` lists.
fn git_log(bare: &Path, branch: &str, path: &str) -> Vec<String> {
    let out = Command::new("git")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .arg("--git-dir")
        .arg(bare)
        .args(["log", "--first-parent", "--format=%H", branch, "--", path])
        .output()
        .expect("git runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn ids(h: &History) -> Vec<String> {
    h.changes.iter().map(|c| c.commit.clone()).collect()
}

/// (commit, author, time, kind) of each change.
fn short(h: &History) -> Vec<(String, String, i64, ChangeKind)> {
    h.changes
        .iter()
        .map(|c| (c.commit.clone(), c.author.clone(), c.time, c.kind))
        .collect()
}

#[test]
fn lists_the_commits_that_changed_the_file_newest_first() {
    let mut f = Fixture::new();
    let file = "kb/notes/a.md";
    f.write(file, "one\n");
    f.write("kb/other/x.md", "x\n");
    f.write("misc/y.md", "y\n");
    f.write("README.md", "r\n");
    let t1 = f.commit("Alice Doe", "Add notes");
    let c1 = f.rev("HEAD");
    f.write("misc/y.md", "y2\n"); // another top-level folder
    f.commit("Bob", "Edit y");
    f.write("kb/other/x.md", "x2\n"); // a sibling folder
    f.commit("Bob", "Edit x");
    f.write("kb/notes/b.md", "b\n"); // the same folder, another file
    f.commit("Carol", "Add b");
    f.write(file, "two\n");
    let t5 = f.commit("Bob", "Edit a");
    let c5 = f.rev("HEAD");
    f.write("README.md", "r2\n"); // the root folder only
    f.commit("Carol", "Edit readme");
    f.commit("Carol", "Nothing at all");
    f.write(file, "three\n");
    let t8 = f.commit("Dave", "Edit a again");
    let c8 = f.rev("HEAD");
    let exe = f.work.join(file);
    let mut mode = std::fs::metadata(&exe).expect("stat").permissions();
    mode.set_mode(0o755);
    std::fs::set_permissions(&exe, mode).expect("chmod");
    let t9 = f.commit("Erin", "Make a executable");
    let c9 = f.rev("HEAD");
    f.write("kb/notes/b.md", "b2\n");
    f.commit("Carol", "Edit b");
    let bare = f.publish();

    let h = file_history(bare, "main", file, ALL).expect("history");
    assert_eq!(h.tip, Some(f.rev("HEAD")));
    assert!(!h.truncated);
    use ChangeKind::*;
    assert_eq!(
        short(&h),
        vec![
            (c9, "Erin".into(), t9, Modified),
            (c8, "Dave".into(), t8, Modified),
            (c5, "Bob".into(), t5, Modified),
            (c1.clone(), "Alice Doe".into(), t1, Added),
        ]
    );
    assert_eq!(ids(&h), git_log(bare, "main", file));
    // The same read from a pack, where most versions are deltas of others.
    let repack = Command::new("git")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .arg("--git-dir")
        .arg(bare)
        .args(["repack", "-adfq"])
        .status()
        .expect("git runs");
    assert!(repack.success());
    assert_eq!(file_history(bare, "main", file, ALL).expect("history"), h);
    let first = &h.changes[3];
    assert_eq!(first.email, "alicedoe@example.com");
    assert_eq!(first.offset, 7200);
    assert_eq!(first.summary, "Add notes");

    // A top-level file, and one in a folder changed by most commits.
    let h = file_history(bare, "main", "kb/notes/b.md", ALL).expect("history");
    let who: Vec<&str> = h.changes.iter().map(|c| c.summary.as_str()).collect();
    assert_eq!(who, ["Edit b", "Add b"]);
    assert_eq!(ids(&h), git_log(bare, "main", "kb/notes/b.md"));
    let h = file_history(bare, "main", "README.md", ALL).expect("history");
    let who: Vec<&str> = h.changes.iter().map(|c| c.summary.as_str()).collect();
    assert_eq!(who, ["Edit readme", "Add notes"]);
    assert_eq!(h.changes[1].commit, c1);
    assert_eq!(ids(&h), git_log(bare, "main", "README.md"));
}

#[test]
fn a_merge_is_listed_not_the_side_branch_commit() {
    let mut f = Fixture::new();
    f.write("a.md", "one\n");
    f.write("b.md", "b\n");
    f.commit("Alice", "Add a");
    let c1 = f.rev("HEAD");
    f.git(&["checkout", "-q", "-b", "side"]);
    f.write("a.md", "side\n");
    f.commit("Eve", "Edit a on side");
    f.git(&["checkout", "-q", "main"]);
    f.write("b.md", "b2\n");
    f.commit("Bob", "Edit b");
    let cmd = f.cmd(OsStr::new("Frank"), &format!("{} +0200", EPOCH + 10_000));
    f.run(
        cmd,
        &["merge", "-q", "--no-ff", "-m", "Merge side\n\nbody", "side"],
    );
    let merge = f.rev("HEAD");
    let bare = f.publish();

    let h = file_history(bare, "main", "a.md", ALL).expect("history");
    assert_eq!(
        short(&h),
        vec![
            (merge, "Frank".into(), EPOCH + 10_000, ChangeKind::Modified),
            (c1, "Alice".into(), EPOCH + 60, ChangeKind::Added),
        ]
    );
    assert_eq!(ids(&h), git_log(bare, "main", "a.md"));
    assert_eq!(h.changes[0].summary, "Merge side");
    // The side branch on its own lists its commit.
    let h = file_history(bare, "side", "a.md", ALL).expect("history");
    assert_eq!(h.changes.len(), 2);
    assert_eq!(h.changes[0].author, "Eve");
    assert_eq!(h.tip, Some(f.rev("side")));
}

#[test]
fn deletion_and_recreation_are_listed() {
    let mut f = Fixture::new();
    f.write("kb/a.md", "one\n");
    f.commit("Alice", "Add a");
    let c1 = f.rev("HEAD");
    f.git(&["rm", "-q", "kb/a.md"]);
    f.write("kb/keep.md", "k\n");
    f.commit("Bob", "Remove a");
    let c2 = f.rev("HEAD");
    f.write("kb/keep.md", "k2\n");
    f.commit("Bob", "Edit keep");
    f.write("kb/a.md", "one\n"); // the same content again
    f.commit("Carol", "Bring a back");
    let c4 = f.rev("HEAD");
    f.git(&["rm", "-q", "kb/a.md"]);
    f.write("kb/a.md/inner.md", "now a folder\n");
    f.commit("Dave", "Make a a folder");
    let c5 = f.rev("HEAD");
    f.git(&["rm", "-q", "-r", "kb"]);
    f.write("other.md", "o\n");
    f.commit("Dave", "Remove kb");
    let bare = f.publish();

    let h = file_history(bare, "main", "kb/a.md", ALL).expect("history");
    use ChangeKind::*;
    let got: Vec<(String, ChangeKind)> = h
        .changes
        .iter()
        .map(|c| (c.commit.clone(), c.kind))
        .collect();
    assert_eq!(
        got,
        vec![(c5, Deleted), (c4, Added), (c2, Deleted), (c1, Added)]
    );
    assert!(!h.truncated);
    // The folder's file: added, then its whole folder removed.
    let h = file_history(bare, "main", "kb/a.md/inner.md", ALL).expect("history");
    let kinds: Vec<ChangeKind> = h.changes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [Deleted, Added]);
}

#[test]
fn a_path_that_never_existed_has_no_changes() {
    let mut f = Fixture::new();
    f.write("kb/a.md", "one\n");
    f.commit("Alice", "Add a");
    f.write("kb/a.md", "two\n");
    f.commit("Alice", "Edit a");
    let bare = f.publish();
    for path in [
        "kb/none.md",
        "nope/x.md",
        "kb",
        "kb/a.md/deeper",
        "",
        "/kb/a.md",
        "kb//a.md",
        "kb/../kb/a.md",
    ] {
        let h = file_history(bare, "main", path, ALL).expect("history");
        assert_eq!(
            h,
            History {
                tip: Some(f.rev("HEAD")),
                changes: Vec::new(),
                truncated: false
            },
            "{path}"
        );
    }
}

#[test]
fn a_missing_branch_or_repository() {
    let mut f = Fixture::new();
    f.write("a.md", "one\n");
    f.commit("Alice", "Add a");
    let bare = f.publish();
    let h = file_history(bare, "nope", "a.md", ALL).expect("history");
    assert_eq!(
        h,
        History {
            tip: None,
            changes: Vec::new(),
            truncated: false
        }
    );
    let missing = bare.with_file_name("missing.git");
    let e = file_history(&missing, "main", "a.md", ALL).expect_err("no repository");
    assert!(e.to_string().contains("cannot open repository"), "{e}");
    assert!(!missing.exists());
}

#[test]
fn limits_truncate_the_walk() {
    let mut f = Fixture::new();
    f.write("a.md", "1\n");
    f.commit("Alice", "c1 add a"); // change
    f.write("b.md", "b\n");
    f.commit("Alice", "c2");
    f.write("a.md", "2\n");
    f.commit("Bob", "c3 edit a"); // change
    f.write("b.md", "b2\n");
    f.commit("Alice", "c4");
    f.write("a.md", "3\n");
    f.commit("Carol", "c5 edit a"); // change
    f.write("b.md", "b3\n");
    f.commit("Alice", "c6");
    let bare = f.publish();
    let run = |max_changes, max_commits| {
        let h = file_history(
            bare,
            "main",
            "a.md",
            Limits {
                max_changes,
                max_commits,
            },
        )
        .expect("history");
        let s: Vec<String> = h.changes.iter().map(|c| c.summary.clone()).collect();
        (s, h.truncated)
    };
    assert_eq!(run(1, 100), (vec!["c5 edit a".to_string()], true));
    assert!(run(2, 100).1);
    // Exactly as many changes as the file has: not truncated.
    assert_eq!(run(3, 100).0.len(), 3);
    assert!(!run(3, 100).1);
    assert_eq!(run(0, 100), (vec![], true));
    // Commits: c6 and c5 visited.
    assert_eq!(run(100, 2), (vec!["c5 edit a".to_string()], true));
    assert_eq!(run(100, 1), (vec![], true));
    assert_eq!(run(100, 0), (vec![], true));
    // Exactly as many commits as the branch has: the root is reached.
    assert_eq!(run(100, 6).0.len(), 3);
    assert!(!run(100, 6).1);
    assert!(run(100, 5).1);
}

#[test]
fn the_summary_is_the_first_line_cut_to_200_characters() {
    let mut f = Fixture::new();
    f.write("a.md", "1\n");
    f.commit("Alice", "\n  Add a  \nsecond line\n\nBody text.\n");
    let long: String = "é".repeat(300);
    f.write("a.md", "2\n");
    f.commit("Alice", &long);
    let bare = f.publish();
    let h = file_history(bare, "main", "a.md", ALL).expect("history");
    assert_eq!(h.changes[1].summary, "Add a");
    let s = &h.changes[0].summary;
    assert_eq!(s.chars().count(), SUMMARY_CHARS);
    assert!(s.ends_with("é…"), "{s}");
    assert_eq!(summary(""), "");
    assert_eq!(summary(&"x".repeat(200)), "x".repeat(200));
}

#[test]
fn odd_author_names_do_not_panic() {
    let mut f = Fixture::new();
    f.write("a.md", "1\n");
    f.git(&["add", "-A"]);
    // Declared Latin-1, git keeps the name's bytes as they are (it would convert them
    // to UTF-8 otherwise); they are read lossily, not re-encoded.
    let cmd = f.cmd(OsStr::from_bytes(b"Ren\xe9 Latin1"), "1700000000 +0000");
    f.run(
        cmd,
        &[
            "-c",
            "i18n.commitEncoding=ISO-8859-1",
            "commit",
            "-q",
            "-m",
            "Add a",
        ],
    );
    let raw = f
        .cmd(OsStr::new("Nobody"), "1600000000 +0000")
        .args(["cat-file", "commit", "HEAD"])
        .output()
        .expect("git runs")
        .stdout;
    assert!(raw.windows(4).any(|w| w == b"Ren\xe9"));
    let long = "N".repeat(10_000);
    f.write("a.md", "2\n");
    f.commit(&long, "Edit a");
    let bare = f.publish();
    let h = file_history(bare, "main", "a.md", ALL).expect("history");
    assert_eq!(h.changes[0].author, long);
    assert_eq!(h.changes[1].author, "Ren\u{fffd} Latin1");
    assert_eq!(h.changes[1].email, "renlatin1@example.com");
}

#[test]
fn the_delta_base_cache_keeps_the_last_entries() {
    let mut c = DeltaBases::default();
    let blob = gix::objs::Kind::Blob;
    let big = vec![7u8; DELTA_BASE_BYTES / 4];
    let mut out = Vec::new();
    c.put(0, 10, b"ten", gix::objs::Kind::Tree, 3);
    assert_eq!(c.get(0, 10, &mut out), Some((gix::objs::Kind::Tree, 3)));
    assert_eq!(out, b"ten");
    assert_eq!(c.get(1, 10, &mut out), None);
    for i in 0..4 {
        c.put(0, 100 + i, &big, blob, 1);
    }
    // Full: the oldest went first.
    assert_eq!(c.get(0, 10, &mut out), None);
    assert!(c.get(0, 103, &mut out).is_some());
    assert!(c.bytes <= DELTA_BASE_BYTES);
    // Too big to keep.
    c.put(0, 200, &vec![0; DELTA_BASE_BYTES / 4 + 1], blob, 1);
    assert_eq!(c.get(0, 200, &mut out), None);
}

#[test]
fn reading_leaves_the_repository_as_it_was() {
    let mut f = Fixture::new();
    f.write("a.md", "1\n");
    f.commit("Alice", "Add a");
    let bare = f.publish().to_path_buf();
    // A lock the worker holds (or will clean up) is not touched.
    std::fs::write(bare.join("refs/heads/main.lock"), "").expect("lock");
    let listing = |p: &Path| {
        let mut out = Vec::new();
        let mut stack = vec![p.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p.clone());
                }
                let m = e.metadata().expect("metadata");
                out.push((p, m.len(), m.modified().ok()));
            }
        }
        out.sort();
        out
    };
    let before = listing(&bare);
    let h = file_history(&bare, "main", "a.md", ALL).expect("history");
    assert_eq!(h.changes.len(), 1);
    assert_eq!(listing(&bare), before);
    assert!(bare.join("refs/heads/main.lock").exists());
}
