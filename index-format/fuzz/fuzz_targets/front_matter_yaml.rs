//! Arbitrary text as front-matter YAML: a refusal is fine, a panic or a hang is not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(yaml) = std::str::from_utf8(data) {
        let _ = helix_index_format::yaml::to_json(yaml);
    }
});
