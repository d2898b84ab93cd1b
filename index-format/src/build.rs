//! Builder: entries in, artifact bytes out. Deterministic: the same entries and
//! [`BuildInfo`] always give the same bytes; the checksum is computed while writing.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::Xxh3;
use zerocopy::IntoBytes;
use zerocopy::little_endian::{I64, U32, U64};

use crate::entry::Entry;
use crate::layout::*;
use crate::tokenize::{TOKENIZER_VERSION, tokenize_with};
use crate::vectors::Embeddings;

/// Field weights (BM25F-style, Robertson et al. 2004, one length normalisation): a title
/// word counts this many times in the term frequency of the entry. The title field holds
/// the title and the front-matter `name` and `description`; tags weigh the same. Part of
/// [`TOKENIZER_VERSION`] 2 (the topic in the tags field: 3): changing a weight changes the
/// artifact's term frequencies.
pub const TITLE_WEIGHT: u32 = 2;
/// Weight of a tag word (see [`TITLE_WEIGHT`]); the body weighs 1.
pub const TAG_WEIGHT: u32 = 2;

/// The front-matter `name` and `description` of an entry, indexed with its title: what a
/// person calls the entry and says it is about. `name` is skipped when it is the title.
pub fn title_field_extras(entry: &Entry) -> impl Iterator<Item = &str> {
    title_extras(&entry.title, |key| entry.extra.get(key)?.as_str())
}

/// [`title_field_extras`] over any store of extra keys (`get` returns a key's text).
pub fn title_extras<'a>(
    title: &str,
    get: impl Fn(&str) -> Option<&'a str>,
) -> impl Iterator<Item = &'a str> {
    let title = title.trim().to_owned();
    ["name", "description"].into_iter().filter_map(move |key| {
        let text = get(key)?.trim();
        let repeats_title = key == "name" && text == title;
        (!text.is_empty() && !repeats_title).then_some(text)
    })
}

/// What the artifact header records besides the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildInfo {
    pub project: String,
    /// Source commit id (hex), empty when not built from git.
    pub commit: String,
    /// Monotonic per project.
    pub generation: u64,
    /// Unix seconds; passed in so that builds are reproducible.
    pub build_time: i64,
}

impl BuildInfo {
    /// What `meta`'s artifact was built with: rebuilding its entries with it (with other
    /// sections, say) gives the same header.
    pub fn of(meta: &crate::Meta<'_>) -> BuildInfo {
        BuildInfo {
            project: meta.project.to_string(),
            commit: meta.commit.to_string(),
            generation: meta.generation,
            build_time: meta.build_time,
        }
    }
}

/// Why entries could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("duplicate entry id {id}")]
    DuplicateId { id: String },
    #[error("artifact would exceed the format's 4 GiB section limit ({what})")]
    TooLarge { what: &'static str },
    #[error("embedding dimension {dim} outside 1..={max}", max = MAX_VECTOR_DIM)]
    EmbeddingDimension { dim: usize },
    #[error("embedding model id of {len} bytes, longer than {max}", max = MAX_MODEL_ID_LEN)]
    EmbeddingModel { len: usize },
    #[error("vector of {id} has {got} components, the embeddings {expected}")]
    VectorDimension {
        id: String,
        expected: usize,
        got: usize,
    },
    #[error("vector of {id}: {error}")]
    BadVector {
        id: String,
        error: crate::vectors::VectorError,
    },
}

/// Compiles `entries` (any order) into artifact bytes. Large inputs are tokenized on up to
/// four threads (scoped; the output does not depend on how many).
pub fn build(entries: &[Entry], info: &BuildInfo) -> Result<Vec<u8>, BuildError> {
    build_with_embeddings(entries, info, None)
}

/// [`build`], plus the entries' sentence embeddings in the optional `VECTORS` section
/// (quantised to int8, one row per entry; docs/index-format.md). `None` writes no section:
/// the same bytes as [`build`]. The vectors are looked up by entry id, so the bytes do not
/// depend on the input order either.
pub fn build_with_embeddings(
    entries: &[Entry],
    info: &BuildInfo,
    embeddings: Option<&Embeddings>,
) -> Result<Vec<u8>, BuildError> {
    let threads = if entries.len() < PARALLEL_MIN_DOCS {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
    };
    build_with_threads(entries, info, embeddings, threads)
}

fn build_with_threads(
    entries: &[Entry],
    info: &BuildInfo,
    embeddings: Option<&Embeddings>,
    threads: usize,
) -> Result<Vec<u8>, BuildError> {
    let mut docs: Vec<&Entry> = entries.iter().collect();
    docs.sort_unstable_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = docs.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(BuildError::DuplicateId {
            id: w[0].id.clone(),
        });
    }
    let n_docs = u32_of(docs.len(), "entry count")?;

    let mut strings = Strings::default();
    let project = strings.add(&info.project)?;
    let commit = strings.add(&info.commit)?;

    // Topics, sorted by name; each entry refers to its topic's row.
    let mut topic_counts: BTreeMap<&str, u32> = BTreeMap::new();
    for d in &docs {
        *topic_counts.entry(d.topic.as_str()).or_default() += 1;
    }
    let topic_row: HashMap<&str, u32> = topic_counts
        .keys()
        .enumerate()
        .map(|(i, t)| (*t, i as u32))
        .collect();
    let mut topics = Vec::with_capacity(topic_counts.len());
    for (name, count) in &topic_counts {
        topics.push(TopicRecord {
            name: strings.add(name)?,
            entry_count: U32::new(*count),
        });
    }

    // Inverted index, built in parallel over contiguous document ranges.
    let Inverted {
        dict,
        postings,
        doc_lens,
    } = invert_parallel(&docs, threads)?;
    let total_tokens: u64 = doc_lens.iter().map(|l| u64::from(l.get())).sum();
    let mut records = Vec::with_capacity(docs.len());
    let mut lists: Vec<StrRef> = Vec::new();
    let mut source_keys: Vec<(StrRef, u32, usize)> = Vec::new();

    for (doc, d) in docs.iter().enumerate() {
        let doc = doc as u32;
        let doc_len = doc_lens[doc as usize].get();
        let tags_start = u32_of(lists.len(), "list rows")?;
        for t in &d.tags {
            lists.push(strings.add(t)?);
        }
        let sources_start = u32_of(lists.len(), "list rows")?;
        for s in &d.sources {
            let r = strings.add(s)?;
            lists.push(r);
            let name_len = s.rsplit('/').next().map_or(s.len(), str::len);
            source_keys.push((r, doc, name_len));
        }
        let extra = if d.extra.is_empty() {
            String::new()
        } else {
            serde_json::to_string(&d.extra).unwrap_or_default()
        };
        records.push(EntryRecord {
            id: strings.add(&d.id)?,
            title: strings.add(&d.title)?,
            body: strings.add(&d.body)?,
            author: strings.add(d.author.as_deref().unwrap_or(""))?,
            extra: strings.add(&extra)?,
            topic: U32::new(topic_row[d.topic.as_str()]),
            doc_len: U32::new(doc_len),
            date: I64::new(d.date.unwrap_or(NO_DATE)),
            tags: Range32 {
                start: U32::new(tags_start),
                count: U32::new(d.tags.len() as u32),
            },
            sources: Range32 {
                start: U32::new(sources_start),
                count: U32::new(u32_of(d.sources.len(), "sources of one entry")?),
            },
        });
    }

    // Dictionary in byte order, postings laid out in the same order.
    let mut terms: Vec<(&str, u32)> = dict.iter().map(|(t, &id)| (&**t, id)).collect();
    terms.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut postings_bytes = Vec::new();
    let mut term_records = Vec::with_capacity(terms.len());
    for (term, id) in &terms {
        let list = &postings[*id as usize];
        let offset = u32_of(postings_bytes.len(), "postings")?;
        crate::postings::encode(&mut postings_bytes, list);
        term_records.push(TermRecord {
            term: strings.add(term)?,
            doc_freq: U32::new(list.len() as u32),
            postings_offset: U32::new(offset),
            postings_len: U32::new(u32_of(postings_bytes.len() - offset as usize, "postings")?),
        });
    }
    u32_of(postings_bytes.len(), "postings")?;

    let key = |r: &StrRef| strings.get(r);
    let mut sources: Vec<KeyRecord> = source_keys
        .iter()
        .map(|(r, doc, _)| KeyRecord {
            key: *r,
            entry: U32::new(*doc),
        })
        .collect();
    sources
        .sort_unstable_by(|a, b| (key(&a.key), a.entry.get()).cmp(&(key(&b.key), b.entry.get())));
    let mut file_names: Vec<KeyRecord> = source_keys
        .iter()
        .map(|(r, doc, name_len)| {
            let skip = r.len.get() - *name_len as u32;
            let name = StrRef {
                offset: U32::new(r.offset.get() + skip),
                len: U32::new(*name_len as u32),
            };
            KeyRecord {
                key: name,
                entry: U32::new(*doc),
            }
        })
        .collect();
    file_names
        .sort_unstable_by(|a, b| (key(&a.key), a.entry.get()).cmp(&(key(&b.key), b.entry.get())));

    // Format 2's optional sections, written only when they hold something.
    let mut blobs: Vec<StrRef> = Vec::new();
    if docs.iter().any(|d| !d.blob.is_empty()) {
        for d in &docs {
            blobs.push(strings.add(&d.blob)?);
        }
    }
    let hidden: Vec<HiddenRecord> = crate::entry::hidden_entries(&docs)
        .into_iter()
        .map(|(doc, why)| HiddenRecord {
            doc: U32::new(doc as u32),
            by: U32::new(match why {
                crate::entry::Hidden::Retired => RETIRED,
                crate::entry::Hidden::SupersededBy(by) => by as u32,
            }),
        })
        .collect();
    let vectors = match embeddings {
        Some(e) => crate::vectors::section_bytes(e, docs.iter().map(|d| d.id.as_str()))?,
        None => Vec::new(),
    };

    // Assemble: header, section table, sections, checksum.
    let mut sections: Vec<(SectionKind, &[u8])> = vec![
        (SectionKind::Strings, &strings.bytes),
        (SectionKind::Entries, records.as_bytes()),
        (SectionKind::Lists, lists.as_bytes()),
        (SectionKind::Terms, term_records.as_bytes()),
        (SectionKind::Postings, &postings_bytes),
        (SectionKind::Topics, topics.as_bytes()),
        (SectionKind::Sources, sources.as_bytes()),
        (SectionKind::FileNames, file_names.as_bytes()),
        (SectionKind::DocLens, doc_lens.as_bytes()),
    ];
    if !blobs.is_empty() {
        sections.push((SectionKind::Blobs, blobs.as_bytes()));
    }
    if !hidden.is_empty() {
        sections.push((SectionKind::Hidden, hidden.as_bytes()));
    }
    if !vectors.is_empty() {
        sections.push((SectionKind::Vectors, &vectors));
    }
    let table_len = sections.len() * size_of::<SectionEntry>();
    let mut offset = (size_of::<Header>() + table_len) as u64;
    let mut table = Vec::with_capacity(sections.len());
    for (kind, bytes) in &sections {
        table.push(SectionEntry {
            kind: U32::new(*kind as u32),
            reserved: U32::new(0),
            offset: U64::new(offset),
            len: U64::new(bytes.len() as u64),
        });
        offset += bytes.len() as u64;
    }
    let file_len = offset + FOOTER_LEN as u64;
    let header = Header {
        magic: MAGIC,
        version: U32::new(FORMAT_VERSION),
        min_reader_version: U32::new(MIN_READ_VERSION),
        tokenizer_version: U32::new(TOKENIZER_VERSION),
        section_count: U32::new(sections.len() as u32),
        file_len: U64::new(file_len),
        generation: U64::new(info.generation),
        build_time: I64::new(info.build_time),
        entry_count: U32::new(n_docs),
        term_count: U32::new(u32_of(term_records.len(), "terms")?),
        topic_count: U32::new(u32_of(topics.len(), "topics")?),
        source_count: U32::new(u32_of(sources.len(), "sources")?),
        total_tokens: U64::new(total_tokens),
        project,
        commit,
        reserved: [0; 8],
    };

    let mut out = Vec::with_capacity(file_len as usize);
    let mut hasher = Xxh3::new();
    let mut write = |bytes: &[u8]| {
        hasher.update(bytes);
        out.extend_from_slice(bytes);
    };
    write(header.as_bytes());
    write(table.as_bytes());
    for (_, bytes) in &sections {
        write(bytes);
    }
    let checksum = hasher.digest();
    out.extend_from_slice(&checksum.to_le_bytes());
    debug_assert_eq!(out.len() as u64, file_len);
    Ok(out)
}

type Dict = HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>;

/// Term dictionary, posting lists by term id, and token count per document.
struct Inverted {
    dict: Dict,
    postings: Vec<Vec<(u32, u32)>>,
    doc_lens: Vec<U32>,
}

/// Below this many entries one thread is faster than starting two.
const PARALLEL_MIN_DOCS: usize = 512;

/// Splits the documents into one contiguous range per core, inverts each on its own thread,
/// and merges in range order, so the result does not depend on scheduling.
fn invert_parallel(docs: &[&Entry], threads: usize) -> Result<Inverted, BuildError> {
    if threads <= 1 || docs.is_empty() {
        return invert(docs, 0);
    }
    let chunk = docs.len().div_ceil(threads);
    let parts: Vec<Result<Inverted, BuildError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = docs
            .chunks(chunk)
            .enumerate()
            .map(|(i, range)| scope.spawn(move || invert(range, (i * chunk) as u32)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut parts = parts.into_iter();
    let mut merged = parts.next().unwrap_or_else(|| invert(&[], 0))?;
    for part in parts {
        let part = part?;
        let mut remap = vec![0u32; part.postings.len()];
        for (term, local) in part.dict {
            let next = merged.postings.len() as u32;
            let global = *merged.dict.entry(term).or_insert(next);
            if global == next {
                merged.postings.push(Vec::new());
            }
            remap[local as usize] = global;
        }
        // Later ranges hold later documents: appending keeps every list sorted.
        for (local, list) in part.postings.into_iter().enumerate() {
            merged.postings[remap[local] as usize].extend(list);
        }
        merged.doc_lens.extend(part.doc_lens);
    }
    Ok(merged)
}

/// Inverts `docs`, numbering them from `first_doc`.
fn invert(docs: &[&Entry], first_doc: u32) -> Result<Inverted, BuildError> {
    let mut dict = Dict::default();
    let mut postings: Vec<Vec<(u32, u32)>> = Vec::new();
    // Per-document term frequencies by term id, reset through `touched` after each entry.
    let mut tf: Vec<u32> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    let mut doc_lens = Vec::with_capacity(docs.len());
    for (i, d) in docs.iter().enumerate() {
        let doc = first_doc + i as u32;
        let mut doc_len = 0usize;
        let mut add_text = |text: &str, weight: u32| {
            tokenize_with(text, |tok, _| {
                let id = match dict.get(tok) {
                    Some(&id) => id,
                    None => {
                        let id = postings.len() as u32;
                        dict.insert(tok.into(), id);
                        postings.push(Vec::new());
                        tf.push(0);
                        id
                    }
                };
                let count = &mut tf[id as usize];
                if *count == 0 {
                    touched.push(id);
                }
                *count += weight;
                doc_len += 1;
            })
        };
        add_text(&d.title, TITLE_WEIGHT);
        for extra in title_field_extras(d) {
            add_text(extra, TITLE_WEIGHT);
        }
        for t in &d.tags {
            add_text(t, TAG_WEIGHT);
        }
        // The topic folder (`vim`, `react-testing-library`) says what area an entry is
        // about as a tag does; prompts name it ("in vim, …") where the entry does not.
        add_text(&d.topic, TAG_WEIGHT);
        add_text(&d.body, 1);
        doc_lens.push(U32::new(u32_of(doc_len, "tokens in one entry")?));
        // Documents are visited in order, so each posting list stays sorted by doc.
        for id in touched.drain(..) {
            postings[id as usize].push((doc, std::mem::take(&mut tf[id as usize])));
        }
    }
    Ok(Inverted {
        dict,
        postings,
        doc_lens,
    })
}

fn u32_of(n: usize, what: &'static str) -> Result<u32, BuildError> {
    u32::try_from(n).map_err(|_| BuildError::TooLarge { what })
}

/// The `STRINGS` section under construction.
#[derive(Default)]
struct Strings {
    bytes: Vec<u8>,
}

impl Strings {
    fn add(&mut self, s: &str) -> Result<StrRef, BuildError> {
        let offset = u32_of(self.bytes.len(), "strings")?;
        let len = u32_of(s.len(), "strings")?;
        self.bytes.extend_from_slice(s.as_bytes());
        u32_of(self.bytes.len(), "strings")?;
        Ok(StrRef {
            offset: U32::new(offset),
            len: U32::new(len),
        })
    }

    fn get(&self, r: &StrRef) -> &[u8] {
        let start = r.offset.get() as usize;
        &self.bytes[start..start + r.len.get() as usize]
    }
}

/// rustc's FxHash: the dictionary sees millions of short keys, where SipHash dominates.
#[derive(Default)]
struct FxHasher {
    hash: u64,
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.hash = (self.hash.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.hash = (self.hash.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.write(&[b]);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_count_does_not_change_the_bytes() {
        let words = [
            "cache",
            "rebase",
            "linker",
            "CachedEntry",
            "tokio",
            "rename",
            "postgres",
            "index",
        ];
        let entries: Vec<Entry> = (0..PARALLEL_MIN_DOCS + 777)
            .map(|i| Entry {
                id: format!("t{}/e{i}.md", i % 7),
                topic: format!("t{}", i % 7),
                title: format!("{} {}", words[i % 8], words[(i / 8) % 8]),
                body: format!(
                    "{} word{} {} and {}",
                    words[(i * 3) % 8],
                    i % 97,
                    i,
                    words[(i * 5) % 8]
                ),
                ..Entry::default()
            })
            .collect();
        let info = BuildInfo::default();
        let embeddings = Embeddings {
            model: "m".into(),
            dim: 3,
            vectors: entries
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 3 != 0)
                .map(|(i, e)| (e.id.clone(), vec![i as f32, 1.0, -(i as f32) / 7.0]))
                .collect(),
        };
        for embeddings in [None, Some(&embeddings)] {
            let one = build_with_threads(&entries, &info, embeddings, 1).unwrap();
            for threads in [2, 3, 4] {
                assert!(
                    one == build_with_threads(&entries, &info, embeddings, threads).unwrap(),
                    "{threads} threads"
                );
            }
        }
    }
}
