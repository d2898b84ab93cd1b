//! Lookups by source path — exact, by file name, by glob source — and the topics related to
//! a path, answered by binary search of the sorted `SOURCES` and `FILE_NAMES` key tables.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{EntryRef, Index, TopicCount};
use crate::error::FormatError;
use crate::layout::{KeyRecord, SectionKind};

impl<B: AsRef<[u8]>> Index<B> {
    /// Entries that list exactly this repository-relative source path.
    pub fn by_source(&self, path: &str) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let path = normalize_query_path(path);
        let range = self.key_range(SectionKind::Sources, path.as_bytes(), false)?;
        self.entries_of(SectionKind::Sources, range)
    }

    /// Entries with a source whose file name (last path component) is `name`.
    pub fn by_file_name(&self, name: &str) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let name = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let range = self.key_range(SectionKind::FileNames, name.as_bytes(), false)?;
        self.entries_of(SectionKind::FileNames, range)
    }

    /// Entries with a glob source (`applyTo: '**/*.ts'`) that matches this
    /// repository-relative path. Globs are stored as sources; only those whose literal
    /// prefix is a prefix of the path (or, for a glob without `/`, of its file name) are
    /// looked at, found by narrowing the sorted tables one character at a time.
    pub fn by_source_glob(&self, path: &str) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let path = normalize_query_path(path);
        if path.is_empty() {
            return Ok(Vec::new());
        }
        let name = path.rsplit('/').next().unwrap_or(&path);
        let mut docs = Vec::new();
        let mut probe = Vec::with_capacity(path.len() + 1);
        for (kind, key) in [
            (SectionKind::Sources, &path[..]),
            (SectionKind::FileNames, name),
        ] {
            let (rows, key) = (self.key_rows(kind), key.as_bytes());
            // Invariant: every row in `within` starts with `key[..len]`.
            let mut within = 0..rows.len();
            for len in 0..=key.len() {
                for meta in [b'*', b'?', b'[', b'{'] {
                    probe.clear();
                    probe.extend_from_slice(&key[..len]);
                    probe.push(meta);
                    let hits = self.prefix_range(kind, within.clone(), &probe)?;
                    docs.extend(rows[hits].iter().map(|k| k.entry.get()));
                }
                if len == key.len() {
                    break;
                }
                within = self.prefix_range(kind, within, &key[..=len])?;
                if within.is_empty() {
                    break;
                }
            }
        }
        docs.sort_unstable();
        docs.dedup();
        let mut out = Vec::new();
        for doc in docs {
            let e = self.entry(doc)?;
            if e.sources
                .iter()
                .any(|s| crate::entry::is_glob(s) && crate::entry::glob_matches(s, &path))
            {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// Topics of entries whose sources are `path` itself or lie in `path`'s directory (or
    /// below it), most shared first. A path at the repository root matches only itself.
    pub fn related_topics(&self, path: &str) -> Result<Vec<TopicCount<'_>>, FormatError> {
        let path = normalize_query_path(path);
        let mut docs = Vec::new();
        let exact = self.key_range(SectionKind::Sources, path.as_bytes(), false)?;
        docs.extend(
            self.key_rows(SectionKind::Sources)[exact]
                .iter()
                .map(|k| k.entry.get()),
        );
        if let Some((dir, _)) = path.rsplit_once('/') {
            let prefix = format!("{dir}/");
            let range = self.key_range(SectionKind::Sources, prefix.as_bytes(), true)?;
            docs.extend(
                self.key_rows(SectionKind::Sources)[range]
                    .iter()
                    .map(|k| k.entry.get()),
            );
        }
        docs.sort_unstable();
        docs.dedup();
        let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
        for doc in docs {
            *counts.entry(self.record(doc)?.topic.get()).or_default() += 1;
        }
        let mut out = Vec::with_capacity(counts.len());
        for (row, count) in counts {
            let t = self
                .topic_rows()
                .get(row as usize)
                .ok_or(FormatError::Corrupt {
                    what: "entry topic",
                    offset: u64::from(row),
                })?;
            out.push(TopicCount {
                topic: self.str_at(t.name, "topic name")?,
                count,
            });
        }
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.topic.cmp(b.topic)));
        Ok(out)
    }
    /// Rows of a sorted key table equal to `key` (or starting with it, when `prefix`).
    fn key_range(
        &self,
        kind: SectionKind,
        key: &[u8],
        prefix: bool,
    ) -> Result<Range<usize>, FormatError> {
        let all = 0..self.key_rows(kind).len();
        if prefix {
            return self.prefix_range(kind, all, key);
        }
        let rows = self.key_rows(kind);
        let mut err = None;
        let start = partition(rows.len(), |i| self.key_of(rows, i, &mut err) < key);
        let end = partition(rows.len(), |i| self.key_of(rows, i, &mut err) <= key);
        match err {
            Some(e) => Err(e),
            None => Ok(start..end.max(start)),
        }
    }

    /// Rows of `range` (of a sorted key table) whose key starts with `prefix`, by two
    /// binary searches.
    fn prefix_range(
        &self,
        kind: SectionKind,
        range: Range<usize>,
        prefix: &[u8],
    ) -> Result<Range<usize>, FormatError> {
        let rows = &self.key_rows(kind)[range.clone()];
        let mut err = None;
        let start = partition(rows.len(), |i| self.key_of(rows, i, &mut err) < prefix);
        let end = partition(rows.len(), |i| {
            let k = self.key_of(rows, i, &mut err);
            k < prefix || k.starts_with(prefix)
        });
        match err {
            Some(e) => Err(e),
            None => Ok(range.start + start..range.start + end.max(start)),
        }
    }

    /// The key of row `i` of a key table; a damaged one reads as empty (keeping the binary
    /// search going) and is reported through `err`.
    fn key_of(&self, rows: &[KeyRecord], i: usize, err: &mut Option<FormatError>) -> &[u8] {
        self.bytes_at(rows[i].key, "source").unwrap_or_else(|e| {
            *err = Some(e);
            &[]
        })
    }

    fn entries_of(
        &self,
        kind: SectionKind,
        range: Range<usize>,
    ) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let mut docs: Vec<u32> = self.key_rows(kind)[range]
            .iter()
            .map(|k| k.entry.get())
            .collect();
        docs.dedup();
        docs.into_iter().map(|d| self.entry(d)).collect()
    }
}

/// The first index in `0..len` where `below` turns false (it must be true, then false).
fn partition(len: usize, mut below: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Query paths arrive as typed by people and tools (`./src/a.rs`, `src\\a.rs:42`, `/src/a.rs`):
/// the rule that made the stored sources canonical makes the query so too.
fn normalize_query_path(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    crate::entry::normalise_source(p.trim_start_matches('/')).unwrap_or_default()
}
