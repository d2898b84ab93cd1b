//! Read side of the client: the cached artifacts of every followed project plus the pending
//! overlays, memory-mapped and queried together. No network, no locks, no index building.

use crate::config::ProjectConfig;
use helix_index_format::{EntryRef, Hit, Index, SearchOptions, TopicCount};
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
}

/// Everything the client can read locally for one `.helix.toml`.
#[derive(Debug)]
pub struct Knowledge {
    root: PathBuf,
    sources: Vec<Source>,
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
            let overlay = crate::paths::pending_dir(project).join(OVERLAY_FILE);
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
        let mut all: Vec<ProjectHit<'_>> = Vec::new();
        for src in &self.sources {
            let Ok(hits) = src.index.search(query, opts) else {
                continue;
            };
            for hit in hits {
                if self.shadowed(src, hit.entry.id) {
                    continue;
                }
                all.push(ProjectHit {
                    project: &src.project,
                    hit,
                });
            }
        }
        all.sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score));
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
        all
    }

    /// One entry by id: `project:id` or a bare id (first match; overlay before cache).
    pub fn read(&self, id: &str) -> Option<(&str, EntryRef<'_>)> {
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
                return Some((src.project.as_str(), e));
            }
        }
        None
    }

    /// Topics with counts per project (overlay counts added to the project's), by project then name.
    pub fn topics(&self) -> Vec<(&str, TopicCount<'_>)> {
        let mut merged: BTreeMap<(&str, &str), u32> = BTreeMap::new();
        for src in &self.sources {
            let Ok(topics) = src.index.topics() else {
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
        f: impl Fn(&'a Index<Mmap>) -> Result<Vec<EntryRef<'a>>, helix_index_format::FormatError>,
    ) -> Vec<(&'a str, EntryRef<'a>)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut order: Vec<&Source> = self.sources.iter().filter(|s| s.overlay).collect();
        order.extend(self.sources.iter().filter(|s| !s.overlay));
        for src in order {
            let Ok(entries) = f(&src.index) else { continue };
            for e in entries {
                if seen.insert((src.project.as_str(), e.id)) {
                    out.push((src.project.as_str(), e));
                }
            }
        }
        out
    }

    /// Entries listing exactly this repository-relative source path.
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
                if e.topic == topic && seen.insert((src.project.as_str(), e.id)) {
                    out.push((src.project.as_str(), e));
                }
            }
        }
        out.sort_by(|a, b| b.1.date.cmp(&a.1.date).then(a.1.id.cmp(b.1.id)));
        out
    }

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

    /// Total entries over all sources.
    pub fn entry_count(&self) -> u64 {
        self.sources.iter().map(|s| u64::from(s.index.len())).sum()
    }
}
