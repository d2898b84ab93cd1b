//! A tiny BERT with random weights, written in the real format, for tests: 2 layers, hidden
//! size 32, 4 heads, and a WordPiece vocabulary of a few hundred English and programming
//! words, the letters and their `##` pieces, so every ASCII word tokenizes to something
//! other than [UNK]. Its vectors mean nothing, but tokenisation, pooling, batching and
//! everything built on vectors (quantisation, storage, ranking plumbing) run as with a real
//! model, and no test has to download one.

use std::collections::HashMap;
use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use serde_json::{Value, json};

/// Hidden size of the tiny model.
pub const HIDDEN: usize = 32;
/// Encoder layers of the tiny model.
pub const LAYERS: usize = 2;
const HEADS: usize = 4;
const INTERMEDIATE: usize = 64;
/// Positions of the tiny model: the longest text it takes, special tokens included.
pub const MAX_POSITIONS: usize = 128;

/// The special tokens, ids 0 to 4.
pub const SPECIAL: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

const WORDS: &str = "the a an and or not of to in on for with by from at as is are was be \
    been this that these it its do does did how what why when where which who can could \
    should would will use used using make makes run runs running get set add remove delete \
    create update change fix bug error warning test tests build builds install config \
    file files path directory folder name names new old first last all any each every \
    git branch branches commit commits merge rebase push pull fetch clone remote origin \
    main master tag tags stash reset revert checkout diff log history reflog head \
    cherry pick squash conflict conflicts upstream fork repository repo \
    rust cargo crate crates clippy rustfmt trait struct enum impl fn mod pub async await \
    tokio serde macro lifetime borrow type types generic generics unsafe \
    python pip venv package packages module import numpy pytest django flask \
    javascript typescript node npm yarn react vue deno bun json yaml toml css html \
    docker container image compose kubernetes pod deploy deployment service server \
    client http https request response api endpoint header token auth login user users \
    database sql query index table column row postgres sqlite redis cache memory \
    linux mac windows shell bash zsh terminal command line script env variable \
    ssh key keys port network dns proxy tls certificate \
    function method class object string number list array map hash value values \
    loop return error errors panic exception log logs debug release version \
    time date day week fast slow small large big long short simple hard easy \
    cake chocolate bake oven sugar flour recipe dinner garden dog cat \
    write read open close save load start stop wait send receive";

const SUFFIXES: [&str; 10] = [
    "##s", "##es", "##ed", "##ing", "##er", "##ly", "##tion", "##able", "##ment", "##ness",
];

/// The vocabulary, in id order: specials, punctuation, digits, letters and their `##`
/// pieces, suffixes, words.
pub fn vocab() -> Vec<String> {
    let mut v: Vec<String> = SPECIAL.iter().map(|s| s.to_string()).collect();
    v.extend(
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
            .chars()
            .map(String::from),
    );
    v.extend(('0'..='9').map(String::from));
    v.extend(('0'..='9').map(|c| format!("##{c}")));
    v.extend(('a'..='z').map(String::from));
    v.extend(('a'..='z').map(|c| format!("##{c}")));
    v.extend(SUFFIXES.iter().map(|s| s.to_string()));
    for w in WORDS.split_whitespace() {
        if !v.iter().any(|x| x == w) {
            v.push(w.to_string());
        }
    }
    v
}

/// Options of the tiny model's files, to exercise the loader's variants.
#[derive(Debug, Clone)]
pub struct TinyModel {
    seed: u64,
    prefix: String,
    dtype: Dtype,
}

/// Writes the tiny model with `seed` into `dir` (created if missing): `config.json`,
/// `model.safetensors` (f32, unprefixed names) and `tokenizer.json`. The same seed
/// gives the same bytes.
pub fn write_tiny_model(dir: &Path, seed: u64) -> std::io::Result<()> {
    TinyModel::new(seed).write(dir)
}

impl TinyModel {
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            prefix: String::new(),
            dtype: Dtype::F32,
        }
    }

    /// Names every tensor with `prefix` before it (`"bert."`, `"0.auto_model."`).
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_string();
        self
    }

    /// Stores the weights as f16 (else f32).
    pub fn f16(mut self, yes: bool) -> Self {
        self.dtype = if yes { Dtype::F16 } else { Dtype::F32 };
        self
    }

    /// Writes the three files into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let vocab = vocab();
        std::fs::write(dir.join("config.json"), config_json(vocab.len()))?;
        std::fs::write(dir.join("tokenizer.json"), tokenizer_json(&vocab))?;
        std::fs::write(dir.join("model.safetensors"), self.weights(vocab.len())?)
    }

    fn weights(&self, vocab: usize) -> std::io::Result<Vec<u8>> {
        let mut rng = SplitMix(self.seed);
        let h = HIDDEN;
        // (name, shape, kind): kind 'w' a weight matrix, 'e' an embedding, 'g' a LayerNorm
        // gain, 'b' a bias.
        let mut specs: Vec<(String, Vec<usize>, char)> = vec![
            (
                "embeddings.word_embeddings.weight".into(),
                vec![vocab, h],
                'e',
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![MAX_POSITIONS, h],
                'e',
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![2, h],
                'e',
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h], 'g'),
            ("embeddings.LayerNorm.bias".into(), vec![h], 'b'),
        ];
        for l in 0..LAYERS {
            let p = format!("encoder.layer.{l}");
            for part in ["query", "key", "value"] {
                specs.push((format!("{p}.attention.self.{part}.weight"), vec![h, h], 'w'));
                specs.push((format!("{p}.attention.self.{part}.bias"), vec![h], 'b'));
            }
            specs.push((
                format!("{p}.attention.output.dense.weight"),
                vec![h, h],
                'w',
            ));
            specs.push((format!("{p}.attention.output.dense.bias"), vec![h], 'b'));
            specs.push((
                format!("{p}.attention.output.LayerNorm.weight"),
                vec![h],
                'g',
            ));
            specs.push((format!("{p}.attention.output.LayerNorm.bias"), vec![h], 'b'));
            specs.push((
                format!("{p}.intermediate.dense.weight"),
                vec![INTERMEDIATE, h],
                'w',
            ));
            specs.push((
                format!("{p}.intermediate.dense.bias"),
                vec![INTERMEDIATE],
                'b',
            ));
            specs.push((
                format!("{p}.output.dense.weight"),
                vec![h, INTERMEDIATE],
                'w',
            ));
            specs.push((format!("{p}.output.dense.bias"), vec![h], 'b'));
            specs.push((format!("{p}.output.LayerNorm.weight"), vec![h], 'g'));
            specs.push((format!("{p}.output.LayerNorm.bias"), vec![h], 'b'));
        }
        // A pooler, as a BertModel export has, which the loader ignores.
        specs.push(("pooler.dense.weight".into(), vec![h, h], 'w'));
        specs.push(("pooler.dense.bias".into(), vec![h], 'b'));

        let mut buffers = Vec::with_capacity(specs.len());
        for (_, shape, kind) in &specs {
            let n: usize = shape.iter().product();
            let fan_in = *shape.last().unwrap_or(&1) as f32;
            let values = (0..n).map(|_| {
                let u = rng.uniform();
                match kind {
                    'e' => u,
                    'w' => u * 1.7 / fan_in.sqrt(),
                    'g' => 1.0 + 0.1 * u,
                    _ => 0.05 * u,
                }
            });
            let bytes: Vec<u8> = match self.dtype {
                Dtype::F16 => values
                    .flat_map(|x| half::f16::from_f32(x).to_le_bytes())
                    .collect(),
                _ => values.flat_map(f32::to_le_bytes).collect(),
            };
            buffers.push(bytes);
        }
        let views = specs
            .iter()
            .zip(&buffers)
            .map(|((name, shape, _), bytes)| {
                TensorView::new(self.dtype, shape.clone(), bytes)
                    .map(|v| (format!("{}{name}", self.prefix), v))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(std::io::Error::other)?;
        safetensors::serialize(views, None).map_err(std::io::Error::other)
    }
}

fn config_json(vocab: usize) -> String {
    let v = json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "max_position_embeddings": MAX_POSITIONS,
        "type_vocab_size": 2,
        "vocab_size": vocab,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// A `tokenizers` file as Hugging Face writes one for `bert-base-uncased`.
fn tokenizer_json(vocab: &[String]) -> String {
    let added: Vec<Value> = SPECIAL
        .iter()
        .enumerate()
        .map(|(id, t)| {
            json!({"id": id, "content": t, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let special = |t: &str, type_id: u32| json!({"SpecialToken": {"id": t, "type_id": type_id}});
    let seq = |s: &str, type_id: u32| json!({"Sequence": {"id": s, "type_id": type_id}});
    let ids: HashMap<&str, usize> = vocab
        .iter()
        .enumerate()
        .map(|(i, w)| (w.as_str(), i))
        .collect();
    let map: serde_json::Map<String, Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, w)| (w.clone(), json!(i)))
        .collect();
    let v = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
                       "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0),
                     seq("B", 1), special("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [ids["[CLS]"]], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [ids["[SEP]"]], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": map}
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// SplitMix64: a seedable generator, enough for random weights.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}
