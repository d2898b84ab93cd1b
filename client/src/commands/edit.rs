//! `helix edit ID`: change an existing entry — in `$VISUAL`/`$EDITOR` (else `vi`), or with
//! `--title/--body/--tags/--source/--status/--supersedes` — stored as a pending edit that
//! names the version it starts from; `helix sync` sends it, and the server refuses it
//! (kept in `rejected/` with both versions) if the entry changed meanwhile.

use crate::edit::{Changes, apply, draft};
use crate::knowledge::Knowledge;
use anyhow::{Context, Result, bail};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Entry id (its path, e.g. `git/rebase-onto.md`), optionally `project:id`.
    pub id: String,
    /// New title.
    #[arg(long)]
    pub title: Option<String>,
    /// New body text.
    #[arg(long)]
    pub body: Option<String>,
    /// New tags, comma-separated (an empty string removes them all).
    #[arg(long, value_delimiter = ',')]
    pub tags: Option<Vec<String>>,
    /// New sources (repeatable; replaces them all).
    #[arg(long = "source")]
    pub sources: Option<Vec<String>>,
    /// `active` or `retired` (a retired entry leaves hook results and search).
    #[arg(long)]
    pub status: Option<String>,
    /// Id of an entry this one replaces (repeatable); that entry leaves hook results and
    /// search. `--supersedes ''` removes the list.
    #[arg(long)]
    pub supersedes: Option<Vec<String>>,
    /// The whole new entry file (front matter and body) from this file, `-` for stdin.
    #[arg(long, conflicts_with_all = ["title", "body", "tags", "sources", "status", "supersedes"])]
    pub file: Option<std::path::PathBuf>,
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = crate::config::require(&super::cwd()?)?;
    let k = Knowledge::from_config(&cfg);
    let d = draft(&k, &cfg, &a.id)?;
    let changes = Changes {
        title: a.title,
        body: a.body,
        tags: a.tags,
        sources: a.sources,
        status: a.status,
        supersedes: a
            .supersedes
            .map(|ids| ids.into_iter().filter(|i| !i.trim().is_empty()).collect()),
    };
    let text = if let Some(f) = &a.file {
        if f.as_os_str() == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .context("reading the entry from stdin")?;
            s
        } else {
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?
        }
    } else if changes.is_empty() {
        in_editor(&d.id, &d.text)?
    } else {
        apply(&d.id, &d.text, &changes)?
    };
    if text == d.text {
        eprintln!("helix: {}:{} unchanged; nothing stored", d.project, d.id);
        return Ok(ExitCode::SUCCESS);
    }
    let stored = crate::pending::edit(&cfg, &d.project, &d.id, d.base.as_deref(), &text)?;
    if a.json {
        super::print_json(&serde_json::json!({
            "project": stored.project, "id": stored.id, "key": stored.key, "base": d.base,
        }));
    } else if cfg.local.is_some() {
        println!("edited {}:{}", stored.project, stored.id);
    } else {
        println!(
            "edited {}:{} (pending; `helix sync` sends it)",
            stored.project, stored.id
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens `text` in the user's editor and returns what was saved. Text that does not pass
/// the checks stays in its file, whose path the error names: nothing typed is lost.
fn in_editor(id: &str, text: &str) -> Result<String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string());
    let dir = crate::paths::state_dir().join("edits");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let stem = helix_index_format::slugify(id.trim_end_matches(".md"));
    let path = dir.join(format!("{stem}-{}.md", std::process::id()));
    crate::sys::write_atomic(&path, text.as_bytes())?;
    // Through the shell, as git runs it: `EDITOR="code --wait"` works.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status()
        .with_context(|| format!("starting the editor `{editor}`"))?;
    if !status.success() {
        bail!(
            "the editor `{editor}` exited with {status}; nothing stored (the text is in {})",
            path.display()
        );
    }
    let edited =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    if let Err(e) = helix_index_format::validate_edit(id, &edited) {
        bail!(
            "invalid entry: {e}; nothing stored (your text is in {}: fix it, then `helix edit {id} --file` that path)",
            path.display()
        );
    }
    let _ = std::fs::remove_file(&path);
    Ok(edited)
}
