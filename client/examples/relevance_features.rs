//! For tuning the hooks' relevance gate: runs every case of the judged benchmark
//! (benches/relevance/judgements.jsonl) through the prompt and error hooks' query building
//! and search (ambient: its whole-name search), in process, and prints one JSON line per
//! case with the query's terms (idf, document frequency) and the top hits with the terms
//! each matched (and whether in its title). Fit the gate on the `tune` and `heldout`
//! splits; never look at `fresh` while tuning.
//!
//! `cargo run --release -p helix-client --example relevance_features -- ARTIFACT CASES`
//! (ARTIFACT: `helix build corpora/til --no-git --project til -o til.hix`).
//! `PMAX`/`EMAX` set the prompt and error term limits (default: the hooks'), `LIMIT` the
//! hits per case (default 10).

use helix_client::hook::gate;
use helix_client::hook::keywords::{
    ERROR_TERMS, FailedCommand, PROMPT_TERMS, error_terms_up_to, error_text, file_name_term,
    prompt_terms_up_to,
};
use helix_client::knowledge::Knowledge;
use helix_index_format::tokenize::Analyzer;
use helix_index_format::{Mode, SearchOptions};
use serde_json::{Value, json};
use std::process::ExitCode;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(artifact), Some(cases)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: relevance_features ARTIFACT CASES");
        return ExitCode::from(2);
    };
    let k = match Knowledge::from_file(std::path::Path::new(artifact)) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{e:#}");
            return ExitCode::from(2);
        }
    };
    let Ok(cases) = std::fs::read_to_string(cases) else {
        eprintln!("cannot read {cases}");
        return ExitCode::from(2);
    };
    let (pmax, emax, limit) = (
        env("PMAX", PROMPT_TERMS),
        env("EMAX", ERROR_TERMS),
        env("LIMIT", 10),
    );
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(c) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let input = c["input"].as_str().unwrap_or("");
        let command = FailedCommand::read(c["command"].as_str().unwrap_or(""));
        let terms: Vec<String> = match c["kind"].as_str() {
            Some("prompt") => prompt_terms_up_to(input, pmax),
            Some("error") => error_terms_up_to(&error_text(input), &command.words, emax),
            _ if std::env::var_os("XAMB").is_some() => {
                // Experiment: the path's words (last three components, the name's words).
                let comps: Vec<&str> = input.rsplit('/').take(3).collect();
                let mut t: Vec<String> = Vec::new();
                for (i, c) in comps.iter().enumerate() {
                    let ws = if i == 0 {
                        helix_client::hook::keywords::plain_name_words(c)
                    } else {
                        helix_client::hook::keywords::plain_name_words(&format!("{c}.x"))
                    };
                    for w in ws {
                        if !w.chars().all(|ch| ch.is_ascii_digit()) && !t.contains(&w) {
                            t.push(w);
                        }
                    }
                }
                t
            }
            _ => std::path::Path::new(input)
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(file_name_term)
                .into_iter()
                .collect(),
        };
        let query = terms.join(" ");
        let opts = SearchOptions {
            limit,
            mode: Mode::Or,
            snippet_chars: 0,
            ..SearchOptions::default()
        };
        let found = k.find(&query, &opts, None);
        let hits: Vec<Value> = found
            .hits
            .iter()
            .map(|h| {
                let q = found.query_of(h);
                let mut title = Vec::new();
                Analyzer::for_version(q.tokenizer_version())
                    .tokens(h.hit.entry.title, |t, _| title.push(t.to_string()));
                let terms: Vec<Value> = q
                    .terms()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        json!({"t": t.text, "req": t.required, "idf": found.stats.idf(&t.text),
                               "df": found.stats.df(&t.text), "m": h.hit.matched & (1 << i) != 0,
                               "title": title.contains(&t.text)})
                    })
                    .collect();
                json!({"id": h.hit.entry.id, "score": h.hit.score, "full": h.hit.full, "terms": terms})
            })
            .collect();
        let qterms: Vec<Value> = found
            .query()
            .map(|q| {
                q.terms()
                    .iter()
                    .map(|t| json!({"t": t.text, "req": t.required, "idf": found.stats.idf(&t.text), "df": found.stats.df(&t.text)}))
                    .collect()
            })
            .unwrap_or_default();
        // The gate's verdicts on the first hits, as the prompt and error hooks judge them.
        let form = match c["kind"].as_str() {
            Some("prompt") => Some(gate::Form::of_prompt(input)),
            Some("error") => Some(gate::Form::Error),
            _ if std::env::var_os("XAMB").is_some() => Some(gate::Form::Error),
            _ => None,
        };
        let verdicts: Vec<Value> = form
            .map(|form| {
                let own_code = form != gate::Form::Error && gate::names_own_code(&found, input);
                let seen = gate::Seen {
                    own_code,
                    tools: &command.tools,
                    failure: form == gate::Form::Error,
                };
                (0..3)
                    .filter_map(|at| gate::judge(&found, at, form, seen))
                    .map(|v| json!({"pass": v.pass, "points": v.points, "signal": v.signal.name(),
                                    "separation": v.evidence.separation, "coverage": v.evidence.coverage,
                                    "mass": v.evidence.mass, "matched": v.evidence.matched,
                                    "unknown": v.evidence.unknown}))
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "{}",
            json!({"id": c["id"], "kind": c["kind"], "class": c["class"], "split": c["split"],
                   "expected": c["expected"], "query": query, "qterms": qterms, "hits": hits,
                   "verdicts": verdicts, "tools": command.tools, "words": command.words})
        );
    }
    ExitCode::SUCCESS
}
