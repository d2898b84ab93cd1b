//! The BERT encoder's forward pass on the CPU, as Hugging Face's `BertModel` computes it in
//! eval mode, followed by sentence-transformers' mean pooling and normalisation.
//!
//! Sequences are never padded: the dense layers run on every token of a batch stacked into
//! one matrix, and attention runs per sequence, so a text's vector does not depend on what
//! it was batched with.

use crate::EmbedError;
use crate::config::{Activation, BertConfig};
use crate::kernels::{self, Dense, Isa, Scratch, attention};
use crate::weights::Weights;

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value as one layer: `3·hidden` outputs.
    qkv: Dense,
    out: Dense,
    attn_norm: LayerNorm,
    up: Dense,
    down: Dense,
    ffn_norm: LayerNorm,
}

pub struct Bert {
    pub config: BertConfig,
    isa: Isa,
    word: Vec<f32>,
    position: Vec<f32>,
    /// Row 0 of the token-type embeddings: every token is of type 0 in a single text.
    token_type: Vec<f32>,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
}

impl Bert {
    /// The model in `weights`; with `int8`, its encoder's dense layers as 8-bit codes
    /// ([`Dense::new_int8`]).
    pub fn load(config: BertConfig, weights: &Weights<'_>, int8: bool) -> Result<Self, EmbedError> {
        let h = config.hidden_size;
        let i = config.intermediate_size;
        let norm = |p: &str| -> Result<LayerNorm, EmbedError> {
            Ok(LayerNorm {
                gamma: weights.get(&format!("{p}.weight"), &[h])?,
                beta: weights.get(&format!("{p}.bias"), &[h])?,
            })
        };
        let mut token_type = weights.get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        token_type.truncate(h);
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        let isa = Isa::detect();
        let get = |p: &str, out: usize, inp: usize| -> Result<(Vec<f32>, Vec<f32>), EmbedError> {
            Ok((
                weights.get(&format!("{p}.weight"), &[out, inp])?,
                weights.get(&format!("{p}.bias"), &[out])?,
            ))
        };
        let new = |w: &[f32], b: Vec<f32>| {
            if int8 {
                Dense::new_int8(isa, w, b)
            } else {
                Dense::new(isa, w, b)
            }
        };
        let dense = |p: &str, out: usize, inp: usize| -> Result<Dense, EmbedError> {
            let (w, b) = get(p, out, inp)?;
            Ok(new(&w, b))
        };
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let (q, qb) = get(&format!("{p}.attention.self.query"), h, h)?;
            let (k, kb) = get(&format!("{p}.attention.self.key"), h, h)?;
            let (v, vb) = get(&format!("{p}.attention.self.value"), h, h)?;
            layers.push(Layer {
                qkv: new(&[q, k, v].concat(), [qb, kb, vb].concat()),
                out: dense(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: dense(&format!("{p}.intermediate.dense"), i, h)?,
                down: dense(&format!("{p}.output.dense"), h, i)?,
                ffn_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        if weights.has(&format!(
            "encoder.layer.{}.attention.self.query.weight",
            layers.len()
        )) {
            return Err(EmbedError::Config {
                reason: format!(
                    "num_hidden_layers is {} but the weights have more layers",
                    layers.len()
                ),
            });
        }
        Ok(Self {
            word: weights.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            position: weights.get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            token_type,
            embed_norm: norm("embeddings.LayerNorm")?,
            layers,
            config,
            isa,
        })
    }

    /// Mean-pooled, L2-normalised embeddings of token sequences (each already holding its
    /// special tokens, at most `max_position_embeddings` long, every id below `vocab_size`).
    pub fn embed(&self, seqs: &[&[u32]]) -> Vec<Vec<f32>> {
        let c = &self.config;
        let h = c.hidden_size;
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        // Embeddings: word + position + token type 0, then LayerNorm.
        let mut x = Vec::with_capacity(total * h);
        for seq in seqs {
            assert!(
                seq.len() <= c.max_position_embeddings,
                "sequence longer than positions"
            );
            for (pos, &id) in seq.iter().enumerate() {
                let id = id as usize;
                let w = &self.word[id * h..(id + 1) * h];
                let p = &self.position[pos * h..(pos + 1) * h];
                x.extend(
                    w.iter()
                        .zip(p)
                        .zip(&self.token_type)
                        .map(|((a, b), t)| a + b + t),
                );
            }
        }
        layer_norm(&mut x, &self.embed_norm, c.layer_norm_eps);

        let mut qkv = vec![0.0; total * 3 * h];
        let mut ctx = vec![0.0; total * h];
        let mut attn = vec![0.0; total * h];
        let mut up = vec![0.0; total * c.intermediate_size];
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            layer.qkv.forward(&x, total, &mut qkv);
            let mut start = 0;
            for seq in seqs {
                let (a, b) = (start, start + seq.len());
                attention(
                    self.isa,
                    &qkv[a * 3 * h..b * 3 * h],
                    seq.len(),
                    c.num_attention_heads,
                    &mut scratch,
                    &mut ctx[a * h..b * h],
                );
                start = b;
            }
            layer.out.forward(&ctx, total, &mut attn);
            for (a, r) in attn.iter_mut().zip(&x) {
                *a += r;
            }
            layer_norm(&mut attn, &layer.attn_norm, c.layer_norm_eps);
            layer.up.forward(&attn, total, &mut up);
            activate(self.isa, &mut up, c.hidden_act);
            layer.down.forward(&up, total, &mut x);
            for (o, r) in x.iter_mut().zip(&attn) {
                *o += r;
            }
            layer_norm(&mut x, &layer.ffn_norm, c.layer_norm_eps);
        }

        // Mean over each sequence's tokens (its special tokens included, as
        // sentence-transformers' attention-masked mean), then unit length.
        let mut out = Vec::with_capacity(seqs.len());
        let mut start = 0;
        for seq in seqs {
            let mut v = vec![0.0f32; h];
            for row in x[start * h..(start + seq.len()) * h].chunks_exact(h) {
                for (a, b) in v.iter_mut().zip(row) {
                    *a += b;
                }
            }
            start += seq.len();
            let n = seq.len().max(1) as f32;
            for a in &mut v {
                *a /= n;
            }
            // sentence-transformers' Normalize: F.normalize, which divides by max(‖v‖, 1e-12).
            let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
            for a in &mut v {
                *a /= norm;
            }
            out.push(v);
        }
        out
    }
}

/// LayerNorm over each row of `x` (rows of the norm's width), in place.
fn layer_norm(x: &mut [f32], norm: &LayerNorm, eps: f32) {
    let h = norm.gamma.len();
    for row in x.chunks_exact_mut(h) {
        let mean = kernels::sum(row) / h as f32;
        for a in row.iter_mut() {
            *a -= mean;
        }
        let var = kernels::sum_of_squares(row) / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((a, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *a = *a * inv * g + b;
        }
    }
}

fn activate(isa: Isa, x: &mut [f32], act: Activation) {
    match act {
        Activation::Gelu => kernels::gelu(isa, x),
        Activation::GeluTanh => {
            const C: f32 = 0.797_884_6; // √(2/π)
            for a in x {
                *a = 0.5 * *a * (1.0 + (C * (*a + 0.044_715 * *a * *a * *a)).tanh());
            }
        }
        Activation::Relu => {
            for a in x {
                *a = a.max(0.0);
            }
        }
    }
}
