//! Zero-copy reader over any `AsRef<[u8]>`: O(1) `open` that checks bounds, a full
//! `verify`, and the queries, all answered from the bytes without building anything.
//!
//! Invariant: after `open`, every section lies inside the file and has a whole number of
//! rows; everything else (string refs, row numbers, postings) is checked at each access,
//! so damaged bytes give a [`FormatError`], never a panic.

mod sources;
mod topics;

use std::ops::Range;

use zerocopy::FromBytes;

use crate::error::FormatError;
use crate::layout::*;
use crate::postings::Postings;

/// Bytes of an artifact's start that [`declared_len`] needs.
pub const DECLARED_LEN_PREFIX: usize = std::mem::offset_of!(Header, file_len) + 8;

/// The total length an artifact declares in its header, from its first
/// [`DECLARED_LEN_PREFIX`] bytes: lets a download be bounded (and a server that sends
/// something else be refused) before the rest arrives. Checks the magic and version only.
pub fn declared_len(prefix: &[u8]) -> Result<u64, FormatError> {
    let got = prefix.len() as u64;
    let too_small = FormatError::TooSmall {
        expected: DECLARED_LEN_PREFIX as u64,
        got,
    };
    let head = prefix.get(..DECLARED_LEN_PREFIX).ok_or(too_small)?;
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&head[..8]);
    if magic != MAGIC {
        return Err(FormatError::BadMagic { got: magic });
    }
    let word = |at: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&head[at..at + 4]);
        u32::from_le_bytes(b)
    };
    let (version, needs) = (
        word(std::mem::offset_of!(Header, version)),
        word(std::mem::offset_of!(Header, min_reader_version)),
    );
    if version < MIN_READ_VERSION {
        return Err(FormatError::UnsupportedVersion {
            got: version,
            min: MIN_READ_VERSION,
            max: FORMAT_VERSION,
        });
    }
    if needs > FORMAT_VERSION {
        return Err(FormatError::TooNew {
            needs,
            max: FORMAT_VERSION,
        });
    }
    let at = std::mem::offset_of!(Header, file_len);
    let mut len = [0u8; 8];
    len.copy_from_slice(&head[at..at + 8]);
    Ok(u64::from_le_bytes(len))
}

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
    /// Tokens indexed for the entry (BM25's document length).
    pub doc_len: u32,
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
    header: Header,
    /// Byte range of each section, indexed by `SectionKind as usize - 1` (an optional
    /// section that is absent is empty).
    sections: [Range<usize>; SECTION_KINDS],
    /// The parts of a `VECTORS` section of a known scheme, checked by `open`.
    vectors: Option<crate::vectors::Geometry>,
}

impl<B: AsRef<[u8]>> Index<B> {
    /// Checks size, magic, version range, section bounds and counts. O(1) in the file size.
    pub fn open(bytes: B) -> Result<Self, FormatError> {
        let data = bytes.as_ref();
        let len = data.len();
        let min = size_of::<Header>() + FOOTER_LEN;
        if len < min {
            return Err(FormatError::TooSmall {
                expected: min as u64,
                got: len as u64,
            });
        }
        let (header, _) = Header::read_from_prefix(data).map_err(|_| FormatError::TooSmall {
            expected: min as u64,
            got: len as u64,
        })?;
        if header.magic != MAGIC {
            return Err(FormatError::BadMagic { got: header.magic });
        }
        let version = header.version.get();
        if version < MIN_READ_VERSION {
            return Err(FormatError::UnsupportedVersion {
                got: version,
                min: MIN_READ_VERSION,
                max: FORMAT_VERSION,
            });
        }
        let needs = header.min_reader_version.get();
        if needs > FORMAT_VERSION {
            return Err(FormatError::TooNew {
                needs,
                max: FORMAT_VERSION,
            });
        }
        if header.file_len.get() != len as u64 {
            return Err(FormatError::LengthMismatch {
                expected: header.file_len.get(),
                got: len as u64,
            });
        }
        let count = header.section_count.get();
        if count > MAX_SECTIONS {
            return Err(FormatError::Count {
                what: "sections",
                max: MAX_SECTIONS.into(),
                got: count.into(),
            });
        }
        let table_end = size_of::<Header>() + count as usize * size_of::<SectionEntry>();
        let body_end = len - FOOTER_LEN;
        if table_end > body_end {
            return Err(FormatError::TooSmall {
                expected: (table_end + FOOTER_LEN) as u64,
                got: len as u64,
            });
        }
        let table = <[SectionEntry]>::ref_from_bytes(&data[size_of::<Header>()..table_end])
            .map_err(|_| FormatError::Corrupt {
                what: "section table",
                offset: size_of::<Header>() as u64,
            })?;

        let mut sections: [Option<Range<usize>>; SECTION_KINDS] = Default::default();
        for s in table {
            // Unknown kinds are skipped: a newer minor writer may add optional sections.
            let Some(kind) = SectionKind::known().find(|k| *k as u32 == s.kind.get()) else {
                continue;
            };
            let bad = |reason: String| FormatError::Section {
                kind: kind.name(),
                reason,
            };
            let start = s.offset.get();
            let end = start
                .checked_add(s.len.get())
                .ok_or_else(|| bad(format!("offset {start} + length {} overflows", s.len.get())))?;
            if start < table_end as u64 || end > body_end as u64 {
                return Err(bad(format!(
                    "bytes {start}..{end} outside the data area {table_end}..{body_end}"
                )));
            }
            if let Some(row) = kind.row_size()
                && s.len.get() % row as u64 != 0
            {
                return Err(bad(format!(
                    "length {} is not a multiple of the {row}-byte row",
                    s.len.get()
                )));
            }
            let slot = &mut sections[kind as usize - 1];
            if slot.is_some() {
                return Err(bad("appears twice".into()));
            }
            *slot = Some(start as usize..end as usize);
        }
        let mut ranges: [Range<usize>; SECTION_KINDS] = Default::default();
        for kind in SectionKind::ALL {
            ranges[kind as usize - 1] = sections[kind as usize - 1]
                .clone()
                .ok_or(FormatError::MissingSection { kind: kind.name() })?;
        }
        for kind in SectionKind::OPTIONAL {
            if let Some(r) = sections[kind as usize - 1].clone() {
                ranges[kind as usize - 1] = r;
            }
        }
        let vectors = crate::vectors::geometry(
            data,
            ranges[SectionKind::Vectors as usize - 1].clone(),
            header.entry_count.get(),
        )?;
        let index = Index {
            bytes,
            header,
            sections: ranges,
            vectors,
        };
        let rows = |kind: SectionKind| {
            let r = &index.sections[kind as usize - 1];
            ((r.end - r.start) / kind.row_size().unwrap_or(1)) as u64
        };
        let expect = |kind: SectionKind, what: &'static str, got: u32| {
            if rows(kind) == u64::from(got) {
                Ok(())
            } else {
                Err(FormatError::Section {
                    kind: kind.name(),
                    reason: format!("{} rows, header says {got} {what}", rows(kind)),
                })
            }
        };
        expect(SectionKind::Entries, "entries", header.entry_count.get())?;
        expect(SectionKind::Terms, "terms", header.term_count.get())?;
        expect(SectionKind::Topics, "topics", header.topic_count.get())?;
        expect(SectionKind::Sources, "sources", header.source_count.get())?;
        expect(SectionKind::FileNames, "sources", header.source_count.get())?;
        expect(SectionKind::DocLens, "entries", header.entry_count.get())?;
        if rows(SectionKind::Blobs) != 0 {
            expect(SectionKind::Blobs, "entries", header.entry_count.get())?;
        }
        Ok(index)
    }

    /// What the index was opened on (a memory map, a `Vec`, …).
    pub fn backing(&self) -> &B {
        &self.bytes
    }

    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    pub fn meta(&self) -> Result<Meta<'_>, FormatError> {
        let h = &self.header;
        let data = self.bytes();
        let mut stored = [0u8; 8];
        stored.copy_from_slice(&data[data.len() - FOOTER_LEN..]);
        Ok(Meta {
            format_version: h.version.get(),
            tokenizer_version: h.tokenizer_version.get(),
            project: self.str_at(h.project, "project name")?,
            commit: self.str_at(h.commit, "commit id")?,
            generation: h.generation.get(),
            build_time: h.build_time.get(),
            entry_count: h.entry_count.get(),
            term_count: h.term_count.get(),
            topic_count: h.topic_count.get(),
            source_count: h.source_count.get(),
            checksum: u64::from_le_bytes(stored),
        })
    }

    /// Number of entries.
    pub fn len(&self) -> u32 {
        self.header.entry_count.get()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry by row number.
    pub fn entry(&self, doc: u32) -> Result<EntryRef<'_>, FormatError> {
        let r = self.record(doc)?;
        let topic = self
            .topic_rows()
            .get(r.topic.get() as usize)
            .ok_or(FormatError::Corrupt {
                what: "entry topic",
                offset: u64::from(doc),
            })?;
        let author = self.str_at(r.author, "author")?;
        let date = r.date.get();
        Ok(EntryRef {
            doc,
            id: self.str_at(r.id, "entry id")?,
            topic: self.str_at(topic.name, "topic name")?,
            title: self.str_at(r.title, "title")?,
            body: self.str_at(r.body, "body")?,
            author: (!author.is_empty()).then_some(author),
            date: (date != NO_DATE).then_some(date),
            tags: self.list(r.tags)?,
            sources: self.list(r.sources)?,
            extra_json: self.str_at(r.extra, "extra front matter")?,
            doc_len: r.doc_len.get(),
        })
    }

    /// The git blob id of entry `doc`'s file (an edit's base), when the artifact records it.
    pub fn blob(&self, doc: u32) -> Result<Option<&str>, FormatError> {
        let rows: &[StrRef] = self.rows(SectionKind::Blobs);
        match rows.get(doc as usize) {
            Some(r) => Ok(Some(self.str_at(*r, "blob id")?).filter(|s| !s.is_empty())),
            None => Ok(None),
        }
    }

    /// The entries out of default results (retired or superseded), sorted by document.
    pub fn hidden_rows(&self) -> &[HiddenRecord] {
        self.rows(SectionKind::Hidden)
    }

    /// Why entry `doc` is out of default results, if it is (binary search of `HIDDEN`).
    pub fn hidden(&self, doc: u32) -> Option<crate::entry::Hidden> {
        let rows = self.hidden_rows();
        let at = rows.binary_search_by_key(&doc, |r| r.doc.get()).ok()?;
        Some(match rows[at].by.get() {
            RETIRED => crate::entry::Hidden::Retired,
            by => crate::entry::Hidden::SupersededBy(by as usize),
        })
    }

    /// The entries' sentence embeddings (the `VECTORS` section), when the artifact has them
    /// in a scheme this reader knows.
    pub fn vectors(&self) -> Option<crate::vectors::Vectors<'_>> {
        let g = self.vectors.as_ref()?;
        crate::vectors::Vectors::new(
            self.bytes(),
            g,
            self.entry_rows(),
            self.topic_rows(),
            self.section(SectionKind::Strings),
            self.hidden_rows(),
        )
    }

    /// Entry by id (its repository path), by binary search.
    pub fn entry_by_id(&self, id: &str) -> Result<Option<EntryRef<'_>>, FormatError> {
        let rows = self.entry_rows();
        let (mut lo, mut hi) = (0usize, rows.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.bytes_at(rows[mid].id, "entry id")?.cmp(id.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.entry(mid as u32).map(Some),
            }
        }
        Ok(None)
    }

    // ---- crate-internal accessors (bounds-checked) ----

    /// The byte ranges every search reads from, whatever the query: the term dictionary's
    /// rows and texts, the posting lists, the document lengths and the entry rows (for the
    /// hits; their bodies, read for snippets, are not included). Computed from the header
    /// alone, so asking for them reads nothing. A caller can ask the OS to page them in
    /// ahead of the first search; this crate does no I/O itself.
    pub fn search_ranges(&self) -> Vec<Range<usize>> {
        let range = |kind: SectionKind| self.sections[kind as usize - 1].clone();
        let mut out = vec![range(SectionKind::Terms)];
        // The builder writes the term texts last, so they end `STRINGS`. Their total length
        // is not recorded, and reading the dictionary to learn it would wait for the disk,
        // so take 16 bytes per term (real vocabularies average under 10).
        let strings = range(SectionKind::Strings);
        let tail = (self.header.term_count.get() as usize).saturating_mul(16);
        out.push(strings.end.saturating_sub(tail).max(strings.start)..strings.end);
        out.push(range(SectionKind::Postings));
        out.push(range(SectionKind::DocLens));
        out.push(range(SectionKind::Entries));
        out
    }

    pub(crate) fn section(&self, kind: SectionKind) -> &[u8] {
        // Ranges were checked against the file in `open`.
        &self.bytes()[self.sections[kind as usize - 1].clone()]
    }

    fn rows<T: FromBytes + zerocopy::KnownLayout + zerocopy::Immutable>(
        &self,
        kind: SectionKind,
    ) -> &[T] {
        // `open` checked that the length is a whole number of rows; an empty slice otherwise.
        <[T]>::ref_from_bytes(self.section(kind)).unwrap_or(&[])
    }

    pub(crate) fn doc_lens(&self) -> &[zerocopy::little_endian::U32] {
        self.rows(SectionKind::DocLens)
    }

    pub(crate) fn entry_rows(&self) -> &[EntryRecord] {
        self.rows(SectionKind::Entries)
    }

    pub(crate) fn term_rows(&self) -> &[TermRecord] {
        self.rows(SectionKind::Terms)
    }

    pub(crate) fn topic_rows(&self) -> &[TopicRecord] {
        self.rows(SectionKind::Topics)
    }

    pub(crate) fn key_rows(&self, kind: SectionKind) -> &[KeyRecord] {
        self.rows(kind)
    }

    pub(crate) fn record(&self, doc: u32) -> Result<&EntryRecord, FormatError> {
        self.entry_rows()
            .get(doc as usize)
            .ok_or(FormatError::Count {
                what: "entry row",
                max: u64::from(self.len()),
                got: u64::from(doc),
            })
    }

    /// Sum of all entries' indexed token counts (BM25's average document length).
    pub fn total_tokens(&self) -> u64 {
        self.header.total_tokens.get()
    }

    /// The tokenizer version that produced the terms: queries must be tokenized the same
    /// way ([`crate::Query::for_index`]).
    pub fn tokenizer_version(&self) -> u32 {
        self.header.tokenizer_version.get()
    }

    pub(crate) fn bytes_at(&self, r: StrRef, what: &'static str) -> Result<&[u8], FormatError> {
        let strings = self.section(SectionKind::Strings);
        let start = r.offset.get() as usize;
        start
            .checked_add(r.len.get() as usize)
            .and_then(|end| strings.get(start..end))
            .ok_or(FormatError::Corrupt {
                what,
                offset: u64::from(r.offset.get()),
            })
    }

    pub(crate) fn str_at(&self, r: StrRef, what: &'static str) -> Result<&str, FormatError> {
        std::str::from_utf8(self.bytes_at(r, what)?).map_err(|_| FormatError::Utf8 { what })
    }

    fn list(&self, r: Range32) -> Result<Vec<&str>, FormatError> {
        let lists: &[StrRef] = self.rows(SectionKind::Lists);
        let start = r.start.get() as usize;
        let rows = start
            .checked_add(r.count.get() as usize)
            .and_then(|end| lists.get(start..end))
            .ok_or(FormatError::Corrupt {
                what: "tag or source list",
                offset: u64::from(r.start.get()),
            })?;
        rows.iter()
            .map(|s| self.str_at(*s, "tag or source"))
            .collect()
    }

    /// Row of `term` in the dictionary.
    pub(crate) fn find_term(&self, term: &str) -> Result<Option<&TermRecord>, FormatError> {
        let rows = self.term_rows();
        let (mut lo, mut hi) = (0usize, rows.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.bytes_at(rows[mid].term, "term")?.cmp(term.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(&rows[mid])),
            }
        }
        Ok(None)
    }

    /// Decodes a term's posting list: `(doc, tf)` in ascending doc order.
    pub(crate) fn postings(&self, t: &TermRecord) -> Result<Postings<'_>, FormatError> {
        let all = self.section(SectionKind::Postings);
        let start = t.postings_offset.get() as usize;
        let bytes = start
            .checked_add(t.postings_len.get() as usize)
            .and_then(|end| all.get(start..end))
            .ok_or(FormatError::Corrupt {
                what: "posting list",
                offset: u64::from(t.postings_offset.get()),
            })?;
        Ok(Postings::new(bytes, start, self.len()))
    }
}
