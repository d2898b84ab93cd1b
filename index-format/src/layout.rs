//! The artifact's byte layout: fixed little-endian records, read in place with zerocopy.
//! docs/index-format.md draws the same layout; keep the two in step.

use zerocopy::little_endian::{I64, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub const MAGIC: [u8; 8] = *b"HELIXIDX";
/// Format version this code writes.
pub const FORMAT_VERSION: u32 = 2;
/// Oldest format version this code still reads.
pub const MIN_READ_VERSION: u32 = 1;
/// Trailing checksum: xxh3-64 of every byte before it.
pub const FOOTER_LEN: usize = 8;
/// Section kinds this code knows (the largest kind number).
pub const SECTION_KINDS: usize = 12;
/// Upper bound on sections in the table; more is corruption.
pub const MAX_SECTIONS: u32 = 32;
/// Date value that means "unknown".
pub const NO_DATE: i64 = i64::MIN;

/// Fixed header at offset 0.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Header {
    pub magic: [u8; 8],
    /// Format version of this file.
    pub version: U32,
    /// Oldest reader format version that can read this file.
    pub min_reader_version: U32,
    pub tokenizer_version: U32,
    pub section_count: U32,
    /// Total file length including the footer.
    pub file_len: U64,
    pub generation: U64,
    /// Unix seconds, as given to the builder (not read from a clock).
    pub build_time: I64,
    pub entry_count: U32,
    pub term_count: U32,
    pub topic_count: U32,
    pub source_count: U32,
    /// Sum of all entries' token counts, for BM25's average document length.
    pub total_tokens: U64,
    /// Project name and source commit, as string refs into the `STRINGS` section.
    pub project: StrRef,
    pub commit: StrRef,
    pub reserved: [u8; 8],
}

/// One row of the section table, which follows the header.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SectionEntry {
    pub kind: U32,
    pub reserved: U32,
    pub offset: U64,
    pub len: U64,
}

/// A string inside the `STRINGS` section: byte offset and length.
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct StrRef {
    pub offset: U32,
    pub len: U32,
}

/// A range of rows in another table (`LISTS`).
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Range32 {
    pub start: U32,
    pub count: U32,
}

/// One entry; rows sorted by `id`, so the row number is the document number.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct EntryRecord {
    pub id: StrRef,
    pub title: StrRef,
    pub body: StrRef,
    /// Empty when unknown.
    pub author: StrRef,
    /// JSON object of other front-matter keys; empty when none.
    pub extra: StrRef,
    /// Row in `TOPICS`.
    pub topic: U32,
    /// Number of tokens indexed for this entry (BM25 document length).
    pub doc_len: U32,
    /// Unix seconds, or [`NO_DATE`].
    pub date: I64,
    /// Rows in `LISTS`.
    pub tags: Range32,
    pub sources: Range32,
}

/// One term of the sorted dictionary.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TermRecord {
    pub term: StrRef,
    /// Number of entries containing the term.
    pub doc_freq: U32,
    /// Byte range in `POSTINGS`: (doc delta, term frequency) pairs as LEB128 varints.
    pub postings_offset: U32,
    pub postings_len: U32,
}

/// One topic, sorted by name.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TopicRecord {
    pub name: StrRef,
    pub entry_count: U32,
}

/// A (key, entry) pair; `SOURCES` is sorted by full source path, `FILE_NAMES` by file name.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct KeyRecord {
    pub key: StrRef,
    pub entry: U32,
}

/// One entry out of default results (`HIDDEN`, sorted by `doc`): retired, or superseded.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct HiddenRecord {
    pub doc: U32,
    /// The row of the entry that supersedes it, or [`RETIRED`].
    pub by: U32,
}

/// `HiddenRecord::by` of a retired entry.
pub const RETIRED: u32 = u32::MAX;

/// The head of the optional `VECTORS` section; the model id's bytes, the per-row scales
/// and the codes follow (docs/index-format.md draws the section).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct VectorsHeader {
    /// Components per vector.
    pub dim: U32,
    /// How the vectors are coded: [`VECTOR_SCHEME_I8`]. A scheme a reader does not know
    /// reads as no vectors.
    pub scheme: U32,
    /// Rows: the artifact's entry count.
    pub count: U32,
    /// Length of the model id (UTF-8) that follows this header.
    pub model_len: U32,
}

/// `VectorsHeader::scheme`: each vector L2-normalised, coded as `dim` int8 components
/// (symmetric, round to nearest, the largest component ±127), with an f32 scale per row
/// that makes the decoded vector unit length; scale 0 means the entry has no vector.
pub const VECTOR_SCHEME_I8: u32 = 1;
/// Largest vector dimension a writer writes and a reader accepts.
pub const MAX_VECTOR_DIM: u32 = 4096;
/// Longest model id, in bytes.
pub const MAX_MODEL_ID_LEN: u32 = 256;

/// Section kinds. Numbers are part of the format; never reuse one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SectionKind {
    Strings = 1,
    Entries = 2,
    Lists = 3,
    Terms = 4,
    Postings = 5,
    Topics = 6,
    Sources = 7,
    FileNames = 8,
    /// Each entry's token count as a dense u32 array: BM25 reads it once per posting, so it
    /// is kept apart from the 72-byte entry rows for cache locality.
    DocLens = 9,
    /// Optional (format 2): each entry's git blob id as a `StrRef` (empty when unknown),
    /// one per entry row; absent when no entry has one.
    Blobs = 10,
    /// Optional (format 2): [`HiddenRecord`]s, sorted by document; absent when none.
    Hidden = 11,
    /// Optional (format 2, later): one quantised sentence embedding per entry row, after a
    /// [`VectorsHeader`]; absent when the build was given no embeddings.
    Vectors = 12,
}

impl SectionKind {
    pub const ALL: [SectionKind; 9] = [
        SectionKind::Strings,
        SectionKind::Entries,
        SectionKind::Lists,
        SectionKind::Terms,
        SectionKind::Postings,
        SectionKind::Topics,
        SectionKind::Sources,
        SectionKind::FileNames,
        SectionKind::DocLens,
    ];

    /// Sections a reader accepts but does not require (older artifacts lack them).
    pub const OPTIONAL: [SectionKind; 3] = [
        SectionKind::Blobs,
        SectionKind::Hidden,
        SectionKind::Vectors,
    ];

    /// Every kind this code knows.
    pub fn known() -> impl Iterator<Item = SectionKind> {
        Self::ALL.into_iter().chain(Self::OPTIONAL)
    }

    pub fn name(self) -> &'static str {
        match self {
            SectionKind::Strings => "STRINGS",
            SectionKind::Entries => "ENTRIES",
            SectionKind::Lists => "LISTS",
            SectionKind::Terms => "TERMS",
            SectionKind::Postings => "POSTINGS",
            SectionKind::Topics => "TOPICS",
            SectionKind::Sources => "SOURCES",
            SectionKind::FileNames => "FILE_NAMES",
            SectionKind::DocLens => "DOC_LENS",
            SectionKind::Blobs => "BLOBS",
            SectionKind::Hidden => "HIDDEN",
            SectionKind::Vectors => "VECTORS",
        }
    }

    /// Size of one row, for table sections; `None` for byte sections.
    pub fn row_size(self) -> Option<usize> {
        match self {
            SectionKind::Strings | SectionKind::Postings | SectionKind::Vectors => None,
            SectionKind::Entries => Some(size_of::<EntryRecord>()),
            SectionKind::Lists => Some(size_of::<StrRef>()),
            SectionKind::Terms => Some(size_of::<TermRecord>()),
            SectionKind::Topics => Some(size_of::<TopicRecord>()),
            SectionKind::Sources | SectionKind::FileNames => Some(size_of::<KeyRecord>()),
            SectionKind::DocLens => Some(size_of::<U32>()),
            SectionKind::Blobs => Some(size_of::<StrRef>()),
            SectionKind::Hidden => Some(size_of::<HiddenRecord>()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sizes_are_fixed() {
        assert_eq!(size_of::<Header>(), 96);
        assert_eq!(size_of::<SectionEntry>(), 24);
        assert_eq!(size_of::<EntryRecord>(), 72);
        assert_eq!(size_of::<TermRecord>(), 20);
        assert_eq!(size_of::<TopicRecord>(), 12);
        assert_eq!(size_of::<KeyRecord>(), 12);
        assert_eq!(size_of::<HiddenRecord>(), 8);
        assert_eq!(size_of::<VectorsHeader>(), 16);
    }
}
