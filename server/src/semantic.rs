//! Semantic search (docs/operations.md, "Semantic search"): the `[semantic]` model, loaded
//! once at start, that embeds entries at compile time and queries at search time, and the
//! model's files as `GET /v1/model` serves them.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use helix_embed::{Embedder, MODEL_FILES, Options};
use helix_index_format::Index;
use sha2::{Digest, Sha256};

use crate::config::SemanticConfig;
use crate::transfer;

/// The longest a search waits for its query's embedding before answering lexically.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the configured model cannot be used: the server refuses to start.
#[derive(Debug, thiserror::Error)]
#[error("[semantic] model {}: {error}", .dir.display())]
pub struct ModelError {
    dir: std::path::PathBuf,
    error: String,
}

/// One of the model's files as `GET /v1/model/{file}` serves it.
#[derive(Debug)]
pub struct ModelFile {
    pub name: &'static str,
    pub bytes: Bytes,
    pub sha256: String,
    /// Its zstd and gzip codings, computed on first request.
    pub coded: transfer::Cache,
}

/// The loaded model.
#[derive(Debug)]
pub struct Model {
    pub embedder: Embedder,
    /// Characters of an entry's body embedded (its head).
    pub body_chars: usize,
    pub files: Vec<ModelFile>,
}

impl Model {
    /// Loads the model of `[semantic]`, reading its files once (kept for `GET /v1/model`).
    pub fn load(cfg: &SemanticConfig) -> Result<Arc<Model>, ModelError> {
        let dir = &cfg.model;
        let err = |error: String| ModelError {
            dir: dir.clone(),
            error,
        };
        let mut files = Vec::with_capacity(MODEL_FILES.len());
        for name in MODEL_FILES {
            let path = dir.join(name);
            let bytes = std::fs::read(&path)
                .map_err(|e| err(format!("cannot read {}: {e}", path.display())))?;
            files.push(ModelFile {
                name,
                sha256: hex::encode(Sha256::digest(&bytes)),
                bytes: Bytes::from(bytes),
                coded: transfer::Cache::default(),
            });
        }
        let mut options = Options::default();
        if let Some(t) = cfg.max_tokens {
            options.max_tokens = t;
        }
        let embedder = Embedder::load_with(dir, options).map_err(|e| err(e.to_string()))?;
        let read_id = helix_embed::model_id(&files[0].bytes, &files[1].bytes, &files[2].bytes);
        if read_id != embedder.id() {
            return Err(err("its files changed while it was loading; restart".into()));
        }
        Ok(Arc::new(Model {
            embedder,
            body_chars: cfg.body_chars,
            files,
        }))
    }

    pub fn id(&self) -> &str {
        self.embedder.id()
    }

    pub fn dim(&self) -> usize {
        self.embedder.dim()
    }

    /// `text` embedded on the blocking pool, or `None` (logged) when that fails or takes
    /// longer than [`QUERY_TIMEOUT`]: the caller then searches lexically.
    pub async fn embed_query(self: &Arc<Self>, text: &str) -> Option<Vec<f32>> {
        let model = self.clone();
        let text = text.to_string();
        let task = tokio::task::spawn_blocking(move || model.embedder.embed_one(&text));
        match tokio::time::timeout(QUERY_TIMEOUT, task).await {
            Ok(Ok(Ok(v))) => Some(v),
            Ok(Ok(Err(e))) => {
                tracing::warn!(error = %e, "cannot embed the query; searching lexically");
                None
            }
            Ok(Err(e)) => {
                tracing::error!(error = %e, "embedding the query panicked; searching lexically");
                None
            }
            Err(_) => {
                tracing::warn!(
                    secs = QUERY_TIMEOUT.as_secs(),
                    "embedding the query took too long; searching lexically"
                );
                None
            }
        }
    }

    pub fn file(&self, name: &str) -> Option<&ModelFile> {
        self.files.iter().find(|f| f.name == name)
    }

    /// Whether `index` holds vectors of this model (its queries can be searched there).
    pub fn serves<B: AsRef<[u8]>>(&self, index: &Index<B>) -> bool {
        matches!(index.vectors(), Some(v) if v.model() == self.id() && v.dim() == self.dim())
    }
}
