//! Texts in, vectors out: one JSON string per line on stdin, one JSON array of floats per
//! line on stdout, in order (`benches/embed/parity.py` compares them with a reference).
//!
//! cargo run --release -p helix-embed --example embed_texts -- <model dir> [--max-tokens N]

use std::io::{BufRead, Write};
use std::path::PathBuf;

use helix_embed::{Embedder, Options};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: embed_texts <model dir> [--max-tokens N]"),
    );
    let mut options = Options::default();
    if args.next().as_deref() == Some("--max-tokens") {
        options.max_tokens = args
            .next()
            .and_then(|n| n.parse().ok())
            .expect("--max-tokens N");
    }
    let embedder = Embedder::load_with(&dir, options).expect("load model");
    let texts: Vec<String> = std::io::stdin()
        .lock()
        .lines()
        .map(|l| serde_json::from_str(&l.expect("read stdin")).expect("a JSON string per line"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).expect("embed");
    let mut out = std::io::stdout().lock();
    for v in vectors {
        serde_json::to_writer(&mut out, &v).expect("write");
        out.write_all(b"\n").expect("write");
    }
}
