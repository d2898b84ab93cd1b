//! The embedder on the tiny random model: loading and its variants, tokenisation, shape,
//! norm, determinism, batching and truncation.

use std::path::Path;

use helix_embed::tiny::{self, TinyModel};
use helix_embed::{EmbedError, Embedder, Options};

fn tiny_dir(seed: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    tiny::write_tiny_model(dir.path(), seed).expect("write tiny model");
    dir
}

fn load(dir: &Path, max_tokens: usize, threads: usize) -> Embedder {
    Embedder::load_with(
        dir,
        Options {
            max_tokens,
            threads,
            ..Options::default()
        },
    )
    .expect("load tiny model")
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

const TEXTS: [&str; 6] = [
    "How do I delete a git branch?",
    "remove a branch in git",
    "bake a chocolate cake",
    "Rust: cargo clippy warns about an unused import in the test module; fix it with \
     cfg(test) or remove the import. Running cargo build again shows no warning.",
    "x",
    "",
];

#[test]
fn vectors_have_the_hidden_size_and_unit_length() {
    let dir = tiny_dir(1);
    let e = load(dir.path(), 64, 1);
    assert_eq!(e.dim(), tiny::HIDDEN);
    let vs = e.embed(&TEXTS).expect("embed");
    assert_eq!(vs.len(), TEXTS.len());
    for v in &vs {
        assert_eq!(v.len(), tiny::HIDDEN);
        assert!(v.iter().all(|x| x.is_finite()));
        assert!((dot(v, v) - 1.0).abs() < 1e-5, "norm² {}", dot(v, v));
    }
    // Different texts, different vectors.
    assert!(dot(&vs[0], &vs[2]) < 0.9999);
}

#[test]
fn tokenizes_known_words_to_known_ids() {
    let dir = tiny_dir(1);
    let e = load(dir.path(), 64, 1);
    let vocab = tiny::vocab();
    let id = |w: &str| vocab.iter().position(|v| v == w).expect(w) as u32;
    // Lowercased, split on punctuation, [CLS] … [SEP] around.
    assert_eq!(
        e.tokenize("Delete the Git branch!").expect("tokenize"),
        [
            id("[CLS]"),
            id("delete"),
            id("the"),
            id("git"),
            id("branch"),
            id("!"),
            id("[SEP]")
        ]
    );
    assert_eq!(id("[CLS]"), 2);
    assert_eq!(id("[SEP]"), 3);
    // An unknown word falls into WordPiece pieces: the longest vocabulary prefix, then
    // `##` pieces ("rebased" = "rebase" + "##d").
    assert_eq!(
        e.tokenize("rebased").expect("tokenize"),
        [id("[CLS]"), id("rebase"), id("##d"), id("[SEP]")]
    );
    // BERT uncased: lowercased with accents stripped; a word with no whole entry falls
    // into letters and `##` letters.
    let cafe = [
        id("[CLS]"),
        id("c"),
        id("##a"),
        id("##f"),
        id("##e"),
        id("[SEP]"),
    ];
    assert_eq!(e.tokenize("Café").expect("tokenize"), cafe);
    assert_eq!(e.tokenize("cafe").expect("tokenize"), cafe);
    assert_eq!(
        e.tokenize("").expect("tokenize"),
        [id("[CLS]"), id("[SEP]")]
    );
}

#[test]
fn the_same_seed_gives_the_same_files_and_vectors() {
    let (a, b, c) = (tiny_dir(7), tiny_dir(7), tiny_dir(8));
    for f in helix_embed::MODEL_FILES {
        assert_eq!(
            std::fs::read(a.path().join(f)).expect("read"),
            std::fs::read(b.path().join(f)).expect("read"),
            "{f}"
        );
    }
    let (ea, eb, ec) = (
        load(a.path(), 64, 1),
        load(b.path(), 64, 1),
        load(c.path(), 64, 1),
    );
    assert_eq!(ea.id(), eb.id());
    assert_ne!(ea.id(), ec.id(), "another seed, another model id");
    assert_eq!(ea.id().len(), 64);
    let (va, vb, vc) = (
        ea.embed(&TEXTS).expect("embed"),
        eb.embed(&TEXTS).expect("embed"),
        ec.embed(&TEXTS).expect("embed"),
    );
    assert_eq!(va, vb);
    assert_ne!(va, vc);
    // And the same embedder twice.
    assert_eq!(va, ea.embed(&TEXTS).expect("embed"));
}

#[test]
fn batching_and_threads_do_not_change_a_vector() {
    let dir = tiny_dir(3);
    let one = load(dir.path(), 64, 1);
    let alone: Vec<Vec<f32>> = TEXTS
        .iter()
        .map(|t| one.embed_one(t).expect("embed"))
        .collect();
    // Texts of different lengths in one batch, in both orders, on one and on three threads.
    let mut reversed = TEXTS;
    reversed.reverse();
    for threads in [1, 3] {
        let e = load(dir.path(), 64, threads);
        let batch = e.embed(&TEXTS).expect("embed");
        let back = e.embed(&reversed).expect("embed");
        for (i, v) in alone.iter().enumerate() {
            assert!(
                max_diff(v, &batch[i]) <= 1e-5,
                "text {i}, {threads} threads"
            );
            assert!(
                max_diff(v, &back[TEXTS.len() - 1 - i]) <= 1e-5,
                "text {i} reversed"
            );
            // Not even the rounding differs: no padding, and each output is one chain of
            // multiply-adds in a fixed order.
            assert_eq!(v, &batch[i], "text {i}, {threads} threads, bit for bit");
        }
    }
    // A batch larger than one pass (thousands of tokens) keeps its order.
    let many: Vec<String> = (0..300)
        .map(|i| format!("{} number {i}", TEXTS[i % 4]))
        .collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let e = load(dir.path(), 64, 2);
    let big = e.embed(&refs).expect("embed");
    for i in [0, 1, 150, 299] {
        assert!(max_diff(&one.embed_one(refs[i]).expect("embed"), &big[i]) <= 1e-5);
    }
    assert!(e.embed(&[]).expect("embed nothing").is_empty());
}

#[test]
fn int8_weights_move_a_vector_little_and_always_the_same_way() {
    let dir = tiny_dir(11);
    let exact = load(dir.path(), 64, 1);
    let options = Options {
        max_tokens: 64,
        threads: 1,
        int8_weights: true,
    };
    let coded = Embedder::load_with(dir.path(), options.clone()).expect("load int8");
    let again = Embedder::load_with(dir.path(), options).expect("load int8 again");
    assert_eq!(
        coded.id(),
        exact.id(),
        "the same model, whatever its weights' form"
    );
    for text in TEXTS {
        let (a, b) = (
            exact.embed_one(text).expect("embed"),
            coded.embed_one(text).expect("embed"),
        );
        assert_eq!(b.len(), a.len());
        assert!((dot(&b, &b) - 1.0).abs() < 1e-4, "unit length: {text:?}");
        let cos = dot(&a, &b);
        assert!(cos > 0.99, "{text:?}: cosine {cos} with the f32 weights");
        assert!(a != b, "{text:?}: the codes are not the weights");
        assert_eq!(again.embed_one(text).expect("embed"), b, "{text:?}");
    }
}

#[test]
fn long_texts_are_cut_at_max_tokens() {
    let dir = tiny_dir(4);
    let e = load(dir.path(), 16, 1);
    assert_eq!(e.max_tokens(), 16);
    let long = "git branch rebase commit ".repeat(40);
    let ids = e.tokenize(&long).expect("tokenize");
    assert_eq!(ids.len(), 16);
    assert_eq!(ids[0], 2, "[CLS] first");
    assert_eq!(ids[15], 3, "[SEP] last");
    // What lies past the cut does not change the vector.
    let head = "git branch rebase commit ".repeat(4);
    let a = e
        .embed_one(&format!("{head} and then something else entirely"))
        .expect("embed");
    let b = e
        .embed_one(&format!("{head} with another ending: cake oven sugar"))
        .expect("embed");
    assert_eq!(a, b);
    // max_tokens is bounded by the model's positions.
    let wide = load(dir.path(), 100_000, 1);
    assert_eq!(wide.max_tokens(), tiny::MAX_POSITIONS);
    let ids = wide.tokenize(&"word ".repeat(1000)).expect("tokenize");
    assert_eq!(ids.len(), tiny::MAX_POSITIONS);
    assert_eq!(
        wide.embed_one(&"word ".repeat(1000)).expect("embed").len(),
        tiny::HIDDEN
    );
}

#[test]
fn prefixed_and_f16_weights_load_alike() {
    let plain = tiny_dir(5);
    let base = load(plain.path(), 64, 1).embed(&TEXTS).expect("embed");
    for prefix in ["bert.", "0.auto_model.", "model.0.auto_model."] {
        let dir = tempfile::tempdir().expect("tempdir");
        TinyModel::new(5)
            .prefix(prefix)
            .write(dir.path())
            .expect("write");
        let vs = load(dir.path(), 64, 1).embed(&TEXTS).expect("embed");
        assert_eq!(vs, base, "prefix {prefix}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    TinyModel::new(5)
        .f16(true)
        .write(dir.path())
        .expect("write");
    let vs = load(dir.path(), 64, 1).embed(&TEXTS).expect("embed");
    for (a, b) in vs.iter().zip(&base) {
        // f16 rounds each weight by up to 2⁻¹¹ of itself.
        assert!(dot(a, b) > 0.999, "f16 cosine {}", dot(a, b));
    }
}

#[test]
fn damaged_or_foreign_models_are_refused_with_the_reason() {
    let dir = tiny_dir(6);
    let p = dir.path();
    let config = std::fs::read_to_string(p.join("config.json")).expect("read");

    let missing = tempfile::tempdir().expect("tempdir");
    let err = Embedder::load(missing.path()).expect_err("empty dir");
    assert!(matches!(err, EmbedError::Io { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");

    std::fs::write(
        p.join("config.json"),
        config.replace("\"gelu\"", "\"swish\""),
    )
    .expect("write");
    let err = Embedder::load(p).expect_err("unknown activation");
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{err}");

    std::fs::write(
        p.join("config.json"),
        config.replace("\"bert\"", "\"roberta\""),
    )
    .expect("write");
    let err = Embedder::load(p).expect_err("roberta");
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{err}");

    std::fs::write(
        p.join("config.json"),
        config.replace("\"hidden_size\": 32", "\"hidden_size\": 64"),
    )
    .expect("write");
    let err = Embedder::load(p).expect_err("shape");
    assert!(matches!(err, EmbedError::Shape { .. }), "{err}");

    std::fs::write(
        p.join("config.json"),
        config.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"),
    )
    .expect("write");
    let err = Embedder::load(p).expect_err("a layer too many");
    assert!(
        matches!(&err, EmbedError::MissingTensor { name } if name.contains("layer.2")),
        "{err}"
    );

    std::fs::write(
        p.join("config.json"),
        config.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1"),
    )
    .expect("write");
    let err = Embedder::load(p).expect_err("a layer too few");
    assert!(matches!(err, EmbedError::Config { .. }), "{err}");

    std::fs::write(p.join("config.json"), &config).expect("write");
    let weights = std::fs::read(p.join("model.safetensors")).expect("read");
    std::fs::write(p.join("model.safetensors"), &weights[..weights.len() / 2]).expect("write");
    let err = Embedder::load(p).expect_err("truncated weights");
    assert!(matches!(err, EmbedError::Weights { .. }), "{err}");

    std::fs::write(p.join("model.safetensors"), &weights).expect("write");
    std::fs::write(p.join("tokenizer.json"), "{").expect("write");
    let err = Embedder::load(p).expect_err("bad tokenizer");
    assert!(matches!(err, EmbedError::Tokenizer { .. }), "{err}");

    // A sentence-transformers model pooled on [CLS] is not read as a mean-pooled one.
    let fresh = tiny_dir(6);
    let pooling = fresh.path().join("1_Pooling");
    std::fs::create_dir(&pooling).expect("mkdir");
    std::fs::write(
        pooling.join("config.json"),
        r#"{"word_embedding_dimension": 32, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )
    .expect("write");
    let err = Embedder::load(fresh.path()).expect_err("cls pooling");
    assert!(matches!(err, EmbedError::Unsupported { .. }), "{err}");
    std::fs::write(
        pooling.join("config.json"),
        r#"{"word_embedding_dimension": 32, "pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true}"#,
    )
    .expect("write");
    Embedder::load(fresh.path()).expect("mean pooling loads");
}

#[test]
fn the_id_covers_every_file() {
    let dir = tiny_dir(9);
    let read = |f: &str| std::fs::read(dir.path().join(f)).expect("read");
    let (c, w, t) = (
        read("config.json"),
        read("model.safetensors"),
        read("tokenizer.json"),
    );
    let id = helix_embed::model_id(&c, &w, &t);
    assert_eq!(load(dir.path(), 64, 1).id(), id);
    let mut c2 = c.clone();
    c2.push(b'\n');
    let mut t2 = t.clone();
    t2.push(b'\n');
    let mut w2 = w.clone();
    let last = w2.len() - 1;
    w2[last] ^= 1;
    assert_ne!(helix_embed::model_id(&c2, &w, &t), id);
    assert_ne!(helix_embed::model_id(&c, &w2, &t), id);
    assert_ne!(helix_embed::model_id(&c, &w, &t2), id);
}
