//! Quantisation (error bound, idempotence), the dot product against plain integer
//! arithmetic, and `top_k` against a scalar reference over the same int8 rows.

use super::search::{QueryCodes, dot, query_limit};
use super::*;
use crate::{BuildInfo, Entry, Index, build_with_embeddings};

/// xorshift64: reproducible data without a dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// A standard normal (Box–Muller), for directions uniform on the sphere.
    fn normal(&mut self) -> f64 {
        let u1 = ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    fn unit(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f64> = (0..dim).map(|_| self.normal()).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| (x / n) as f32).collect()
    }
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

/// The figure docs/index-format.md quotes: over random unit vectors of 384 dimensions, the
/// cosine between a vector and its decoded int8 form, and the error of a query's cosine
/// as `top_k` computes it (int16 query, int8 row) against the exact f32 cosine.
/// `cargo test -p helix-index-format --lib quantisation_error -- --nocapture` prints them.
#[test]
fn quantisation_error_is_bounded() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let dim = 384;
    let (mut min_cos, mut sum_cos) = (1.0f64, 0.0f64);
    let (mut max_err, mut sum_err, mut max_err_i8q) = (0.0f64, 0.0f64, 0.0f64);
    let n = 2000;
    for _ in 0..n {
        let x = rng.unit(dim);
        let (scale, codes) = quantize(&x).unwrap();
        let v = Vector {
            scale,
            codes: &codes,
        };
        let decoded = v.to_f32();
        let c = cosine(&x, &decoded);
        min_cos = min_cos.min(c);
        sum_cos += c;
        // A decoded vector has unit length.
        let len: f64 = decoded
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((len - 1.0).abs() < 1e-5, "{len}");
        // The error of a query's cosine, against a random query and a near one.
        for q in [rng.unit(dim), {
            let noise = rng.unit(dim);
            let q: Vec<f32> = x.iter().zip(&noise).map(|(a, b)| a + 0.5 * b).collect();
            q
        }] {
            let exact = cosine(&x, &q);
            let qc = QueryCodes::new(&q).unwrap();
            let got = f64::from(dot(&qc.codes, &codes) as f32 * scale * qc.scale);
            let err = (got - exact).abs();
            max_err = max_err.max(err);
            sum_err += err;
            // The same with the query coded as int8 too.
            let (qs, q8) = quantize(&q).unwrap();
            let q8_16: Vec<i16> = q8.iter().map(|&c| i16::from(c)).collect();
            let got8 = f64::from(dot(&q8_16, &codes) as f32 * scale * qs);
            max_err_i8q = max_err_i8q.max((got8 - exact).abs());
        }
    }
    eprintln!(
        "int8, {dim} dims, {n} random unit vectors: cos(x, decoded) min {min_cos:.6} mean {:.6}; \
         query cosine error (int16 query) max {max_err:.5} mean {:.6}; (int8 query) max {max_err_i8q:.5}",
        sum_cos / n as f64,
        sum_err / (2 * n) as f64
    );
    assert!(min_cos > 0.999, "{min_cos}");
    assert!(max_err < 0.01, "{max_err}");
}

#[test]
fn quantisation_is_idempotent_and_symmetric() {
    let mut rng = Rng(7);
    for dim in [1, 2, 3, 31, 384, 1000] {
        for _ in 0..50 {
            let x: Vec<f32> = (0..dim).map(|_| (rng.uniform() * 3.0) as f32).collect();
            let Ok((scale, codes)) = quantize(&x) else {
                continue;
            };
            assert!(codes.iter().all(|&c| c != i8::MIN));
            assert_eq!(codes.iter().map(|c| c.unsigned_abs()).max(), Some(127));
            let back = Vector {
                scale,
                codes: &codes,
            }
            .to_f32();
            assert_eq!(quantize(&back).unwrap(), (scale, codes.clone()), "{dim}");
            // The direction alone decides: a scaled vector gives the same codes.
            let scaled: Vec<f32> = x.iter().map(|v| v * 0.125).collect();
            assert_eq!(quantize(&scaled).unwrap().1, codes);
            let neg: Vec<f32> = x.iter().map(|v| -v).collect();
            let negated: Vec<i8> = codes.iter().map(|c| -c).collect();
            assert_eq!(quantize(&neg).unwrap().1, negated);
        }
    }
    assert_eq!(quantize(&[0.0, 0.0]), Err(VectorError::Zero));
    assert_eq!(quantize(&[]), Err(VectorError::Zero));
    assert_eq!(quantize(&[1.0, f32::NAN]), Err(VectorError::NotFinite));
    assert_eq!(quantize(&[f32::INFINITY, 1.0]), Err(VectorError::NotFinite));
    // Round to nearest, half away from zero.
    assert_eq!(
        quantize(&[254.0, 1.0, -1.0, 3.0]).unwrap().1,
        [127, 1, -1, 2]
    );
}

/// The vectorised dot product is exact, for every length, at the extremes of both codes
/// (−128 included, as damaged bytes may hold) and the query limit: no overflow.
#[test]
fn dot_is_exact_integer_arithmetic() {
    let mut rng = Rng(99);
    for dim in [1, 5, 31, 32, 33, 64, 100, 384, 768, 4096] {
        let limit = query_limit(dim);
        assert!(128.0 * limit * dim as f64 <= f64::from(i32::MAX), "{dim}");
        assert!(limit >= 4095.0, "{dim}: {limit}");
        let lim = limit as i16;
        for round in 0..20 {
            let (q, c): (Vec<i16>, Vec<i8>) = match round {
                0 => (vec![lim; dim], vec![-128; dim]),
                1 => (vec![-lim; dim], vec![-128; dim]),
                2 => (vec![lim; dim], vec![127; dim]),
                _ => (
                    (0..dim)
                        .map(|_| {
                            ((rng.next() % (2 * lim as u64 + 1)) as i64 - i64::from(lim)) as i16
                        })
                        .collect(),
                    (0..dim).map(|_| rng.next() as i8).collect(),
                ),
            };
            let want: i64 = q
                .iter()
                .zip(&c)
                .map(|(&a, &b)| i64::from(a) * i64::from(b))
                .sum();
            assert_eq!(i64::from(dot(&q, &c)), want, "{dim} {round}");
        }
    }
}

/// Entries `t{i % topics}/e{i}.md`, with vectors for all but every `missing`-th.
fn vector_index(
    n: usize,
    dim: usize,
    topics: usize,
    missing: usize,
    rng: &mut Rng,
) -> (Vec<u8>, Vec<Entry>, Embeddings) {
    let entries: Vec<Entry> = (0..n)
        .map(|i| {
            let mut e = Entry {
                id: format!("t{}/e{i:05}.md", i % topics),
                topic: format!("t{}", i % topics),
                title: format!("note {i}"),
                body: "text".into(),
                ..Entry::default()
            };
            if i % 17 == 3 {
                e.extra
                    .insert("status".into(), serde_json::json!("retired"));
            }
            e
        })
        .collect();
    let vectors = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| i % missing != 0)
        .map(|(_, e)| (e.id.clone(), rng.unit(dim)))
        .collect();
    let embeddings = Embeddings {
        model: "test/random".into(),
        dim,
        vectors,
    };
    let bytes =
        build_with_embeddings(&entries, &BuildInfo::default(), Some(&embeddings)).expect("builds");
    (bytes, entries, embeddings)
}

/// The scalar reference: every row's exact integer dot product with the same query codes,
/// the same f32 arithmetic, a full sort (score descending, then document).
fn reference(
    index: &Index<&[u8]>,
    query: &[f32],
    k: usize,
    filter: &VectorFilter,
) -> Vec<VectorHit> {
    let v = index.vectors().unwrap();
    let q = QueryCodes::new(query).unwrap();
    let topic_row = filter
        .topic
        .as_ref()
        .map(|t| index.topics().unwrap().iter().position(|x| x.topic == t));
    let mut all: Vec<(f32, u32)> = Vec::new();
    for doc in 0..index.len() {
        let Some(row) = v.get(doc) else { continue };
        if !filter.include_hidden && index.hidden(doc).is_some() {
            continue;
        }
        if let Some(t) = topic_row
            && Some(index.record(doc).unwrap().topic.get() as usize) != t
        {
            continue;
        }
        let mut sum = 0i64;
        for (a, b) in q.codes.iter().zip(row.codes) {
            sum += i64::from(*a) * i64::from(*b);
        }
        all.push((sum as i32 as f32 * row.scale, doc));
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    all.truncate(k);
    all.into_iter()
        .map(|(s, doc)| VectorHit {
            doc,
            cosine: s * q.scale,
        })
        .collect()
}

/// `top_k` gives exactly the reference's hits, bit for bit, with and without filters, for
/// small and large `k` and dimensions that are and are not a multiple of the lanes.
#[test]
fn top_k_agrees_exactly_with_the_scalar_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (n, dim) in [(700, 384), (300, 37), (50, 3), (1, 8)] {
        let (bytes, _, _) = vector_index(n, dim, 5, 11, &mut rng);
        let index = Index::open(&bytes[..]).unwrap();
        index.verify().unwrap();
        let v = index.vectors().unwrap();
        assert_eq!((v.dim(), v.model(), v.len()), (dim, "test/random", n));
        for round in 0..12 {
            let query = rng.unit(dim);
            let filter = VectorFilter {
                topic: (round % 3 == 1).then(|| format!("t{}", round % 5)),
                include_hidden: round % 2 == 0,
            };
            for k in [1, 10, 300, 5000] {
                let got = v.top_k(&query, k, &filter).unwrap();
                assert_eq!(got, reference(&index, &query, k, &filter), "{n} {dim} {k}");
                assert!(got.windows(2).all(|w| w[0].cosine >= w[1].cosine));
            }
        }
        // Hidden entries only when asked; a missing topic matches nothing.
        let query = rng.unit(dim);
        let all = v
            .top_k(
                &query,
                n,
                &VectorFilter {
                    include_hidden: true,
                    ..VectorFilter::default()
                },
            )
            .unwrap();
        let visible = v.top_k(&query, n, &VectorFilter::default()).unwrap();
        assert!(visible.iter().all(|h| index.hidden(h.doc).is_none()));
        assert!(all.iter().all(|h| v.get(h.doc).is_some()));
        if n > 17 {
            assert!(all.len() > visible.len());
        }
        let none = VectorFilter {
            topic: Some("nosuch".into()),
            ..VectorFilter::default()
        };
        assert!(v.top_k(&query, 10, &none).unwrap().is_empty());
    }
}

#[test]
fn top_k_refuses_a_query_of_another_dimension_and_ignores_a_blank_one() {
    let mut rng = Rng(3);
    let (bytes, _, _) = vector_index(40, 16, 2, 5, &mut rng);
    let index = Index::open(&bytes[..]).unwrap();
    let v = index.vectors().unwrap();
    assert_eq!(
        v.top_k(&[0.5; 15], 3, &VectorFilter::default()),
        Err(FormatError::QueryDimension {
            expected: 16,
            got: 15
        })
    );
    assert!(
        v.top_k(&[0.0; 16], 3, &VectorFilter::default())
            .unwrap()
            .is_empty()
    );
    let mut nan = vec![0.25; 16];
    nan[3] = f32::NAN;
    assert!(
        v.top_k(&nan, 3, &VectorFilter::default())
            .unwrap()
            .is_empty()
    );
    assert!(
        v.top_k(&[0.25; 16], 0, &VectorFilter::default())
            .unwrap()
            .is_empty()
    );
    // A query equal to a stored vector finds it first, at a cosine of about 1.
    let target = (0..40).find(|&d| v.get(d).is_some()).unwrap();
    let q = v.get(target).unwrap().to_f32();
    let hits = v.top_k(&q, 1, &VectorFilter::default()).unwrap();
    assert_eq!(hits[0].doc, target);
    assert!((hits[0].cosine - 1.0).abs() < 1e-4, "{hits:?}");
}

#[test]
fn entry_text_takes_title_name_description_tags_and_body_head() {
    let mut e = Entry {
        title: "Rebase".into(),
        tags: vec!["git".into(), "history".into()],
        body: "héllo wörld".into(),
        ..Entry::default()
    };
    e.extra
        .insert("description".into(), "Rewrite commits".into());
    e.extra.insert("name".into(), serde_json::json!(3));
    assert_eq!(
        entry_text(&e, 4),
        "Rebase\nRewrite commits\ngit, history\nhéll"
    );
    assert_eq!(entry_text(&e, 100).lines().last(), Some("héllo wörld"));
    e.body.clear();
    e.tags.clear();
    assert_eq!(entry_text(&e, 10), "Rebase\nRewrite commits");
}

#[test]
fn an_entry_read_back_embeds_the_same_text() {
    let mut e = Entry {
        id: "git/rebase.md".into(),
        topic: "git".into(),
        title: "Rebase onto".into(),
        tags: vec!["git".into(), "history".into()],
        body: "Use `git rebase --onto` to re-parent a branch.".into(),
        ..Entry::default()
    };
    e.extra.insert("description".into(), "Move a branch".into());
    let bytes = crate::build(std::slice::from_ref(&e), &BuildInfo::default()).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    let read = index.entry(0).unwrap();
    for chars in [5, 1000] {
        assert_eq!(entry_ref_text(&read, chars), entry_text(&e, chars));
    }
}
