//! `helix search QUERY…`: BM25 search over the followed projects and the pending overlays
//! (scored with their shared statistics), or one artifact file with `--index`. Human output
//! by default, `--json` for scripts; `--explain` shows where each score comes from and
//! whether the hooks' relevance gate would let the hit through.

use crate::hook::events::INJECT_MAX;
use crate::hook::gate;
use crate::knowledge::{Found, Knowledge, ProjectHit};
use anyhow::{Result, bail};
use helix_index_format::relevance::{self, SEPARATION_DEPTH, TermScore};
use helix_index_format::{Mode, SearchOptions};
use serde_json::{Value, json};
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
    /// Only entries of this topic; `project:topic` (as `helix topics` prints) also picks
    /// the project.
    #[arg(long)]
    pub topic: Option<String>,
    /// Only entries of this followed project.
    #[arg(long)]
    pub project: Option<String>,
    /// Show, per hit, the matched terms, each field's part of the score, whether the
    /// hooks' relevance gate would pass it and whether the prompt hook would inject it
    /// (ranking as the hooks do: any query word).
    #[arg(long)]
    pub explain: bool,
    /// Also retired and superseded entries (marked so), which hooks and searches leave out.
    #[arg(long)]
    pub all: bool,
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
    let projects: Vec<&str> = {
        let mut p: Vec<&str> = k.sources().iter().map(|s| s.project.as_str()).collect();
        p.dedup();
        p
    };
    let (mut project, mut topic) = (a.project.clone(), a.topic.clone());
    if let Some(t) = &a.topic
        && let Some((p, rest)) = t.split_once(':')
        && projects.contains(&p)
    {
        if project.as_deref().is_some_and(|q| q != p) {
            bail!(
                "--topic {t} names project `{p}` but --project says `{}`",
                project.unwrap_or_default()
            );
        }
        project = Some(p.to_string());
        topic = Some(rest.to_string());
    }
    if let Some(p) = &project
        && !projects.contains(&p.as_str())
    {
        bail!(
            "unknown project `{p}`; searched projects: {}",
            if projects.is_empty() {
                "none (run `helix sync`)".to_string()
            } else {
                projects.join(", ")
            }
        );
    }
    let query = a.query.join(" ");
    let opts = SearchOptions {
        // The gate compares a hit with the top ten.
        limit: if a.explain {
            a.limit.max(SEPARATION_DEPTH)
        } else {
            a.limit
        },
        topic,
        mode: if a.explain { Mode::Or } else { Mode::AndThenOr },
        now: Some(crate::sys::now_secs()),
        include_hidden: a.all,
        ..SearchOptions::default()
    };
    let found = k.find(&query, &opts, project.as_deref());
    let found =
        crate::semantic::search_fusion(&k, found, project.as_deref(), &query, &opts, a.explain);
    let hits = &found.hits[..found.hits.len().min(a.limit)];
    let form = gate::Form::of_prompt(&query);
    let own_code = gate::names_own_code(&found, &query);
    let hook = HookView::new(&found, form, own_code);
    if a.json {
        let hits: Vec<Value> = hits
            .iter()
            .enumerate()
            .map(|(at, h)| {
                let mut v = json!({
                    "id": h.hit.entry.id,
                    "project": h.project,
                    "topic": h.hit.entry.topic,
                    "title": h.hit.entry.title,
                    "score": h.hit.score,
                    "date": h.hit.entry.date.map(helix_index_format::format_day),
                    "snippet": h.hit.snippet,
                });
                if let Some(c) = h.cosine {
                    v["cosine"] = json!(c);
                }
                if a.explain {
                    v["explain"] = explain_json(&found, h, at, &hook);
                }
                if let Some(note) = k.hidden_note(h) {
                    v["hidden"] = json!(note);
                }
                v
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
    let multi = projects.len() > 1;
    // Hits with every query word come first (`Mode::AndThenOr`): say where they end, or the
    // scores look out of order.
    let every_word = |h: &ProjectHit<'_>| {
        let required = found
            .query_of(h)
            .terms()
            .iter()
            .enumerate()
            .filter(|(_, t)| t.required)
            .fold(0u32, |m, (i, _)| {
                m | 1u32.checked_shl(i as u32).unwrap_or(0)
            });
        h.hit.matched & required == required
    };
    for (i, h) in hits.iter().enumerate() {
        if !a.explain && i > 0 && every_word(&hits[i - 1]) && !every_word(h) {
            println!("    (entries with only some of the words:)");
        }
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
        let note = k
            .hidden_note(h)
            .map(|n| format!(" [{n}]"))
            .unwrap_or_default();
        println!(
            "{:>2}. {}{}  {}  ({}{}, score {:.2}){note}",
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
        if a.explain {
            print_explain(&found, h, i, &hook);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn terms_of(found: &Found<'_>, h: &ProjectHit<'_>) -> Vec<TermScore> {
    relevance::explain(&h.hit.entry, found.query_of(h), &found.stats)
}

/// What the prompt hook would make of these hits: the gate's verdict on each, and which
/// it would inject — the first when it passes, and the runners-up within
/// [`gate::FOLLOW_RATIO`] of its score, at most [`INJECT_MAX`] (`gate::passing`). A hit can
/// pass the gate and still not be injected.
struct HookView {
    form: gate::Form,
    own_code: bool,
    /// Ranks of the hits the hook would inject.
    injected: Vec<usize>,
}

impl HookView {
    fn new(found: &Found<'_>, form: gate::Form, own_code: bool) -> HookView {
        let injected = gate::passing(found, form, seen(own_code), INJECT_MAX)
            .iter()
            .filter_map(|(h, _)| found.hits.iter().position(|o| std::ptr::eq(o, *h)))
            .collect();
        HookView {
            form,
            own_code,
            injected,
        }
    }

    /// Whether the hook injects hit `at`, and if not, why not.
    fn verdict(&self, found: &Found<'_>, at: usize) -> (bool, Option<String>) {
        if self.injected.contains(&at) {
            return (true, None);
        }
        let why = if self.injected.is_empty() {
            "the first hit does not pass, so the hook injects nothing".to_string()
        } else if at >= INJECT_MAX {
            format!("the hook injects at most {INJECT_MAX}")
        } else {
            let ratio = found.hits[at].hit.score / found.hits[0].hit.score;
            if ratio < gate::FOLLOW_RATIO {
                format!(
                    "it scores {ratio:.2}× the first hit; the hook adds others only within {:.2}×",
                    gate::FOLLOW_RATIO
                )
            } else {
                "a hit ranked above it ends the hook's list".to_string()
            }
        };
        (false, Some(why))
    }
}

fn seen(own_code: bool) -> gate::Seen<'static> {
    gate::Seen {
        own_code,
        ..gate::Seen::default()
    }
}

fn print_explain(found: &Found<'_>, h: &ProjectHit<'_>, at: usize, hook: &HookView) {
    let (form, own_code) = (hook.form, hook.own_code);
    let terms = terms_of(found, h);
    let bm25: f32 = terms.iter().map(|t| t.score).sum();
    let parts: Vec<String> = terms
        .iter()
        .map(|t| {
            let mut fields = Vec::new();
            for (name, n, s) in [
                ("title", t.title, t.title_score),
                ("tags", t.tags, t.tags_score),
                ("body", t.body, t.body_score),
            ] {
                if n > 0 {
                    fields.push(format!("{name} {n}× {s:.2}"));
                }
            }
            format!("{} {:.2} ({})", t.term, t.score, fields.join(", "))
        })
        .collect();
    println!("    matched: {}", parts.join("; "));
    let recency = if bm25 > 0.0 { h.hit.score / bm25 } else { 1.0 };
    if let Some(v) = gate::judge(found, at, form, seen(own_code)) {
        let e = v.evidence;
        println!(
            "    bm25 {bm25:.2} × recency {recency:.3}; gate {} ({:.2} points, needs {:.2}; signal {}): separation {:.2}×, gap {:.2}×, {}/{} words matched, coverage {:.2}, matched idf {:.1}, {} unknown; {}",
            if v.pass { "pass" } else { "fail" },
            v.points,
            gate::MIN_POINTS,
            v.signal.name(),
            e.separation,
            e.gap,
            e.matched,
            e.required,
            e.coverage,
            e.mass,
            e.unknown,
            if own_code {
                format!("{}, naming code no entry has", form.name())
            } else {
                form.name().to_string()
            }
        );
    }
    match hook.verdict(found, at) {
        (true, _) => println!("    the prompt hook would inject it"),
        (false, why) => println!(
            "    the prompt hook would not inject it: {}",
            why.unwrap_or_default()
        ),
    }
}

fn explain_json(found: &Found<'_>, h: &ProjectHit<'_>, at: usize, hook: &HookView) -> Value {
    let (form, own_code) = (hook.form, hook.own_code);
    let terms = terms_of(found, h);
    let bm25: f32 = terms.iter().map(|t| t.score).sum();
    let terms: Vec<Value> = terms
        .iter()
        .map(|t| {
            json!({
                "term": t.term, "idf": t.idf, "score": t.score,
                "title": {"count": t.title, "score": t.title_score},
                "tags": {"count": t.tags, "score": t.tags_score},
                "body": {"count": t.body, "score": t.body_score},
            })
        })
        .collect();
    let gate = gate::judge(found, at, form, seen(own_code)).map(|v| {
        json!({
            "pass": v.pass,
            "points": v.points,
            "threshold": gate::MIN_POINTS,
            "signal": v.signal.name(),
            "separation": if v.evidence.separation.is_finite() { json!(v.evidence.separation) } else { json!(null) },
            "matched": v.evidence.matched,
            "required": v.evidence.required,
            "coverage": v.evidence.coverage,
            "unknown": v.evidence.unknown,
            "gap": if v.evidence.gap.is_finite() { json!(v.evidence.gap) } else { json!(null) },
            "mass": v.evidence.mass,
            "question": form == gate::Form::Question,
            "work": form == gate::Form::Work,
            "own_code": own_code,
            "topic": gate::names_topic(found.query_of(h), h.hit.entry.topic),
        })
    });
    let (injected, why_not) = hook.verdict(found, at);
    json!({ "bm25": bm25, "terms": terms, "gate": gate, "injected": injected, "why_not": why_not })
}
