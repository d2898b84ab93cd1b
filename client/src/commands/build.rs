//! `helix build DIR -o FILE`: compile a knowledge directory into an artifact locally,
//! with the same parser and builder as the server. Diagnostics go to stderr.

use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Knowledge directory (topic folders of Markdown entries).
    pub dir: PathBuf,
    /// Artifact file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Project name recorded in the artifact (default: the directory's name).
    #[arg(long)]
    pub project: Option<String>,
    /// Generation recorded in the artifact.
    #[arg(long, default_value_t = 0)]
    pub generation: u64,
    /// Do not read dates and authors from `git log`.
    #[arg(long)]
    pub no_git: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let meta =
        std::fs::metadata(&a.dir).with_context(|| format!("{}: cannot read", a.dir.display()))?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory", a.dir.display());
    let start = std::time::Instant::now();
    let c = crate::compile::compile_dir(&a.dir, !a.no_git)?;
    for d in &c.diagnostics {
        eprintln!("{d}");
    }
    let project = a.project.clone().unwrap_or_else(|| {
        a.dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .unwrap_or_else(|| "local".to_string())
    });
    let bytes = crate::compile::to_artifact(&c, &project, a.generation, None)?;
    crate::sys::write_atomic(&a.output, &bytes)
        .with_context(|| format!("writing {}", a.output.display()))?;
    eprintln!(
        "helix: wrote {} ({} bytes, {:.0?}): {}",
        a.output.display(),
        bytes.len(),
        start.elapsed(),
        c.summary()
    );
    if let Some(w) = c.census.warning() {
        eprintln!("helix: warning: {w}");
    }
    Ok(ExitCode::SUCCESS)
}
