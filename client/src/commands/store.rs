//! `helix store`: write a pending entry (visible to search and hooks at once through the
//! overlay index); `helix sync` pushes it to the server later.

use crate::pending::{NewEntry, store};
use anyhow::{Context, Result, bail};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long)]
    pub topic: String,
    #[arg(long)]
    pub title: String,
    /// Comma-separated tags.
    #[arg(long, value_delimiter = ',')]
    pub tags: Vec<String>,
    /// Repository-relative code path the entry is about (repeatable).
    #[arg(long = "source")]
    pub sources: Vec<String>,
    /// Body text (else --file, else stdin).
    #[arg(long, conflicts_with = "file")]
    pub body: Option<String>,
    /// Read the body from this file.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Project to store into (default: the first followed project).
    #[arg(long)]
    pub project: Option<String>,
    /// Store even when the project holds a near-duplicate (edit that one instead when you can).
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = crate::config::require(&super::cwd()?)?;
    let body = match (a.body, a.file) {
        (Some(b), _) => b,
        (None, Some(f)) => {
            std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?
        }
        (None, None) => {
            if std::io::stdin().is_terminal() {
                eprintln!("helix: type the entry body, end with Ctrl-D");
            }
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading the body from stdin")?;
            s
        }
    };
    if body.trim().is_empty() {
        bail!("the entry body is empty; pass --body TEXT, --file F, or pipe it on stdin");
    }
    let stored = store(
        &cfg,
        a.project.as_deref(),
        NewEntry {
            topic: a.topic,
            title: a.title,
            body,
            tags: a.tags,
            sources: a.sources,
            force: a.force,
        },
        a.force,
    )?;
    if a.json {
        super::print_json(
            &serde_json::json!({"project": stored.project, "id": stored.id, "key": stored.key}),
        );
    } else if cfg.local.is_some() {
        println!("stored {}:{}", stored.project, stored.id);
    } else {
        println!(
            "stored {}:{} (pending; `helix sync` sends it)",
            stored.project, stored.id
        );
    }
    Ok(ExitCode::SUCCESS)
}
