//! Top-10 ids per query, for the ranking comparison in `benches/ranking.py`.
//! Usage: `rank CORPUS_DIR QUERIES_FILE` (one query per line); prints one JSON object per
//! query: `{"query", "and": [ids], "or": [ids]}`. The library does no I/O; this example does.

#[path = "shared/corpus.rs"]
mod corpus;

use std::path::Path;

use helix_index_format::{BuildInfo, Index, Mode, SearchOptions, build};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, corpus, queries] = &args[..] else {
        eprintln!("usage: rank CORPUS_DIR QUERIES_FILE");
        std::process::exit(2);
    };
    let root = Path::new(corpus);
    let entries = corpus::entries(root);
    let bytes = build(&entries, &BuildInfo::default()).expect("build");
    let index = Index::open(&bytes[..]).expect("open");
    let ids = |q: &str, mode| -> Vec<String> {
        let opts = SearchOptions {
            limit: 10,
            mode,
            snippet_chars: 0,
            ..SearchOptions::default()
        };
        index
            .search(q, &opts)
            .expect("search")
            .into_iter()
            .map(|h| h.entry.id.to_owned())
            .collect()
    };
    for q in std::fs::read_to_string(queries)
        .expect("read queries")
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let line =
            serde_json::json!({"query": q, "and": ids(q, Mode::AndThenOr), "or": ids(q, Mode::Or)});
        println!("{line}");
    }
}
