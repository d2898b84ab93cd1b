//! The secret scanner on the labelled corpus of `secret_corpus` (detection and false-positive
//! rates per category; `--nocapture` prints them), on arbitrary bytes, and against its docs.

use std::collections::{BTreeMap, BTreeSet};

use helix_index_format::secrets::catalogue;
use helix_index_format::{find_secret, find_secrets};

use crate::secret_corpus::{Rng, Sample, corpus};

/// Clean lines the samples are embedded between, so line numbers are tested too.
const FILLER: [&str; 6] = [
    "Restart the worker after changing the queue size.",
    "The nightly job compacts the index; it takes about four minutes.",
    "",
    "See docs/operations.md for the rollout checklist.",
    "- run `cargo test --workspace` before tagging",
    "Ana fixed the flaky clock test in March.",
];

fn embed(r: &mut Rng, s: &Sample) -> (String, u32) {
    let before = r.below(4);
    let mut text = String::new();
    for _ in 0..before {
        text.push_str(FILLER[r.below(FILLER.len())]);
        text.push('\n');
    }
    text.push_str(&s.text);
    text.push('\n');
    for _ in 0..r.below(3) {
        text.push_str(FILLER[r.below(FILLER.len())]);
        text.push('\n');
    }
    (text, before as u32 + s.line)
}

#[derive(Default)]
struct Tally {
    n: usize,
    hits: usize,
    named: usize,
}

#[test]
fn labelled_corpus_detection_and_false_positive_rates() {
    let samples = corpus();
    let mut r = Rng::new(17);
    let mut secrets: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut innocents: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut providers = BTreeSet::new();
    let mut misses = Vec::new();
    let mut false_positives = Vec::new();
    let mut misnamed = Vec::new();
    for s in &samples {
        let (text, line) = embed(&mut r, s);
        let found = find_secret(&text);
        if s.secret {
            providers.insert(if s.provider.is_empty() {
                s.category
            } else {
                s.provider
            });
            let t = secrets.entry(s.category).or_default();
            t.n += 1;
            match found {
                Some(f) => {
                    t.hits += 1;
                    assert_eq!(f.line, line, "line of {f:?} in {text:?}");
                    if f.provider == s.provider {
                        t.named += 1;
                    } else {
                        misnamed.push(format!("{} named {:?}: {}", s.provider, f, s.text));
                    }
                }
                None => misses.push(format!("[{}] {}", s.category, s.text)),
            }
        } else {
            let t = innocents.entry(s.category).or_default();
            t.n += 1;
            if let Some(f) = found {
                t.hits += 1;
                false_positives.push(format!(
                    "[{}] {} -> {}",
                    s.category,
                    s.text,
                    f.description()
                ));
            }
        }
    }
    let pct = |a: usize, n: usize| 100.0 * a as f64 / n.max(1) as f64;
    println!("| category | secrets | detected | rate | named right |");
    println!("|---|---|---|---|---|");
    for (c, t) in &secrets {
        println!(
            "| {c} | {} | {} | {:.1}% | {:.1}% |",
            t.n,
            t.hits,
            pct(t.hits, t.n),
            pct(t.named, t.hits)
        );
    }
    println!("\n| category | lookalikes | flagged | false-positive rate |");
    println!("|---|---|---|---|");
    for (c, t) in &innocents {
        println!("| {c} | {} | {} | {:.1}% |", t.n, t.hits, pct(t.hits, t.n));
    }
    let total = |m: &BTreeMap<&str, Tally>| {
        m.values()
            .fold((0, 0, 0), |a, t| (a.0 + t.n, a.1 + t.hits, a.2 + t.named))
    };
    let (sn, sd, named) = total(&secrets);
    let (inn, ifp, _) = total(&innocents);
    println!(
        "\noverall: {sd}/{sn} secrets detected ({:.1}%), {named} named right; {ifp}/{inn} lookalikes flagged ({:.1}%); {} providers and kinds",
        pct(sd, sn),
        pct(ifp, inn),
        providers.len()
    );
    for m in &misses {
        println!("missed: {m}");
    }
    for m in &false_positives {
        println!("false positive: {m}");
    }
    for m in &misnamed {
        println!("misnamed: {m}");
    }
    assert!(sn >= 150 && inn >= 150, "{sn} secrets, {inn} lookalikes");
    assert!(
        providers.len() >= 40,
        "{} providers: {providers:?}",
        providers.len()
    );
    assert!(
        pct(sd, sn) >= 97.0,
        "detection {:.1}%: {misses:#?}",
        pct(sd, sn)
    );
    assert!(
        pct(ifp, inn) <= 2.0,
        "false positives {:.1}%: {false_positives:#?}",
        pct(ifp, inn)
    );
    assert!(pct(named, sd) >= 95.0, "misnamed: {misnamed:#?}");
}

#[test]
fn a_refusal_never_contains_the_secret() {
    for s in corpus().iter().filter(|s| s.secret) {
        if let Some(f) = find_secret(&s.text) {
            let d = f.description();
            // The longest run of token characters in the sample does not appear in the
            // description (the description is built from static strings only).
            let longest = s
                .text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .max_by_key(|w| w.len())
                .unwrap_or("");
            if longest.len() >= 12 {
                assert!(!d.contains(longest), "{d} echoes {longest}");
            }
        }
    }
}

/// The fuzz target's body (`fuzz/fuzz_targets/find_secrets.rs`) over inputs made from the
/// pieces the matchers react to: no panic, every finding on a line that exists.
#[test]
fn arbitrary_input_never_panics() {
    let pieces: [&[u8]; 34] = [
        b"AKIA",
        b"ghp_",
        b"glpat-",
        b"sk-",
        b"sk-ant-api03-",
        b"eyJ",
        b".",
        b"=",
        b":",
        b"\"",
        b"'",
        b"xoxb-",
        b"AIza",
        b"-----BEGIN ",
        b"PRIVATE KEY-----",
        b"\n",
        b"\\n",
        b"token",
        b"password",
        b"://",
        b"@",
        b"curl -u ",
        b"machine ",
        b"login ",
        b"Q~",
        b"LS0tLS1CRUdJTi",
        b"hooks.slack.com/services/T",
        b"/B",
        b"Authorization: Basic ",
        b"\xc3\xa9",
        b"\xff",
        b"AAAA",
        b"npm_",
        b" ",
    ];
    let mut r = Rng::new(0xF022);
    for round in 0..20_000 {
        let mut s = Vec::new();
        for _ in 0..r.below(24) {
            s.extend_from_slice(pieces[r.below(pieces.len())]);
            match r.below(4) {
                0 => {
                    let n = r.below(90);
                    s.extend_from_slice(r.pick(crate::secret_corpus::B64, n).as_bytes());
                }
                1 => {
                    let n = r.below(8);
                    s.extend(r.bytes(n));
                }
                _ => {}
            }
        }
        let text = String::from_utf8_lossy(&s);
        let lines = text.split('\n').count() as u32;
        let mut last = 0;
        for f in find_secrets(&text) {
            assert!(
                f.line >= last && f.line <= lines,
                "round {round}: {f:?} in {text:?}"
            );
            last = f.line;
        }
    }
}

/// Inputs shaped to make a naive scanner quadratic: every matcher bounds its look-ahead,
/// so these finish like any other text of their size (speed is measured in the
/// `secrets` benches, not asserted here).
#[test]
fn adversarial_repetitions_finish() {
    let n = 64 * 1024;
    for unit in [
        "a=",
        "token=",
        "password: ",
        "eyJaaaaaaaaaa.",
        "-----BEGIN PRIVATE KEY-----",
        "://a:b",
        "a:",
        "AKIA",
        "ghp_",
        "sk-",
        "Q~",
        "curl -u a:",
        "machine x login y password ",
        "glpat-",
        "\\n",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "hooks.slack.com/services/T",
        "xoxb-1-",
        "Authorization: Bearer ",
        "LS0tLS1CRUdJTi",
        "dp.st.",
        "=>",
        "1//0",
        "bot1234567890:AA",
        "LS0tLS1CRUdJTi/",
        "token:",
        "pwd=",
        "glc_/",
        "sntrys_/",
        "PuTTY-User-Key-File-2: ",
        "--password ",
    ] {
        let text = unit.repeat(n / unit.len());
        let _ = find_secrets(&text).count();
        let one_line = format!("x{}", unit.replace('\n', " ").repeat(n / unit.len()));
        let _ = find_secrets(&one_line).count();
    }
}

/// docs/secrets.md lists every provider the scanner can name.
#[test]
fn the_documentation_names_every_provider() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/secrets.md"))
        .expect("docs/secrets.md");
    let providers: BTreeSet<&str> = catalogue()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| !p.is_empty())
        .collect();
    let missing: Vec<_> = providers.iter().filter(|p| !doc.contains(*p)).collect();
    assert!(
        missing.is_empty(),
        "docs/secrets.md does not mention {missing:?}"
    );
    assert!(providers.len() >= 40, "{providers:?}");
}

/// Real text written by others holds no credentials: every finding there is a false
/// positive: the repository's docs and its corpora (1,871 TIL notes, the YAML test
/// suite).
#[test]
fn real_notes_and_docs_have_no_findings() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![manifest.join("../docs")];
    for corpus in ["til", "yaml-test-suite"] {
        roots.push(crate::corpora::corpus(corpus));
    }
    let (mut files, mut bytes, mut findings) = (0, 0, Vec::new());
    let mut stack = roots;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Ok(raw) = std::fs::read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&raw);
            files += 1;
            bytes += text.len();
            for f in find_secrets(&text) {
                findings.push(format!(
                    "{}:{}: {}",
                    path.display(),
                    f.line,
                    f.description()
                ));
            }
        }
    }
    println!(
        "real text: {files} files, {bytes} bytes, {} findings",
        findings.len()
    );
    assert!(files > 10, "{files} files");
    assert!(findings.is_empty(), "false positives: {findings:#?}");
}
