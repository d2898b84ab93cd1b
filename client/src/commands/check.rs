//! `helix check DIR`: report every invalid entry and every credential in an entry file as
//! `path:line: reason` on stdout, and the pairs of near-duplicate entries; exit 1 if there is
//! an invalid entry or a credential, or if DIR holds Markdown but no entry. For the
//! knowledge repo's CI. `helix check --stale`, in a code repository: the entries whose
//! sources there were deleted, renamed or changed much since (`stale.rs`); for its CI.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Knowledge directory to check.
    #[arg(required_unless_present = "stale", conflicts_with = "stale")]
    pub dir: Option<PathBuf>,
    /// Check the followed projects' entries against the code repository here: sources that
    /// no longer exist (and where git saw them renamed), and sources changed by more than
    /// --max-commits commits since the entry's date. Exits 1 on any finding.
    #[arg(long)]
    pub stale: bool,
    /// With --stale: commits since an entry's date that a source may see before it is
    /// reported (default: `[check] stale_commits` of .helix.toml, else 10).
    #[arg(long, requires = "stale")]
    pub max_commits: Option<u32>,
    /// With --stale: the report as JSON.
    #[arg(long, requires = "stale")]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.stale {
        return stale(&a);
    }
    let dir = a.dir.expect("clap requires DIR without --stale");
    let meta =
        std::fs::metadata(&dir).with_context(|| format!("{}: cannot read", dir.display()))?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory", dir.display());
    let c = crate::compile::compile_dir(&dir, false)?;
    let secrets = secrets(&dir, &c.entry_files);
    // `supersedes` naming a missing entry or closing a cycle, as the server reports it.
    let lifecycle = helix_index_format::lifecycle_diagnostics(&c.entries);
    let mut lines: Vec<(String, u32, String)> = c
        .diagnostics
        .iter()
        .chain(&lifecycle)
        .map(|d| (d.path.clone(), d.line, d.to_string()))
        .chain(secrets.iter().cloned())
        .collect();
    lines.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (_, _, line) in &lines {
        println!("{line}");
    }
    // Duplicate ids cannot happen (ids are paths), but the builder is the final judge.
    let bytes = match crate::compile::to_artifact(&c, "check", 0, None) {
        Ok(b) => b,
        Err(e) => {
            println!("{}: {e:#}", dir.display());
            return Ok(ExitCode::from(1));
        }
    };
    let pairs = near_duplicates(&bytes);
    for (a, b, score) in &pairs {
        println!(
            "{a}: near-duplicate of {b} (similarity {score:.2}); merge them or make them distinct"
        );
    }
    let dups = match pairs.len() {
        0 => String::new(),
        1 => ", 1 near-duplicate pair".to_string(),
        n => format!(", {n} near-duplicate pairs"),
    };
    eprintln!("helix: {}, {} secrets{dups}", c.summary(), secrets.len());
    let warning = c.census.warning();
    if let Some(w) = &warning {
        eprintln!("helix: warning: {w}");
    }
    Ok(if lines.is_empty() && warning.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Pairs of entries at least `DUPLICATE_THRESHOLD` alike, as `(id, id, score)`.
fn near_duplicates(artifact: &[u8]) -> Vec<(String, String, f32)> {
    let Ok(index) = helix_index_format::Index::open(artifact) else {
        return Vec::new();
    };
    let refs = [&index];
    helix_index_format::Collection::new(&refs)
        .pairs(helix_index_format::DUPLICATE_THRESHOLD)
        .unwrap_or_default()
        .into_iter()
        .map(|(a, b, s)| (a.id.to_string(), b.id.to_string(), s))
        .collect()
}

fn stale(a: &Args) -> Result<ExitCode> {
    let cwd = super::cwd()?;
    let cfg = crate::config::require(&cwd)?;
    let root = crate::stale::repo_root(&cwd)?;
    let max = a
        .max_commits
        .or(cfg.stale_commits)
        .unwrap_or(crate::stale::DEFAULT_MAX_COMMITS);
    let k = crate::knowledge::Knowledge::from_config(&cfg);
    anyhow::ensure!(
        !k.sources().is_empty(),
        "no cached knowledge for {}; run `helix sync` first",
        cfg.projects.join(", ")
    );
    let report = crate::stale::check(&k, &root, max)?;
    if a.json {
        super::print_json(&serde_json::to_value(&report)?);
    } else {
        print!("{}", crate::stale::human(&report, max));
    }
    eprintln!(
        "helix: {} entries name {} files of {}; {} stale sources",
        report.entries,
        report.sources,
        root.display(),
        report.findings.len()
    );
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Credentials in every entry file, parseable or not, as `(path, line, message)`.
fn secrets(dir: &Path, entry_files: &[String]) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    for rel in entry_files {
        // An unreadable file is already a diagnostic of `compile_dir`.
        let Ok(bytes) = std::fs::read(dir.join(rel)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for s in helix_index_format::find_secrets_in_entry_file(&text) {
            let line = s.finding.line;
            out.push((
                rel.clone(),
                line,
                format!(
                    "{rel}:{line}: {} contains what looks like {}; remove it and revoke it (git keeps it in history), or reference where the secret lives instead",
                    s.field,
                    s.finding.description()
                ),
            ));
        }
    }
    out
}
