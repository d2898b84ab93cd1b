//! The embedder's figures on a real model: load time, one query's latency, a corpus's
//! entries per second, peak memory.
//!
//! cargo run --release -p helix-embed --example embed_bench -- <model dir> [corpus dir]
//!     [--max-tokens N] [--body-chars N] [--queries N] [--limit N] [--vectors out.f32]
//!
//! The corpus (default `corpora/til`) is read as the server reads entries; each entry's
//! text is its title, `name`, `description`, tags and the head of its body. `--vectors`
//! writes the corpus's vectors (f32, little-endian, one row per entry in id order) with
//! the ids and texts beside them (`out.f32.ids`, `out.f32.texts.json`), for the parity
//! check; `--limit N` embeds only the corpus's first N entries (0: none).

use std::path::{Path, PathBuf};
use std::time::Instant;

use helix_embed::{Embedder, Options};
use helix_index_format::{Entry, is_entry_path, parse_entry};

const QUERIES: [&str; 8] = [
    "How do I delete a git branch?",
    "undo the last commit but keep the changes",
    "cargo build is slow on CI",
    "docker container cannot reach the host",
    "format a date in javascript",
    "why does my bash script exit early",
    "kubernetes pod keeps restarting",
    "postgres query uses the wrong index",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let (mut max_tokens, mut body_chars, mut queries) =
        (helix_embed::DEFAULT_MAX_TOKENS, 1000, 400);
    let mut vectors_out: Option<PathBuf> = None;
    let mut limit = usize::MAX;
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match a.as_str() {
            "--max-tokens" => max_tokens = num("--max-tokens"),
            "--body-chars" => body_chars = num("--body-chars"),
            "--queries" => queries = num("--queries"),
            "--limit" => limit = num("--limit"),
            "--vectors" => vectors_out = args.next().map(PathBuf::from),
            _ => positional.push(PathBuf::from(a)),
        }
    }
    let dir = positional
        .first()
        .expect("usage: embed_bench <model dir> [corpus dir]");
    let corpus = positional
        .get(1)
        .cloned()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/til"));

    let t = Instant::now();
    let one = Embedder::load_with(
        dir,
        Options {
            max_tokens,
            threads: 1,
            ..Options::default()
        },
    )
    .expect("load model");
    let load = t.elapsed();
    println!("model        {}", dir.display());
    println!("id           {}", one.id());
    let c = one.config();
    println!(
        "shape        {} layers, hidden {}, {} heads, intermediate {}, vocab {}, max_tokens {}",
        c.num_hidden_layers,
        c.hidden_size,
        c.num_attention_heads,
        c.intermediate_size,
        c.vocab_size,
        one.max_tokens()
    );
    println!(
        "load         {:.0} ms (read, hash, widen to f32, tokenizer)",
        ms(load)
    );
    println!("rss loaded   {} MiB", rss_mib("VmRSS"));

    let v = one
        .embed(&[
            "How do I delete a git branch?",
            "remove a branch in git",
            "bake a chocolate cake",
        ])
        .expect("embed");
    println!(
        "sanity       cos(delete git branch, remove a branch in git) = {:.4}; (…, bake a chocolate cake) = {:.4}",
        dot(&v[0], &v[1]),
        dot(&v[0], &v[2])
    );

    // One query at a time, warm, on the calling thread.
    for q in QUERIES {
        one.embed_one(q).expect("embed");
    }
    let mut lat = Vec::with_capacity(queries);
    for i in 0..queries {
        let t = Instant::now();
        one.embed_one(QUERIES[i % QUERIES.len()]).expect("embed");
        lat.push(ms(t.elapsed()));
    }
    lat.sort_by(f64::total_cmp);
    let tokens: usize = QUERIES
        .iter()
        .map(|q| one.tokenize(q).map_or(0, |t| t.len()))
        .sum();
    println!(
        "query        min {:.2} ms, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} queries, {:.1} tokens each)",
        lat[0],
        pct(&lat, 0.50),
        pct(&lat, 0.99),
        lat.last().copied().unwrap_or(0.0),
        queries,
        tokens as f64 / QUERIES.len() as f64
    );

    // The same queries with 8-bit weights (as the warm embedder runs them), interleaved with
    // the f32 model: latency, and how far the vectors move.
    let coded = Embedder::load_with(
        dir,
        Options {
            max_tokens,
            threads: 1,
            int8_weights: true,
        },
    )
    .expect("load model");
    let long = QUERIES.join(" and ");
    for (label, text) in [("short", QUERIES[0]), ("long", long.as_str())] {
        let (mut f32s, mut int8s) = (Vec::new(), Vec::new());
        let mut cos = 1.0f32;
        for _ in 0..queries / 4 + 5 {
            let t = Instant::now();
            let a = one.embed_one(text).expect("embed");
            f32s.push(ms(t.elapsed()));
            let t = Instant::now();
            let b = coded.embed_one(text).expect("embed");
            int8s.push(ms(t.elapsed()));
            cos = cos.min(dot(&a, &b));
        }
        f32s.sort_by(f64::total_cmp);
        int8s.sort_by(f64::total_cmp);
        println!(
            "query {label:5}  {} tokens: p50 {:.2} ms f32, {:.2} ms int8 weights ({:.2}×), cosine {cos:.5}",
            one.tokenize(text).map_or(0, |t| t.len()),
            pct(&f32s, 0.5),
            pct(&int8s, 0.5),
            pct(&int8s, 0.5) / pct(&f32s, 0.5)
        );
    }
    for q in QUERIES {
        let (a, b) = (
            one.embed_one(q).expect("embed"),
            coded.embed_one(q).expect("embed"),
        );
        println!("int8 cosine  {:.5}  {q}", dot(&a, &b));
    }

    // The corpus, batched over every core.
    let mut entries = read_corpus(&corpus);
    entries.truncate(limit);
    if entries.is_empty() {
        println!("peak rss     {} MiB", rss_mib("VmHWM"));
        return;
    }
    let texts: Vec<String> = entries.iter().map(|e| entry_text(e, body_chars)).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let all_tokens: usize = refs
        .iter()
        .map(|t| one.tokenize(t).map_or(0, |t| t.len()))
        .sum();
    for threads in [1, Options::default().threads] {
        let e = Embedder::load_with(
            dir,
            Options {
                max_tokens,
                threads,
                ..Options::default()
            },
        )
        .expect("load model");
        let (t, cpu) = (Instant::now(), cpu_secs());
        let vecs = e.embed(&refs).expect("embed corpus");
        let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_secs() - cpu);
        println!(
            "corpus       {} entries ({:.0} tokens each, body head {} chars), {} thread(s): {:.1} s, {:.1} entries/s, {:.0} tokens/s; {:.1} CPU s, {:.1} entries per CPU second",
            entries.len(),
            all_tokens as f64 / entries.len().max(1) as f64,
            body_chars,
            threads,
            secs,
            entries.len() as f64 / secs,
            all_tokens as f64 / secs,
            cpu,
            entries.len() as f64 / cpu
        );
        if let (Some(out), true) = (&vectors_out, threads == 1) {
            let bytes: Vec<u8> = vecs
                .iter()
                .flatten()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            std::fs::write(out, bytes).expect("write vectors");
            let ids: String = entries.iter().map(|e| format!("{}\n", e.id)).collect();
            std::fs::write(out.with_extension("f32.ids"), ids).expect("write ids");
            let txt = out.with_extension("f32.texts.json");
            std::fs::write(txt, serde_json::to_vec(&texts).expect("json")).expect("write texts");
        }
    }
    println!("peak rss     {} MiB", rss_mib("VmHWM"));
}

/// What the server embeds of an entry: title, `name`, `description`, tags, the body's head.
fn entry_text(e: &Entry, body_chars: usize) -> String {
    let mut s = e.title.clone();
    for key in ["name", "description"] {
        if let Some(v) = e.extra.get(key).and_then(|v| v.as_str()) {
            s.push('\n');
            s.push_str(v);
        }
    }
    if !e.tags.is_empty() {
        s.push('\n');
        s.push_str(&e.tags.join(", "));
    }
    s.push('\n');
    let cut = e
        .body
        .char_indices()
        .nth(body_chars)
        .map_or(e.body.len(), |(i, _)| i);
    s.push_str(&e.body[..cut]);
    s
}

fn read_corpus(root: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read corpus dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            if is_entry_path(&rel)
                && let Ok(entry) = parse_entry(&rel, &std::fs::read(&p).expect("read entry"), None)
            {
                entries.push(entry);
            }
        }
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// CPU time of the process, user and system, from /proc/self/stat (clock ticks of
/// 1/100 s, Linux's USER_HZ): on a shared machine, what the work cost when the wall clock
/// also counts other processes' turns.
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name, which is in parentheses and may hold spaces.
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some((f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?) as f64 / 100.0)
        })
        .unwrap_or(0.0)
}

fn rss_mib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}
