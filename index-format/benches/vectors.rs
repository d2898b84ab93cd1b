//! Vector search over the `VECTORS` section: `Vectors::top_k` (int16 query · int8 rows) at
//! 10k and 100k entries × 384 dimensions, one core, against two other ways to scan the same
//! rows (an int8 query, both sides widened; an f32 query, `Vector::dot`) and a plain read
//! of the section (the memory floor). Also the bytes each entry adds to the artifact,
//! printed before the benches.
//! Run: `cargo bench -p helix-index-format --bench vectors`.

use std::collections::HashMap;
use std::sync::OnceLock;

use divan::{Bencher, black_box};
use helix_index_format::{
    BuildInfo, Embeddings, Entry, Index, VectorFilter, build, build_with_embeddings, quantize,
};

const DIM: usize = 384;
const SIZES: [usize; 2] = [10_000, 100_000];

fn main() {
    for n in SIZES {
        let (entries, _) = input(n);
        let plain = build(&entries, &BuildInfo::default()).expect("build");
        let with = artifact(n);
        eprintln!(
            "size: {n} entries × {DIM} dims: {} → {} bytes, {:.1} bytes per entry",
            plain.len(),
            with.len(),
            (with.len() - plain.len()) as f64 / n as f64
        );
    }
    divan::main();
}

/// xorshift64: reproducible vectors without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A random direction (uniform components; fine for timing).
    fn vector(&mut self) -> Vec<f32> {
        (0..DIM)
            .map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
            .collect()
    }
}

fn input(n: usize) -> (Vec<Entry>, Embeddings) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let entries: Vec<Entry> = (0..n)
        .map(|i| Entry {
            id: format!("t{}/e{i:06}.md", i % 50),
            topic: format!("t{}", i % 50),
            title: format!("note {i}"),
            body: "body".into(),
            ..Entry::default()
        })
        .collect();
    let vectors: HashMap<String, Vec<f32>> = entries
        .iter()
        .map(|e| (e.id.clone(), rng.vector()))
        .collect();
    let embeddings = Embeddings {
        model: "bench/random-384".into(),
        dim: DIM,
        vectors,
    };
    (entries, embeddings)
}

/// The artifact of `n` entries with vectors, built once per size.
fn artifact(n: usize) -> &'static [u8] {
    static CACHE: OnceLock<Vec<(usize, Vec<u8>)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        SIZES
            .iter()
            .map(|&n| {
                let (entries, embeddings) = input(n);
                let bytes =
                    build_with_embeddings(&entries, &BuildInfo::default(), Some(&embeddings))
                        .expect("build");
                (n, bytes)
            })
            .collect()
    });
    &all.iter().find(|(m, _)| *m == n).expect("a bench size").1
}

fn query() -> Vec<f32> {
    Rng(42).vector()
}

/// `open` + `top_k(10)`: what a hook does after mapping the artifact.
#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn top_k(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let q = query();
    bencher.bench(|| {
        let index = Index::open(bytes).expect("open");
        let v = index.vectors().expect("vectors");
        black_box(v.top_k(&q, 10, &VectorFilter::default()).expect("search"))
    });
}

/// `top_k` with the CPU caches evicted before each sample (a 640 MB buffer written, more
/// than this machine's 480 MiB L3): the rows come from memory, as in a hook whose artifact
/// is in the page cache but not in the CPU's. The warm benches keep the section in cache.
#[divan::bench(args = SIZES, sample_count = 15, sample_size = 1)]
fn top_k_cold(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let q = query();
    bencher.with_inputs(evict).bench_values(|()| {
        let index = Index::open(bytes).expect("open");
        let v = index.vectors().expect("vectors");
        black_box(v.top_k(&q, 10, &VectorFilter::default()).expect("search"))
    });
}

/// Writes one byte of every cache line of a buffer larger than the last-level cache.
fn evict() {
    static BUFFER: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    let mut buffer = BUFFER.lock().expect("buffer");
    if buffer.is_empty() {
        buffer.resize(640 << 20, 0);
    }
    for b in buffer.iter_mut().step_by(64) {
        *b = b.wrapping_add(1);
    }
    black_box(&*buffer);
}

/// The same with a topic filter (one topic in 50).
#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn top_k_topic(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let q = query();
    let filter = VectorFilter {
        topic: Some("t7".into()),
        ..VectorFilter::default()
    };
    bencher.bench(|| {
        let index = Index::open(bytes).expect("open");
        let v = index.vectors().expect("vectors");
        black_box(v.top_k(&q, 10, &filter).expect("search"))
    });
}

/// Another way to scan: the query as int8 too (both sides widened to 16 bits), best score.
#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn scan_i8_query(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let (qs, q8) = quantize(&query()).expect("query");
    bencher.bench(|| {
        let index = Index::open(bytes).expect("open");
        let v = index.vectors().expect("vectors");
        let mut best = (f32::MIN, 0u32);
        for doc in 0..v.len() as u32 {
            let Some(row) = v.get(doc) else { continue };
            let (qc, _) = q8.as_chunks::<32>();
            let (cc, _) = row.codes.as_chunks::<32>();
            let mut acc = [0i32; 32];
            for (qa, ca) in qc.iter().zip(cc) {
                for ((a, &x), &y) in acc.iter_mut().zip(qa).zip(ca) {
                    *a += i32::from(x) * i32::from(y);
                }
            }
            let s = acc.iter().sum::<i32>() as f32 * row.scale * qs;
            if s > best.0 {
                best = (s, doc);
            }
        }
        black_box(best)
    });
}

/// Another way to scan: the query in f32, each code converted (`Vector::dot`), best score.
#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn scan_f32_query(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    let q = query();
    bencher.bench(|| {
        let index = Index::open(bytes).expect("open");
        let v = index.vectors().expect("vectors");
        let mut best = (f32::MIN, 0u32);
        for doc in 0..v.len() as u32 {
            let Some(row) = v.get(doc) else { continue };
            let s = row.dot(&q);
            if s > best.0 {
                best = (s, doc);
            }
        }
        black_box(best)
    });
}

/// The floor: a plain read of the whole section (xor of its 8-byte words), no arithmetic.
#[divan::bench(args = SIZES, sample_count = 30, sample_size = 1)]
fn read_only(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    bencher.bench(|| black_box(read_section(bytes)));
}

/// The floor with the caches evicted (see `top_k_cold`).
#[divan::bench(args = SIZES, sample_count = 15, sample_size = 1)]
fn read_only_cold(bencher: Bencher, n: usize) {
    let bytes = artifact(n);
    bencher
        .with_inputs(evict)
        .bench_values(|()| black_box(read_section(bytes)));
}

fn read_section(bytes: &[u8]) -> [u64; 8] {
    let index = Index::open(bytes).expect("open");
    let range = index.vectors().expect("vectors").file_range();
    let (words, _) = index.bytes()[range].as_chunks::<8>();
    let mut acc = [0u64; 8];
    let (blocks, _) = words.as_chunks::<8>();
    for block in blocks {
        for (a, w) in acc.iter_mut().zip(block) {
            *a ^= u64::from_le_bytes(*w);
        }
    }
    acc
}
