//! `Index::verify`: the full check a client runs once when a download enters its cache —
//! the checksum, then every record, string and posting list against the header's counts,
//! and every stored vector.

use std::collections::BTreeMap;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::FormatError;
use crate::layout::*;
use crate::read::Index;

impl<B: AsRef<[u8]>> Index<B> {
    /// Full check: checksum, then every record, string and posting list.
    pub fn verify(&self) -> Result<(), FormatError> {
        let data = self.bytes();
        let body_end = data.len() - FOOTER_LEN;
        let mut stored = [0u8; 8];
        stored.copy_from_slice(&data[body_end..]);
        let expected = u64::from_le_bytes(stored);
        let got = xxh3_64(&data[..body_end]);
        if expected != got {
            return Err(FormatError::Checksum { expected, got });
        }
        self.meta()?;
        let n = self.len();
        let mut total_tokens = 0u64;
        let mut prev_id: Option<&str> = None;
        let mut per_topic: BTreeMap<u32, u32> = BTreeMap::new();
        for doc in 0..n {
            let e = self.entry(doc)?;
            if prev_id.is_some_and(|p| p >= e.id) {
                return Err(FormatError::Section {
                    kind: "ENTRIES",
                    reason: format!("ids not sorted at row {doc}"),
                });
            }
            prev_id = Some(e.id);
            if !e.extra_json.is_empty()
                && serde_json::from_str::<serde_json::Value>(e.extra_json).is_err()
            {
                return Err(FormatError::Corrupt {
                    what: "extra front matter JSON",
                    offset: u64::from(doc),
                });
            }
            let rec = self.record(doc)?;
            total_tokens += u64::from(rec.doc_len.get());
            if self.doc_lens().get(doc as usize).map(|l| l.get()) != Some(rec.doc_len.get()) {
                return Err(FormatError::Section {
                    kind: "DOC_LENS",
                    reason: format!("length of row {doc} differs"),
                });
            }
            *per_topic.entry(rec.topic.get()).or_default() += 1;
        }
        if total_tokens != self.total_tokens() {
            return Err(FormatError::Corrupt {
                what: "total token count",
                offset: 64,
            });
        }
        let topics = self.topic_rows();
        let mut prev: Option<&str> = None;
        for (row, t) in topics.iter().enumerate() {
            let name = self.str_at(t.name, "topic name")?;
            if prev.is_some_and(|p| p >= name) {
                return Err(FormatError::Section {
                    kind: "TOPICS",
                    reason: format!("not sorted at row {row}"),
                });
            }
            prev = Some(name);
            if per_topic.get(&(row as u32)).copied().unwrap_or(0) != t.entry_count.get() {
                return Err(FormatError::Section {
                    kind: "TOPICS",
                    reason: format!("count of {name} is wrong"),
                });
            }
        }
        let terms = self.term_rows();
        for (row, t) in terms.iter().enumerate() {
            let term = self.bytes_at(t.term, "term")?;
            std::str::from_utf8(term).map_err(|_| FormatError::Utf8 { what: "term" })?;
            if row > 0 && self.bytes_at(terms[row - 1].term, "term")? >= term {
                return Err(FormatError::Section {
                    kind: "TERMS",
                    reason: format!("not sorted at row {row}"),
                });
            }
            let mut count = 0u32;
            for p in self.postings(t)? {
                let (_, tf) = p?;
                if tf == 0 {
                    return Err(FormatError::Corrupt {
                        what: "term frequency",
                        offset: u64::from(t.postings_offset.get()),
                    });
                }
                count += 1;
            }
            if count != t.doc_freq.get() {
                return Err(FormatError::Section {
                    kind: "TERMS",
                    reason: format!("doc_freq wrong at row {row}"),
                });
            }
        }
        for kind in [SectionKind::Sources, SectionKind::FileNames] {
            let rows = self.key_rows(kind);
            for (row, k) in rows.iter().enumerate() {
                self.str_at(k.key, "source path")?;
                if k.entry.get() >= n {
                    return Err(FormatError::Section {
                        kind: kind.name(),
                        reason: format!("entry out of range at row {row}"),
                    });
                }
                if row > 0 {
                    let a = (
                        self.bytes_at(rows[row - 1].key, "source")?,
                        rows[row - 1].entry.get(),
                    );
                    if a > (self.bytes_at(k.key, "source")?, k.entry.get()) {
                        return Err(FormatError::Section {
                            kind: kind.name(),
                            reason: format!("not sorted at row {row}"),
                        });
                    }
                }
            }
        }
        for doc in 0..n {
            self.blob(doc)?;
        }
        let hidden = self.hidden_rows();
        for (row, h) in hidden.iter().enumerate() {
            let (doc, by) = (h.doc.get(), h.by.get());
            let bad = |reason: String| FormatError::Section {
                kind: "HIDDEN",
                reason,
            };
            if doc >= n || (by != RETIRED && (by >= n || by == doc)) {
                return Err(bad(format!("entry out of range at row {row}")));
            }
            if row > 0 && hidden[row - 1].doc.get() >= doc {
                return Err(bad(format!("not sorted at row {row}")));
            }
        }
        if let Some(vectors) = self.vectors() {
            vectors.verify()?;
        }
        Ok(())
    }
}
