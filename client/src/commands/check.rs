//! `helix check DIR`: report every invalid entry as `path:line: reason` on stdout (the same
//! diagnostics the server records); exit 1 if there is any. For the knowledge repo's CI.

use anyhow::{Context, Result};
use std::path::PathBuf;
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
    for d in &c.diagnostics {
        println!("{d}");
    }
    // Duplicate ids cannot happen (ids are paths), but the builder is the final judge.
    if let Err(e) = crate::compile::to_artifact(&c, "check", 0) {
        println!("{}: {e:#}", a.dir.display());
        return Ok(ExitCode::from(1));
    }
    eprintln!(
        "helix: {} entries, {} invalid",
        c.entries.len() + c.diagnostics.len(),
        c.diagnostics.len()
    );
    Ok(if c.diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
