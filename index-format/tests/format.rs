//! Artifact round trips, queries, determinism, compatibility with the v1 reference
//! artifact, and the reader's robustness against thousands of damaged artifacts; the
//! optional vector section, vector search and fusion (`format/vectors.rs`); the secret
//! scanner on a labelled corpus (`format/secrets.rs`, `format/secret_corpus.rs`).

#[path = "format/corpora.rs"]
mod corpora;
#[path = "format/secret_corpus.rs"]
mod secret_corpus;
#[path = "format/secrets.rs"]
mod secrets;
#[path = "format/vectors.rs"]
mod vectors;

use std::collections::BTreeMap;

mod yaml_suite;

use helix_index_format::layout::{FORMAT_VERSION, Header, SectionEntry};
use helix_index_format::{
    BuildInfo, Entry, FormatError, Index, Mode, SearchOptions, TOKENIZER_VERSION, VectorFilter,
    build,
};

const DAY: i64 = 86_400;
const NOW: i64 = 1_780_000_000;

fn entry(id: &str, title: &str, body: &str) -> Entry {
    Entry {
        id: id.into(),
        topic: id.split('/').next().unwrap().into(),
        title: title.into(),
        body: body.into(),
        ..Entry::default()
    }
}

/// A small knowledge base with every feature the format stores.
fn corpus() -> Vec<Entry> {
    let mut cache = entry(
        "architecture/cached-entry.md",
        "CachedEntry must be invalidated on rename",
        "# CachedEntry must be invalidated on rename\n\nThe `CachedEntry` struct in the cache layer keeps the old path.\nCall `invalidate_path` after every rename or stale reads follow.\n",
    );
    cache.sources = vec!["src/cache/entry.rs".into(), "src/cache/mod.rs".into()];
    cache.tags = vec!["cache".into(), "fragile".into()];
    cache.date = Some(NOW - 10 * DAY);
    cache.author = Some("Ana".into());
    cache.extra = BTreeMap::from([("reviewed".into(), serde_json::json!(true))]);

    let mut rebase = entry(
        "git/rebase-onto.md",
        "Rebase a branch onto another with git rebase --onto",
        "Use `git rebase --onto main feature-a feature-b` to move only the commits of feature-b.\n",
    );
    rebase.date = Some(NOW - 900 * DAY);
    let mut rebase2 = entry(
        "git/interactive-rebase.md",
        "Interactive rebase to squash fixups",
        "Run git rebase -i with autosquash so fixup commits fold into their targets.\n",
    );
    rebase2.date = Some(NOW - DAY);
    let mut linker = entry(
        "build/linker-oom.md",
        "Linker runs out of memory in release builds",
        "Set `codegen-units = 4` and use lld; the default linker needs 12 GB for the release profile.\nThe error is `collect2: fatal error: ld terminated with signal 9 [Killed]`.\n",
    );
    linker.sources = vec!["Cargo.toml".into()];
    let mut ci = entry(
        "build/ci-cache.md",
        "CI cache key must include Cargo.lock",
        "Without the lock file in the cache key, CI restores stale dependencies. See src/cache/key.rs.\n",
    );
    ci.sources = vec!["ci/cache.yml".into(), "src/cache/key.rs".into()];
    // Format 2: blob ids, a superseded and a retired entry.
    rebase.extra.insert(
        "supersedes".into(),
        serde_json::json!(["git/rebase-old.md"]),
    );
    let mut old = entry(
        "git/rebase-old.md",
        "Rebase with a temporary branch and cherry-pick",
        "Create a temporary branch, cherry-pick the commits of feature-b onto main, reset.\n",
    );
    old.date = Some(NOW - 2000 * DAY);
    let mut wrong = entry(
        "misc/wrong-flag.md",
        "Pass --no-verify-cherry to skip hooks",
        "This flag never existed; cherry hooks are skipped with --no-verify.\n",
    );
    wrong
        .extra
        .insert("status".into(), serde_json::json!("retired"));
    let mut all = vec![
        cache,
        rebase,
        rebase2,
        linker,
        ci,
        old,
        wrong,
        entry("misc/日本語.md", "日本語のメモ", "東京 の ビルド 手順\n"),
    ];
    for (i, e) in all.iter_mut().enumerate() {
        e.blob = format!("{:040x}", 0xb10b_0000 + i);
    }
    all
}

fn info() -> BuildInfo {
    BuildInfo {
        project: "backend".into(),
        commit: "3f2a9c1e".into(),
        generation: 7,
        build_time: NOW,
    }
}

fn artifact() -> Vec<u8> {
    build(&corpus(), &info()).unwrap()
}

fn ids<B: AsRef<[u8]>>(index: &Index<B>, query: &str, opts: &SearchOptions) -> Vec<String> {
    index
        .search(query, opts)
        .unwrap()
        .into_iter()
        .map(|h| h.entry.id.to_owned())
        .collect()
}

#[test]
fn round_trip_keeps_every_field() {
    let index = Index::open(artifact()).unwrap();
    index.verify().unwrap();
    let meta = index.meta().unwrap();
    assert_eq!(
        (
            meta.project,
            meta.commit,
            meta.generation,
            meta.build_time,
            meta.entry_count
        ),
        ("backend", "3f2a9c1e", 7, NOW, 8)
    );
    assert_eq!(
        (meta.format_version, meta.tokenizer_version),
        (FORMAT_VERSION, TOKENIZER_VERSION)
    );
    let e = index
        .entry_by_id("architecture/cached-entry.md")
        .unwrap()
        .unwrap();
    let original = &corpus()[0];
    assert_eq!(e.title, original.title);
    assert_eq!(e.body, original.body);
    assert_eq!(e.topic, "architecture");
    assert_eq!(e.tags, ["cache", "fragile"]);
    assert_eq!(e.sources, ["src/cache/entry.rs", "src/cache/mod.rs"]);
    assert_eq!((e.date, e.author), (Some(NOW - 10 * DAY), Some("Ana")));
    assert_eq!(e.extra_json, r#"{"reviewed":true}"#);
    let bare = index.entry_by_id("build/linker-oom.md").unwrap().unwrap();
    assert_eq!((bare.date, bare.author, bare.extra_json), (None, None, ""));
    assert!(index.entry_by_id("nope.md").unwrap().is_none());
    assert!(index.entry_by_id("").unwrap().is_none());
}

#[test]
fn builds_are_deterministic_whatever_the_input_order() {
    let mut reversed = corpus();
    reversed.reverse();
    assert_eq!(artifact(), build(&reversed, &info()).unwrap());
    let mut dup = corpus();
    dup.push(corpus()[0].clone());
    assert!(
        build(&dup, &info())
            .unwrap_err()
            .to_string()
            .contains("architecture/cached-entry.md")
    );
}

#[test]
fn identifier_styles_all_find_the_same_entry() {
    let index = Index::open(artifact()).unwrap();
    for q in [
        "CachedEntry",
        "cached_entry",
        "cached-entry",
        "cached entry",
        "invalidate path",
    ] {
        assert_eq!(
            ids(&index, q, &SearchOptions::default())[0],
            "architecture/cached-entry.md",
            "{q}"
        );
    }
}

#[test]
fn and_mode_ranks_full_matches_first_and_falls_back_to_or() {
    let index = Index::open(artifact()).unwrap();
    let opts = SearchOptions::default();
    // Only the linker entry has both terms; OR-only matches follow it.
    let hits = ids(&index, "release linker", &opts);
    assert_eq!(hits[0], "build/linker-oom.md");
    // No entry has both: OR fallback still answers.
    let hits = ids(&index, "autosquash linker", &opts);
    assert_eq!(hits.len(), 2, "{hits:?}");
    let or = SearchOptions {
        mode: Mode::Or,
        ..SearchOptions::default()
    };
    assert_eq!(ids(&index, "zzzz qqqq", &or), Vec::<String>::new());
    assert!(ids(&index, "", &opts).is_empty());
    assert!(ids(&index, "the of and", &opts).is_empty());
}

#[test]
fn topic_filter_cap_limit_and_recency() {
    let index = Index::open(artifact()).unwrap();
    let all = SearchOptions {
        mode: Mode::Or,
        ..SearchOptions::default()
    };
    let q = "rebase cache";
    let topic = SearchOptions {
        topic: Some("git".into()),
        ..all.clone()
    };
    assert!(
        ids(&index, q, &topic)
            .iter()
            .all(|id| id.starts_with("git/"))
    );
    assert!(
        ids(
            &index,
            q,
            &SearchOptions {
                topic: Some("nosuch".into()),
                ..all.clone()
            }
        )
        .is_empty()
    );
    let capped = SearchOptions {
        per_topic_cap: Some(1),
        ..all.clone()
    };
    let hits = ids(&index, q, &capped);
    let git = hits.iter().filter(|id| id.starts_with("git/")).count();
    assert_eq!(git, 1, "{hits:?}");
    assert_eq!(
        ids(
            &index,
            q,
            &SearchOptions {
                limit: 1,
                ..all.clone()
            }
        )
        .len(),
        1
    );

    // The two git entries score alike on "rebase"; recency lifts the one from yesterday.
    let fresh = SearchOptions {
        now: Some(NOW),
        recency_weight: 0.5,
        topic: Some("git".into()),
        ..all
    };
    let hits = index.search("rebase commits", &fresh).unwrap();
    assert_eq!(hits[0].entry.id, "git/interactive-rebase.md");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn snippets_show_the_matching_text_not_the_title_heading() {
    let index = Index::open(artifact()).unwrap();
    let hits = index
        .search("invalidate_path", &SearchOptions::default())
        .unwrap();
    assert_eq!(hits[0].entry.id, "architecture/cached-entry.md");
    let s = &hits[0].snippet;
    assert!(s.contains("invalidate_path after every rename"), "{s}");
    assert!(!s.contains('#') && !s.contains('`'), "{s}");
    assert!(s.chars().count() <= 162, "{s}");
    let cjk = index.search("東京", &SearchOptions::default()).unwrap();
    assert_eq!(cjk[0].entry.id, "misc/日本語.md");
}

#[test]
fn source_lookups_and_related_topics() {
    let index = Index::open(artifact()).unwrap();
    let by = |p: &str| {
        index
            .by_source(p)
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(by("src/cache/entry.rs"), ["architecture/cached-entry.md"]);
    assert_eq!(by("./src/cache/entry.rs"), ["architecture/cached-entry.md"]);
    assert!(by("src/cache").is_empty());
    let names: Vec<_> = index
        .by_file_name("Cargo.toml")
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(names, ["build/linker-oom.md"]);
    let names: Vec<_> = index
        .by_file_name("/abs/path/to/key.rs")
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(names, ["build/ci-cache.md"]);
    // src/cache/ holds sources of an architecture entry and a build entry.
    let related = index.related_topics("src/cache/new_file.rs").unwrap();
    let topics: Vec<_> = related.iter().map(|t| (t.topic, t.count)).collect();
    assert_eq!(topics, [("architecture", 1), ("build", 1)]);
    assert!(index.related_topics("README.md").unwrap().is_empty());
    let topics: Vec<_> = index
        .topics()
        .unwrap()
        .into_iter()
        .map(|t| (t.topic, t.count))
        .collect();
    assert_eq!(
        topics,
        [("architecture", 1), ("build", 2), ("git", 3), ("misc", 2)]
    );
}

/// Format 2: each entry's blob id, and retired or superseded entries out of default
/// results but still readable, listed with `include_hidden`.
#[test]
fn blobs_and_hidden_entries() {
    let index = Index::open(artifact()).unwrap();
    let blob_of = |id: &str| {
        let e = index.entry_by_id(id).unwrap().unwrap();
        index.blob(e.doc).unwrap().map(str::to_string)
    };
    let corpus = corpus();
    assert_eq!(
        blob_of("git/rebase-old.md").as_deref(),
        Some(corpus[5].blob.as_str())
    );
    assert_eq!(
        blob_of("misc/日本語.md").as_deref(),
        Some(corpus[7].blob.as_str())
    );
    let old = index.entry_by_id("git/rebase-old.md").unwrap().unwrap();
    let by = index.entry_by_id("git/rebase-onto.md").unwrap().unwrap();
    assert_eq!(
        index.hidden(old.doc),
        Some(helix_index_format::Hidden::SupersededBy(by.doc as usize))
    );
    let wrong = index.entry_by_id("misc/wrong-flag.md").unwrap().unwrap();
    assert_eq!(
        index.hidden(wrong.doc),
        Some(helix_index_format::Hidden::Retired)
    );
    assert_eq!(index.hidden(by.doc), None);
    for q in ["cherry-pick temporary branch", "no-verify-cherry flag"] {
        let found = ids(&index, q, &SearchOptions::default());
        assert!(
            !found.contains(&"git/rebase-old.md".to_string())
                && !found.contains(&"misc/wrong-flag.md".to_string()),
            "{q}: {found:?}"
        );
    }
    let all = SearchOptions {
        include_hidden: true,
        ..SearchOptions::default()
    };
    assert_eq!(
        ids(&index, "cherry-pick temporary branch", &all)[0],
        "git/rebase-old.md"
    );
    assert_eq!(
        ids(&index, "no-verify-cherry flag", &all)[0],
        "misc/wrong-flag.md"
    );
    // An artifact without the optional sections (format 1) hides nothing and has no blobs.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let v1 = std::fs::read(dir.join("reference-v1-t2.hix")).unwrap();
    let v1 = Index::open(&v1[..]).unwrap();
    assert!(v1.hidden_rows().is_empty() && v1.blob(0).unwrap().is_none());
    // Counts for people and hooks leave the hidden entries out.
    assert_eq!((index.len(), index.visible_len()), (8, 6));
    let topics: Vec<_> = index
        .visible_topics()
        .unwrap()
        .into_iter()
        .map(|t| (t.topic, t.count))
        .collect();
    assert_eq!(
        topics,
        [("architecture", 1), ("build", 2), ("git", 2), ("misc", 1)]
    );
}

/// Glob sources (`applyTo`, `globs`) are stored as sources and found by the paths they
/// match, whether their literal prefix is a folder, a file-name prefix or empty.
#[test]
fn glob_sources_find_the_paths_they_match() {
    let with = |id: &str, sources: &[&str]| {
        let mut e = entry(id, id, "Instructions for some files.\n");
        e.sources = sources.iter().map(|s| s.to_string()).collect();
        e
    };
    let entries = vec![
        with("copilot/ci.md", &[".github/workflows/*.yml"]),
        with("copilot/ts.md", &["**/*.{ts,tsx}"]),
        with("cursor/db.md", &["src/db/**/*.rs", "docs/db.md"]),
        with("cursor/docker.md", &["Dockerfile*"]),
        with("ops/literal.md", &["src/db/pool.rs"]),
        // Many unrelated literal sources around the globs' prefixes.
        with(
            "misc/noise.md",
            &["src/a.rs", "src/db.rs", "src/dbx/x.rs", ".github/x.yml"],
        ),
    ];
    let bytes = build(&entries, &info()).unwrap();
    let index = Index::open(bytes).unwrap();
    let by = |p: &str| {
        let mut ids: Vec<String> = index
            .by_source_glob(p)
            .unwrap()
            .into_iter()
            .map(|e| e.id.to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(by(".github/workflows/ci.yml"), ["copilot/ci.md"]);
    assert_eq!(by("./.github/workflows/release.yml"), ["copilot/ci.md"]);
    assert!(by(".github/workflows/nested/ci.yml").is_empty());
    assert_eq!(by("web/src/App.tsx"), ["copilot/ts.md"]);
    assert_eq!(by("main.ts"), ["copilot/ts.md"]);
    assert_eq!(by("src/db/migrate/v2.rs"), ["cursor/db.md"]);
    assert_eq!(
        by("src/db/pool.rs"),
        ["cursor/db.md"],
        "literal sources are by_source's"
    );
    assert_eq!(by("deploy/Dockerfile.prod"), ["cursor/docker.md"]);
    assert_eq!(by("Dockerfile"), ["cursor/docker.md"]);
    assert!(by("src/dbx/x.rs").is_empty());
    assert!(by("docs/db.md").is_empty());
    assert!(by("").is_empty());
}

#[test]
fn empty_index_is_valid() {
    let bytes = build(&[], &BuildInfo::default()).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    assert!(index.is_empty());
    assert!(
        index
            .search("anything", &SearchOptions::default())
            .unwrap()
            .is_empty()
    );
    assert!(index.topics().unwrap().is_empty());
}

#[test]
fn open_rejects_with_typed_errors() {
    let good = artifact();
    assert!(matches!(
        Index::open(&good[..10]),
        Err(FormatError::TooSmall { .. })
    ));
    let mut bad = good.clone();
    bad[0] = b'X';
    assert!(matches!(
        Index::open(&bad[..]),
        Err(FormatError::BadMagic { .. })
    ));
    let mut newer = good.clone();
    newer[12..16].copy_from_slice(&99u32.to_le_bytes()); // min_reader_version
    let err = Index::open(&newer[..]).unwrap_err();
    assert_eq!(
        err,
        FormatError::TooNew {
            needs: 99,
            max: FORMAT_VERSION
        }
    );
    assert!(err.to_string().contains("99"));
    let mut old = good.clone();
    old[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(
        Index::open(&old[..]),
        Err(FormatError::UnsupportedVersion { got: 0, .. })
    ));
    assert!(matches!(
        Index::open(&good[..good.len() - 1]),
        Err(FormatError::LengthMismatch { .. })
    ));
    let mut flipped = good.clone();
    let at = good.len() / 2;
    flipped[at] ^= 0x40;
    let index = Index::open(&flipped[..]).unwrap();
    assert!(matches!(index.verify(), Err(FormatError::Checksum { .. })));
}

#[test]
fn declared_len_reads_the_size_from_the_first_bytes_only() {
    let good = artifact();
    let prefix = &good[..helix_index_format::DECLARED_LEN_PREFIX];
    assert_eq!(
        helix_index_format::declared_len(prefix),
        Ok(good.len() as u64)
    );
    assert!(matches!(
        helix_index_format::declared_len(&good[..10]),
        Err(FormatError::TooSmall { .. })
    ));
    assert!(matches!(
        helix_index_format::declared_len(b"<!DOCTYPE html><html><head><title>Sign in"),
        Err(FormatError::BadMagic { .. })
    ));
    let mut newer = prefix.to_vec();
    newer[12..16].copy_from_slice(&99u32.to_le_bytes());
    assert!(matches!(
        helix_index_format::declared_len(&newer),
        Err(FormatError::TooNew { needs: 99, .. })
    ));
}

/// Runs every query over possibly damaged bytes; any outcome but a panic is fine.
fn exercise(bytes: &[u8]) {
    let Ok(index) = Index::open(bytes) else {
        return;
    };
    let _ = index.verify();
    let _ = index.meta();
    for q in [
        "cache",
        "CachedEntry rename",
        "rebase linker release",
        "東京",
    ] {
        for mode in [Mode::AndThenOr, Mode::Or] {
            let opts = SearchOptions {
                mode,
                per_topic_cap: Some(1),
                now: Some(NOW),
                ..SearchOptions::default()
            };
            let _ = index.search(q, &opts);
        }
    }
    for doc in 0..index.len().min(64) {
        let _ = index.entry(doc);
    }
    let _ = index.entry(u32::MAX);
    let _ = index.entry_by_id("git/rebase-onto.md");
    let _ = index.by_source("src/cache/entry.rs");
    let _ = index.by_file_name("key.rs");
    let _ = index.by_source_glob(".github/workflows/ci.yml");
    let _ = index.topics();
    let _ = index.related_topics("src/cache/x.rs");
    if let Some(v) = index.vectors() {
        let _ = (
            v.dim(),
            v.model(),
            v.len(),
            v.count_present(),
            v.file_range(),
        );
        for doc in 0..index.len().min(64) {
            if let Some(row) = v.get(doc) {
                let _ = row.to_f32();
            }
        }
        let _ = v.get(u32::MAX);
        let mut query = vec![0.0f32; v.dim()];
        for (i, x) in query.iter_mut().enumerate() {
            *x = if i % 3 == 0 { 1.0 } else { -0.5 };
        }
        for filter in [
            VectorFilter::default(),
            VectorFilter {
                topic: Some("git".into()),
                include_hidden: true,
            },
        ] {
            let _ = v.top_k(&query, 3, &filter);
            let _ = v.top_k(&query, 1000, &filter);
        }
        let _ = v.top_k(&[1.0], 3, &VectorFilter::default());
    }
}

/// xorshift: reproducible mutations without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Damaged copies of the artifact without vectors and of the one with them (whose
/// `VECTORS` section gets damage of its own).
#[test]
fn damaged_artifacts_never_panic() {
    damage(&artifact(), 0x9e37_79b9_7f4a_7c15);
    damage(&vectors::vector_artifact(), 0x2545_f491_4f6c_dd1d);
}

fn damage(good: &[u8], seed: u64) {
    let header = size_of::<Header>();
    let row = size_of::<SectionEntry>();
    let sections = u32::from_le_bytes(good[20..24].try_into().unwrap()) as usize;
    let vectors = (0..sections).find_map(|i| {
        let at = header + i * row;
        let kind = u32::from_le_bytes(good[at..at + 4].try_into().unwrap());
        let offset = u64::from_le_bytes(good[at + 8..at + 16].try_into().unwrap()) as usize;
        let len = u64::from_le_bytes(good[at + 16..at + 24].try_into().unwrap()) as usize;
        (kind == 12).then_some(offset..offset + len)
    });
    let mut rng = Rng(seed);
    // Every truncation.
    for len in 0..good.len() {
        exercise(&good[..len]);
    }
    for round in 0..7000 {
        let mut b = good.to_vec();
        match round % 7 {
            // Random bit flips anywhere.
            0 => {
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(b.len());
                    b[at] ^= 1 << rng.below(8);
                }
            }
            // Section offsets and lengths pointed past the end or made huge.
            1 => {
                let s = header + rng.below(sections) * row + 8 + 8 * rng.below(2);
                let v = [
                    u64::MAX,
                    u64::MAX / 2,
                    b.len() as u64,
                    b.len() as u64 - 9,
                    rng.next() % 4096,
                ][rng.below(5)];
                b[s..s + 8].copy_from_slice(&v.to_le_bytes());
            }
            // Huge or wrong counts in the header.
            2 => {
                let s = [20, 48, 52, 56, 60, 64][rng.below(6)];
                let v = [u32::MAX, 0, 1, rng.next() as u32][rng.below(4)];
                b[s..s + 4].copy_from_slice(&v.to_le_bytes());
            }
            // Random u32 overwrites inside the records (string refs, rows, postings offsets).
            3 => {
                for _ in 0..1 + rng.below(4) {
                    let at = header + rng.below(b.len() - header - 12);
                    let v =
                        [u32::MAX, u32::MAX - 3, 0, rng.next() as u32, 0x8080_8080][rng.below(5)];
                    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            // Garbage of random length with a valid header prefix.
            4 => {
                let len = rng.below(good.len() * 2);
                b.resize(len.max(header), 0);
                for x in b[header..].iter_mut() {
                    *x = rng.next() as u8;
                }
                let len = b.len() as u64;
                b[24..32].copy_from_slice(&len.to_le_bytes());
            }
            // Inside `VECTORS` (when there is one): its head's fields, scales and codes
            // overwritten with extremes, NaN and infinities.
            6 => {
                let Some(v) = &vectors else { continue };
                for _ in 0..1 + rng.below(3) {
                    let at = if rng.below(2) == 0 {
                        v.start + 4 * rng.below(4)
                    } else {
                        v.start + rng.below(v.len() - 4)
                    };
                    let x = [
                        f32::NAN.to_bits(),
                        f32::INFINITY.to_bits(),
                        (-1.0f32).to_bits(),
                        0,
                        1,
                        u32::MAX,
                        0x8080_8080,
                        4097,
                        rng.next() as u32,
                    ][rng.below(9)];
                    b[at..at + 4].copy_from_slice(&x.to_le_bytes());
                }
            }
            // Spliced: a slice of the artifact moved elsewhere.
            _ => {
                let from = rng.below(b.len());
                let to = rng.below(b.len());
                let n = rng.below(64).min(b.len() - from.max(to));
                let chunk = good[from..from + n].to_vec();
                b[to..to + n].copy_from_slice(&chunk);
            }
        }
        exercise(&b);
    }
    for _ in 0..2000 {
        let len = rng.below(512);
        let junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        exercise(&junk);
    }
}

/// Crash inputs found by `cargo fuzz` (index-format/fuzz) are kept here and replayed.
#[test]
fn fuzz_regressions_do_not_panic() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz-regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        exercise(&std::fs::read(e.path()).unwrap());
    }
}

/// Committed reference artifacts, one per released (format, tokenizer) version pair:
/// `reference-v1.hix` (format 1, tokenizer 1: no stemming, no field weights) and
/// `reference-v1-t2.hix` (format 1, tokenizer 2), `reference-v2-t2.hix` and
/// `reference-v2-t3.hix` (format 2; tokenizer 3 indexes the topic with the tags). Each must keep opening, verifying and
/// answering queries (tokenized the way its own tokenizer did); today's builder must still
/// produce the current pair's file byte for byte. `HELIX_BLESS=1` writes the current one
/// (never an older one) from [`artifact`].
/// The reference artifact with a `VECTORS` section (format 2, tokenizer 3): see
/// `vectors::reference_artifact_with_vectors`.
const REFERENCE_WITH_VECTORS: &str = "reference-v2-t3-vec.hix";

const REFERENCES: [(&str, u32, u32); 4] = [
    ("reference-v1.hix", 1, 1),
    ("reference-v1-t2.hix", 1, 2),
    ("reference-v2-t2.hix", 2, 2),
    ("reference-v2-t3.hix", 2, 3),
];

#[test]
fn reference_artifacts_still_open() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let built = artifact();
    let mut current = false;
    for (name, format, tokenizer) in REFERENCES {
        let path = dir.join(name);
        let is_current = (format, tokenizer) == (FORMAT_VERSION, TOKENIZER_VERSION);
        current |= is_current;
        if is_current && std::env::var_os("HELIX_BLESS").is_some() {
            std::fs::write(&path, &built).unwrap();
        }
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|_| panic!("{name} missing: run the test with HELIX_BLESS=1 once"));
        let index = Index::open(&bytes[..]).unwrap();
        index.verify().unwrap();
        let meta = index.meta().unwrap();
        assert_eq!(
            (meta.format_version, meta.tokenizer_version),
            (format, tokenizer)
        );
        // Queries reach entries through words, identifiers and inflected forms alike.
        for q in ["CachedEntry", "cached entry", "invalidated rename"] {
            assert_eq!(
                ids(&index, q, &SearchOptions::default())[0],
                "architecture/cached-entry.md",
                "{name}: {q}"
            );
        }
        assert_eq!(
            index.by_source("Cargo.toml").unwrap()[0].id,
            "build/linker-oom.md"
        );
        if is_current {
            assert!(
                bytes == built,
                "{name}: the builder's output changed without a format or tokenizer version bump"
            );
        }
    }
    assert!(
        current,
        "add a reference artifact for format {FORMAT_VERSION}, tokenizer {TOKENIZER_VERSION} to REFERENCES"
    );
}

/// An inflected query finds the base form only in an artifact whose tokenizer stems; an
/// unstemmed (version 1) artifact is still searched as it was built.
#[test]
fn each_artifact_is_queried_with_its_own_tokenizer() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let v1 = std::fs::read(dir.join("reference-v1.hix")).unwrap();
    let v1 = Index::open(&v1[..]).unwrap();
    let current = Index::open(artifact()).unwrap();
    // The corpus says "invalidated" and "rename"; "invalidating renames" is inflected.
    assert_eq!(
        ids(&current, "invalidating renames", &SearchOptions::default())[0],
        "architecture/cached-entry.md"
    );
    let hits = ids(&v1, "invalidating renames", &SearchOptions::default());
    assert!(
        !hits.contains(&"architecture/cached-entry.md".to_string()),
        "{hits:?}"
    );
}

/// The recency boost is applied lazily, only to documents that can still reach the top k;
/// that must rank exactly like boosting everything (a limit above the hit count does).
#[test]
fn lazy_recency_ranks_like_boosting_every_document() {
    let words = ["cache", "rebase", "linker", "tokio", "rename", "postgres"];
    let entries: Vec<Entry> = (0..600)
        .map(|i| {
            let mut e = entry(
                &format!("t{}/e{i:03}.md", i % 5),
                &format!("{} note {i}", words[i % 6]),
                &format!(
                    "{} {} {}",
                    words[(i * 7) % 6],
                    words[(i / 6) % 6].repeat(1 + i % 3),
                    "filler ".repeat(i % 11)
                ),
            );
            e.date = (i % 4 != 0).then_some(NOW - (i as i64 * 37 % 2000) * DAY);
            e
        })
        .collect();
    let bytes = build(&entries, &info()).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    for (q, mode, weight) in [
        ("cache rebase", Mode::Or, 0.5),
        ("cache rebase", Mode::AndThenOr, 2.0),
        ("postgres", Mode::Or, 0.1),
        ("tokio linker rename", Mode::AndThenOr, 0.8),
    ] {
        let opts = SearchOptions {
            mode,
            now: Some(NOW),
            recency_weight: weight,
            limit: 5,
            ..SearchOptions::default()
        };
        let lazy = ids(&index, q, &opts);
        let all = ids(
            &index,
            q,
            &SearchOptions {
                limit: 10_000,
                ..opts.clone()
            },
        );
        assert_eq!(lazy, all[..5], "{q} {mode:?} {weight}");
        let plain = ids(
            &index,
            q,
            &SearchOptions {
                now: None,
                ..opts.clone()
            },
        );
        assert_ne!(lazy, plain, "the boost should matter for {q}");
    }
}

/// When one topic holds every top hit, the per-topic cap must still fill the limit from
/// other topics, however deep they rank.
#[test]
fn per_topic_cap_reaches_deep_into_the_ranking() {
    let mut entries: Vec<Entry> = (0..300)
        .map(|i| {
            entry(
                &format!("a/e{i:03}.md"),
                "cache cache",
                "cache cache cache cache",
            )
        })
        .collect();
    for t in ["b", "c"] {
        entries.push(entry(
            &format!("{t}/rare.md"),
            "notes",
            &format!("cache {}", "filler ".repeat(200)),
        ));
    }
    let bytes = build(&entries, &info()).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    let opts = SearchOptions {
        limit: 3,
        per_topic_cap: Some(1),
        ..SearchOptions::default()
    };
    let hits = ids(&index, "cache", &opts);
    assert_eq!(hits.len(), 3, "{hits:?}");
    let topics: Vec<&str> = hits.iter().map(|id| &id[..1]).collect();
    assert_eq!(topics, ["a", "b", "c"], "{hits:?}");
}

/// `search_ranges` names the dictionary rows and texts, the posting lists, the document
/// lengths and the entry rows: disjoint ranges inside the file; the texts hold every term.
#[test]
fn search_ranges_are_the_dictionary_postings_and_lengths() {
    let bytes = artifact();
    let index = Index::open(&bytes[..]).unwrap();
    let ranges = index.search_ranges();
    assert_eq!(ranges.len(), 5, "{ranges:?}");
    for (i, r) in ranges.iter().enumerate() {
        assert!(r.start < r.end && r.end <= bytes.len(), "{r:?}");
        for o in &ranges[i + 1..] {
            assert!(r.end <= o.start || o.end <= r.start, "{r:?} overlaps {o:?}");
        }
    }
    let [rows, texts, _postings, lens, entries] =
        [&ranges[0], &ranges[1], &ranges[2], &ranges[3], &ranges[4]];
    assert_eq!(entries.end - entries.start, 72 * index.len() as usize);
    // Twenty-byte dictionary rows, one four-byte length per entry.
    assert_eq!((rows.end - rows.start) % 20, 0);
    assert_eq!(lens.end - lens.start, 4 * index.len() as usize);
    let texts = std::str::from_utf8(&bytes[texts.clone()]).unwrap();
    for term in ["rebase", "cachedentry", "東"] {
        assert!(texts.contains(term), "{term} not in {texts:?}");
    }
}

/// The YAML test suite through the front-matter YAML layer (docs/benchmarks.md): every
/// valid one-document case gives its data, every invalid case but three is refused.
#[test]
fn yaml_test_suite() {
    let r = yaml_suite::run();
    // Case counts: a different corpus version must be looked at, not silently measured.
    assert_eq!(
        (
            r.invalid_refused.1,
            r.data_matched.1,
            r.no_data_accepted.1,
            r.multi_document_refused.1
        ),
        (94, 261, 28, 19),
        "{r:?}"
    );
    assert_eq!(r.data_matched.0, 261, "{r:?}");
    assert_eq!(r.no_data_accepted.0, 28, "{r:?}");
    assert_eq!(r.multi_document_refused.0, 19, "{r:?}");
    // Accepted on purpose, as libyaml (PyYAML) reads them: a flow sequence and a quoted
    // scalar whose continuation lines are under-indented, and a tab before a quoted
    // scalar's continuation. Every other invalid case must stay refused.
    assert_eq!(r.invalid_accepted, ["9C9N", "DK95/01", "QB6E"], "{r:?}");
}
