//! Front-matter YAML as helix reads it, for `benches/yaml-pyyaml.py`: reads YAML texts
//! separated by NUL bytes on stdin, prints one line each: `ok <json>` or `err <reason>`.

use std::io::{Read, Write};

fn main() {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("yaml_json: stdin is not UTF-8 text: {e}");
        std::process::exit(2);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for yaml in input.split('\0') {
        let line = match helix_index_format::yaml::to_json(yaml) {
            Ok(v) => format!("ok {v}"),
            Err(e) => format!("err {}", e.to_string().replace('\n', " ")),
        };
        if writeln!(out, "{line}").is_err() {
            std::process::exit(1);
        }
    }
}
