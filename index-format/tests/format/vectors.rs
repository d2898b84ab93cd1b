//! The optional `VECTORS` section: round trip, determinism, the bytes of an artifact
//! without vectors unchanged, typed errors for damaged sections, the skip path of a
//! reader that does not know the section, the committed reference artifact with vectors,
//! `top_k` against an exact f32 search, and fusion with the lexical search end to end.

use std::collections::HashMap;
use std::ops::Range;

use helix_index_format::layout::{SectionKind, VECTOR_SCHEME_I8, VectorsHeader};
use helix_index_format::{
    BuildError, Embeddings, FusionOptions, VectorError, VectorFilter, build_with_embeddings, fuse,
};

use super::*;

/// Dimension and model of the reference entries' vectors.
const REF_DIM: usize = 16;
const REF_MODEL: &str = "helix-test/fnv-xorshift-16";

/// A deterministic vector for an entry id: FNV-1a of the id seeds an xorshift, whose
/// outputs give 16 components in [-1, 1). Exact on every platform (integer arithmetic
/// and one exact division per component).
fn reference_vector(id: &str) -> Vec<f32> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut rng = Rng(h | 1);
    (0..REF_DIM)
        .map(|_| ((rng.next() >> 40) as i64 - (1 << 23)) as f32 / (1u32 << 23) as f32)
        .collect()
}

/// Vectors for every reference entry but the Japanese one (an entry without a vector).
fn embeddings() -> Embeddings {
    Embeddings {
        model: REF_MODEL.into(),
        dim: REF_DIM,
        vectors: corpus()
            .iter()
            .filter(|e| e.id != "misc/日本語.md")
            .map(|e| (e.id.clone(), reference_vector(&e.id)))
            .collect(),
    }
}

pub(super) fn vector_artifact() -> Vec<u8> {
    build_with_embeddings(&corpus(), &info(), Some(&embeddings())).unwrap()
}

/// The byte range of section `kind` in `bytes`, from the section table.
fn section(bytes: &[u8], kind: u32) -> Option<Range<usize>> {
    let count = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    let row = size_of::<SectionEntry>();
    (0..count).find_map(|i| {
        let at = size_of::<Header>() + i * row;
        let k = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let offset = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        let len = u64::from_le_bytes(bytes[at + 16..at + 24].try_into().unwrap()) as usize;
        (k == kind).then_some(offset..offset + len)
    })
}

/// Writes the checksum of the bytes as they are now.
fn reseal(bytes: &mut [u8]) {
    let end = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Everything but the vectors answers as the artifact without them does.
fn same_answers(a: &Index<&[u8]>, b: &Index<&[u8]>) {
    assert_eq!(a.len(), b.len());
    for doc in 0..a.len() {
        assert_eq!(a.entry(doc).unwrap(), b.entry(doc).unwrap());
        assert_eq!(a.blob(doc).unwrap(), b.blob(doc).unwrap());
        assert_eq!(a.hidden(doc), b.hidden(doc));
    }
    for q in ["cache", "rebase commits", "linker release", "東京"] {
        assert_eq!(
            ids(a, q, &SearchOptions::default()),
            ids(b, q, &SearchOptions::default())
        );
    }
    assert_eq!(a.topics().unwrap(), b.topics().unwrap());
    let (ma, mb) = (a.meta().unwrap(), b.meta().unwrap());
    assert_eq!(
        (ma.project, ma.commit, ma.generation),
        (mb.project, mb.commit, mb.generation)
    );
}

#[test]
fn round_trip_with_vectors() {
    let bytes = vector_artifact();
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    let v = index.vectors().unwrap();
    assert_eq!((v.dim(), v.model(), v.len()), (REF_DIM, REF_MODEL, 8));
    assert_eq!(v.count_present(), 7);
    let range = v.file_range();
    assert_eq!(
        Some(range.clone()),
        section(&bytes, SectionKind::Vectors as u32)
    );
    // Header, model id, then 4 + 16 bytes per entry.
    assert_eq!(range.len(), 16 + REF_MODEL.len() + 8 * (4 + REF_DIM));
    for e in corpus() {
        let doc = index.entry_by_id(&e.id).unwrap().unwrap().doc;
        match v.get(doc) {
            None => assert_eq!(e.id, "misc/日本語.md"),
            Some(row) => {
                let c = cosine(&row.to_f32(), &reference_vector(&e.id));
                assert!(c > 0.999, "{}: {c}", e.id);
            }
        }
    }
    assert!(v.get(8).is_none() && v.get(u32::MAX).is_none());
    let plain = artifact();
    same_answers(&index, &Index::open(&plain[..]).unwrap());
    assert!(Index::open(&plain[..]).unwrap().vectors().is_none());
}

/// The same entries and vectors give the same bytes whatever the order of either; no
/// embeddings give today's bytes, with no section; vectors of ids that are not entries
/// are ignored; vectors read back from an artifact and given again give the same bytes.
#[test]
fn vectors_are_deterministic_and_optional() {
    let bytes = vector_artifact();
    let mut shuffled = corpus();
    shuffled.reverse();
    shuffled.swap(1, 5);
    let mut e = embeddings();
    let mut pairs: Vec<(String, Vec<f32>)> = e.vectors.drain().collect();
    pairs.sort_by(|a, b| b.0.cmp(&a.0));
    e.vectors = pairs.into_iter().collect::<HashMap<_, _>>();
    e.vectors
        .insert("nope/not-an-entry.md".into(), vec![1.0; REF_DIM]);
    assert!(bytes == build_with_embeddings(&shuffled, &info(), Some(&e)).unwrap());

    let plain = artifact();
    assert!(plain == build_with_embeddings(&corpus(), &info(), None).unwrap());
    assert_eq!(section(&plain, SectionKind::Vectors as u32), None);

    // What a server does for entries whose file did not change: reuse the stored vector.
    let index = Index::open(&bytes[..]).unwrap();
    let v = index.vectors().unwrap();
    let reused = Embeddings {
        model: REF_MODEL.into(),
        dim: REF_DIM,
        vectors: (0..index.len())
            .filter_map(|doc| {
                let row = v.get(doc)?;
                Some((index.entry(doc).unwrap().id.to_string(), row.to_f32()))
            })
            .collect(),
    };
    assert!(bytes == build_with_embeddings(&corpus(), &info(), Some(&reused)).unwrap());

    // Embeddings that hold no entry's vector still record the model, every row empty.
    let empty = Embeddings {
        model: REF_MODEL.into(),
        dim: REF_DIM,
        vectors: HashMap::new(),
    };
    let bytes = build_with_embeddings(&corpus(), &info(), Some(&empty)).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    let v = index.vectors().unwrap();
    assert_eq!((v.model(), v.count_present()), (REF_MODEL, 0));
    assert!(
        v.top_k(&[1.0; REF_DIM], 5, &VectorFilter::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn bad_embeddings_are_refused_with_typed_errors() {
    let build_with = |f: &dyn Fn(&mut Embeddings)| {
        let mut e = embeddings();
        f(&mut e);
        build_with_embeddings(&corpus(), &info(), Some(&e)).unwrap_err()
    };
    assert_eq!(
        build_with(&|e| e.dim = 0),
        BuildError::EmbeddingDimension { dim: 0 }
    );
    assert_eq!(
        build_with(&|e| e.dim = 4097),
        BuildError::EmbeddingDimension { dim: 4097 }
    );
    assert_eq!(
        build_with(&|e| e.model = "m".repeat(257)),
        BuildError::EmbeddingModel { len: 257 }
    );
    let id = "git/rebase-onto.md".to_string();
    assert_eq!(
        build_with(&|e| {
            e.vectors.insert(id.clone(), vec![1.0; 15]);
        }),
        BuildError::VectorDimension {
            id: id.clone(),
            expected: 16,
            got: 15
        }
    );
    assert_eq!(
        build_with(&|e| {
            e.vectors.insert(id.clone(), vec![0.0; 16]);
        }),
        BuildError::BadVector {
            id: id.clone(),
            error: VectorError::Zero
        }
    );
    let err = build_with(&|e| {
        let mut v = vec![1.0; 16];
        v[4] = f32::INFINITY;
        e.vectors.insert(id.clone(), v);
    });
    assert_eq!(
        err,
        BuildError::BadVector {
            id: id.clone(),
            error: VectorError::NotFinite
        }
    );
    assert!(err.to_string().contains("git/rebase-onto.md"), "{err}");
}

/// `open` checks the section's head and size (O(1)); `verify` every row. Each damage gives
/// a typed error; a scheme this reader does not know reads as no vectors.
#[test]
fn damaged_vectors_give_typed_errors() {
    let good = vector_artifact();
    let at = section(&good, SectionKind::Vectors as u32).unwrap();
    let field = |name: &str| {
        at.start
            + match name {
                "dim" => std::mem::offset_of!(VectorsHeader, dim),
                "scheme" => std::mem::offset_of!(VectorsHeader, scheme),
                "count" => std::mem::offset_of!(VectorsHeader, count),
                _ => std::mem::offset_of!(VectorsHeader, model_len),
            }
    };
    let set = |name: &str, value: u32| {
        let mut b = good.clone();
        let f = field(name);
        b[f..f + 4].copy_from_slice(&value.to_le_bytes());
        b
    };
    let open_err = |b: &[u8]| Index::open(b).unwrap_err();
    let section_err = |e: FormatError| match e {
        FormatError::Section { kind, reason } => {
            assert_eq!(kind, "VECTORS");
            reason
        }
        other => panic!("{other:?}"),
    };
    assert!(section_err(open_err(&set("dim", 0))).contains("dimension 0"));
    assert!(section_err(open_err(&set("dim", 5000))).contains("dimension 5000"));
    // A dimension that does not fit the bytes.
    assert!(section_err(open_err(&set("dim", 15))).contains("expected"));
    assert!(section_err(open_err(&set("count", 7))).contains("7 rows"));
    assert!(section_err(open_err(&set("model_len", 3))).contains("expected"));
    assert_eq!(
        open_err(&set("model_len", 100_000)),
        FormatError::Count {
            what: "vector model id bytes",
            max: 256,
            got: 100_000
        }
    );
    let mut b = good.clone();
    b[at.start + 16] = 0xff;
    assert_eq!(
        open_err(&b),
        FormatError::Utf8 {
            what: "vector model id"
        }
    );
    // The section's length in the table, shortened: shorter than its header, or than its rows.
    for len in [5u64, (at.len() - 1) as u64] {
        let mut b = good.clone();
        let n = u32::from_le_bytes(b[20..24].try_into().unwrap()) as usize;
        let row = (0..n)
            .map(|i| size_of::<Header>() + i * size_of::<SectionEntry>())
            .find(|&r| u32::from_le_bytes(b[r..r + 4].try_into().unwrap()) == 12)
            .unwrap();
        b[row + 16..row + 24].copy_from_slice(&len.to_le_bytes());
        assert!(matches!(
            open_err(&b),
            FormatError::Section {
                kind: "VECTORS",
                ..
            }
        ));
    }

    // An unknown scheme: a newer writer's coding, skipped.
    let mut b = set("scheme", VECTOR_SCHEME_I8 + 1);
    reseal(&mut b);
    let index = Index::open(&b[..]).unwrap();
    index.verify().unwrap();
    assert!(index.vectors().is_none());

    // Rows: only `verify` reads them.
    let scales = at.start + 16 + REF_MODEL.len();
    let codes = scales + 8 * 4;
    let index = Index::open(&good[..]).unwrap();
    let v = index.vectors().unwrap();
    let empty = (0..8).find(|&d| v.get(d).is_none()).unwrap() as usize;
    let full = (empty + 1) % 8;
    let row_err = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        reseal(&mut b);
        let index = Index::open(&b[..]).unwrap();
        match index.verify().unwrap_err() {
            FormatError::Vector { doc, reason } => (doc as usize, reason),
            other => panic!("{other:?}"),
        }
    };
    let put_scale = |b: &mut Vec<u8>, doc: usize, s: f32| {
        b[scales + 4 * doc..scales + 4 * doc + 4].copy_from_slice(&s.to_le_bytes());
    };
    for bad in [f32::NAN, f32::INFINITY, -0.5] {
        assert_eq!(row_err(&|b| put_scale(b, full, bad)).0, full, "{bad}");
    }
    assert_eq!(
        row_err(&|b| put_scale(b, full, 0.5)),
        (full, "decoded vector is not unit length")
    );
    assert_eq!(
        row_err(&|b| b[codes + REF_DIM * empty] = 1),
        (empty, "codes without a scale")
    );
    assert_eq!(
        row_err(&|b| b[codes + REF_DIM * full + 2] = 0x80),
        (full, "code -128 (the codes are symmetric)")
    );
    let small = row_err(&|b| {
        for c in &mut b[codes + REF_DIM * full..codes + REF_DIM * (full + 1)] {
            *c = (*c as i8 / 2) as u8;
        }
    });
    assert_eq!(small, (full, "largest code is not 127"));
    // Damaged rows never make a search panic, whatever they hold.
    let mut b = good.clone();
    put_scale(&mut b, full, f32::INFINITY);
    put_scale(&mut b, (full + 1) % 8, f32::NAN);
    put_scale(&mut b, (full + 2) % 8, -1.0);
    for c in &mut b[codes..codes + 8 * REF_DIM] {
        *c = 0x80;
    }
    let index = Index::open(&b[..]).unwrap();
    let hits = index
        .vectors()
        .unwrap()
        .top_k(&[1.0; REF_DIM], 8, &VectorFilter::default())
        .unwrap();
    assert!(hits.iter().all(|h| h.cosine.is_finite()), "{hits:?}");
}

/// A reader that does not know `VECTORS` (today's released ones) skips the section as an
/// unknown kind: simulated by renumbering it to a kind nobody knows. The artifact opens,
/// verifies and answers exactly as the artifact without vectors; `min_reader_version` is
/// unchanged.
#[test]
fn a_reader_that_does_not_know_vectors_skips_them() {
    let mut bytes = vector_artifact();
    let plain = artifact();
    assert_eq!(bytes[8..16], plain[8..16], "version and min_reader_version");
    let n = u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    let row = (0..n)
        .map(|i| size_of::<Header>() + i * size_of::<SectionEntry>())
        .find(|&r| u32::from_le_bytes(bytes[r..r + 4].try_into().unwrap()) == 12)
        .unwrap();
    bytes[row..row + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    reseal(&mut bytes);
    let old = Index::open(&bytes[..]).unwrap();
    old.verify().unwrap();
    assert!(old.vectors().is_none());
    same_answers(&old, &Index::open(&plain[..]).unwrap());
    // Every committed reference artifact still opens without vectors.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (name, _, _) in REFERENCES {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert!(
            Index::open(&bytes[..]).unwrap().vectors().is_none(),
            "{name}"
        );
    }
}

/// The committed reference artifact with vectors (format 2, tokenizer 3, `VECTORS`): the
/// reference entries with [`reference_vector`]s. It must keep opening, verifying and
/// searching; today's builder must still produce it byte for byte. `HELIX_BLESS=1` writes it.
#[test]
fn reference_artifact_with_vectors() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(REFERENCE_WITH_VECTORS);
    let built = vector_artifact();
    if std::env::var_os("HELIX_BLESS").is_some() {
        std::fs::write(&path, &built).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap_or_else(|_| {
        panic!("{REFERENCE_WITH_VECTORS} missing: run the test with HELIX_BLESS=1 once")
    });
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    let meta = index.meta().unwrap();
    assert_eq!((meta.format_version, meta.tokenizer_version), (2, 3));
    let v = index.vectors().unwrap();
    assert_eq!(
        (v.dim(), v.model(), v.count_present()),
        (REF_DIM, REF_MODEL, 7)
    );
    let q = reference_vector("build/ci-cache.md");
    let hits = v.top_k(&q, 3, &VectorFilter::default()).unwrap();
    assert_eq!(index.entry(hits[0].doc).unwrap().id, "build/ci-cache.md");
    assert!(hits[0].cosine > 0.999, "{hits:?}");
    assert_eq!(
        ids(&index, "CachedEntry", &SearchOptions::default())[0],
        "architecture/cached-entry.md"
    );
    assert!(
        bytes == built,
        "{REFERENCE_WITH_VECTORS}: the builder's output changed without a format version bump"
    );
}

/// Recall@10 of `top_k` (int8 rows, int16 query) against an exact f32 search of the
/// original vectors: random unit vectors, where the top ten are closest together, and
/// queries near a stored vector, as a paraphrase is.
#[test]
fn top_k_recall_against_exact_f32_search() {
    let (n, dim, queries) = (3000, 384, 60);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let normal = |rng: &mut Rng| {
        let u1 = ((rng.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    };
    let unit = |rng: &mut Rng| {
        let v: Vec<f64> = (0..dim).map(|_| normal(rng)).collect();
        let len = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| (x / len) as f32).collect::<Vec<f32>>()
    };
    let entries: Vec<Entry> = (0..n)
        .map(|i| entry(&format!("t/e{i:05}.md"), "note", "text"))
        .collect();
    let originals: Vec<Vec<f32>> = (0..n).map(|_| unit(&mut rng)).collect();
    let e = Embeddings {
        model: "test/random-384".into(),
        dim,
        vectors: entries
            .iter()
            .zip(&originals)
            .map(|(e, v)| (e.id.clone(), v.clone()))
            .collect(),
    };
    let bytes = build_with_embeddings(&entries, &info(), Some(&e)).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    let v = index.vectors().unwrap();
    for near in [false, true] {
        let mut found = 0usize;
        for _ in 0..queries {
            let q: Vec<f32> = if near {
                let base = &originals[rng.next() as usize % n];
                let noise = unit(&mut rng);
                base.iter().zip(&noise).map(|(a, b)| a + 0.8 * b).collect()
            } else {
                unit(&mut rng)
            };
            let mut exact: Vec<(f64, u32)> = originals
                .iter()
                .enumerate()
                .map(|(doc, x)| (cosine(x, &q), doc as u32))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let want: Vec<u32> = exact[..10].iter().map(|e| e.1).collect();
            let got = v.top_k(&q, 10, &VectorFilter::default()).unwrap();
            found += got.iter().filter(|h| want.contains(&h.doc)).count();
        }
        let recall = found as f64 / (10 * queries) as f64;
        eprintln!("recall@10, {n} × {dim}, near queries {near}: {recall:.4}");
        assert!(recall >= 0.98, "near {near}: {recall}");
    }
}

/// The lexical and the vector search of one artifact, fused: an entry only the vectors
/// find joins the lexical hits, each hit keeps both scores, hidden entries stay out of
/// both lists, and the result is the same whatever order the lists' equal scores came in.
#[test]
fn fusion_of_lexical_and_vector_hits_end_to_end() {
    let bytes = vector_artifact();
    let index = Index::open(&bytes[..]).unwrap();
    let v = index.vectors().unwrap();
    let doc_of = |id: &str| index.entry_by_id(id).unwrap().unwrap().doc;
    // A prompt that says "rebase", embedded near the linker entry (as a paraphrase of it
    // would be) and a little towards the superseded rebase entry.
    let linker = reference_vector("build/linker-oom.md");
    let old = reference_vector("git/rebase-old.md");
    let q: Vec<f32> = linker.iter().zip(&old).map(|(a, b)| a + 0.3 * b).collect();
    let lexical = index.search("rebase", &SearchOptions::default()).unwrap();
    let semantic = v.top_k(&q, 5, &VectorFilter::default()).unwrap();
    assert!(semantic.iter().all(|h| index.hidden(h.doc).is_none()));
    assert_eq!(semantic[0].doc, doc_of("build/linker-oom.md"));
    let fused = fuse(
        lexical.iter().map(|h| (h.entry.doc, h.score)),
        semantic.iter().map(|h| (h.doc, h.cosine)),
        &FusionOptions::default(),
    );
    let fused_ids: Vec<&str> = fused
        .iter()
        .map(|h| index.entry(h.key).unwrap().id)
        .collect();
    assert!(fused_ids.contains(&"build/linker-oom.md"), "{fused_ids:?}");
    assert!(!fused_ids.contains(&"git/rebase-old.md"), "{fused_ids:?}");
    let linker_hit = fused
        .iter()
        .find(|h| h.key == doc_of("build/linker-oom.md"))
        .unwrap();
    assert_eq!(linker_hit.lexical_rank, None);
    assert!(linker_hit.cosine.unwrap() > 0.9, "{linker_hit:?}");
    for h in &fused {
        if let Some(l) = lexical.iter().position(|x| x.entry.doc == h.key) {
            assert_eq!(h.lexical_rank, Some(l as u32 + 1));
            assert_eq!(h.lexical_score, Some(lexical[l].score));
        }
    }
    // With hidden entries asked for, the superseded one is among the vector hits.
    let all = VectorFilter {
        include_hidden: true,
        ..VectorFilter::default()
    };
    let with_hidden = v.top_k(&q, 8, &all).unwrap();
    assert!(
        with_hidden
            .iter()
            .any(|h| h.doc == doc_of("git/rebase-old.md"))
    );
    // A topic filter, as lexical search's.
    let git = VectorFilter {
        topic: Some("git".into()),
        ..VectorFilter::default()
    };
    let hits = v.top_k(&q, 8, &git).unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| index.entry(h.doc).unwrap().topic == "git")
    );
}
