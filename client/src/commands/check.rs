//! `helix check DIR`: report every invalid entry and every credential in an entry file as
//! `path:line: reason` on stdout; exit 1 if there is any, or if DIR holds Markdown but no
//! entry. For the knowledge repo's CI.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Knowledge directory to check.
    pub dir: PathBuf,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let meta =
        std::fs::metadata(&a.dir).with_context(|| format!("{}: cannot read", a.dir.display()))?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory", a.dir.display());
    let c = crate::compile::compile_dir(&a.dir, false)?;
    let secrets = secrets(&a.dir, &c.entry_files);
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
    if let Err(e) = crate::compile::to_artifact(&c, "check", 0) {
        println!("{}: {e:#}", a.dir.display());
        return Ok(ExitCode::from(1));
    }
    eprintln!("helix: {}, {} secrets", c.summary(), secrets.len());
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
