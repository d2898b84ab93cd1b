//! The artifact store of one project: immutable `<content-hash>.hix` files written
//! atomically, a `current.json` pointer (also atomic), and pruning to the last few.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::sys::{remove_stale_temps, write_atomic};
use crate::transfer::Cache;

/// Facts about one stored artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactInfo {
    /// Hex sha256 of the bytes: file name and ETag.
    pub hash: String,
    pub commit: String,
    pub generation: u64,
    pub entries: u64,
    pub bytes: u64,
    pub built_at: i64,
}

/// A diagnostic as recorded and reported by `/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticInfo {
    pub path: String,
    pub line: u32,
    pub reason: String,
}

/// `current.json`: the served artifact first, then older kept ones, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Pointer {
    pub kept: Vec<ArtifactInfo>,
    #[serde(default)]
    pub diagnostics: Vec<DiagnosticInfo>,
    /// Markdown files of the served commit that are not entries, by reason
    /// (`helix_index_format::Skip::key`).
    #[serde(default)]
    pub skipped: BTreeMap<String, u64>,
}

/// What reading a commit's files found besides the entries: files that are not valid
/// entries, and Markdown files skipped by reason.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub diagnostics: Vec<DiagnosticInfo>,
    pub skipped: BTreeMap<String, u64>,
}

/// An artifact held in memory for serving, with its codings and the patches to it as they
/// are computed.
#[derive(Debug)]
pub struct Served {
    pub info: ArtifactInfo,
    pub bytes: Bytes,
    pub coded: Cache,
}

/// Why the artifact store could not do its work: the file and what went wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} {}: {error}", .path.display())]
    Io {
        /// `create`, `read` or `write`.
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// An artifact's bytes do not hash to its name.
    #[error("{} is damaged: content hash {got}", .path.display())]
    Damaged { path: PathBuf, got: String },
    #[error("cannot encode pointer: {0}")]
    Encode(serde_json::Error),
}

/// Maps an I/O error on `path` to [`StoreError::Io`].
fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |error| StoreError::Io {
        action,
        path,
        error,
    }
}

/// One project's artifacts directory.
#[derive(Debug)]
pub struct ArtifactStore {
    dir: PathBuf,
    pointer_path: PathBuf,
    keep: usize,
}

pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl ArtifactStore {
    pub fn new(project_dir: &Path, keep: usize) -> Result<ArtifactStore, StoreError> {
        let dir = project_dir.join("artifacts");
        std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
        remove_stale_temps(&dir);
        remove_stale_temps(project_dir);
        Ok(ArtifactStore {
            dir,
            pointer_path: project_dir.join("current.json"),
            keep,
        })
    }

    fn file(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("{hash}.hix"))
    }

    pub fn read_pointer(&self) -> Pointer {
        match std::fs::read(&self.pointer_path) {
            Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|e| {
                tracing::warn!(path = %self.pointer_path.display(), error = %e, "unreadable artifact pointer; starting without one");
                Pointer::default()
            }),
            Err(_) => Pointer::default(),
        }
    }

    /// Reads an artifact and checks it against its name (content hash).
    pub fn load(&self, info: &ArtifactInfo) -> Result<Served, StoreError> {
        let path = self.file(&info.hash);
        let bytes = std::fs::read(&path).map_err(io("read", &path))?;
        let got = content_hash(&bytes);
        if got != info.hash {
            return Err(StoreError::Damaged { path, got });
        }
        Ok(Served {
            info: info.clone(),
            bytes: Bytes::from(bytes),
            coded: Cache::default(),
        })
    }

    /// The newest kept artifact that is intact (the last good one), with the pointer.
    pub fn last_good(&self) -> (Option<Arc<Served>>, Pointer) {
        let ptr = self.read_pointer();
        for info in &ptr.kept {
            match self.load(info) {
                Ok(s) => return (Some(Arc::new(s)), ptr.clone()),
                Err(e) => tracing::warn!(error = %e, "skipping damaged artifact"),
            }
        }
        (None, ptr)
    }

    /// Stores new artifact bytes, makes them current and prunes old ones. The artifact file
    /// is durable before the pointer names it.
    pub fn save(
        &self,
        bytes: Vec<u8>,
        commit: &str,
        generation: u64,
        entries: u64,
        built_at: i64,
        findings: Findings,
    ) -> Result<(Arc<Served>, Pointer), StoreError> {
        let hash = content_hash(&bytes);
        let path = self.file(&hash);
        write_atomic(&path, &bytes).map_err(io("write", &path))?;
        let info = ArtifactInfo {
            hash,
            commit: commit.to_string(),
            generation,
            entries,
            bytes: bytes.len() as u64,
            built_at,
        };
        let mut ptr = self.read_pointer();
        ptr.kept
            .retain(|k| k.hash != info.hash && k.commit != info.commit);
        ptr.kept.insert(0, info.clone());
        ptr.kept.truncate(self.keep);
        ptr.diagnostics = findings.diagnostics;
        ptr.skipped = findings.skipped;
        let json = serde_json::to_vec_pretty(&ptr).map_err(StoreError::Encode)?;
        write_atomic(&self.pointer_path, &json).map_err(io("write", &self.pointer_path))?;
        self.prune(&ptr);
        Ok((
            Arc::new(Served {
                info,
                bytes: Bytes::from(bytes),
                coded: Cache::default(),
            }),
            ptr,
        ))
    }

    fn prune(&self, ptr: &Pointer) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(hash) = name.strip_suffix(".hix")
                && !ptr.kept.iter().any(|k| k.hash == hash)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_load_prune_and_skip_damaged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = ArtifactStore::new(dir.path(), 2).expect("store");
        for g in 1..=3u64 {
            store
                .save(
                    vec![g as u8; 10],
                    &format!("c{g}"),
                    g,
                    1,
                    0,
                    Findings::default(),
                )
                .expect("save");
        }
        let files = std::fs::read_dir(dir.path().join("artifacts"))
            .expect("dir")
            .count();
        assert_eq!(files, 2);
        let (cur, ptr) = store.last_good();
        assert_eq!(cur.expect("current").info.generation, 3);
        assert_eq!(ptr.kept.len(), 2);
        // Damage the current one: the previous artifact is served.
        std::fs::write(store.file(&ptr.kept[0].hash), b"junk").expect("damage");
        let (cur, _) = store.last_good();
        assert_eq!(cur.expect("previous").info.generation, 2);
    }
}
