//! Near-duplicate scores on a corpus, for `benches/duplicates.py`.
//! Usage: `duplicates CORPUS_DIR pairs MIN` prints every pair of entries scoring at least MIN
//! (as `helix check` finds them); `duplicates CORPUS_DIR score PAIRS.jsonl` prints each
//! labelled pair (`{"a", "b", ...}`) with its score and the parts it combines;
//! `duplicates CORPUS_DIR terms PAIRS.jsonl` prints each pair's analysed title and body terms
//! with their idf (for trying other measures). One JSON object per line.

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
                v["cover"] = serde_json::json!(parts.cover);
                v["cross"] = serde_json::json!(parts.cross);
                v["sources"] = serde_json::json!(parts.sources);
                println!("{v}");
            }
        }
        "terms" => {
            use helix_index_format::tokenize::TokenKind;
            let terms = |text: &str| {
                let mut v: Vec<String> = Vec::new();
                Analyzer::CURRENT.tokens(text, |t, k| {
                    if k != TokenKind::Part {
                        v.push(t.to_owned());
                    }
                });
                v
            };
            for line in std::fs::read_to_string(arg).expect("read pairs").lines() {
                let mut v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let mut idf = serde_json::Map::new();
                for side in ["a", "b"] {
                    let e = index
                        .entry_by_id(v[side].as_str().unwrap())
                        .unwrap()
                        .unwrap();
                    let (t, b) = (terms(e.title), terms(e.body));
                    for x in t.iter().chain(&b) {
                        idf.insert(x.clone(), serde_json::json!(c.idf(x)));
                    }
                    v[format!("{side}_title")] = serde_json::json!(t);
                    v[format!("{side}_body")] = serde_json::json!(b);
                    v[format!("{side}_raw")] = serde_json::json!(e.body);
                }
                v["idf"] = serde_json::Value::Object(idf);
                println!("{v}");
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
