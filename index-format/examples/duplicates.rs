//! Near-duplicate scores on a corpus, for `benches/duplicates.py`.
//! Usage: `duplicates CORPUS_DIR pairs MIN` prints every pair of entries scoring at least MIN
//! (as `helix check` finds them); `duplicates CORPUS_DIR score PAIRS.jsonl` prints each
//! labelled pair (`{"a", "b", ...}`) with its score. One JSON object per line.

#[path = "shared/corpus.rs"]
mod corpus;

use std::path::Path;

use helix_index_format::similar::{Collection, Parts};
use helix_index_format::tokenize::Analyzer;
use helix_index_format::{BuildInfo, Fingerprint, Index, build, similarity};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, corpus, mode, arg] = &args[..] else {
        eprintln!("usage: duplicates CORPUS_DIR (pairs MIN | score PAIRS.jsonl)");
        std::process::exit(2);
    };
    let root = Path::new(corpus);
    let entries = corpus::entries(root);
    let bytes = build(&entries, &BuildInfo::default()).expect("build");
    let index = Index::open(&bytes[..]).expect("open");
    let refs = [&index];
    let c = Collection::new(&refs);
    match mode.as_str() {
        "pairs" => {
            let min: f32 = arg.parse().expect("MIN is a number");
            for (a, b, score) in c.pairs(min).expect("pairs") {
                println!(
                    "{}",
                    serde_json::json!({"a": a.id, "b": b.id, "score": score})
                );
            }
        }
        "score" => {
            let idf = |t: &str| c.idf(t);
            let print = |id: &str| {
                let e = index
                    .entry_by_id(id)
                    .expect("read")
                    .unwrap_or_else(|| panic!("{id} is not in the corpus"));
                Fingerprint::new(Analyzer::CURRENT, e.title, e.body, &e.sources)
            };
            for line in std::fs::read_to_string(arg).expect("read pairs").lines() {
                if line.trim().is_empty() {
                    continue;
                }
                let mut v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let a = print(v["a"].as_str().expect("a"));
                let b = print(v["b"].as_str().expect("b"));
                let parts = Parts::of(&a, &b, &idf);
                v["score"] = serde_json::json!(similarity(&a, &b, &idf));
                v["title"] = serde_json::json!(parts.title);
                v["body"] = serde_json::json!(parts.body);
                println!("{v}");
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
