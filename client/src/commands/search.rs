//! `helix search QUERY…`: BM25 search over the followed projects and the pending overlay,
//! or one artifact file with `--index`. Human output by default, `--json` for scripts.

use crate::knowledge::Knowledge;
use anyhow::Result;
use helix_index_format::SearchOptions;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Search this artifact file instead of the configured projects.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Maximum number of hits.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub limit: usize,
    /// Only entries of this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// Print `{"hits": [...]}` JSON.
    #[arg(long)]
    pub json: bool,
    /// Query words.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let k = match &a.index {
        Some(file) => Knowledge::from_file(file)?,
        None => Knowledge::open(&super::cwd()?)?,
    };
    let query = a.query.join(" ");
    let opts = SearchOptions {
        limit: a.limit,
        topic: a.topic.clone(),
        now: Some(crate::sys::now_secs()),
        ..SearchOptions::default()
    };
    let hits = k.search(&query, &opts);
    if a.json {
        let hits: Vec<_> = hits
            .iter()
            .map(|h| {
                json!({
                    "id": h.hit.entry.id,
                    "project": h.project,
                    "topic": h.hit.entry.topic,
                    "title": h.hit.entry.title,
                    "score": h.hit.score,
                    "date": h.hit.entry.date.map(helix_index_format::format_day),
                    "snippet": h.hit.snippet,
                })
            })
            .collect();
        super::print_json(&json!({ "hits": hits }));
        return Ok(ExitCode::SUCCESS);
    }
    if hits.is_empty() {
        if k.sources().is_empty() {
            eprintln!("helix: no knowledge cached yet; run `helix sync`");
        } else {
            eprintln!("helix: no entries match `{query}`");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let multi = k
        .sources()
        .iter()
        .any(|s| s.project != k.sources()[0].project);
    for (i, h) in hits.iter().enumerate() {
        let e = &h.hit.entry;
        let label = if multi || a.index.is_none() {
            format!("{}:", h.project)
        } else {
            String::new()
        };
        let date = e
            .date
            .map(|d| format!(", {}", helix_index_format::format_day(d)))
            .unwrap_or_default();
        println!(
            "{:>2}. {}{}  {}  ({}{}, score {:.2})",
            i + 1,
            label,
            e.id,
            e.title,
            e.topic,
            date,
            h.hit.score
        );
        let snippet = h.hit.snippet.trim();
        if !snippet.is_empty() {
            println!("    {}", snippet.replace('\n', " "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
