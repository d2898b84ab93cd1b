//! Adds a `VECTORS` section to an artifact, for benches: every entry embedded with the model
//! in `MODEL_DIR` as the server embeds it (`vectors::entry_text`), the entries copied until
//! there are at least `MIN_ENTRIES` (ids suffixed `-copyN`, each with its original's vector:
//! a large knowledge base whose vectors are as alike as its texts). A `MODEL_DIR` that does
//! not exist gets the tiny test model. `RANDOM_VECTORS=1`: pseudo-random vectors of the
//! model's dimension instead (no embedding at all).
//!
//! Usage: cargo run -p helix-client --example vector_artifact -- IN.hix OUT.hix MODEL_DIR [MIN_ENTRIES]

use helix_embed::Embedder;
use helix_index_format::{Embeddings, Index, build_with_embeddings};
use std::collections::HashMap;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, model] = [&args[0], &args[1], &args[2]];
    let min: usize = args.get(3).map_or(0, |n| n.parse().expect("MIN_ENTRIES"));
    let bytes = std::fs::read(input).expect("read the artifact");
    let index = Index::open(&bytes[..]).expect("open the artifact");
    let (base, info) =
        helix_client::knowledge::owned_entries(&index).expect("read the artifact's entries");
    let mut entries = base.clone();
    let mut copy = 1;
    while entries.len() < min {
        for e in &base {
            let mut e = e.clone();
            e.id = format!("{}-copy{copy}", e.id);
            entries.push(e);
        }
        copy += 1;
    }
    if !Path::new(model).exists() {
        helix_embed::tiny::write_tiny_model(Path::new(model), 7).expect("write the tiny model");
    }
    let embedder = Embedder::load(Path::new(model)).expect("load the model");
    let mut vectors = HashMap::new();
    if std::env::var_os("RANDOM_VECTORS").is_some() {
        // For timing only: the model's id and dimension, pseudo-random directions (a
        // search's cost does not depend on what the vectors say).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for e in &entries {
            let v: Vec<f32> = (0..embedder.dim())
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            vectors.insert(e.id.clone(), v);
        }
    } else {
        use helix_index_format::vectors::{DEFAULT_BODY_CHARS, entry_text};
        let texts: Vec<String> = base
            .iter()
            .map(|e| entry_text(e, DEFAULT_BODY_CHARS))
            .collect();
        let mut by_base = HashMap::new();
        for (chunk, es) in texts.chunks(64).zip(base.chunks(64)) {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            for (v, e) in embedder.embed(&refs).expect("embed").into_iter().zip(es) {
                by_base.insert(e.id.clone(), v);
            }
        }
        for e in &entries {
            let original = e.id.split("-copy").next().unwrap_or(&e.id);
            if let Some(v) = by_base.get(original) {
                vectors.insert(e.id.clone(), v.clone());
            }
        }
    }
    let embeddings = Embeddings {
        model: embedder.id().to_string(),
        dim: embedder.dim(),
        vectors,
    };
    let out = build_with_embeddings(&entries, &info, Some(&embeddings)).expect("build");
    std::fs::write(output, out).expect("write");
    eprintln!("{} entries, model {}", entries.len(), embedder.id());
}
