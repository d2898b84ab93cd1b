//! Arbitrary bytes through the secret scanner (as lossy UTF-8, as entries arrive): a
//! finding or none is fine; a panic, a line number past the text, or findings out of
//! order are not. Time linear in the input is structural (see `secrets.rs`) and measured
//! by `benches/index.rs`; libFuzzer's `-timeout` catches a matcher that is not.
#![no_main]

use helix_index_format::find_secrets;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.split('\n').count() as u32;
    let mut last = 0;
    for f in find_secrets(&text) {
        assert!(f.line >= last && f.line <= lines);
        assert!(!f.kind.is_empty());
        last = f.line;
    }
});
