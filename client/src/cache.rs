//! The cache's bookkeeping: `meta.json` and `last_sync.json` beside each cached artifact,
//! verified installation of a new artifact (temp file, full verify, project check, atomic
//! rename), and local-mode compilation with the `helix build` code path.

use crate::config::ProjectConfig;
use crate::knowledge::INDEX_FILE;
use anyhow::{Context, Result, anyhow};
use helix_index_format::Index;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `meta.json` next to a cached artifact.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheMeta {
    pub etag: Option<String>,
    pub commit: String,
    pub generation: u64,
    /// Unix seconds of the last successful check with the server (or local compile).
    pub fetched_at: i64,
    pub entries: u64,
}

/// `last_sync.json`: the result of the last sync attempt of one project.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LastSync {
    pub at: i64,
    pub ok: bool,
    pub message: String,
}

pub fn read_meta(dir: &Path) -> Option<CacheMeta> {
    let text = std::fs::read(dir.join("meta.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

pub fn read_last_sync(dir: &Path) -> Option<LastSync> {
    let text = std::fs::read(dir.join("last_sync.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(v).expect("serialising plain structs cannot fail");
    crate::sys::write_atomic_nosync(path, &bytes)
        .with_context(|| format!("writing {}", path.display()))
}

pub fn record(dir: &Path, ok: bool, message: &str) {
    let _ = std::fs::create_dir_all(dir);
    let _ = write_json(
        &dir.join("last_sync.json"),
        &LastSync {
            at: crate::sys::now_secs(),
            ok,
            message: message.to_string(),
        },
    );
}

/// Outcome of syncing one project: the line to print and whether it succeeded.
#[derive(Debug, Clone)]
pub struct Report {
    #[allow(dead_code)] // for callers that act per project; the CLI only prints `line`
    pub project: String,
    pub ok: bool,
    pub line: String,
}

/// Verifies `bytes`-backed artifact at `tmp` and installs it as `dir/index.hix`.
/// Returns the artifact's entry count, commit and generation.
pub fn install_artifact(tmp: &Path, dir: &Path, project: &str) -> Result<(u64, String, u64)> {
    let res = (|| {
        let map =
            crate::knowledge::map_file(tmp)?.ok_or_else(|| anyhow!("downloaded file vanished"))?;
        let index = Index::open(map).map_err(|e| anyhow!("download rejected: {e}"))?;
        index
            .verify()
            .map_err(|e| anyhow!("download rejected: {e}"))?;
        let meta = index
            .meta()
            .map_err(|e| anyhow!("download rejected: {e}"))?;
        if meta.project != project {
            return Err(anyhow!(
                "download rejected: artifact is for project `{}`, expected `{project}`",
                meta.project
            ));
        }
        Ok((
            u64::from(meta.entry_count),
            meta.commit.to_string(),
            meta.generation,
        ))
    })();
    match res {
        Ok(v) => {
            std::fs::rename(tmp, dir.join(INDEX_FILE))
                .with_context(|| format!("installing {}", dir.join(INDEX_FILE).display()))?;
            Ok(v)
        }
        Err(e) => {
            let _ = std::fs::remove_file(tmp);
            Err(e)
        }
    }
}

pub fn temp_path(dir: &Path) -> PathBuf {
    dir.join(format!(
        ".download.{}.{:08x}.tmp",
        std::process::id(),
        rand::random::<u32>()
    ))
}

/// What embeds entries for a local-mode compile: `helix-net`, which links the model (the
/// `helix` binary never does).
pub trait EmbedEntries {
    /// The model's id (what the artifact's vectors are tagged with) and dimension.
    fn model(&self) -> (&str, usize);
    /// The vectors of `texts`, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// The vectors for `entries`: an entry whose embedded text is the same as in `old` (the
/// artifact being replaced, same model) keeps its vector; with `embedder`, the others are
/// embedded. `None` when no entry would have one.
fn local_embeddings(
    entries: &[helix_index_format::Entry],
    old: Option<&Index<memmap2::Mmap>>,
    embedder: Option<&dyn EmbedEntries>,
) -> Result<Option<helix_index_format::Embeddings>> {
    use helix_index_format::vectors::{DEFAULT_BODY_CHARS, entry_ref_text, entry_text};
    let old_vectors = old.and_then(|o| Some((o, o.vectors()?)));
    let (model, dim) = match (embedder, &old_vectors) {
        (Some(e), _) => e.model(),
        (None, Some((_, v))) => (v.model(), v.dim()),
        (None, None) => return Ok(None),
    };
    let mut reusable = std::collections::HashMap::new();
    if let Some((o, v)) = &old_vectors
        && v.model() == model
        && v.dim() == dim
    {
        for doc in 0..o.len() {
            if let (Some(row), Ok(e)) = (v.get(doc), o.entry(doc)) {
                reusable.insert(e.id, (entry_ref_text(&e, DEFAULT_BODY_CHARS), row));
            }
        }
    }
    let mut vectors = std::collections::HashMap::new();
    let mut todo: Vec<(&str, String)> = Vec::new();
    for e in entries {
        let text = entry_text(e, DEFAULT_BODY_CHARS);
        match reusable.get(e.id.as_str()) {
            Some((old_text, row)) if *old_text == text => {
                vectors.insert(e.id.clone(), row.to_f32());
            }
            _ => todo.push((&e.id, text)),
        }
    }
    if let Some(embedder) = embedder {
        // In batches, so progress shows and memory stays flat on a large directory.
        for chunk in todo.chunks(64) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let got = embedder.embed(&texts)?;
            for ((id, _), v) in chunk.iter().zip(got) {
                vectors.insert((*id).to_string(), v);
            }
        }
    }
    if vectors.is_empty() {
        return Ok(None);
    }
    Ok(Some(helix_index_format::Embeddings {
        model: model.to_string(),
        dim,
        vectors,
    }))
}

/// Compiles the local knowledge directory into the local cache (local mode), with the same
/// code as `helix build`, keeping the vectors of entries whose text did not change.
/// Returns the report line.
pub fn compile_local(cfg: &ProjectConfig, project: &str) -> Result<Report> {
    compile_local_with(cfg, project, None)
}

/// [`compile_local`], embedding new and changed entries with `embedder`.
pub fn compile_local_with(
    cfg: &ProjectConfig,
    project: &str,
    embedder: Option<&dyn EmbedEntries>,
) -> Result<Report> {
    let local = cfg
        .local
        .as_ref()
        .ok_or_else(|| anyhow!("{} has no `local` directory", cfg.file.display()))?;
    let dir = cfg.cache_dir(project);
    let old = read_meta(&dir);
    let meta = std::fs::metadata(local).with_context(|| {
        format!(
            "local knowledge directory {} (from {})",
            local.display(),
            cfg.file.display()
        )
    })?;
    anyhow::ensure!(meta.is_dir(), "{}: not a directory", local.display());
    let c = crate::compile::compile_dir(local, true)?;
    for d in &c.diagnostics {
        eprintln!("{d}");
    }
    if let Some(w) = c.census.warning() {
        eprintln!("helix: warning: {project}: {w}");
    }
    let generation = old.as_ref().map_or(1, |m| m.generation + 1);
    let old_index = crate::knowledge::map_file(&dir.join(INDEX_FILE))
        .ok()
        .flatten()
        .and_then(|m| Index::open(m).ok());
    let embeddings = local_embeddings(&c.entries, old_index.as_ref(), embedder)
        .with_context(|| format!("embedding {project}'s entries"))?;
    drop(old_index);
    let bytes = crate::compile::to_artifact(&c, project, generation, embeddings.as_ref())?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = temp_path(&dir);
    crate::sys::write_atomic(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    let (entries, commit, generation) = install_artifact(&tmp, &dir, project)?;
    let etag = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    write_json(
        &dir.join("meta.json"),
        &CacheMeta {
            etag: Some(etag),
            commit: commit.clone(),
            generation,
            fetched_at: crate::sys::now_secs(),
            entries,
        },
    )?;
    let was = old.map(|m| m.entries);
    let mut line = format!(
        "{project}: {} from {}",
        crate::human::entries(entries),
        local.display()
    );
    if !commit.is_empty() {
        line.push_str(&format!(", commit {}", short(&commit)));
    }
    if let Some(w) = was.filter(|w| *w != entries) {
        line.push_str(&format!(", was {}", crate::human::thousands(w)));
    }
    if !c.diagnostics.is_empty() {
        line.push_str(&format!(", {} invalid (see above)", c.diagnostics.len()));
    }
    record(&dir, true, &line);
    Ok(Report {
        project: project.to_string(),
        ok: true,
        line,
    })
}

pub fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// `commit 1a2b3c4`, or `no commit yet` for the artifact of an empty project.
pub fn commit_note(commit: &str) -> String {
    if commit.is_empty() {
        "no commit yet".to_string()
    } else {
        format!("commit {}", short(commit))
    }
}

/// What a sync line adds for a project with no entries: how to give it one.
pub fn empty_note(entries: u64) -> &'static str {
    if entries == 0 {
        " (the project is empty: `helix store` adds its first entry)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use helix_index_format::{BuildInfo, Entry, SearchOptions};

    fn artifact(project: &str, ids: &[&str]) -> Vec<u8> {
        let entries: Vec<Entry> = ids
            .iter()
            .map(|id| Entry {
                id: id.to_string(),
                topic: id.split('/').next().unwrap().to_string(),
                title: format!("About {id}"),
                body: format!("unique words for {id} zebra"),
                ..Default::default()
            })
            .collect();
        let info = BuildInfo {
            project: project.into(),
            commit: "c0ffee".into(),
            generation: 1,
            build_time: 0,
        };
        helix_index_format::build(&entries, &info).unwrap()
    }

    #[test]
    fn installing_over_a_mapped_artifact_leaves_the_old_mapping_readable() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("a.tmp");
        std::fs::write(&tmp, artifact("p", &["a/one.md"])).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();
        let old = crate::knowledge::open_index(&dir.path().join(INDEX_FILE))
            .unwrap()
            .unwrap();

        let tmp = dir.path().join("b.tmp");
        std::fs::write(&tmp, artifact("p", &["b/two.md", "b/three.md"])).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();

        // The old mapping still sees the old inode, whole and valid.
        old.verify().unwrap();
        assert_eq!(old.len(), 1);
        assert_eq!(
            old.search("zebra", &SearchOptions::default()).unwrap()[0]
                .entry
                .id,
            "a/one.md"
        );
        let new = crate::knowledge::open_index(&dir.path().join(INDEX_FILE))
            .unwrap()
            .unwrap();
        assert_eq!(new.len(), 2);
    }

    #[test]
    fn rejected_install_keeps_the_old_artifact_and_removes_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("a.tmp");
        let good = artifact("p", &["a/one.md"]);
        std::fs::write(&tmp, &good).unwrap();
        install_artifact(&tmp, dir.path(), "p").unwrap();
        let tmp = dir.path().join("b.tmp");
        std::fs::write(&tmp, artifact("q", &["a/one.md"])).unwrap();
        let err = install_artifact(&tmp, dir.path(), "p")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("artifact is for project `q`, expected `p`"),
            "{err}"
        );
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(dir.path().join(INDEX_FILE)).unwrap(), good);
    }
}
