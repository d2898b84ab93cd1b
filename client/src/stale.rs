//! `helix check --stale`: the entries of the followed projects whose `sources` name files of
//! the code repository at hand that were deleted or renamed since, or changed by many commits
//! since the entry's date. Asks the `git` program (not a hook path: a CLI and CI command).

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::knowledge::Knowledge;

/// Commits to a source since an entry's date beyond which it is reported (`--max-commits`,
/// `[check] stale_commits` in `.helix.toml`).
pub const DEFAULT_MAX_COMMITS: u32 = 10;
/// Renames followed from a deleted path to where it lives now.
const MAX_RENAMES: usize = 8;

/// One commit of a source's history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Commit {
    /// Abbreviated id.
    pub id: String,
    pub subject: String,
    /// Committer time, Unix seconds.
    #[serde(skip)]
    pub time: i64,
}

/// What is wrong with one source of one entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum Finding {
    /// Not in the working tree any more; `renamed_to` where git's rename detection found it
    /// (following renames), `gone_in` the commit that removed or renamed it.
    Missing {
        renamed_to: Option<String>,
        gone_in: Option<Commit>,
    },
    /// More than the allowed number of commits changed it after the entry's date.
    Changed { since: String, commits: Vec<Commit> },
}

/// A finding about one entry's source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Stale {
    pub project: String,
    pub id: String,
    pub source: String,
    #[serde(flatten)]
    pub finding: Finding,
}

/// The result of a check: what was looked at and what was found.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Entries with at least one source in this repository.
    pub entries: usize,
    /// Distinct sources of this repository checked.
    pub sources: usize,
    pub findings: Vec<Stale>,
}

/// What git says about one path, asked once however many entries name it.
#[derive(Debug, Clone)]
struct PathFacts {
    exists: bool,
    /// Commits that touched it, newest first (empty when git never had it).
    history: Vec<Commit>,
    /// For a missing path: where it went and the commit that did it.
    renamed_to: Option<String>,
    gone_in: Option<Commit>,
}

/// The work tree root of the git repository holding `cwd`.
pub fn repo_root(cwd: &Path) -> Result<PathBuf> {
    let out = git(cwd, &["rev-parse", "--show-toplevel"]).with_context(|| {
        format!(
            "{}: `helix check --stale` runs inside a git work tree",
            cwd.display()
        )
    })?;
    Ok(PathBuf::from(out.trim_end_matches('\n')))
}

/// Checks every entry of `k` (synced caches and pending overlays) against the repository
/// at `root`: sources that are not files of this repository (never in its history, or
/// globs) are left alone.
pub fn check(k: &Knowledge, root: &Path, max_commits: u32) -> Result<Report> {
    // (project, id) -> (sources, date); an overlay's copy replaces the synced one.
    let mut entries: BTreeMap<(String, String), (Vec<String>, Option<i64>)> = BTreeMap::new();
    for src in k.sources() {
        for doc in 0..src.index.len() {
            let Ok(e) = src.index.entry(doc) else {
                continue;
            };
            if e.sources.is_empty() {
                continue;
            }
            let sources = e
                .sources
                .iter()
                .filter(|s| !helix_index_format::is_glob(s))
                .map(|s| s.to_string())
                .collect();
            entries.insert((src.project.clone(), e.id.to_string()), (sources, e.date));
        }
    }
    let mut facts: HashMap<String, Option<PathFacts>> = HashMap::new();
    let mut report = Report::default();
    for ((project, id), (sources, date)) in entries {
        let mut named = false;
        for source in sources {
            if !facts.contains_key(&source) {
                let f = path_facts(root, &source)?;
                facts.insert(source.clone(), f);
            }
            let Some(f) = &facts[&source] else { continue };
            named = true;
            let finding = if !f.exists {
                Some(Finding::Missing {
                    renamed_to: f.renamed_to.clone(),
                    gone_in: f.gone_in.clone(),
                })
            } else {
                date.and_then(|d| {
                    // The entry's date is its writer's wall-clock time; commits are UTC. The
                    // difference (a zone offset) does not matter at this scale.
                    let since: Vec<Commit> =
                        f.history.iter().filter(|c| c.time > d).cloned().collect();
                    (since.len() > max_commits as usize).then(|| Finding::Changed {
                        since: helix_index_format::format_day(d),
                        commits: since,
                    })
                })
            };
            if let Some(finding) = finding {
                report.findings.push(Stale {
                    project: project.clone(),
                    id: id.clone(),
                    source,
                    finding,
                });
            }
        }
        report.entries += usize::from(named);
    }
    report.sources = facts.values().filter(|f| f.is_some()).count();
    Ok(report)
}

/// `None` when the path is not a file of this repository, now or in its history.
fn path_facts(root: &Path, path: &str) -> Result<Option<PathFacts>> {
    let exists = root.join(path).exists();
    let history = log(root, &["--", path])?;
    if !exists && history.is_empty() {
        return Ok(None);
    }
    let (mut renamed_to, mut gone_in) = (None, None);
    if !exists {
        let mut at = path.to_string();
        for _ in 0..MAX_RENAMES {
            let Some(c) = log(root, &["-1", "--diff-filter=D", "--", &at])?
                .into_iter()
                .next()
            else {
                break;
            };
            let to = renamed_in(root, &c.id, &at)?;
            if gone_in.is_none() {
                gone_in = Some(c);
            }
            match to {
                Some(to) if root.join(&to).exists() => {
                    renamed_to = Some(to);
                    break;
                }
                Some(to) => at = to,
                None => break,
            }
        }
    }
    Ok(Some(PathFacts {
        exists,
        history,
        renamed_to,
        gone_in,
    }))
}

/// Where `commit` moved `path`, by git's rename detection of that commit's diff.
fn renamed_in(root: &Path, commit: &str, path: &str) -> Result<Option<String>> {
    let out = git(
        root,
        &[
            "diff-tree",
            "-M",
            "-r",
            "--name-status",
            "--no-commit-id",
            "--root",
            commit,
        ],
    )?;
    Ok(out.lines().find_map(|line| {
        let mut parts = line.split('\t');
        let status = parts.next()?;
        let (from, to) = (parts.next()?, parts.next()?);
        (status.starts_with('R') && from == path).then(|| to.to_string())
    }))
}

/// Commits of `git log ARGS`, newest first.
fn log(root: &Path, args: &[&str]) -> Result<Vec<Commit>> {
    let mut all = vec!["log", "--format=%h%x09%ct%x09%s"];
    all.extend_from_slice(args);
    let out = git(root, &all)?;
    Ok(out
        .lines()
        .filter_map(|l| {
            let mut p = l.splitn(3, '\t');
            let id = p.next()?.to_string();
            let time = p.next()?.parse().ok()?;
            Some(Commit {
                id,
                time,
                subject: p.next().unwrap_or("").to_string(),
            })
        })
        .collect())
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        // A source is a path, never a pathspec with magic (`:(glob)…`).
        .env("GIT_LITERAL_PATHSPECS", "1")
        .output()
        .context("running `git` (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The report as people read it: one line per finding, naming entry, source and finding.
pub fn human(report: &Report, max_commits: u32) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for s in &report.findings {
        let _ = write!(out, "{}:{}: source {} ", s.project, s.id, s.source);
        match &s.finding {
            Finding::Missing {
                renamed_to,
                gone_in,
            } => {
                out.push_str("no longer exists");
                match (renamed_to, gone_in) {
                    (Some(to), Some(c)) => {
                        let _ = write!(out, "; renamed to {to} in {} ({})", c.id, c.subject);
                    }
                    (Some(to), None) => {
                        let _ = write!(out, "; renamed to {to}");
                    }
                    (None, Some(c)) => {
                        let _ = write!(out, "; deleted in {} ({})", c.id, c.subject);
                    }
                    (None, None) => {}
                }
                out.push('\n');
            }
            Finding::Changed { since, commits } => {
                let _ = writeln!(
                    out,
                    "changed by {} commits since the entry's date {since} (more than {max_commits}):",
                    commits.len()
                );
                for c in commits {
                    let _ = writeln!(out, "    {} {}", c.id, c.subject);
                }
            }
        }
    }
    out
}
