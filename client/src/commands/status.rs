//! `helix status`: configuration, server, each project's cached commit and age, pending
//! entries and the last sync result. Reads local files only; never contacts the server.

use crate::knowledge::INDEX_FILE;
use anyhow::Result;
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = crate::config::require(&super::cwd()?)?;
    let now = crate::sys::now_secs();
    let mut projects = Vec::new();
    for p in &cfg.projects {
        let dir = cfg.cache_dir(p);
        let pending = crate::pending::PendingDir::of(&cfg, p);
        let meta = crate::cache::read_meta(&dir).filter(|_| dir.join(INDEX_FILE).exists());
        let last = crate::cache::read_last_sync(&dir);
        // The tokenizer that built the cached artifact (an O(1) open of its header).
        let tokenizer = crate::knowledge::open_index(&dir.join(INDEX_FILE))
            .ok()
            .flatten()
            .map(|i| i.tokenizer_version());
        projects.push(json!({
            "name": p,
            "cached": meta.is_some(),
            "entries": meta.as_ref().map(|m| m.entries),
            "commit": meta.as_ref().map(|m| m.commit.clone()),
            "generation": meta.as_ref().map(|m| m.generation),
            "fetched_at": meta.as_ref().map(|m| m.fetched_at),
            "cache_age_seconds": meta.as_ref().map(|m| now - m.fetched_at),
            "pending": pending.as_ref().map_or(0, crate::pending::count),
            "last_sync": last.map(|l| json!({"at": l.at, "ok": l.ok, "message": l.message})),
            "cache_dir": dir.display().to_string(),
            "pending_dir": pending.as_ref().map(|d| d.path().display().to_string()),
            "tokenizer_version": tokenizer,
        }));
    }
    let v = json!({
        "config": cfg.file.display().to_string(),
        "mode": if cfg.server.is_some() { "server" } else { "local" },
        "server": cfg.server,
        "local": cfg.local.as_ref().map(|l| l.display().to_string()),
        "projects": projects,
    });
    if a.json {
        super::print_json(&v);
        return Ok(ExitCode::SUCCESS);
    }
    println!("config: {}", cfg.file.display());
    match (&cfg.server, &cfg.local) {
        (Some(s), _) => println!("server: {s}"),
        (_, Some(l)) => println!("local:  {}", l.display()),
        _ => {}
    }
    for p in v["projects"].as_array().into_iter().flatten() {
        let name = p["name"].as_str().unwrap_or("");
        let mut line = if p["cached"].as_bool() == Some(true) {
            let commit = p["commit"].as_str().unwrap_or("");
            // A local directory compiled without git has no commit to name.
            let commit = match commit.get(..7).unwrap_or(commit) {
                "" => String::new(),
                c => format!(", commit {c}"),
            };
            format!(
                "{name}: {} entries{commit}, generation {}, synced {} ago",
                crate::human::thousands(p["entries"].as_u64().unwrap_or(0)),
                p["generation"].as_u64().unwrap_or(0),
                crate::human::age(p["cache_age_seconds"].as_i64().unwrap_or(0))
            )
        } else {
            format!("{name}: not synced yet (run `helix sync`)")
        };
        let pending = p["pending"].as_u64().unwrap_or(0);
        if pending > 0 {
            line.push_str(&format!(", {pending} pending"));
        }
        println!("{line}");
        if let Some(t) = p["tokenizer_version"].as_u64()
            && t > u64::from(helix_index_format::TOKENIZER_VERSION)
        {
            println!(
                "  built by a newer helix (tokenizer {t}; this one knows up to {}): searches still work, inflected words may miss; update helix",
                helix_index_format::TOKENIZER_VERSION
            );
        }
        if let Some(l) = p["last_sync"].as_object() {
            let at = l.get("at").and_then(|x| x.as_i64()).unwrap_or(now);
            let ok = l.get("ok").and_then(|x| x.as_bool()).unwrap_or(false);
            println!(
                "  last sync {} ago: {}{}",
                crate::human::age(now - at),
                if ok { "" } else { "FAILED: " },
                l.get("message").and_then(|x| x.as_str()).unwrap_or("")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
