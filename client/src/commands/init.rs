//! `helix init`: write `.helix.toml` for this code repository, from flags or, on a terminal,
//! by asking. Never overwrites an existing file without `--force`.

use anyhow::{Context, Result, bail};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Server URL, e.g. http://127.0.0.1:7700.
    #[arg(long, conflicts_with = "local")]
    pub server: Option<String>,
    /// Project to follow (repeatable).
    #[arg(long = "project")]
    pub projects: Vec<String>,
    /// Local knowledge directory (serverless mode).
    #[arg(long)]
    pub local: Option<PathBuf>,
    /// Overwrite an existing .helix.toml.
    #[arg(long)]
    pub force: bool,
}

fn ask(q: &str, default: Option<&str>) -> Result<String> {
    let mut err = std::io::stderr();
    match default {
        Some(d) => write!(err, "{q} [{d}]: ")?,
        None => write!(err, "{q}: ")?,
    }
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let line = line.trim().to_string();
    Ok(if line.is_empty() {
        default.unwrap_or("").to_string()
    } else {
        line
    })
}

fn toml_str(s: &str) -> String {
    // A JSON string literal is a valid TOML basic string.
    serde_json::to_string(s).expect("serialising a str cannot fail")
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cwd = super::cwd()?;
    let file = cwd.join(crate::config::PROJECT_FILE);
    if file.exists() && !a.force {
        bail!(
            "{} already exists; pass --force to overwrite it",
            file.display()
        );
    }
    let (mut server, mut projects, mut local) = (a.server, a.projects, a.local);
    if server.is_none() && local.is_none() {
        if !std::io::stdin().is_terminal() {
            bail!(
                "nothing to write: pass `--server URL --project NAME` (repeat --project to follow several) \
                 or `--local DIR`"
            );
        }
        let s = ask(
            "helix server URL (empty for a local knowledge directory)",
            Some("http://127.0.0.1:7700"),
        )?;
        if s.is_empty() {
            local = Some(PathBuf::from(ask(
                "local knowledge directory",
                Some("knowledge"),
            )?));
        } else {
            server = Some(s);
        }
    }
    if server.is_some() && projects.is_empty() {
        if !std::io::stdin().is_terminal() {
            bail!("--server needs at least one --project NAME");
        }
        let p = ask("projects to follow (comma-separated)", None)?;
        projects = p
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    let text = match (&server, &local) {
        (Some(s), _) => {
            let list: Vec<String> = projects.iter().map(|p| toml_str(p)).collect();
            format!(
                "server = {}\nprojects = [{}]\n",
                toml_str(s.trim_end_matches('/')),
                list.join(", ")
            )
        }
        (None, Some(l)) => {
            let mut t = format!("local = {}\n", toml_str(&l.to_string_lossy()));
            if let Some(p) = projects.first() {
                t.push_str(&format!("project = {}\n", toml_str(p)));
            }
            t
        }
        (None, None) => bail!("pass --server URL --project NAME, or --local DIR"),
    };
    // Refuse to write something the loader would reject, or a directory `sync` cannot read.
    crate::config::parse(&file, &text)?;
    if let Some(l) = &local {
        let dir = cwd.join(l);
        if !dir.is_dir() {
            bail!(
                "{}: no such directory; create it (one Markdown file per entry, `<topic>/<slug>.md`) \
                 or pass the knowledge directory that exists, relative to {}",
                dir.display(),
                cwd.display()
            );
        }
    }
    std::fs::write(&file, &text).with_context(|| format!("writing {}", file.display()))?;
    println!("wrote {}", file.display());
    if local.is_some() {
        println!("next: `helix sync` compiles the directory; `helix search WORDS` searches it");
    } else {
        println!(
            "next: `helix sync` downloads the knowledge; `helix hooks install` wires Claude Code (`--agent codex|copilot|gemini|cursor` another agent)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
