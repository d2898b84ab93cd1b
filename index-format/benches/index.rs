//! Compile throughput and query latency on the real corpus (`corpora/til`) and on
//! 10k / 100k replicas of it; secret-scanning cost per KB (`secrets::*`, against baselines in
//! the same run). Run: `cargo bench -p helix-index-format --bench index [-- secrets]`.
//! Corpus location: `HELIX_CORPUS`, else `<workspace>/corpora/til`.

#[path = "index/old_scanner.rs"]
mod old_scanner;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use divan::{Bencher, black_box};
use helix_index_format::{
    BuildInfo, Entry, Index, Mode, SearchOptions, build, is_entry_path, parse_entry,
};

fn main() {
    let files = corpus();
    let md: usize = files.iter().map(|(_, b)| b.len()).sum();
    for n in [files.len(), 10_000, 100_000] {
        let (entries, bytes) = replicate(n);
        let artifact = build(&entries, &info()).expect("build");
        eprintln!(
            "size: {n} entries, {:.1} MB Markdown -> {:.1} MB artifact ({:.2}x)",
            bytes as f64 / 1e6,
            artifact.len() as f64 / 1e6,
            artifact.len() as f64 / bytes as f64
        );
    }
    eprintln!("corpus: {} files, {:.1} MB", files.len(), md as f64 / 1e6);
    divan::main();
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("HELIX_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpora/til"))
}

/// (repository path, bytes) of every entry file, sorted by path.
fn corpus() -> &'static [(String, Vec<u8>)] {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = corpus_dir();
        let mut out = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(&root)
                        .expect("under root")
                        .to_string_lossy()
                        .replace('\\', "/");
                    if is_entry_path(&rel) {
                        out.push((rel, std::fs::read(&p).expect("read")));
                    }
                }
            }
        }
        out.sort();
        out
    })
}

/// `n` files: the corpus repeated under new paths (`topic/slug.r3.md`).
fn replicated_files(n: usize) -> Vec<(String, &'static [u8])> {
    let files = corpus();
    (0..n)
        .map(|i| {
            let (path, bytes) = &files[i % files.len()];
            let copy = i / files.len();
            let path = if copy == 0 {
                path.clone()
            } else {
                path.replace(".md", &format!(".r{copy}.md"))
            };
            (path, &bytes[..])
        })
        .collect()
}

fn replicate(n: usize) -> (Vec<Entry>, usize) {
    let files = replicated_files(n);
    let bytes = files.iter().map(|(_, b)| b.len()).sum();
    let entries = files
        .iter()
        .filter_map(|(p, b)| parse_entry(p, b, None).ok())
        .collect();
    (entries, bytes)
}

fn info() -> BuildInfo {
    BuildInfo {
        project: "til".into(),
        commit: "0".repeat(40),
        generation: 1,
        build_time: 1_780_000_000,
    }
}

const SIZES: [usize; 3] = [1_871, 10_000, 100_000];

/// Parse + build from bytes in memory: what the server does per commit (minus git).
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn compile(bencher: Bencher, n: usize) {
    let files = replicated_files(n);
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .bench(|| {
            let entries: Vec<Entry> = files
                .iter()
                .filter_map(|(p, b)| parse_entry(p, b, None).ok())
                .collect();
            black_box(build(&entries, &info()).expect("build"))
        });
}

/// Build alone (entries already parsed).
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn build_only(bencher: Bencher, n: usize) {
    let (entries, _) = replicate(n);
    bencher
        .counter(divan::counter::ItemsCount::new(n))
        .bench(|| black_box(build(&entries, &info()).expect("build")));
}

fn artifact(n: usize) -> Vec<u8> {
    build(&replicate(n).0, &info()).expect("build")
}

const QUERIES: [&str; 4] = [
    "git rebase",
    "postgres index",
    "rename a file",
    "CachedEntry",
];

/// What a hook does per process: open the bytes, search top 3 with snippets.
#[divan::bench(args = SIZES)]
fn open_search_top3(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let opts = SearchOptions {
        limit: 3,
        per_topic_cap: Some(2),
        now: Some(1_780_000_000),
        ..SearchOptions::default()
    };
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        let index = Index::open(&bytes[..]).expect("open");
        black_box(
            index
                .search(QUERIES[i % QUERIES.len()], &opts)
                .expect("search")
                .len(),
        )
    });
}

/// OR-mode, as the prompt hook queries.
#[divan::bench(args = SIZES)]
fn open_search_or_prompt(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let opts = SearchOptions {
        limit: 3,
        mode: Mode::Or,
        ..SearchOptions::default()
    };
    bencher.bench_local(|| {
        let index = Index::open(&bytes[..]).expect("open");
        black_box(
            index
                .search(
                    "why does the postgres migration lock the users table",
                    &opts,
                )
                .expect("search")
                .len(),
        )
    });
}

/// The near-duplicate check of one store (`similar::Collection::near_duplicates`): the
/// candidate search and the similarity of each candidate, for notes of the corpus rephrased
/// (first and last body lines dropped, title reworded) so that most have a near-duplicate.
#[divan::bench(args = SIZES)]
fn near_duplicates(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let index = Index::open(&bytes[..]).expect("open");
    let refs = [&index];
    let c = helix_index_format::Collection::new(&refs);
    let notes: Vec<(String, String)> = corpus()
        .iter()
        .step_by(37)
        .filter_map(|(p, b)| parse_entry(p, b, None).ok())
        .map(|e| {
            let lines: Vec<&str> = e.body.lines().collect();
            let body = lines[1..lines.len().saturating_sub(1).max(1)].join("\n");
            (format!("How to {}", e.title.to_lowercase()), body)
        })
        .collect();
    let none: [&str; 0] = [];
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        let (title, body) = &notes[i % notes.len()];
        black_box(
            c.near_duplicates(title, body, &none, helix_index_format::DUPLICATE_THRESHOLD)
                .expect("check")
                .len(),
        )
    });
}

#[divan::bench(args = SIZES)]
fn open_only(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    bencher.bench_local(|| black_box(Index::open(&bytes[..]).expect("open").len()));
}

#[divan::bench(args = SIZES, sample_count = 10, sample_size = 1)]
fn verify(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let index = Index::open(&bytes[..]).expect("open");
    bencher.bench_local(|| index.verify().expect("verify"));
}

/// Secret scanning, per KB of entry text: what every write (store, POST, check) pays.
/// Baselines in the same run: one plain pass over the bytes, the tokenizer (which the write
/// path runs anyway for the overlay index), and the nine-rule scanner it replaced.
/// Sizes 1 KB (a typical entry) to 1 MB (16x the body limit) show the cost stays linear.
#[divan::bench_group(sample_count = 50)]
mod secrets {
    use super::*;
    use divan::counter::BytesCount;

    const LEN: [usize; 3] = [1 << 10, 100 << 10, 1 << 20];

    /// The first `n` bytes of the corpus notes, one after the other.
    fn notes(n: usize) -> String {
        let mut text = String::with_capacity(n + 4096);
        for (_, bytes) in corpus().iter().cycle() {
            text.push_str(&String::from_utf8_lossy(bytes));
            if text.len() >= n {
                break;
            }
        }
        let mut end = n;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text
    }

    fn bench(bencher: Bencher, text: &str, f: impl Fn(&str) -> usize + Sync) {
        bencher
            .counter(BytesCount::of_str(text))
            .bench(|| black_box(f(black_box(text))));
    }

    /// Real notes, as written.
    #[divan::bench(args = LEN)]
    fn scan_notes(bencher: Bencher, n: usize) {
        bench(bencher, &notes(n), |t| {
            helix_index_format::find_secrets(t).count()
        });
    }

    /// The same text as one huge line (no newline at all).
    #[divan::bench(args = LEN)]
    fn scan_one_line(bencher: Bencher, n: usize) {
        bench(bencher, &notes(n).replace('\n', " "), |t| {
            helix_index_format::find_secrets(t).count()
        });
    }

    /// Worst cases for a naive matcher: every byte a trigger (`=`, `:`, `eyJ…`, `-----BEGIN`).
    #[divan::bench(args = LEN)]
    fn scan_adversarial(bencher: Bencher, n: usize) {
        let unit = "token=eyJa.x://a:b@-----BEGIN PRIVATE KEY-----\\nAKIA";
        let text = unit.repeat(n / unit.len() + 1)[..n].to_string();
        bench(bencher, &text, |t| {
            helix_index_format::find_secrets(t).count()
        });
    }

    /// Inputs that repeat one trigger up to the 64 KiB body limit: each makes a matcher look
    /// ahead from every few bytes. The worst of them bounds what one entry can cost.
    #[divan::bench(args = [
        "token=", "token:", "password: ", "pwd=", "a=", "eyJaaaaaaaaaa.", "LS0tLS1CRUdJTi/",
        "glc_/", "sntrys_/", "PuTTY-User-Key-File-2: ", "-----BEGIN PRIVATE KEY-----",
        "Authorization: Bearer ", "curl -u a:", "--password ", "://a:b@",
    ])]
    fn scan_repeated_64k(bencher: Bencher, unit: &str) {
        let text = unit.repeat(64 * 1024 / unit.len());
        bench(bencher, &text, |t| {
            helix_index_format::find_secrets(t).count()
        });
    }

    /// Baseline: one pass over the bytes counting two of them.
    #[divan::bench(args = LEN)]
    fn baseline_byte_pass(bencher: Bencher, n: usize) {
        bench(bencher, &notes(n), |t| {
            t.bytes().filter(|&b| b == b'=' || b == b':').count()
        });
    }

    /// Baseline: the tokenizer over the same text.
    #[divan::bench(args = LEN)]
    fn baseline_tokenize(bencher: Bencher, n: usize) {
        bench(bencher, &notes(n), |t| {
            helix_index_format::tokenize(t).len()
        });
    }

    /// Baseline: the nine-rule scanner that the current one replaced, over the same text.
    #[divan::bench(args = LEN)]
    fn baseline_old_scanner(bencher: Bencher, n: usize) {
        bench(bencher, &notes(n), |t| {
            usize::from(old_scanner::find_secret(t).is_some())
        });
    }
}
