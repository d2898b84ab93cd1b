//! `helix brief [TOPIC]`: a compact summary — topics with counts, or one topic's entry
//! titles and dates — sized for an agent's context.

use crate::knowledge::Knowledge;
use anyhow::Result;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show this topic's entries instead of the topic list.
    pub topic: Option<String>,
    #[arg(long)]
    pub json: bool,
}

/// Entries of `topic` over all sources as (project, id, title, date), newest first.
pub fn topic_entries<'a>(
    k: &'a Knowledge,
    topic: &str,
) -> Vec<(&'a str, &'a str, &'a str, Option<i64>)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut order: Vec<_> = k.sources().iter().filter(|s| s.overlay).collect();
    order.extend(k.sources().iter().filter(|s| !s.overlay));
    for src in order {
        for doc in 0..src.index.len() {
            let Ok(e) = src.index.entry(doc) else {
                continue;
            };
            if e.topic == topic && seen.insert((src.project.as_str(), e.id)) {
                out.push((src.project.as_str(), e.id, e.title, e.date));
            }
        }
    }
    out.sort_by(|a, b| b.3.cmp(&a.3).then(a.1.cmp(b.1)));
    out
}

pub fn run(a: Args) -> Result<ExitCode> {
    let k = Knowledge::open(&super::cwd()?)?;
    match &a.topic {
        None => {
            let mut topics = k.topics();
            topics.sort_by(|x, y| y.1.count.cmp(&x.1.count).then(x.1.topic.cmp(y.1.topic)));
            if a.json {
                let t: Vec<_> = topics
                    .iter()
                    .map(|(p, t)| json!({"project": p, "topic": t.topic, "count": t.count}))
                    .collect();
                super::print_json(&json!({"entries": k.entry_count(), "topics": t}));
                return Ok(ExitCode::SUCCESS);
            }
            if k.sources().is_empty() {
                eprintln!("helix: no knowledge cached yet; run `helix sync`");
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{} entries in {} topics",
                crate::human::thousands(k.entry_count()),
                topics.len()
            );
            let line: Vec<String> = topics
                .iter()
                .map(|(p, t)| format!("{p}:{} ({})", t.topic, t.count))
                .collect();
            println!("{}", line.join(", "));
            println!("`helix brief TOPIC` lists a topic; `helix search WORDS` searches.");
        }
        Some(topic) => {
            let entries = topic_entries(&k, topic);
            if a.json {
                let e: Vec<_> = entries
                    .iter()
                    .map(|(p, id, title, d)| json!({"project": p, "id": id, "title": title, "date": d.map(helix_index_format::format_day)}))
                    .collect();
                super::print_json(&json!({"topic": topic, "entries": e}));
                return Ok(ExitCode::SUCCESS);
            }
            if entries.is_empty() {
                eprintln!("helix: no entries in topic `{topic}`; `helix topics` lists topics");
                return Ok(ExitCode::SUCCESS);
            }
            println!("{topic}: {} entries", entries.len());
            for (p, id, title, d) in entries {
                let date = d
                    .map(helix_index_format::format_day)
                    .unwrap_or_else(|| "          ".into());
                println!("  {date}  {title}  ({p}:{id})");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
