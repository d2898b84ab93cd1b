//! Compiling a knowledge directory into an artifact: the code path shared by `helix build`,
//! `helix check` and local-mode `helix sync` (same files, parser and builder as the server).

use anyhow::{Context, Result};
use helix_index_format::{BuildInfo, Census, Diagnostic, Entry, FileKind, GitMeta, Root};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// Entries and diagnostics of one directory.
#[derive(Debug, Default)]
pub struct Compiled {
    pub entries: Vec<Entry>,
    pub diagnostics: Vec<Diagnostic>,
    /// `git rev-parse HEAD` of the directory, when it is in a git work tree.
    pub commit: String,
    /// Paths (relative to the directory) of the files read as entries, valid or not.
    pub entry_files: Vec<String>,
    /// What became of every Markdown file.
    pub census: Census,
}

impl Compiled {
    /// `12 entries, 1 invalid` and, when some Markdown files are not entries, why: the
    /// line `helix build` and `helix check` print alike.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} entries, {} invalid",
            self.census.entries, self.census.invalid
        );
        if let Some(skipped) = self.census.skipped_line() {
            s.push_str(&format!("; {skipped}"));
        }
        s
    }
}

/// The files of a knowledge directory, as the server would see them.
#[derive(Debug)]
pub struct Files {
    /// `/`-separated paths relative to the directory, sorted.
    pub paths: Vec<String>,
    /// The directory's path below the top of its git work tree (`docs/adr`); `None` at
    /// the top, or outside any work tree.
    pub folder: Option<String>,
}

impl Files {
    /// Files at the directory's root are entries when it is a folder of a repository, as
    /// under a server project's `subdir`.
    pub fn root(&self) -> Root<'_> {
        Root::of_subdir(self.folder.as_deref())
    }
}

/// In a git work tree: what git tracks below `dir`, plus untracked files it does not
/// ignore (a new entry counts before its commit; `node_modules/` never does). Elsewhere, or
/// when git ignores `dir` itself: every regular file.
pub fn files(dir: &Path) -> Result<Files> {
    let prefix = git_out(dir, &["rev-parse", "--show-prefix"])
        .filter(|_| git_out(dir, &["check-ignore", "-q", "."]).is_none());
    let Some(prefix) = prefix else {
        return Ok(Files {
            paths: walk(dir)?,
            folder: None,
        });
    };
    let listed = git_out(
        dir,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    )
    .with_context(|| format!("listing the files git knows in {}", dir.display()))?;
    let mut paths: Vec<String> = listed
        .split('\0')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            // Files only (a deleted file git still tracks, a submodule, a symlink: not read).
            std::fs::symlink_metadata(dir.join(p)).is_ok_and(|m| m.is_file())
        })
        .map(str::to_string)
        .collect();
    paths.sort();
    paths.dedup();
    let folder = prefix.trim().trim_end_matches('/');
    Ok(Files {
        paths,
        folder: (!folder.is_empty()).then(|| folder.to_string()),
    })
}

/// Output of `git -C dir ARGS` when it succeeds; `None` when git is missing or fails (not a
/// work tree). Paths keep their bytes (`core.quotepath` off; `-z` where lists are asked).
fn git_out(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(["-c", "core.quotepath=off", "-C"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Relative (to `dir`) paths of all regular files below `dir`, `/`-separated, sorted.
/// Hidden directories are entered only where agent files live (`.github`, `.cursor`);
/// symlinks are not followed.
fn walk(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((abs, rel)) = stack.pop() {
        let rd = std::fs::read_dir(&abs)
            .with_context(|| format!("reading directory {}", abs.display()))?;
        for de in rd {
            let de = de.with_context(|| format!("reading directory {}", abs.display()))?;
            let Ok(name) = de.file_name().into_string() else {
                continue; // non-UTF-8 names cannot be entry ids
            };
            let ft = de.file_type()?;
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if ft.is_dir() {
                if name != ".git" {
                    stack.push((de.path(), child_rel));
                }
            } else if ft.is_file() {
                out.push(child_rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Per file, the last non-merge commit that changed it (`git log`'s newest first), with its
/// author and author date in the author's offset; and `HEAD`. Empty when not a git tree.
fn git_meta(dir: &Path) -> (HashMap<String, GitMeta>, String) {
    let mut map = HashMap::new();
    let Some(commit) = git_out(dir, &["rev-parse", "HEAD"]) else {
        return (map, String::new());
    };
    let commit = commit.trim().to_string();
    let log = git_out(
        dir,
        &[
            "log",
            "--no-merges",
            "--date=raw",
            "--format=%x01%ad%x01%an",
            "--name-only",
            "--relative",
            "--no-renames",
            "--",
            ".",
        ],
    );
    let Some(text) = log else {
        return (map, commit);
    };
    let mut current: Option<GitMeta> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('\u{1}') {
            let (date, author) = rest.split_once('\u{1}').unwrap_or((rest, ""));
            current = raw_date(date).map(|(time, offset)| GitMeta {
                time,
                offset,
                author: author.to_string(),
            });
        } else if !line.is_empty()
            && let Some(m) = &current
        {
            // Newest commit first: the first time a path appears is its last change.
            map.entry(line.to_string()).or_insert_with(|| m.clone());
        }
    }
    (map, commit)
}

/// `1709607600 -0500` (git's raw date) → Unix seconds and the offset in seconds.
fn raw_date(s: &str) -> Option<(i64, i32)> {
    let (secs, zone) = s.trim().split_once(' ')?;
    let secs = secs.parse().ok()?;
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    Some((secs, sign * (hours * 3600 + minutes * 60)))
}

/// Parses every entry file below `dir`. `use_git` adds dates/authors from `git log`.
pub fn compile_dir(dir: &Path, use_git: bool) -> Result<Compiled> {
    let files = files(dir)?;
    let root = files.root();
    let (git, commit) = if use_git {
        git_meta(dir)
    } else {
        (HashMap::new(), String::new())
    };
    let mut c = Compiled {
        commit,
        ..Default::default()
    };
    for rel in &files.paths {
        match root.classify(rel) {
            FileKind::Entry { .. } => {}
            FileKind::Skipped(why) => {
                c.census.skip(why);
                continue;
            }
            FileKind::Other => continue,
        }
        c.entry_files.push(rel.clone());
        let parsed = match std::fs::read(dir.join(rel)) {
            Ok(bytes) => root.parse(rel, &bytes, git.get(rel)),
            Err(e) => Err(Diagnostic {
                path: rel.clone(),
                line: 1,
                reason: format!("cannot read file: {e}"),
            }),
        };
        match parsed {
            Ok(e) => c.entries.push(e),
            Err(d) => c.diagnostics.push(d),
        }
    }
    c.census.entries = c.entries.len() as u64;
    c.census.invalid = c.diagnostics.len() as u64;
    Ok(c)
}

/// Builds artifact bytes from a compiled directory.
pub fn to_artifact(
    c: &Compiled,
    project: &str,
    generation: u64,
    embeddings: Option<&helix_index_format::Embeddings>,
) -> Result<Vec<u8>> {
    let info = BuildInfo {
        project: project.to_string(),
        commit: c.commit.clone(),
        generation,
        build_time: crate::sys::now_secs(),
    };
    helix_index_format::build_with_embeddings(&c.entries, &info, embeddings)
        .map_err(|e| anyhow::anyhow!("compiling {project}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_dates_keep_their_offset() {
        assert_eq!(raw_date("1709607600 -0500"), Some((1_709_607_600, -18_000)));
        assert_eq!(raw_date("0 +0530"), Some((0, 19_800)));
        for bad in ["", "1", "1 0500", "1 +05", "x +0000"] {
            assert_eq!(raw_date(bad), None, "{bad}");
        }
    }
}
