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
            let entries = k.topic_entries(topic);
            if a.json {
                let e: Vec<_> = entries
                    .iter()
                    .map(|(p, e)| json!({"project": p, "id": e.id, "title": e.title, "date": e.date.map(helix_index_format::format_day)}))
                    .collect();
                super::print_json(&json!({"topic": topic, "entries": e}));
                return Ok(ExitCode::SUCCESS);
            }
            if entries.is_empty() {
                eprintln!("helix: no entries in topic `{topic}`; `helix topics` lists topics");
                return Ok(ExitCode::SUCCESS);
            }
            println!("{topic}: {} entries", entries.len());
            for (p, e) in entries {
                let (id, title) = (e.id, e.title);
                let date = e
                    .date
                    .map(helix_index_format::format_day)
                    .unwrap_or_else(|| "          ".into());
                println!("  {date}  {title}  ({p}:{id})");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
