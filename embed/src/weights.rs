//! `model.safetensors`: a BERT's tensors by name, widened to f32.
//!
//! Exports name the same tensors under different prefixes: `embeddings.…` (a bare
//! `BertModel`, as sentence-transformers saves it), `bert.embeddings.…` (a model with a
//! head), `0.auto_model.…` or `model.0.auto_model.…` (a whole sentence-transformers
//! pipeline). The prefix is whatever stands before `embeddings.word_embeddings.weight`;
//! old TensorFlow conversions call LayerNorm's parameters `gamma` and `beta`.

use safetensors::{Dtype, SafeTensors};

use crate::EmbedError;

const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

/// The tensors of one safetensors file.
pub struct Weights<'a> {
    tensors: SafeTensors<'a>,
    prefix: String,
}

impl<'a> Weights<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, EmbedError> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| EmbedError::Weights {
            reason: e.to_string(),
        })?;
        // The shortest prefix wins: a file holding a BERT and, say, a distilled copy
        // under `teacher.` reads the outer one.
        let prefix = tensors
            .names()
            .into_iter()
            .filter_map(|n| n.strip_suffix(WORD_EMBEDDINGS))
            .filter(|p| p.is_empty() || p.ends_with('.'))
            .min_by_key(|p| (p.len(), p.to_string()))
            .ok_or_else(|| EmbedError::MissingTensor {
                name: WORD_EMBEDDINGS.into(),
            })?
            .to_string();
        Ok(Self { tensors, prefix })
    }

    /// The tensor `name` (without the file's prefix), checked against `shape`.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let full = format!("{}{name}", self.prefix);
        let view = match self.tensors.tensor(&full) {
            Ok(v) => v,
            Err(_) => {
                // LayerNorm.weight / LayerNorm.bias as LayerNorm.gamma / LayerNorm.beta.
                let old = full
                    .strip_suffix(".weight")
                    .map(|s| format!("{s}.gamma"))
                    .or_else(|| full.strip_suffix(".bias").map(|s| format!("{s}.beta")))
                    .filter(|_| name.contains("LayerNorm"));
                match old.and_then(|o| self.tensors.tensor(&o).ok()) {
                    Some(v) => v,
                    None => return Err(EmbedError::MissingTensor { name: full }),
                }
            }
        };
        if view.shape() != shape {
            return Err(EmbedError::Shape {
                name: full,
                expected: shape.to_vec(),
                got: view.shape().to_vec(),
            });
        }
        let data = view.data();
        let out = match view.dtype() {
            Dtype::F32 => data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::F16 => data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            Dtype::BF16 => data
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            other => {
                return Err(EmbedError::Dtype {
                    name: full,
                    dtype: format!("{other:?}"),
                });
            }
        };
        Ok(out)
    }

    /// Whether the file has the tensor `name` (without the prefix).
    pub fn has(&self, name: &str) -> bool {
        self.tensors
            .tensor(&format!("{}{name}", self.prefix))
            .is_ok()
    }
}
