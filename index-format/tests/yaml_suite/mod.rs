//! The official YAML test suite (`corpora/yaml-test-suite`) run through helix's
//! front-matter YAML layer: valid cases must give the expected data, invalid ones a refusal.
//!
//! Print the per-case report with
//! `cargo test -p helix-index-format --test format yaml_test_suite -- --nocapture`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What one case expects.
enum Expect {
    /// An `error` file: a conforming parser must refuse the input.
    Invalid,
    /// Valid YAML with several documents (`+DOC` events): out of scope, front matter is
    /// one document.
    MultiDocument,
    /// Valid YAML with its data (`in.json`; `null` for a stream without documents).
    Data(Value),
    /// Valid YAML whose data JSON cannot express (complex keys…): no `in.json`.
    Valid,
}

struct Case {
    id: String,
    name: String,
    yaml: String,
    expect: Expect,
}

/// Pass counts per kind of case; each pair is (passed, total).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rates {
    /// Invalid cases refused.
    pub invalid_refused: (usize, usize),
    /// Ids of the invalid cases accepted.
    pub invalid_accepted: Vec<String>,
    /// Valid one-document cases whose data equals `in.json`.
    pub data_matched: (usize, usize),
    /// Valid cases without `in.json` accepted.
    pub no_data_accepted: (usize, usize),
    /// Valid cases with several documents, refused as such: front matter is one document
    /// (its `---` line ends it), so helix reads no streams.
    pub multi_document_refused: (usize, usize),
}

fn suite_root() -> PathBuf {
    crate::corpora::corpus("yaml-test-suite")
}

/// Every case folder holding an `in.yaml`, numbered sub-cases included, sorted by id.
fn cases(root: &Path) -> Vec<Case> {
    let mut dirs = Vec::new();
    let listing = std::fs::read_dir(root).unwrap_or_else(|e| {
        panic!(
            "the YAML test suite must be at {} (the repository carries it): {e}",
            root.display()
        )
    });
    for entry in listing.flatten() {
        let dir = entry.path();
        if dir.join("in.yaml").is_file() {
            dirs.push(dir);
        } else if dir.is_dir() {
            for sub in std::fs::read_dir(&dir)
                .expect("readable case folder")
                .flatten()
            {
                if sub.path().join("in.yaml").is_file() {
                    dirs.push(sub.path());
                }
            }
        }
    }
    let mut cases: Vec<Case> = dirs
        .iter()
        .map(|dir| {
            let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
            let events = read("test.event").unwrap_or_default();
            let documents = events.lines().filter(|l| l.starts_with("+DOC")).count();
            let expect = if dir.join("error").exists() {
                Expect::Invalid
            } else if documents > 1 {
                Expect::MultiDocument
            } else if documents == 0 {
                Expect::Data(Value::Null)
            } else if let Some(json) = read("in.json") {
                let data = serde_json::from_str(&json)
                    .unwrap_or_else(|e| panic!("{}/in.json: {e}", dir.display()));
                Expect::Data(data)
            } else {
                Expect::Valid
            };
            Case {
                id: dir
                    .strip_prefix(root)
                    .expect("inside the suite")
                    .to_string_lossy()
                    .into_owned(),
                name: read("===").unwrap_or_default().trim().to_string(),
                yaml: read("in.yaml").expect("in.yaml is UTF-8"),
                expect,
            }
        })
        .collect();
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    cases
}

/// JSON equality with numbers compared by value (`1.0` in YAML is the float 1, which
/// `in.json` writes as `1`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Runs every case through `yaml::to_json`, printing each failure, and returns the rates.
pub fn run() -> Rates {
    let root = suite_root();
    let mut rates = Rates::default();
    for case in cases(&root) {
        let got = helix_index_format::yaml::to_json(&case.yaml);
        let (count, failure) = match &case.expect {
            Expect::Invalid => (
                &mut rates.invalid_refused,
                got.as_ref().ok().map(|v| format!("accepted as {v}")),
            ),
            Expect::MultiDocument => (
                &mut rates.multi_document_refused,
                match &got {
                    Err(e) if e.reason.contains("more than one YAML document") => None,
                    Err(e) => Some(format!("refused for another reason: {e}")),
                    Ok(v) => Some(format!("accepted as {v}")),
                },
            ),
            Expect::Data(want) => (
                &mut rates.data_matched,
                match &got {
                    Ok(v) if same(v, want) => None,
                    Ok(v) => Some(format!("gave {v}, expected {want}")),
                    Err(e) => Some(format!("refused: {e}")),
                },
            ),
            Expect::Valid => (
                &mut rates.no_data_accepted,
                got.as_ref().err().map(|e| format!("refused: {e}")),
            ),
        };
        count.1 += 1;
        match failure {
            None => count.0 += 1,
            Some(why) => {
                println!("{} ({}): {why}", case.id, case.name);
                if matches!(case.expect, Expect::Invalid) {
                    rates.invalid_accepted.push(case.id);
                }
            }
        }
    }
    println!("{rates:?}");
    rates
}
