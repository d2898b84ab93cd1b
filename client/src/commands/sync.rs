//! `helix sync`: download changed artifacts, push pending entries, one line per project.
//! Exits 1 when any project could not be synced (the cache is then left as it was).

use anyhow::Result;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print nothing unless something failed (for hooks and cron).
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = crate::config::require(&super::cwd()?)?;
    let reports = crate::sync::sync_all(&cfg, a.quiet)?;
    let mut ok = true;
    for r in &reports {
        ok &= r.ok;
        if r.ok {
            if !a.quiet {
                println!("{}", r.line);
            }
        } else {
            // Failures always reach stderr, even with --quiet.
            eprintln!("{}", r.line);
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
