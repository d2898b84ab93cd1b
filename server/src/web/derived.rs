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
/// Topics a project page's navigation and the search's topic list name; a project with more
/// shows its largest ones and links to the list of all, so that no page grows with the
/// number of topics.
pub const TOPICS_SHOWN: usize = 30;

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
    pub topics: Topics,
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

/// The artifact's topics as the pages list them: sorting thousands of topics per request
/// was most of a project page's time.
#[derive(Debug, Default)]
pub struct Topics {
    /// Topics with entries in default results, by name, with those entries' count.
    pub visible: Vec<(String, u32)>,
    /// When there are more than [`TOPICS_SHOWN`]: the indexes in `visible` of the largest
    /// (most entries, ties by name), in name order.
    pub largest: Option<Vec<usize>>,
    /// Every topic's row in the artifact's topic table, which a `Row`'s topic is.
    pub rows: HashMap<String, u32>,
}

impl Topics {
    fn of<B: AsRef<[u8]>>(index: &Index<B>) -> Result<Topics, helix_index_format::FormatError> {
        let visible: Vec<(String, u32)> = index
            .visible_topics()?
            .into_iter()
            .map(|t| (t.topic.to_string(), t.count))
            .collect();
        let rows = index
            .topics()?
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t.topic.to_string(), i as u32))
            .collect();
        Ok(Topics::new(visible, rows))
    }

    fn new(visible: Vec<(String, u32)>, rows: HashMap<String, u32>) -> Topics {
        let largest = (visible.len() > TOPICS_SHOWN).then(|| {
            let mut by_size: Vec<usize> = (0..visible.len()).collect();
            by_size.sort_by(|&a, &b| visible[b].1.cmp(&visible[a].1).then(a.cmp(&b)));
            by_size.truncate(TOPICS_SHOWN);
            by_size.sort_unstable();
            by_size
        });
        Topics {
            visible,
            largest,
            rows,
        }
    }

    /// What a short list shows: the largest topics plus `current` if it is not among them,
    /// in name order; every topic when there are not too many.
    pub fn shown(&self, current: Option<&str>) -> Vec<&(String, u32)> {
        let Some(largest) = &self.largest else {
            return self.visible.iter().collect();
        };
        let mut out: Vec<&(String, u32)> = largest.iter().map(|&i| &self.visible[i]).collect();
        if let Some(c) = current
            && !out.iter().any(|t| t.0 == c)
            && let Ok(i) = self.visible.binary_search_by(|t| t.0.as_str().cmp(c))
        {
            out.push(&self.visible[i]);
            out.sort_by(|a, b| a.0.cmp(&b.0));
        }
        out
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
            let (recent, topics) = Index::open(&served.bytes[..])
                .and_then(|index| Ok((Recent::of(&index)?, Topics::of(&index)?)))
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(Arc::new(Derived {
                served,
                recent,
                topics,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_topic_list_keeps_the_largest_and_the_current_one_in_name_order() {
        let visible = |n: usize| -> Vec<(String, u32)> {
            (0..n)
                .map(|i| (format!("t{i:02}"), (i % 7) as u32 + 1))
                .collect()
        };
        let few = Topics::new(visible(TOPICS_SHOWN), HashMap::new());
        assert!(few.largest.is_none());
        assert_eq!(few.shown(Some("t03")).len(), TOPICS_SHOWN);

        let many = Topics::new(visible(TOPICS_SHOWN * 3), HashMap::new());
        let names = |v: Vec<&(String, u32)>| v.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
        let shown = names(many.shown(None));
        assert_eq!(shown.len(), TOPICS_SHOWN);
        // The largest (count 7: every seventh from t06, then 6 from t05, …), in name order.
        let mut want: Vec<usize> = (0..TOPICS_SHOWN * 3).collect();
        want.sort_by_key(|&i| (std::cmp::Reverse(i % 7), i));
        want.truncate(TOPICS_SHOWN);
        want.sort_unstable();
        let want: Vec<String> = want.iter().map(|i| format!("t{i:02}")).collect();
        assert_eq!(shown, want);
        // A current topic outside them joins, in its place; an unknown one does not.
        let with = names(many.shown(Some("t00")));
        assert_eq!(with.len(), TOPICS_SHOWN + 1);
        assert_eq!(with[0], "t00");
        assert_eq!(many.shown(Some("nope")).len(), TOPICS_SHOWN);
        assert_eq!(many.shown(Some(&shown[3])).len(), TOPICS_SHOWN);
    }
}
