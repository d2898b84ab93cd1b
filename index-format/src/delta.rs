//! The delta form of an artifact: its table columns that hold running offsets or row numbers
//! stored as differences from the row before, so that one inserted entry no longer changes
//! every row after it. A bijection on any bytes, used only to make patches small.
//!
//! Why: one new entry shifts every later string offset (each `ENTRIES` row), every later
//! posting offset (each `TERMS` row) and every later document number. Stored as differences,
//! those columns are the same as in the previous artifact except around the insertion, and
//! a byte-level patch (zstd with the previous artifact as reference) finds long matches
//! again: docs/benchmarks.md measures about 6 to 1 at 10k entries (39,277 B against 244,202 B
//! for the raw artifacts). The layout itself is untouched
//! (docs/http-api.md, delta sync, says how server and client use it).

use std::mem::offset_of;

use crate::layout::{
    EntryRecord, Header, KeyRecord, MAGIC, SectionEntry, SectionKind, StrRef, TermRecord,
    TopicRecord,
};

/// The u32 columns coded as differences, per section kind: (kind, byte offsets in a row).
/// Columns that grow along the rows (string and posting offsets, list starts, topic rows of
/// id-sorted entries, entry rows of the key tables) differ little from row to row.
fn columns(kind: u32) -> &'static [usize] {
    const STR: usize = offset_of!(StrRef, offset);
    const ENTRIES: &[usize] = &[
        offset_of!(EntryRecord, id) + STR,
        offset_of!(EntryRecord, title) + STR,
        offset_of!(EntryRecord, body) + STR,
        offset_of!(EntryRecord, author) + STR,
        offset_of!(EntryRecord, extra) + STR,
        offset_of!(EntryRecord, topic),
        offset_of!(EntryRecord, tags),
        offset_of!(EntryRecord, sources),
    ];
    const LISTS: &[usize] = &[STR];
    const TERMS: &[usize] = &[
        offset_of!(TermRecord, term) + STR,
        offset_of!(TermRecord, postings_offset),
    ];
    const TOPICS: &[usize] = &[offset_of!(TopicRecord, name) + STR];
    const KEYS: &[usize] = &[
        offset_of!(KeyRecord, key) + STR,
        offset_of!(KeyRecord, entry),
    ];
    match kind {
        k if k == SectionKind::Entries as u32 => ENTRIES,
        k if k == SectionKind::Lists as u32 => LISTS,
        k if k == SectionKind::Terms as u32 => TERMS,
        k if k == SectionKind::Topics as u32 => TOPICS,
        k if k == SectionKind::Sources as u32 || k == SectionKind::FileNames as u32 => KEYS,
        _ => &[],
    }
}

/// The table sections of `bytes` to transform: (kind, start, row count, row size). Nothing
/// for bytes that are not an artifact; a section that is out of bounds or not a whole
/// number of rows is left alone. Reads only the header and the section table, which the
/// transform never changes, so both directions find the same sections.
fn tables(bytes: &[u8]) -> Vec<(u32, usize, usize, usize)> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let dword = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    let head = size_of::<Header>();
    if bytes.len() < head || bytes[..MAGIC.len()] != MAGIC {
        return Vec::new();
    }
    let Some(count) = word(offset_of!(Header, section_count)) else {
        return Vec::new();
    };
    let row = size_of::<SectionEntry>();
    let mut out = Vec::new();
    for i in 0..count.min(crate::layout::MAX_SECTIONS) as usize {
        let at = head + i * row;
        let (Some(kind), Some(offset), Some(len)) = (
            word(at + offset_of!(SectionEntry, kind)),
            dword(at + offset_of!(SectionEntry, offset)),
            dword(at + offset_of!(SectionEntry, len)),
        ) else {
            break;
        };
        let size = SectionKind::ALL
            .iter()
            .find(|k| **k as u32 == kind)
            .and_then(|k| k.row_size());
        let (Some(size), Ok(start), Ok(len)) =
            (size, usize::try_from(offset), usize::try_from(len))
        else {
            continue;
        };
        let fits = start >= head && start.checked_add(len).is_some_and(|e| e <= bytes.len());
        if fits && len % size == 0 && !columns(kind).is_empty() {
            out.push((kind, start, len / size, size));
        }
    }
    // Sections that overlap would make the two directions disagree: transform none.
    let mut spans: Vec<(usize, usize)> = out.iter().map(|t| (t.1, t.1 + t.2 * t.3)).collect();
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return Vec::new();
    }
    out
}

fn column(
    bytes: &mut [u8],
    (kind, start, rows, size): (u32, usize, usize, usize),
    f: impl Fn(u32, u32) -> (u32, u32),
) {
    for &col in columns(kind) {
        let mut carry = 0u32;
        for r in 0..rows {
            let at = start + r * size + col;
            let cell: &mut [u8; 4] = (&mut bytes[at..at + 4]).try_into().expect("4 bytes");
            let (new, next) = f(u32::from_le_bytes(*cell), carry);
            *cell = new.to_le_bytes();
            carry = next;
        }
    }
}

/// Rewrites an artifact into its delta form, in place (same length).
pub fn to_delta_form(bytes: &mut [u8]) {
    for t in tables(bytes) {
        column(bytes, t, |v, prev| (v.wrapping_sub(prev), v));
    }
}

/// The inverse of [`to_delta_form`], in place: `from_delta_form(to_delta_form(x)) == x`
/// for any bytes.
pub fn from_delta_form(bytes: &mut [u8]) {
    for t in tables(bytes) {
        column(bytes, t, |d, prev| {
            let v = d.wrapping_add(prev);
            (v, v)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BuildInfo, Entry, build};

    fn artifact(n: usize, extra: Option<&str>) -> Vec<u8> {
        let mut entries: Vec<Entry> = (0..n)
            .map(|i| Entry {
                id: format!("t{}/e{i:04}.md", i % 7),
                topic: format!("t{}", i % 7),
                title: format!("Entry {i}"),
                body: format!("body of entry {i} with words w{} w{}", i % 13, i % 29),
                tags: vec![format!("tag{}", i % 5)],
                sources: vec![format!("src/f{}.rs", i % 11)],
                ..Default::default()
            })
            .collect();
        if let Some(id) = extra {
            entries.push(Entry {
                id: id.into(),
                topic: id.split('/').next().unwrap_or("x").into(),
                title: "Inserted".into(),
                body: "a new entry w1 w2".into(),
                ..Default::default()
            });
        }
        let info = BuildInfo {
            project: "p".into(),
            commit: "c".into(),
            generation: 1,
            build_time: 0,
        };
        build(&entries, &info).expect("build")
    }

    #[test]
    fn round_trips_artifacts_and_arbitrary_bytes() {
        let a = artifact(300, None);
        let mut x = a.clone();
        to_delta_form(&mut x);
        assert_ne!(x, a, "an artifact's columns change");
        assert_eq!(x.len(), a.len());
        from_delta_form(&mut x);
        assert_eq!(x, a);
        // Damaged or foreign bytes round-trip too (or are left alone).
        let mut cut = a[..a.len() / 2].to_vec();
        let orig = cut.clone();
        to_delta_form(&mut cut);
        from_delta_form(&mut cut);
        assert_eq!(cut, orig);
        for junk in [&b""[..], b"HELIXIDX", &[0xff; 200][..]] {
            let mut j = junk.to_vec();
            to_delta_form(&mut j);
            from_delta_form(&mut j);
            assert_eq!(j, junk);
        }
    }

    #[test]
    fn an_inserted_entry_leaves_the_other_rows_alone() {
        let (a, b) = (artifact(300, None), artifact(300, Some("t0/aaa-new.md")));
        let differing = |a: &[u8], b: &[u8]| {
            // Bytes of the ENTRIES section that differ between the two artifacts.
            let ta = tables(a);
            let tb = tables(b);
            let e = SectionKind::Entries as u32;
            let (_, sa, na, size) = *ta.iter().find(|t| t.0 == e).expect("entries");
            let (_, sb, _, _) = *tb.iter().find(|t| t.0 == e).expect("entries");
            // Compare the rows after the insertion point (row 1 onwards of a vs 2 of b).
            (1..na)
                .filter(|r| {
                    a[sa + r * size..sa + (r + 1) * size]
                        != b[sb + (r + 1) * size..sb + (r + 2) * size]
                })
                .count()
        };
        assert!(differing(&a, &b) > 250, "raw rows all shift");
        let (mut da, mut db) = (a.clone(), b.clone());
        to_delta_form(&mut da);
        to_delta_form(&mut db);
        assert!(differing(&da, &db) <= 2, "delta-form rows match again");
    }
}
