//! `helix topics`: every topic with its entry count, per followed project.

use crate::knowledge::Knowledge;
use anyhow::Result;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let k = Knowledge::open(&super::cwd()?)?;
    let topics = k.topics();
    if a.json {
        let v: Vec<_> = topics
            .iter()
            .map(|(p, t)| json!({"project": p, "topic": t.topic, "count": t.count}))
            .collect();
        super::print_json(&json!({ "topics": v }));
        return Ok(ExitCode::SUCCESS);
    }
    if topics.is_empty() {
        eprintln!("helix: no knowledge cached yet; run `helix sync`");
    }
    for (p, t) in &topics {
        println!("{p}:{}\t{}", t.topic, t.count);
    }
    Ok(ExitCode::SUCCESS)
}
