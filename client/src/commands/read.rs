//! `helix read ID`: one entry's full text and metadata (`project:id` or a bare id).

use crate::knowledge::Knowledge;
use anyhow::{Result, bail};
use helix_index_format::EntryRef;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Entry id (its path, e.g. `git/rebase-onto.md`), optionally `project:id`.
    pub id: String,
    /// Artifact file to read from instead of the configured projects.
    #[arg(long)]
    pub index: Option<std::path::PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// JSON form of an entry, shared by commands that print entries.
pub fn entry_json(project: &str, e: &EntryRef<'_>) -> serde_json::Value {
    let extra: serde_json::Value = if e.extra_json.is_empty() {
        json!({})
    } else {
        serde_json::from_str(e.extra_json).unwrap_or(json!({}))
    };
    json!({
        "id": e.id,
        "project": project,
        "topic": e.topic,
        "title": e.title,
        "tags": e.tags,
        "sources": e.sources,
        "date": e.date.map(helix_index_format::format_day),
        "author": e.author,
        "body": e.body,
        "pending": extra.get("pending_key").is_some(),
        "extra": extra,
    })
}

pub fn run(a: Args) -> Result<ExitCode> {
    let k = match &a.index {
        Some(f) => Knowledge::from_file(f)?,
        None => Knowledge::open(&super::cwd()?)?,
    };
    let Some((src, e)) = k.read_in(&a.id) else {
        bail!(
            "no entry `{}` in {} source(s); `helix search` lists ids",
            a.id,
            k.sources().len()
        );
    };
    let project = src.project.as_str();
    if a.index.is_none() {
        // For usage reports: whether injected entries are then read (docs/usage.md).
        crate::journal::append_read(
            &format!("{project}:{}", e.id),
            std::env::current_dir().ok().as_deref(),
            None,
        );
    }
    let note = crate::knowledge::hidden_note(&src.index, e.doc);
    if a.json {
        let mut v = entry_json(project, &e);
        v["blob"] = json!(src.index.blob(e.doc).ok().flatten());
        v["hidden"] = json!(note);
        super::print_json(&v);
        return Ok(ExitCode::SUCCESS);
    }
    println!("# {}", e.title);
    let mut meta = vec![format!("{project}:{}", e.id), format!("topic {}", e.topic)];
    if let Some(d) = e.date {
        meta.push(helix_index_format::format_day(d));
    }
    if let Some(au) = e.author {
        meta.push(format!("by {au}"));
    }
    if let Some(n) = note {
        meta.push(format!("{n}: left out of hooks and search"));
    }
    println!("{}", meta.join(" · "));
    if !e.tags.is_empty() {
        println!("tags: {}", e.tags.join(", "));
    }
    if !e.sources.is_empty() {
        println!("sources: {}", e.sources.join(", "));
    }
    println!();
    println!("{}", e.body.trim_end());
    Ok(ExitCode::SUCCESS)
}
