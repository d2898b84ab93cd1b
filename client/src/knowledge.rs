//! Read side of the client: the cached artifacts of every followed project plus the pending
//! overlays, memory-mapped and queried together. No network, no locks, no index building.

use crate::config::ProjectConfig;
use helix_index_format::{
    EntryRef, FormatError, Hit, Index, Query, SearchOptions, Stats, TopicCount,
};
use memmap2::Mmap;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// File name of a cached artifact inside a project's cache directory.
pub const INDEX_FILE: &str = "index.hix";
/// File name of the pending overlay inside a project's pending directory.
pub const OVERLAY_FILE: &str = "overlay.hix";

/// One open artifact: a project's synced cache, or its pending overlay.
#[derive(Debug)]
pub struct Source {
    pub project: String,
    /// True for the overlay of not-yet-synced entries.
    pub overlay: bool,
    pub index: Index<Mmap>,
}

/// A search hit labelled with its project.
#[derive(Debug, Clone)]
pub struct ProjectHit<'a> {
    pub project: &'a str,
    pub hit: Hit<'a>,
    /// True when the hit comes from a pending overlay.
    pub pending: bool,
    /// Which of the searches' queries (one per tokenizer version) `hit.matched` refers to.
    query: usize,
    /// The cosine of the entry's vector with the query's, when the search was fused with
    /// a query vector and the entry has one (`semantic::fuse_found`).
    pub cosine: Option<f32>,
}

/// Hits of a search over several artifacts, with the queries and the shared statistics
/// that scored them (what the relevance gate and `--explain` read).
#[derive(Debug, Clone)]
pub struct Found<'a> {
    pub hits: Vec<ProjectHit<'a>>,
    /// One query per tokenizer version among the searched artifacts.
    queries: Vec<Query>,
    pub stats: Stats,
}

impl<'a> ProjectHit<'a> {
    /// A hit found only by its vector: score 0, no matched terms.
    pub(crate) fn vector_only(
        project: &'a str,
        pending: bool,
        entry: EntryRef<'a>,
        snippet: String,
        query: usize,
        cosine: f32,
    ) -> Self {
        ProjectHit {
            project,
            hit: Hit {
                entry,
                score: 0.0,
                matched: 0,
                full: false,
                snippet,
            },
            pending,
            query,
            cosine: Some(cosine),
        }
    }

    /// Whether the lexical search found it (a vector-only hit has score 0).
    pub fn lexical(&self) -> bool {
        self.hit.score > 0.0 || self.hit.matched != 0
    }
}

impl<'a> Found<'a> {
    pub(crate) fn into_parts(self) -> (Vec<ProjectHit<'a>>, Vec<Query>, Stats) {
        (self.hits, self.queries, self.stats)
    }

    pub(crate) fn new(hits: Vec<ProjectHit<'a>>, queries: Vec<Query>, stats: Stats) -> Self {
        Found {
            hits,
            queries,
            stats,
        }
    }

    /// The query (tokenized for its artifact) that `h` was scored for.
    pub fn query_of(&self, h: &ProjectHit<'_>) -> &Query {
        &self.queries[h.query]
    }

    /// The query of the current tokenizer (or the only one).
    pub fn query(&self) -> Option<&Query> {
        self.queries
            .iter()
            .find(|q| q.tokenizer_version() == helix_index_format::TOKENIZER_VERSION)
            .or(self.queries.first())
    }
}

/// Everything the client can read locally for one `.helix.toml`.
#[derive(Debug)]
pub struct Knowledge {
    root: PathBuf,
    sources: Vec<Source>,
}

/// Owned copies of every entry of `index`, and what it was built with: to rebuild it.
pub fn owned_entries<B: AsRef<[u8]>>(
    index: &Index<B>,
) -> Result<
    (
        Vec<helix_index_format::Entry>,
        helix_index_format::BuildInfo,
    ),
    FormatError,
> {
    let info = helix_index_format::BuildInfo::of(&index.meta()?);
    let entries = (0..index.len())
        .map(|d| Ok(owned_entry(&index.entry(d)?)))
        .collect::<Result<_, FormatError>>()?;
    Ok((entries, info))
}

/// An owned copy of an artifact's entry (the blob id is not copied).
pub fn owned_entry(e: &EntryRef<'_>) -> helix_index_format::Entry {
    helix_index_format::Entry {
        id: e.id.to_string(),
        topic: e.topic.to_string(),
        title: e.title.to_string(),
        tags: e.tags.iter().map(|t| t.to_string()).collect(),
        sources: e.sources.iter().map(|s| s.to_string()).collect(),
        date: e.date,
        author: e.author.map(str::to_string),
        body: e.body.to_string(),
        extra: serde_json::from_str(e.extra_json).unwrap_or_default(),
        blob: String::new(),
    }
}

/// Why entry `doc` of `index` is out of default results: `retired`, or `superseded by ID`.
pub fn hidden_note(index: &Index<Mmap>, doc: u32) -> Option<String> {
    Some(match index.hidden(doc)? {
        helix_index_format::Hidden::Retired => "retired".to_string(),
        helix_index_format::Hidden::SupersededBy(by) => match index.entry(by as u32) {
            Ok(e) => format!("superseded by {}", e.id),
            Err(_) => "superseded".to_string(),
        },
    })
}

/// Maps `path` read-only. `Ok(None)` when it does not exist.
#[allow(unsafe_code)]
pub fn map_file(path: &Path) -> std::io::Result<Option<Mmap>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // SAFETY: helix never writes an artifact in place: the cache and the overlay are only
    // ever replaced by writing a new file and renaming it over the old name, so the inode
    // mapped here is never modified while mapped. Every read through the map is
    // bounds-checked by `Index`, so even foreign damage yields an error, not UB from us.
    let map = unsafe { Mmap::map(&file)? };
    Ok(Some(map))
}

/// Opens an artifact file with the cheap O(1) checks only (no checksum).
pub fn open_index(path: &Path) -> anyhow::Result<Option<Index<Mmap>>> {
    let Some(map) = map_file(path)? else {
        return Ok(None);
    };
    let index = Index::open(map).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Some(index))
}

/// Pages in, when they are not in memory, the parts of `index` that searches read, without
/// waiting for them: the whole artifact when it is small (up to 32 MiB, about 20k entries,
/// snippet bodies included), else the dictionary, postings, lengths and entry rows. After a
/// reboot or memory pressure the first search of a session would otherwise wait for the
/// disk, fault by fault (measured: 30 ms at 100k entries, 14 ms with this).
pub fn prefetch_search_ranges(index: &Index<Mmap>) {
    const PAGE: usize = 4096;
    const SMALL: usize = 32 << 20;
    // The kernel reads at most one read-ahead window (often 128 KiB to 8 MiB) per request.
    const CHUNK: usize = 1 << 20;
    let map: &Mmap = index.backing();
    let ranges = index.search_ranges();
    let whole = |r: &std::ops::Range<usize>| {
        let start = r.start / PAGE * PAGE;
        start..r.end.min(map.len())
    };
    // One page per range tells whether the artifact is in memory (cheap: a syscall each).
    if ranges
        .iter()
        .map(whole)
        .all(|r| r.is_empty() || middle_page_resident(map, r.start, r.len()))
    {
        return;
    }
    let wanted: Vec<std::ops::Range<usize>> = if map.len() <= SMALL {
        std::iter::once(0..map.len()).collect()
    } else {
        ranges.iter().map(whole).collect()
    };
    for r in wanted {
        for at in r.clone().step_by(CHUNK) {
            // Asynchronous read-ahead; an error only means no prefetch.
            let _ = map.advise_range(memmap2::Advice::WillNeed, at, CHUNK.min(r.end - at));
        }
    }
}

/// Whether the middle page of `start..start + len` of `map` is in the page cache. After an
/// eviction it almost surely is not; while it is, asking for the range anyway would cost
/// more (~0.15 ms for 15 MB) than this one syscall.
#[allow(unsafe_code)]
fn middle_page_resident(map: &Mmap, start: usize, len: usize) -> bool {
    const PAGE: usize = 4096;
    let page = start + len.div_ceil(PAGE) / 2 * PAGE;
    if page >= map.len() {
        return true;
    }
    let mut vec = [0u8; 1];
    // SAFETY: `page` is page-aligned (the map starts on a page boundary and `start` is a
    // multiple of the page size) and lies inside the live mapping `map`; mincore writes one
    // byte per page of the queried length into `vec`, which has room for it.
    let rc = unsafe {
        libc::mincore(
            map.as_ptr().add(page) as *mut libc::c_void,
            PAGE.min(map.len() - page),
            vec.as_mut_ptr(),
        )
    };
    // When the question cannot be answered, assume resident: prefetch is optional.
    rc != 0 || vec[0] & 1 == 1
}

impl Knowledge {
    /// Asks the OS to page in, in the background, what searches of every open artifact will
    /// read, where it is not in memory already. For `session-start`: the prompt hooks that
    /// follow then find it there.
    pub fn prefetch(&self) {
        for s in &self.sources {
            prefetch_search_ranges(&s.index);
        }
    }

    /// Finds `.helix.toml` upward from `cwd` and opens every cache and overlay it implies.
    /// Errs only when there is no configuration; missing or corrupt caches are skipped.
    pub fn open(cwd: &Path) -> anyhow::Result<Knowledge> {
        let cfg = crate::config::require(cwd)?;
        Ok(Knowledge::from_config(&cfg))
    }

    /// Opens the caches and overlays of the projects `cfg` follows.
    pub fn from_config(cfg: &ProjectConfig) -> Knowledge {
        let mut sources = Vec::new();
        for project in &cfg.projects {
            let cache = cfg.cache_dir(project).join(INDEX_FILE);
            if let Ok(Some(index)) = open_index(&cache) {
                sources.push(Source {
                    project: project.clone(),
                    overlay: false,
                    index,
                });
            }
            // Server mode only: local mode writes into the knowledge directory, queues
            // nothing, and must not read another server's queue of a project of its name.
            let Some(server) = cfg.server.as_deref() else {
                continue;
            };
            // Quietly: the hooks print nothing (the next command reports a failed move).
            let pending = crate::pending::PendingDir::open_quietly(server, project);
            let overlay = pending.path().join(OVERLAY_FILE);
            if let Ok(Some(index)) = open_index(&overlay) {
                sources.push(Source {
                    project: project.clone(),
                    overlay: true,
                    index,
                });
            }
        }
        Knowledge {
            root: cfg.root.clone(),
            sources,
        }
    }

    /// Knowledge made of one artifact file (for `helix search --index FILE`).
    pub fn from_file(path: &Path) -> anyhow::Result<Knowledge> {
        let index =
            open_index(path)?.ok_or_else(|| anyhow::anyhow!("{}: no such file", path.display()))?;
        let project = index
            .meta()
            .map(|m| m.project.to_string())
            .unwrap_or_default();
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Knowledge {
            root,
            sources: vec![Source {
                project,
                overlay: false,
                index,
            }],
        })
    }

    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The directory holding `.helix.toml` (repository-relative paths are relative to it).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the overlay of `src`'s project holds `id` (then it shadows the synced copy).
    pub(crate) fn shadowed_id(&self, src: &Source, id: &str) -> bool {
        self.shadowed(src, id)
    }

    /// Whether the overlay of `project` holds `id` (then it shadows the synced copy).
    fn shadowed(&self, src: &Source, id: &str) -> bool {
        !src.overlay
            && self.sources.iter().any(|o| {
                o.overlay
                    && o.project == src.project
                    && matches!(o.index.entry_by_id(id), Ok(Some(_)))
            })
    }

    /// Searches every source; merged best first, at most `opts.limit`, each id once.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Vec<ProjectHit<'_>> {
        self.find(query, opts, None).hits
    }

    /// Searches every source (or only `project`'s) as if they were one artifact: document
    /// frequencies, entry and token counts are summed over them, so an entry scores the
    /// same whichever project or overlay holds it, and raw scores merge. Entries with every
    /// required term rank first (AND-then-OR), then score, then id. (An overlay's copy of an
    /// id shadows the synced one; both count in the statistics, a negligible skew.)
    pub fn find(&self, text: &str, opts: &SearchOptions, project: Option<&str>) -> Found<'_> {
        self.find_with(text, opts, project, |_, _| {})
    }

    /// [`Knowledge::find`], letting `shape` change each query (one per tokenizer version)
    /// once the statistics are known: drop terms too common to be worth their cost, keep
    /// only an identifier's whole token.
    pub fn find_with(
        &self,
        text: &str,
        opts: &SearchOptions,
        project: Option<&str>,
        shape: impl Fn(&mut Query, &Stats),
    ) -> Found<'_> {
        let sources: Vec<&Source> = self
            .sources
            .iter()
            .filter(|s| project.is_none_or(|p| s.project == p))
            .collect();
        let mut queries: Vec<Query> = Vec::new();
        let mut query_of = Vec::with_capacity(sources.len());
        let mut stats = Stats::default();
        for src in &sources {
            let version = src.index.tokenizer_version();
            let at = match queries
                .iter()
                .position(|q| q.tokenizer_version() == version)
            {
                Some(at) => at,
                None => {
                    queries.push(Query::new(text, version));
                    queries.len() - 1
                }
            };
            // A source that cannot say its statistics is left out of the search too.
            let ok = stats.add(&src.index, &queries[at]).is_ok();
            query_of.push(ok.then_some(at));
        }
        for q in &mut queries {
            shape(q, &stats);
        }
        let mut all: Vec<ProjectHit<'_>> = Vec::new();
        for (src, at) in sources.iter().zip(query_of) {
            let Some(at) = at else { continue };
            // Ask for enough that shadowed ids still leave `limit` (overlays are small).
            let shadowing: usize = if src.overlay {
                0
            } else {
                self.sources
                    .iter()
                    .filter(|o| o.overlay && o.project == src.project)
                    .map(|o| o.index.len() as usize)
                    .sum()
            };
            let opts = SearchOptions {
                limit: opts.limit.saturating_add(shadowing),
                ..opts.clone()
            };
            let Ok(hits) = src.index.search_with(&queries[at], &stats, &opts) else {
                continue;
            };
            for hit in hits {
                if shadowing > 0 && self.shadowed(src, hit.entry.id) {
                    continue;
                }
                all.push(ProjectHit {
                    project: &src.project,
                    hit,
                    pending: src.overlay,
                    query: at,
                    cosine: None,
                });
            }
        }
        all.sort_by(|a, b| {
            b.hit
                .full
                .cmp(&a.hit.full)
                .then(b.hit.score.total_cmp(&a.hit.score))
                .then(a.hit.entry.id.cmp(b.hit.entry.id))
                .then(a.project.cmp(b.project))
        });
        let mut seen = HashSet::new();
        all.retain(|h| seen.insert((h.project, h.hit.entry.id)));
        if let Some(cap) = opts.per_topic_cap {
            let mut per: BTreeMap<&str, usize> = BTreeMap::new();
            all.retain(|h| {
                let n = per.entry(h.hit.entry.topic).or_default();
                *n += 1;
                *n <= cap
            });
        }
        all.truncate(opts.limit);
        Found {
            hits: all,
            queries,
            stats,
        }
    }

    /// One entry by id: `project:id` or a bare id (first match; overlay before cache).
    /// Retired and superseded entries are read like any other.
    pub fn read(&self, id: &str) -> Option<(&str, EntryRef<'_>)> {
        self.read_in(id).map(|(src, e)| (src.project.as_str(), e))
    }

    /// [`Knowledge::read`], with the artifact that holds the entry (its blob id, whether it
    /// is hidden, whether it is pending).
    pub fn read_in(&self, id: &str) -> Option<(&Source, EntryRef<'_>)> {
        let (want_project, bare) = match id.split_once(':') {
            Some((p, rest)) if self.sources.iter().any(|s| s.project == p) => (Some(p), rest),
            _ => (None, id),
        };
        let mut order: Vec<&Source> = self.sources.iter().filter(|s| s.overlay).collect();
        order.extend(self.sources.iter().filter(|s| !s.overlay));
        for src in order {
            if want_project.is_some_and(|p| p != src.project) {
                continue;
            }
            if let Ok(Some(e)) = src.index.entry_by_id(bare) {
                return Some((src, e));
            }
        }
        None
    }

    /// Topics with counts per project (overlay counts added to the project's), by project then name.
    pub fn topics(&self) -> Vec<(&str, TopicCount<'_>)> {
        let mut merged: BTreeMap<(&str, &str), u32> = BTreeMap::new();
        for src in &self.sources {
            let Ok(topics) = src.index.visible_topics() else {
                continue;
            };
            for t in topics {
                *merged.entry((src.project.as_str(), t.topic)).or_default() += t.count;
            }
        }
        merged
            .into_iter()
            .map(|((p, topic), count)| (p, TopicCount { topic, count }))
            .collect()
    }

    fn collect<'a>(
        &'a self,
        f: impl Fn(&'a Index<Mmap>) -> Result<Vec<EntryRef<'a>>, FormatError>,
    ) -> Vec<(&'a str, EntryRef<'a>)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut order: Vec<&Source> = self.sources.iter().filter(|s| s.overlay).collect();
        order.extend(self.sources.iter().filter(|s| !s.overlay));
        for src in order {
            let Ok(entries) = f(&src.index) else { continue };
            for e in entries {
                // Seen first: an overlay's retired copy also hides the synced one.
                if seen.insert((src.project.as_str(), e.id)) && src.index.hidden(e.doc).is_none() {
                    out.push((src.project.as_str(), e));
                }
            }
        }
        out
    }

    /// Entries of `topic` over every source as (project, entry), newest first; an overlay's
    /// pending copy shadows the synced one of the same id.
    pub fn topic_entries(&self, topic: &str) -> Vec<(&str, EntryRef<'_>)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let overlays_first = self
            .sources
            .iter()
            .filter(|s| s.overlay)
            .chain(self.sources.iter().filter(|s| !s.overlay));
        for src in overlays_first {
            for doc in 0..src.index.len() {
                let Ok(e) = src.index.entry(doc) else {
                    continue;
                };
                if e.topic == topic
                    && seen.insert((src.project.as_str(), e.id))
                    && src.index.hidden(doc).is_none()
                {
                    out.push((src.project.as_str(), e));
                }
            }
        }
        out.sort_by(|a, b| b.1.date.cmp(&a.1.date).then(a.1.id.cmp(b.1.id)));
        out
    }

    /// Entries listing exactly this repository-relative source path (retired and superseded
    /// ones left out, as in every lookup below).
    pub fn by_source(&self, repo_rel_path: &str) -> Vec<(&str, EntryRef<'_>)> {
        self.collect(|i| i.by_source(repo_rel_path))
    }

    /// Entries with a source whose file name is `name`.
    pub fn by_file_name(&self, name: &str) -> Vec<(&str, EntryRef<'_>)> {
        self.collect(|i| i.by_file_name(name))
    }

    /// Entries with a glob source (`applyTo: '**/*.ts'`) that matches this path.
    pub fn by_source_glob(&self, repo_rel_path: &str) -> Vec<(&str, EntryRef<'_>)> {
        self.collect(|i| i.by_source_glob(repo_rel_path))
    }

    /// Topics sharing sources with `path`, most shared first.
    pub fn related_topics(&self, path: &str) -> Vec<(&str, TopicCount<'_>)> {
        let mut merged: BTreeMap<(&str, &str), u32> = BTreeMap::new();
        for src in &self.sources {
            let Ok(topics) = src.index.related_topics(path) else {
                continue;
            };
            for t in topics {
                *merged.entry((src.project.as_str(), t.topic)).or_default() += t.count;
            }
        }
        let mut v: Vec<_> = merged
            .into_iter()
            .map(|((p, topic), count)| (p, TopicCount { topic, count }))
            .collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.1.topic.cmp(b.1.topic)));
        v
    }

    /// Why a hit is out of default results (`retired`, `superseded by ID`), when it is
    /// (it came from a search with `include_hidden`).
    pub fn hidden_note(&self, h: &ProjectHit<'_>) -> Option<String> {
        let src = self
            .sources
            .iter()
            .find(|s| s.project == h.project && s.overlay == h.pending)?;
        hidden_note(&src.index, h.hit.entry.doc)
    }

    /// Entries in default results over all sources (retired and superseded ones left out).
    pub fn entry_count(&self) -> u64 {
        self.sources
            .iter()
            .map(|s| u64::from(s.index.visible_len()))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use helix_index_format::{BuildInfo, Entry, Mode};

    /// Entries with Zipf-distributed words (as in real text), so document frequencies and
    /// lengths differ a lot between the artifacts they are split over.
    fn entries(n: usize, seed: u64) -> Vec<Entry> {
        let mut state = seed;
        let mut rand = move |m: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m as u64) as usize
        };
        let vocab: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let cumulative: Vec<f64> = (0..vocab.len())
            .scan(0.0, |acc, i| {
                *acc += 1.0 / (i as f64 + 1.0);
                Some(*acc)
            })
            .collect();
        let total = *cumulative.last().unwrap();
        (0..n)
            .map(|i| {
                let mut word = || {
                    let x = rand(1_000_000) as f64 / 1_000_000.0 * total;
                    vocab[cumulative.partition_point(|&c| c < x).min(vocab.len() - 1)].clone()
                };
                let title: Vec<String> = (0..3).map(|_| word()).collect();
                let body: Vec<String> = (0..5 + i % 70).map(|_| word()).collect();
                Entry {
                    id: format!("t{}/e{seed}-{i:04}.md", i % 5),
                    topic: format!("t{}", i % 5),
                    title: title.join(" "),
                    body: body.join(" "),
                    date: (i % 3 != 0).then_some(1_700_000_000 - (i as i64 * 7919 % 900) * 86_400),
                    ..Entry::default()
                }
            })
            .collect()
    }

    fn write(dir: &Path, name: &str, entries: &[Entry]) -> Index<Mmap> {
        let info = BuildInfo {
            project: name.into(),
            build_time: 1_700_000_000,
            ..BuildInfo::default()
        };
        let path = dir.join(format!("{name}.hix"));
        std::fs::write(&path, helix_index_format::build(entries, &info).unwrap()).unwrap();
        open_index(&path).unwrap().unwrap()
    }

    /// Two followed projects and a pending overlay, of very different sizes and document
    /// lengths, rank exactly as one artifact holding all their entries: the same hits in
    /// the same order with bit-identical scores, whatever the mode, limit, topic filter or
    /// recency boost. With raw per-artifact statistics they do not (checked too).
    #[test]
    fn shared_statistics_merge_ranks_like_one_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let big = entries(1500, 0x2545_f491_4f6c_dd1d);
        let mut small = entries(60, 0x9e37_79b9_7f4a_7c15);
        for e in &mut small {
            // Short notes: the case raw scores get wrong.
            e.body.truncate(e.body.len().min(12));
        }
        let pending = entries(4, 0xdead_beef_cafe_f00d);
        let mut all = big.clone();
        all.extend(small.iter().cloned());
        all.extend(pending.iter().cloned());
        let one = write(dir.path(), "one", &all);
        let source = |project: &str, overlay, index| Source {
            project: project.into(),
            overlay,
            index,
        };
        let merged = Knowledge {
            root: dir.path().into(),
            sources: vec![
                source("a", false, write(dir.path(), "a", &big)),
                source("a", true, write(dir.path(), "a-pending", &pending)),
                source("b", false, write(dir.path(), "b", &small)),
            ],
        };
        let single = Knowledge {
            root: dir.path().into(),
            sources: vec![source("one", false, one)],
        };
        let key = |h: &ProjectHit<'_>| {
            (
                h.hit.entry.id.to_owned(),
                h.hit.score.to_bits(),
                h.hit.full,
                h.hit.matched,
            )
        };
        let mut differs_without = 0;
        for (qi, q) in [
            "w3 w40",
            "w1 w2 w150",
            "w0",
            "w77 w120 w7 w9",
            "w199 nosuch w5",
            "w12 w12 w30",
        ]
        .into_iter()
        .enumerate()
        {
            for mode in [Mode::Or, Mode::AndThenOr] {
                for (limit, topic, now) in [
                    (3, None, None),
                    (10, None, Some(1_700_000_000)),
                    (50, Some("t2"), Some(1_700_000_000)),
                    (1000, None, None),
                ] {
                    let opts = SearchOptions {
                        limit,
                        mode,
                        topic: topic.map(str::to_owned),
                        now,
                        recency_weight: 0.5,
                        ..SearchOptions::default()
                    };
                    let got: Vec<_> = merged.search(q, &opts).iter().map(key).collect();
                    let want: Vec<_> = single.search(q, &opts).iter().map(key).collect();
                    assert!(!want.is_empty(), "{q}");
                    assert_eq!(got, want, "query {qi} {q:?}, {opts:?}");
                    // Raw per-artifact scores, merged by score alone: what this replaced.
                    let mut raw: Vec<(String, f32)> = Vec::new();
                    for s in &merged.sources {
                        for h in s.index.search(q, &opts).unwrap() {
                            raw.push((h.entry.id.to_owned(), h.score));
                        }
                    }
                    raw.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    raw.truncate(limit);
                    let raw: Vec<String> = raw.into_iter().map(|(id, _)| id).collect();
                    let want: Vec<String> = want.into_iter().map(|k| k.0).collect();
                    differs_without += usize::from(raw != want);
                }
            }
        }
        assert!(
            differs_without > 10,
            "raw scores should rank differently ({differs_without})"
        );
    }

    /// A project filter searches that project's artifacts alone (with their statistics).
    #[test]
    fn project_filter_keeps_one_project() {
        let dir = tempfile::tempdir().unwrap();
        let a = entries(200, 7);
        let b = entries(200, 11);
        let k = Knowledge {
            root: dir.path().into(),
            sources: vec![
                Source {
                    project: "a".into(),
                    overlay: false,
                    index: write(dir.path(), "a", &a),
                },
                Source {
                    project: "b".into(),
                    overlay: false,
                    index: write(dir.path(), "b", &b),
                },
            ],
        };
        let opts = SearchOptions::default();
        let both = k.find("w1 w4", &opts, None);
        assert!(
            both.hits.iter().any(|h| h.project == "a")
                && both.hits.iter().any(|h| h.project == "b")
        );
        let only_b = k.find("w1 w4", &opts, Some("b"));
        assert!(!only_b.hits.is_empty() && only_b.hits.iter().all(|h| h.project == "b"));
        assert_eq!(only_b.stats.docs, 200);
        assert_eq!(both.stats.docs, 400);
    }
}
