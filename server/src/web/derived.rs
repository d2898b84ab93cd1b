//! What pages derive from a served artifact or from git, computed once and kept: the
//! entries newest first (per artifact), the near-duplicate pairs (per artifact, in the
//! background: a search per entry), and file histories (per served commit and path).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use helix_index_format::{Collection, DUPLICATE_THRESHOLD, Index};

use crate::git::History;
use crate::knowledge::Recent;
use crate::store::Served;
use crate::sys::lock;

/// Histories kept at once; past it the cache starts again.
const MAX_HISTORIES: usize = 4096;
/// Near-duplicate pairs listed at most.
pub const MAX_PAIRS: usize = 500;

/// Two entries that say nearly the same.
#[derive(Debug, Clone)]
pub struct Pair {
    pub a: String,
    pub a_title: String,
    pub b: String,
    pub b_title: String,
    pub score: f32,
}

/// An artifact and what is derived from it.
#[derive(Debug)]
pub struct Derived {
    pub served: Arc<Served>,
    pub recent: Recent,
    duplicates: OnceLock<Result<Vec<Pair>, String>>,
    started: AtomicBool,
}

impl Derived {
    pub fn index(&self) -> Index<&[u8]> {
        // Opened once already when derived: it cannot fail now.
        Index::open(&self.served.bytes[..]).expect("artifact opened before")
    }

    /// The near-duplicate pairs, or `None` while they are being found (the first ask
    /// starts the search on a blocking thread).
    pub fn duplicates(self: &Arc<Self>) -> Option<&Result<Vec<Pair>, String>> {
        if let Some(d) = self.duplicates.get() {
            return Some(d);
        }
        if !self.started.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            tokio::task::spawn_blocking(move || {
                let found = pairs(&me.served.bytes);
                let _ = me.duplicates.set(found);
            });
        }
        None
    }
}

fn pairs(bytes: &[u8]) -> Result<Vec<Pair>, String> {
    let index = Index::open(bytes).map_err(|e| e.to_string())?;
    let refs = [&index];
    let mut out: Vec<Pair> = Collection::new(&refs)
        .pairs(DUPLICATE_THRESHOLD)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(a, b, score)| Pair {
            a: a.id.to_string(),
            a_title: a.title.to_string(),
            b: b.id.to_string(),
            b_title: b.title.to_string(),
            score,
        })
        .collect();
    out.truncate(MAX_PAIRS);
    Ok(out)
}

/// Per project: the derived views of its served artifact, and histories.
#[derive(Debug, Default)]
pub struct Cache {
    views: Mutex<HashMap<String, Arc<Derived>>>,
    histories: Mutex<HashMap<(String, String, String), Arc<History>>>,
}

impl Cache {
    /// The derived views of `served`, the artifact `project` serves now.
    pub async fn of(&self, project: &str, served: Arc<Served>) -> Result<Arc<Derived>, String> {
        if let Some(d) = lock(&self.views)
            .get(project)
            .filter(|d| d.served.info.hash == served.info.hash)
        {
            return Ok(d.clone());
        }
        let d = tokio::task::spawn_blocking(move || {
            let recent = Index::open(&served.bytes[..])
                .and_then(|index| Recent::of(&index))
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(Arc::new(Derived {
                served,
                recent,
                duplicates: OnceLock::new(),
                started: AtomicBool::new(false),
            }))
        })
        .await
        .map_err(|e| e.to_string())??;
        lock(&self.views).insert(project.to_string(), d.clone());
        Ok(d)
    }

    pub fn history(&self, project: &str, commit: &str, path: &str) -> Option<Arc<History>> {
        lock(&self.histories)
            .get(&(project.to_string(), commit.to_string(), path.to_string()))
            .cloned()
    }

    pub fn keep_history(&self, project: &str, commit: &str, path: &str, h: Arc<History>) {
        let mut m = lock(&self.histories);
        if m.len() >= MAX_HISTORIES {
            m.clear();
        }
        m.insert(
            (project.to_string(), commit.to_string(), path.to_string()),
            h,
        );
    }
}
