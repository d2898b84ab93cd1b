//! Arbitrary bytes as a Markdown entry: a diagnostic is fine, a panic is not.
#![no_main]

use helix_index_format::parse_entry;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_entry("topic/entry.md", data, None);
});
