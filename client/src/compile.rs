//! Compiling a knowledge directory into an artifact: the code path shared by `helix build`,
//! `helix check` and local-mode `helix sync` (same parser and builder as the server).

use anyhow::{Context, Result};
use helix_index_format::{BuildInfo, Diagnostic, Entry, GitMeta};
use std::collections::HashMap;
use std::path::Path;

/// Entries and diagnostics of one directory.
#[derive(Debug, Default)]
pub struct Compiled {
    pub entries: Vec<Entry>,
    pub diagnostics: Vec<Diagnostic>,
    /// `git rev-parse HEAD` of the directory, when it is in a git work tree.
    pub commit: String,
}

/// Repository-relative (to `dir`) paths of all regular files below `dir`, `/`-separated, sorted.
/// Hidden directories (`.git`, `.github`) are not entered; symlinks are not followed.
pub fn walk(dir: &Path) -> Result<Vec<String>> {
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
                if !name.starts_with('.') {
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

/// Last-change commit time and author per file, from `git log` (empty when not a git tree).
fn git_meta(dir: &Path) -> (HashMap<String, GitMeta>, String) {
    let mut map = HashMap::new();
    let head = std::process::Command::new("git")
        .args(["-C"])
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output();
    let commit = match head {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => return (map, String::new()),
    };
    let out = std::process::Command::new("git")
        .args(["-c", "core.quotepath=off", "-C"])
        .arg(dir)
        .args([
            "log",
            "--format=%x01%ct%x01%an",
            "--name-only",
            "--relative",
            "--no-renames",
            "--",
            ".",
        ])
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else { return (map, commit) };
    if !out.status.success() {
        return (map, commit);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut current: Option<GitMeta> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('\u{1}') {
            let (time, author) = rest.split_once('\u{1}').unwrap_or((rest, ""));
            current = time.parse().ok().map(|time| GitMeta {
                time,
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

/// Parses every entry file below `dir`. `use_git` adds dates/authors from `git log`.
pub fn compile_dir(dir: &Path, use_git: bool) -> Result<Compiled> {
    let files = walk(dir)?;
    let (git, commit) = if use_git {
        git_meta(dir)
    } else {
        (HashMap::new(), String::new())
    };
    let mut c = Compiled {
        commit,
        ..Default::default()
    };
    for rel in files {
        if !helix_index_format::is_entry_path(&rel) {
            continue;
        }
        let bytes = match std::fs::read(dir.join(&rel)) {
            Ok(b) => b,
            Err(e) => {
                c.diagnostics.push(Diagnostic {
                    path: rel,
                    line: 1,
                    reason: format!("cannot read file: {e}"),
                });
                continue;
            }
        };
        match helix_index_format::parse_entry(&rel, &bytes, git.get(&rel)) {
            Ok(e) => c.entries.push(e),
            Err(d) => c.diagnostics.push(d),
        }
    }
    Ok(c)
}

/// Builds artifact bytes from a compiled directory.
pub fn to_artifact(c: &Compiled, project: &str, generation: u64) -> Result<Vec<u8>> {
    let info = BuildInfo {
        project: project.to_string(),
        commit: c.commit.clone(),
        generation,
        build_time: crate::sys::now_secs(),
    };
    helix_index_format::build(&c.entries, &info)
        .map_err(|e| anyhow::anyhow!("compiling {project}: {e}"))
}
