//! What a served artifact says, for the read API and the web view alike: searches ranked
//! exactly as `helix search` ranks them, one entry with its lifecycle (status, the
//! supersedes chain both ways, review due), and the project's entries newest first. Reads
//! only the artifact's bytes: git history is `git::history`.

use std::collections::HashSet;

use helix_index_format::{
    EntryRef, FormatError, FusionOptions, Hidden, Index, Mode, SearchOptions, VectorFilter, fuse,
};
use serde::Serialize;
use serde_json::Value;

/// Longest supersedes chain followed either way (chains are short; cycles are cut anyway).
const MAX_CHAIN: usize = 64;

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    /// `status: retired`.
    Retired,
    /// Another entry supersedes it.
    Superseded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Retired => "retired",
            Status::Superseded => "superseded",
        }
    }
}

/// One search hit.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub id: String,
    pub topic: String,
    pub title: String,
    pub score: f32,
    /// Every query word is in it (these rank first).
    pub full: bool,
    pub date: Option<String>,
    pub author: Option<String>,
    pub snippet: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// A fused (semantic) search only: the hit's rank in the lexical list, and its cosine
    /// to the query (`score` is then the fused score).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
}

/// A search as `helix search` runs it: every word wanted first, then any (`AndThenOr`),
/// recency as the client weighs it, retired and superseded entries only with `all`.
#[derive(Debug, Clone)]
pub struct Search<'a> {
    pub query: &'a str,
    pub topic: Option<&'a str>,
    pub limit: usize,
    pub all: bool,
    pub now: i64,
}

/// The status of entry `doc`, and the id of the entry that supersedes it.
fn lifecycle<B: AsRef<[u8]>>(index: &Index<B>, doc: u32) -> (Status, Option<String>) {
    match index.hidden(doc) {
        None => (Status::Active, None),
        Some(Hidden::Retired) => (Status::Retired, None),
        Some(Hidden::SupersededBy(by)) => (
            Status::Superseded,
            u32::try_from(by)
                .ok()
                .and_then(|by| index.entry(by).ok())
                .map(|e| e.id.to_string()),
        ),
    }
}

/// `topic=`, as `helix search --topic` takes it: `project:topic` names this project's topic.
pub fn topic_filter<'a>(project: &str, topic: Option<&'a str>) -> Option<&'a str> {
    let t = topic.map(str::trim).filter(|t| !t.is_empty())?;
    Some(match t.split_once(':') {
        Some((p, rest)) if p == project => rest,
        _ => t,
    })
}

pub fn search<B: AsRef<[u8]>>(index: &Index<B>, s: &Search<'_>) -> Result<Vec<Hit>, FormatError> {
    let opts = SearchOptions {
        limit: s.limit,
        mode: Mode::AndThenOr,
        topic: s.topic.map(str::to_string),
        now: Some(s.now),
        include_hidden: s.all,
        ..SearchOptions::default()
    };
    Ok(index
        .search(s.query, &opts)?
        .into_iter()
        .map(|h| {
            let (status, superseded_by) = lifecycle(index, h.entry.doc);
            Hit {
                id: h.entry.id.to_string(),
                topic: h.entry.topic.to_string(),
                title: h.entry.title.to_string(),
                score: h.score,
                full: h.full,
                date: h.entry.date.map(helix_index_format::format_day),
                author: h.entry.author.map(str::to_string),
                snippet: h.snippet,
                status,
                superseded_by,
                lexical_rank: None,
                cosine: None,
            }
        })
        .collect())
}

/// Characters of the excerpt shown for a hit found only semantically (its body's head).
const SEMANTIC_SNIPPET_CHARS: usize = 200;

/// [`search`] fused with a vector search for `query_vector` (the query embedded by the
/// model of the artifact's `VECTORS`): the lexical hits and the nearest vectors, each up
/// to the limit, ranked by reciprocal-rank fusion (`helix_index_format::fuse`'s defaults).
/// A hit keeps its lexical fields; one found only by its vector has `full: false` and the
/// head of its body as snippet. `score` is the fused score.
pub fn search_fused<B: AsRef<[u8]>>(
    index: &Index<B>,
    s: &Search<'_>,
    query_vector: &[f32],
) -> Result<Vec<Hit>, FormatError> {
    let lexical = search(index, s)?;
    let Some(vectors) = index.vectors() else {
        return Ok(lexical);
    };
    let filter = VectorFilter {
        topic: s.topic.map(str::to_string),
        include_hidden: s.all,
    };
    let semantic = vectors.top_k(query_vector, s.limit, &filter)?;
    let mut by_doc = std::collections::HashMap::new();
    let mut keyed = Vec::with_capacity(lexical.len());
    for h in lexical {
        let Some(e) = index.entry_by_id(&h.id)? else {
            continue;
        };
        keyed.push((e.doc, h.score));
        by_doc.insert(e.doc, h);
    }
    let fused = fuse(
        keyed,
        semantic.iter().map(|v| (v.doc, v.cosine)),
        &FusionOptions {
            limit: s.limit,
            ..FusionOptions::default()
        },
    );
    let mut out = Vec::with_capacity(fused.len());
    for f in fused {
        let mut hit = match by_doc.remove(&f.key) {
            Some(h) => h,
            None => {
                let e = index.entry(f.key)?;
                let (status, superseded_by) = lifecycle(index, f.key);
                Hit {
                    id: e.id.to_string(),
                    topic: e.topic.to_string(),
                    title: e.title.to_string(),
                    score: 0.0,
                    full: false,
                    date: e.date.map(helix_index_format::format_day),
                    author: e.author.map(str::to_string),
                    snippet: helix_index_format::snippet::snippet(
                        e.body,
                        e.title,
                        &[],
                        SEMANTIC_SNIPPET_CHARS,
                    ),
                    status,
                    superseded_by,
                    lexical_rank: None,
                    cosine: None,
                }
            }
        };
        hit.score = f.score;
        hit.lexical_rank = f.lexical_rank;
        hit.cosine = f.cosine;
        out.push(hit);
    }
    Ok(out)
}

/// One entry with everything the artifact knows of it.
#[derive(Debug, Clone, Serialize)]
pub struct EntryView {
    pub id: String,
    pub topic: String,
    pub title: String,
    pub tags: Vec<String>,
    pub sources: Vec<String>,
    pub author: Option<String>,
    pub date: Option<String>,
    pub status: Status,
    /// The entries that replace it, nearest first: each one supersedes the one before.
    pub superseded_by: Vec<String>,
    /// The entries it replaces, nearest first (its own `supersedes`, then theirs).
    pub supersedes: Vec<String>,
    /// `review_after` of its front matter, and whether that day has passed.
    pub review_after: Option<String>,
    pub review_due: bool,
    /// Its file's git blob id (the base of an edit).
    pub blob: Option<String>,
    pub body: String,
    /// Front matter beyond the fields above, as the artifact keeps it.
    pub extra: Value,
}

fn extra_of(e: &EntryRef<'_>) -> Value {
    if e.extra_json.is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(e.extra_json).unwrap_or_else(|_| Value::Object(Default::default()))
    }
}

/// The ids an entry's front matter says it supersedes.
fn supersedes_of(extra: &Value) -> Vec<String> {
    match extra.get("supersedes") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Entry `id` of the artifact, `None` if it has none such.
pub fn entry<B: AsRef<[u8]>>(
    index: &Index<B>,
    id: &str,
    today: &str,
) -> Result<Option<EntryView>, FormatError> {
    let Some(e) = index.entry_by_id(id)? else {
        return Ok(None);
    };
    let extra = extra_of(&e);
    let (status, first) = lifecycle(index, e.doc);
    let mut seen: HashSet<String> = HashSet::from([e.id.to_string()]);
    let mut superseded_by = Vec::new();
    let mut next = first;
    while let Some(id) =
        next.filter(|id| superseded_by.len() < MAX_CHAIN && seen.insert(id.clone()))
    {
        next = index
            .entry_by_id(&id)?
            .and_then(|s| lifecycle(index, s.doc).1);
        superseded_by.push(id);
    }
    let mut supersedes = Vec::new();
    let mut queue: std::collections::VecDeque<String> = supersedes_of(&extra).into();
    while let Some(id) = queue.pop_front() {
        if supersedes.len() >= MAX_CHAIN || !seen.insert(id.clone()) {
            continue;
        }
        if let Some(older) = index.entry_by_id(&id)? {
            queue.extend(supersedes_of(&extra_of(&older)));
        }
        supersedes.push(id);
    }
    let review_after = extra
        .get(helix_index_format::REVIEW_AFTER)
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Some(EntryView {
        id: e.id.to_string(),
        topic: e.topic.to_string(),
        title: e.title.to_string(),
        tags: e.tags.iter().map(|t| t.to_string()).collect(),
        sources: e.sources.iter().map(|t| t.to_string()).collect(),
        author: e.author.map(str::to_string),
        date: e.date.map(helix_index_format::format_day),
        status,
        superseded_by,
        supersedes,
        review_due: helix_index_format::review_due(e.extra_json, today),
        review_after,
        blob: index.blob(e.doc)?.map(str::to_string),
        body: e.body.to_string(),
        extra,
    }))
}

/// The project's entries newest first (undated last, then by id), split into those in
/// default results and the retired or superseded ones, each with its topic's row in
/// [`Index::topics`] (so that a topic's list is a filter of integers): computed once per
/// artifact.
#[derive(Debug, Default)]
pub struct Recent {
    pub active: Vec<Row>,
    pub hidden: Vec<Row>,
}

/// An entry in [`Recent`]: its document and its topic's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub doc: u32,
    pub topic: u32,
}

impl Recent {
    pub fn of<B: AsRef<[u8]>>(index: &Index<B>) -> Result<Recent, FormatError> {
        let topics: std::collections::HashMap<&str, u32> = index
            .topics()?
            .into_iter()
            .zip(0u32..)
            .map(|(t, row)| (t.topic, row))
            .collect();
        let mut rows: Vec<(i64, Row)> = Vec::with_capacity(index.len() as usize);
        for doc in 0..index.len() {
            let e = index.entry(doc)?;
            let topic = topics.get(e.topic).copied().unwrap_or(u32::MAX);
            rows.push((e.date.unwrap_or(i64::MIN), Row { doc, topic }));
        }
        // Rows are sorted by id already: a stable sort by date keeps ids in order.
        rows.sort_by_key(|r| std::cmp::Reverse(r.0));
        let mut out = Recent::default();
        for (_, row) in rows {
            if index.hidden(row.doc).is_some() {
                out.hidden.push(row);
            } else {
                out.active.push(row);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use helix_index_format::{BuildInfo, build, parse_entry};

    fn artifact(files: &[(&str, &str)]) -> Vec<u8> {
        let entries: Vec<_> = files
            .iter()
            .map(|(p, t)| parse_entry(p, t.as_bytes(), None).expect("entry"))
            .collect();
        build(
            &entries,
            &BuildInfo {
                project: "p".into(),
                commit: "c0ffee".into(),
                generation: 1,
                build_time: 0,
            },
        )
        .expect("build")
    }

    const OLD: &str =
        "---\ntitle: Use the old runner\ndate: 2024-01-01\n---\nThe old runner needs docker.\n";
    const MID: &str = "---\ntitle: Use the mid runner\ndate: 2025-01-01\nsupersedes: ci/old.md\n---\nThe mid runner needs podman.\n";
    const NEW: &str = "---\ntitle: Use the new runner\ndate: 2026-01-01\nsupersedes: ci/mid.md\nreview_after: 2026-06-01\n---\nThe new runner needs nothing.\n";
    const GONE: &str = "---\ntitle: Runner flags\nstatus: retired\n---\nFlags of the runner.\n";

    #[test]
    fn an_entry_shows_its_chain_both_ways_and_review_due() {
        let bytes = artifact(&[
            ("ci/old.md", OLD),
            ("ci/mid.md", MID),
            ("ci/new.md", NEW),
            ("ci/flags.md", GONE),
        ]);
        let index = Index::open(bytes.as_slice()).unwrap();
        let mid = entry(&index, "ci/mid.md", "2026-01-01").unwrap().unwrap();
        assert_eq!(mid.status, Status::Superseded);
        assert_eq!(mid.superseded_by, ["ci/new.md"]);
        assert_eq!(mid.supersedes, ["ci/old.md"]);
        let old = entry(&index, "ci/old.md", "2026-01-01").unwrap().unwrap();
        assert_eq!(old.superseded_by, ["ci/mid.md", "ci/new.md"]);
        let new = entry(&index, "ci/new.md", "2026-07-01").unwrap().unwrap();
        assert_eq!((new.status, new.supersedes.len()), (Status::Active, 2));
        assert_eq!(new.review_after.as_deref(), Some("2026-06-01"));
        assert!(new.review_due);
        assert!(
            !entry(&index, "ci/new.md", "2026-05-01")
                .unwrap()
                .unwrap()
                .review_due
        );
        assert_eq!(
            entry(&index, "ci/flags.md", "x").unwrap().unwrap().status,
            Status::Retired
        );
        assert!(entry(&index, "ci/none.md", "x").unwrap().is_none());
    }

    #[test]
    fn search_leaves_out_hidden_entries_unless_asked_and_marks_them() {
        let bytes = artifact(&[("ci/old.md", OLD), ("ci/mid.md", MID), ("ci/new.md", NEW)]);
        let index = Index::open(bytes.as_slice()).unwrap();
        let mut s = Search {
            query: "runner",
            topic: None,
            limit: 10,
            all: false,
            now: 0,
        };
        let ids: Vec<String> = search(&index, &s)
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ids, ["ci/new.md"]);
        s.all = true;
        let hits = search(&index, &s).unwrap();
        assert_eq!(hits.len(), 3);
        let old = hits.iter().find(|h| h.id == "ci/old.md").unwrap();
        assert_eq!(
            (old.status, old.superseded_by.as_deref()),
            (Status::Superseded, Some("ci/mid.md"))
        );
        s.topic = Some("nope");
        assert!(search(&index, &s).unwrap().is_empty());
    }

    #[test]
    fn recent_is_newest_first_with_hidden_apart() {
        let bytes = artifact(&[
            ("ci/old.md", OLD),
            ("ci/mid.md", MID),
            ("ci/new.md", NEW),
            ("ci/flags.md", GONE),
        ]);
        let index = Index::open(bytes.as_slice()).unwrap();
        let r = Recent::of(&index).unwrap();
        let ids = |rows: &[Row]| -> Vec<String> {
            rows.iter()
                .map(|r| index.entry(r.doc).unwrap().id.to_string())
                .collect()
        };
        assert!(r.active.iter().chain(&r.hidden).all(|r| r.topic == 0));
        assert_eq!(ids(&r.active), ["ci/new.md"]);
        assert_eq!(ids(&r.hidden), ["ci/mid.md", "ci/old.md", "ci/flags.md"]);
    }
}
