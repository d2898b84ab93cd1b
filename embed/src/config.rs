//! `config.json`: the fields of a Hugging Face BERT configuration the forward pass needs.

use serde::Deserialize;

use crate::EmbedError;

/// The activation of the feed-forward layers (`hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: the exact form, `x·Φ(x)` with erf.
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`: the tanh approximation.
    GeluTanh,
    /// `relu`.
    Relu,
}

/// A BERT encoder's shape, read from `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f32,
    pub hidden_act: Activation,
}

#[derive(Deserialize)]
struct Raw {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "two")]
    type_vocab_size: usize,
    #[serde(default = "eps")]
    layer_norm_eps: f64,
    #[serde(default = "gelu")]
    hidden_act: String,
    #[serde(default = "absolute")]
    position_embedding_type: String,
    #[serde(default)]
    model_type: Option<String>,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}
fn absolute() -> String {
    "absolute".into()
}

impl BertConfig {
    /// Parses and checks a `config.json`.
    pub fn parse(bytes: &[u8]) -> Result<Self, EmbedError> {
        let raw: Raw = serde_json::from_slice(bytes).map_err(|e| EmbedError::Config {
            reason: e.to_string(),
        })?;
        let unsupported = |what: String| Err(EmbedError::Unsupported { what });
        // RoBERTa-like models share BERT's tensors but number positions from the padding
        // id on: read as BERT they would embed without an error, wrongly. Only BERT is read.
        if let Some(t) = &raw.model_type
            && t != "bert"
        {
            return unsupported(format!("model_type {t:?} (a BERT encoder is needed)"));
        }
        if raw.position_embedding_type != "absolute" {
            return unsupported(format!(
                "position_embedding_type {:?}",
                raw.position_embedding_type
            ));
        }
        let hidden_act = match raw.hidden_act.as_str() {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => return unsupported(format!("hidden_act {other:?}")),
        };
        let bad = |reason: String| Err(EmbedError::Config { reason });
        for (name, v) in [
            ("vocab_size", raw.vocab_size),
            ("hidden_size", raw.hidden_size),
            ("num_hidden_layers", raw.num_hidden_layers),
            ("num_attention_heads", raw.num_attention_heads),
            ("intermediate_size", raw.intermediate_size),
            ("max_position_embeddings", raw.max_position_embeddings),
            ("type_vocab_size", raw.type_vocab_size),
        ] {
            // Zero breaks the shapes; the upper bound keeps a damaged file from asking for
            // terabytes before the weights are even compared with it.
            if v == 0 || v > 1 << 20 {
                return bad(format!("{name} = {v}"));
            }
        }
        if !raw.hidden_size.is_multiple_of(raw.num_attention_heads) {
            return bad(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                raw.hidden_size, raw.num_attention_heads
            ));
        }
        if !(raw.layer_norm_eps.is_finite() && raw.layer_norm_eps > 0.0) {
            return bad(format!("layer_norm_eps = {}", raw.layer_norm_eps));
        }
        Ok(Self {
            vocab_size: raw.vocab_size,
            hidden_size: raw.hidden_size,
            num_hidden_layers: raw.num_hidden_layers,
            num_attention_heads: raw.num_attention_heads,
            intermediate_size: raw.intermediate_size,
            max_position_embeddings: raw.max_position_embeddings,
            type_vocab_size: raw.type_vocab_size,
            layer_norm_eps: raw.layer_norm_eps as f32,
            hidden_act,
        })
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }
}
