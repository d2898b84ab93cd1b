//! Arbitrary bytes through `open`, `verify` and every query: errors are fine, panics are not.
//! Crash inputs go to `index-format/tests/fixtures/fuzz-regressions/`, replayed by `cargo test`.
#![no_main]

use helix_index_format::{Index, Mode, SearchOptions, VectorFilter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(index) = Index::open(data) else { return };
    let _ = index.meta();
    let _ = index.verify();
    for mode in [Mode::AndThenOr, Mode::Or] {
        let opts = SearchOptions { mode, per_topic_cap: Some(1), now: Some(1_780_000_000), ..SearchOptions::default() };
        let _ = index.search("cache CachedEntry rebase", &opts);
    }
    for doc in 0..index.len().min(16) {
        let _ = index.entry(doc);
    }
    let _ = index.entry_by_id("git/rebase.md");
    let _ = index.by_source("src/cache/entry.rs");
    let _ = index.by_file_name("entry.rs");
    let _ = index.topics();
    let _ = index.related_topics("src/cache/x.rs");
    // The optional vector section, when present: accessors, rows and the vector search.
    if let Some(v) = index.vectors() {
        let _ = (v.dim(), v.model(), v.len(), v.count_present(), v.file_range());
        for doc in 0..index.len().min(16) {
            if let Some(row) = v.get(doc) {
                let _ = row.to_f32();
            }
        }
        let query: Vec<f32> = (0..v.dim()).map(|i| if i % 3 == 0 { 1.0 } else { -0.5 }).collect();
        let _ = v.top_k(&query, 5, &VectorFilter::default());
        let all = VectorFilter { topic: Some("git".into()), include_hidden: true };
        let _ = v.top_k(&query, 300, &all);
        let _ = v.top_k(&query[..query.len() - 1], 5, &VectorFilter::default());
    }
});
