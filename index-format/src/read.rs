//! Zero-copy reader over any `AsRef<[u8]>`: O(1) `open` that checks bounds, a full
//! `verify`, and the queries, all answered from the bytes without building anything.

use crate::error::FormatError;
use crate::search::{Hit, SearchOptions};

/// Header facts of an open artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta<'a> {
    pub format_version: u32,
    pub tokenizer_version: u32,
    pub project: &'a str,
    pub commit: &'a str,
    pub generation: u64,
    pub build_time: i64,
    pub entry_count: u32,
    pub term_count: u32,
    pub topic_count: u32,
    pub source_count: u32,
    /// The trailing xxh3-64 checksum as stored (checked only by `verify`).
    pub checksum: u64,
}

/// One entry, borrowed from the artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRef<'a> {
    /// Row number (document number) in this artifact.
    pub doc: u32,
    pub id: &'a str,
    pub topic: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub author: Option<&'a str>,
    /// Unix seconds.
    pub date: Option<i64>,
    pub tags: Vec<&'a str>,
    pub sources: Vec<&'a str>,
    /// Other front-matter keys as a JSON object text (`""` when none).
    pub extra_json: &'a str,
}

/// A topic and how many entries it holds (or, for `related_topics`, how many match).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicCount<'a> {
    pub topic: &'a str,
    pub count: u32,
}

/// An open artifact.
#[derive(Debug)]
pub struct Index<B> {
    bytes: B,
}

impl<B: AsRef<[u8]>> Index<B> {
    /// Checks size, magic, version range, section bounds and counts. O(1) in the file size.
    pub fn open(bytes: B) -> Result<Self, FormatError> {
        let _ = bytes;
        unimplemented!("being written")
    }
    /// Full check: checksum and every record, string and posting list.
    pub fn verify(&self) -> Result<(), FormatError> {
        unimplemented!("being written")
    }
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }
    pub fn meta(&self) -> Result<Meta<'_>, FormatError> {
        unimplemented!("being written")
    }
    /// Number of entries.
    pub fn len(&self) -> u32 {
        unimplemented!("being written")
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry by row number.
    pub fn entry(&self, doc: u32) -> Result<EntryRef<'_>, FormatError> {
        let _ = doc;
        unimplemented!("being written")
    }
    /// Entry by id (its repository path), by binary search.
    pub fn entry_by_id(&self, id: &str) -> Result<Option<EntryRef<'_>>, FormatError> {
        let _ = id;
        unimplemented!("being written")
    }
    /// BM25 search; hits best first.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit<'_>>, FormatError> {
        let _ = (query, opts);
        unimplemented!("being written")
    }
    /// Entries that list exactly this repository-relative source path.
    pub fn by_source(&self, path: &str) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let _ = path;
        unimplemented!("being written")
    }
    /// Entries with a source whose file name (last path component) is `name`.
    pub fn by_file_name(&self, name: &str) -> Result<Vec<EntryRef<'_>>, FormatError> {
        let _ = name;
        unimplemented!("being written")
    }
    /// All topics with their entry counts, sorted by name.
    pub fn topics(&self) -> Result<Vec<TopicCount<'_>>, FormatError> {
        unimplemented!("being written")
    }
    /// Topics of entries whose sources are `path` itself or lie in `path`'s directory,
    /// most shared first.
    pub fn related_topics(&self, path: &str) -> Result<Vec<TopicCount<'_>>, FormatError> {
        let _ = path;
        unimplemented!("being written")
    }
}
