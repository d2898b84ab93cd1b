//! Sentence embeddings: a BERT-family model run on the CPU in pure Rust.
//!
//! A model is a directory of three files, as sentence-transformers and the Hugging Face hub
//! keep them: `config.json` (the BERT configuration), `model.safetensors` (f32, f16 or
//! bf16 weights, with or without a `bert.` or sentence-transformers prefix) and
//! `tokenizer.json` (a `tokenizers` WordPiece tokenizer). [`Embedder::embed`] gives what
//! sentence-transformers gives for a mean-pooled, normalised model such as
//! all-MiniLM-L6-v2: the encoder's last hidden states averaged over the text's tokens
//! (special tokens included), scaled to unit length. Texts are cut at
//! [`Options::max_tokens`] tokens.
//!
//! The crate reads the model directory and nothing else: no network, no other file, no
//! clock. [`tiny`] writes a small random model in the same format for tests.

mod bert;
mod config;
mod kernels;
pub mod tiny;
mod weights;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

pub use config::{Activation, BertConfig};

/// The files a model directory holds, in the order [`model_id`] hashes them.
pub const MODEL_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// Tokens a text is cut to by default (special tokens included): all-MiniLM-L6-v2's
/// `max_seq_length`.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// What turns a model's outputs into a vector here (pooling, normalisation, tokenizer
/// settings); part of [`model_id`], so vectors made by a different recipe never compare
/// as the same model's.
const RECIPE: &str = "helix-embed/1 mean-pooled l2-normalised";

/// Bytes of a text tokenized at most, per token of `max_tokens`: a bound on the work a huge
/// text costs. A token is at least one character, so cutting there changes a text's first
/// `max_tokens` tokens only when they average more than this many bytes (a run of
/// [UNK]-sized words).
const BYTES_PER_TOKEN: usize = 64;

/// Why a model could not be loaded or a text embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("config.json: {reason}")]
    Config { reason: String },
    #[error("unsupported model: {what}")]
    Unsupported { what: String },
    #[error("model.safetensors: {reason}")]
    Weights { reason: String },
    #[error("model.safetensors has no tensor {name}")]
    MissingTensor { name: String },
    #[error("model.safetensors: {name} has shape {got:?}, config.json implies {expected:?}")]
    Shape {
        name: String,
        expected: Vec<usize>,
        got: Vec<usize>,
    },
    #[error("model.safetensors: {name} is {dtype}, not f32, f16 or bf16")]
    Dtype { name: String, dtype: String },
    #[error("tokenizer.json: {reason}")]
    Tokenizer { reason: String },
    #[error("token id {id} is outside the model's vocabulary of {vocab}")]
    TokenOutOfVocab { id: u32, vocab: usize },
}

/// How an [`Embedder`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Tokens a text is cut to, its special tokens included (at most the model's
    /// `max_position_embeddings`, and at least 2).
    pub max_tokens: usize,
    /// Threads a batch is spread over (1: the calling thread only).
    pub threads: usize,
    /// The encoder's dense layers as 8-bit codes with a scale per output: a quarter of the
    /// bytes each text reads, vectors within about 0.999 cosine of the f32 ones. For a
    /// query, not for the vectors an artifact keeps (those stay the f32 model's).
    pub int8_weights: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_tokens: DEFAULT_MAX_TOKENS,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            int8_weights: false,
        }
    }
}

/// Tokens of the batch one thread runs at once: bounds the intermediate buffers
/// (intermediate_size floats per token, 6 KiB for a MiniLM) and how long a thread runs
/// after the last text was taken. Throughput per CPU second was the same at 4096 (a dense
/// layer streams its weights once per block of rows, whatever the pass).
const TOKENS_PER_PASS: usize = 1024;

/// A loaded model: tokenizer, weights and the id of the files they came from.
pub struct Embedder {
    model: bert::Bert,
    tokenizer: Tokenizer,
    max_tokens: usize,
    threads: usize,
    id: String,
}

impl fmt::Debug for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Embedder")
            .field("id", &self.id)
            .field("config", &self.model.config)
            .field("max_tokens", &self.max_tokens)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the model in `dir` with the default [`Options`].
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, Options::default())
    }

    /// Loads the model in `dir` (the files of [`MODEL_FILES`]).
    pub fn load_with(dir: &Path, options: Options) -> Result<Self, EmbedError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| EmbedError::Io { path, source })
        };
        let [config, weights, tokenizer] = MODEL_FILES.map(read);
        check_pooling(dir)?;
        Self::from_bytes(&config?, &weights?, &tokenizer?, options)
    }

    /// Loads a model from the contents of its three files.
    pub fn from_bytes(
        config: &[u8],
        weights: &[u8],
        tokenizer: &[u8],
        options: Options,
    ) -> Result<Self, EmbedError> {
        let id = model_id(config, weights, tokenizer);
        let config = BertConfig::parse(config)?;
        let model = bert::Bert::load(
            config,
            &weights::Weights::parse(weights)?,
            options.int8_weights,
        )?;
        let tok_err = |e: tokenizers::Error| EmbedError::Tokenizer {
            reason: e.to_string(),
        };
        let mut tokenizer = Tokenizer::from_bytes(tokenizer).map_err(tok_err)?;
        let vocab = tokenizer.get_vocab_size(true);
        if vocab > model.config.vocab_size {
            return Err(EmbedError::Tokenizer {
                reason: format!(
                    "{vocab} tokens, more than the model's vocab_size {}",
                    model.config.vocab_size
                ),
            });
        }
        let max_tokens = options
            .max_tokens
            .clamp(2, model.config.max_position_embeddings);
        // The file's own padding and truncation (all-MiniLM-L6-v2's pads every text to 128)
        // give way to ours: no padding, cut at max_tokens.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(tok_err)?;
        Ok(Self {
            model,
            tokenizer,
            max_tokens,
            threads: options.threads.max(1),
            id,
        })
    }

    /// The model's id: [`model_id`] of its files.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Length of a vector (the model's hidden size).
    pub fn dim(&self) -> usize {
        self.model.config.hidden_size
    }

    /// Tokens a text is cut to.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The model's configuration.
    pub fn config(&self) -> &BertConfig {
        &self.model.config
    }

    /// A text's token ids as the model sees them: special tokens added, cut at
    /// [`Embedder::max_tokens`].
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let cut = floor_char_boundary(text, self.max_tokens * BYTES_PER_TOKEN);
        let encoding =
            self.tokenizer
                .encode(&text[..cut], true)
                .map_err(|e| EmbedError::Tokenizer {
                    reason: e.to_string(),
                })?;
        let ids = encoding.get_ids().to_vec();
        if let Some(&id) = ids
            .iter()
            .find(|&&id| id as usize >= self.model.config.vocab_size)
        {
            return Err(EmbedError::TokenOutOfVocab {
                id,
                vocab: self.model.config.vocab_size,
            });
        }
        Ok(ids)
    }

    /// One text's vector: unit length, [`Embedder::dim`] long. Runs on the calling thread.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.tokenize(text)?;
        Ok(self.model.embed(&[&ids]).pop().unwrap_or_default())
    }

    /// The vectors of `texts`, in order. A batch is spread over [`Options::threads`]
    /// threads; a text's vector is the same whatever it is batched with.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let threads = self.threads.min(texts.len()).max(1);
        if threads == 1 {
            return self.embed_serial(texts);
        }
        // Each thread takes the next text whenever it has room in its pass, instead of a
        // fixed share: a thread that gets less CPU (a loaded machine) or longer texts takes
        // fewer, and the batch ends within a pass of its last text, not when the slowest
        // share does.
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let work = || -> Result<Placed, EmbedError> {
            let mut out = Vec::new();
            let mut pass = Pass::default();
            while !failed.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(text) = texts.get(i) else {
                    break;
                };
                let ids = self.tokenize(text).inspect_err(|_| {
                    failed.store(true, Ordering::Relaxed);
                })?;
                if pass.push(i, ids) {
                    pass.run(self, &mut out);
                }
            }
            if !failed.load(Ordering::Relaxed) {
                pass.run(self, &mut out);
            }
            Ok(out)
        };
        let results: Vec<Result<Placed, EmbedError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
            // The calling thread is one of them.
            let mut results = vec![work()];
            results.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
            );
            results
        });
        let mut out = vec![Vec::new(); texts.len()];
        for r in results {
            for (i, v) in r? {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// `texts` on the calling thread, in passes of about [`TOKENS_PER_PASS`] tokens.
    fn embed_serial(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        let mut pass = Pass::default();
        for (i, text) in texts.iter().enumerate() {
            if pass.push(i, self.tokenize(text)?) {
                pass.run(self, &mut out);
            }
        }
        pass.run(self, &mut out);
        Ok(out.into_iter().map(|(_, v)| v).collect())
    }
}

/// Vectors with their texts' places in the batch.
type Placed = Vec<(usize, Vec<f32>)>;

/// Texts tokenized and waiting to run together, with their places in the batch.
#[derive(Default)]
struct Pass {
    at: Vec<usize>,
    ids: Vec<Vec<u32>>,
    tokens: usize,
}

impl Pass {
    /// Adds text `i`; true when the pass is full.
    fn push(&mut self, i: usize, ids: Vec<u32>) -> bool {
        self.tokens += ids.len();
        self.at.push(i);
        self.ids.push(ids);
        self.tokens >= TOKENS_PER_PASS
    }

    /// Runs the pass (if it holds any text) into `out`, and empties it.
    fn run(&mut self, e: &Embedder, out: &mut Placed) {
        if self.ids.is_empty() {
            return;
        }
        let seqs: Vec<&[u32]> = self.ids.iter().map(Vec::as_slice).collect();
        out.extend(self.at.drain(..).zip(e.model.embed(&seqs)));
        self.ids.clear();
        self.tokens = 0;
    }
}

/// A model's id: sha256 over this crate's recipe and each of [`MODEL_FILES`]' own sha256,
/// hex. The same files give the same id on every machine, and any change to a file (or
/// to how this crate turns outputs into vectors) gives another.
pub fn model_id(config: &[u8], weights: &[u8], tokenizer: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(RECIPE.as_bytes());
    h.update(b"\n");
    for (name, bytes) in MODEL_FILES.iter().zip([config, weights, tokenizer]) {
        h.update(name.as_bytes());
        h.update(b" ");
        h.update(hex::encode(Sha256::digest(bytes)).as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// sentence-transformers keeps the pooling in `1_Pooling/config.json`; a model pooled some
/// other way than the mean would embed here without an error, wrongly.
fn check_pooling(dir: &Path) -> Result<(), EmbedError> {
    let path = dir.join("1_Pooling").join("config.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(());
    };
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| EmbedError::Config {
            reason: format!("{}: {e}", path.display()),
        })?;
    let mode = |k: &str| value.get(k).and_then(serde_json::Value::as_bool);
    let other = [
        "pooling_mode_cls_token",
        "pooling_mode_max_tokens",
        "pooling_mode_mean_sqrt_len_tokens",
        "pooling_mode_weightedmean_tokens",
        "pooling_mode_lasttoken",
    ]
    .into_iter()
    .find(|k| mode(k) == Some(true));
    match (mode("pooling_mode_mean_tokens"), other) {
        (Some(false), _) | (_, Some(_)) => Err(EmbedError::Unsupported {
            what: format!(
                "pooling other than the mean ({}{})",
                path.display(),
                other.map(|o| format!(": {o}")).unwrap_or_default()
            ),
        }),
        _ => Ok(()),
    }
}

fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}
