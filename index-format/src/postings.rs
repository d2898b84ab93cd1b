//! Posting lists: the encoder the builder uses and the decoder searches and `verify` use,
//! side by side. A list is `(doc delta, term frequency)` varint pairs in document order.

use crate::error::FormatError;

/// Appends `list` (`(doc, tf)` in increasing doc order) to `out` in the stored form.
pub(crate) fn encode(out: &mut Vec<u8>, list: &[(u32, u32)]) {
    let mut prev = 0;
    for (i, &(doc, tf)) in list.iter().enumerate() {
        put_varint(out, if i == 0 { doc } else { doc - prev });
        put_varint(out, tf);
        prev = doc;
    }
}

/// Appends `v` as an unsigned LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it; `None` on truncation or overflow.
#[inline]
pub(crate) fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut v: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        let chunk = u32::from(b & 0x7f);
        if shift == 28 && chunk > 0x0f {
            return None;
        }
        v |= chunk << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Iterator over one posting list; yields an error on truncated or out-of-range data.
#[derive(Debug)]
pub(crate) struct Postings<'a> {
    bytes: &'a [u8],
    pos: usize,
    doc: u32,
    first: bool,
    n_docs: u32,
    base: usize,
    /// Offset of the damaged posting that ended the list early.
    failed_at: Option<usize>,
}

impl<'a> Postings<'a> {
    /// The list stored in `bytes`, which start at offset `base` of the postings section;
    /// documents must be below `n_docs`.
    pub(crate) fn new(bytes: &'a [u8], base: usize, n_docs: u32) -> Postings<'a> {
        Postings {
            bytes,
            pos: 0,
            doc: 0,
            first: true,
            n_docs,
            base,
            failed_at: None,
        }
    }

    /// The next `(doc, tf)`; `None` at the end of the list and after damage, which
    /// [`Postings::error`] then reports. Returning no `Result` keeps the scoring loop's
    /// per-posting step to a few instructions.
    #[inline(always)]
    pub(crate) fn step(&mut self) -> Option<(u32, u32)> {
        let at = self.pos;
        // Most deltas and frequencies fit one byte.
        let (delta, tf) = match self.bytes.get(at..at + 2) {
            Some(&[d, t]) if d < 0x80 && t < 0x80 => {
                self.pos += 2;
                (u32::from(d), u32::from(t))
            }
            _ => return self.step_slow(),
        };
        self.accept(at, delta, tf)
    }

    #[inline(never)]
    fn step_slow(&mut self) -> Option<(u32, u32)> {
        let at = self.pos;
        if at >= self.bytes.len() {
            return None;
        }
        match (
            get_varint(self.bytes, &mut self.pos),
            get_varint(self.bytes, &mut self.pos),
        ) {
            (Some(delta), Some(tf)) => self.accept(at, delta, tf),
            _ => self.fail(at),
        }
    }

    #[inline(always)]
    fn accept(&mut self, at: usize, delta: u32, tf: u32) -> Option<(u32, u32)> {
        let doc = if self.first {
            delta
        } else if delta == 0 {
            return self.fail(at);
        } else {
            match self.doc.checked_add(delta) {
                Some(doc) => doc,
                None => return self.fail(at),
            }
        };
        if doc >= self.n_docs {
            return self.fail(at);
        }
        self.first = false;
        self.doc = doc;
        Some((doc, tf))
    }

    #[cold]
    fn fail(&mut self, at: usize) -> Option<(u32, u32)> {
        self.pos = self.bytes.len();
        self.failed_at.get_or_insert(self.base + at);
        None
    }

    /// Why the list ended early, if it did.
    pub(crate) fn error(&self) -> Option<FormatError> {
        self.failed_at.map(|at| FormatError::Corrupt {
            what: "posting list",
            offset: at as u64,
        })
    }
}

impl Iterator for Postings<'_> {
    type Item = Result<(u32, u32), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Some(p) => Some(Ok(p)),
            None => {
                let e = self.error()?;
                // Report the damage once, then end.
                self.failed_at = None;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_garbage() {
        let mut buf = Vec::new();
        for v in [0, 1, 127, 128, 300, u32::MAX] {
            buf.clear();
            put_varint(&mut buf, v);
            let mut pos = 0;
            assert_eq!(get_varint(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
        }
        assert_eq!(get_varint(&[0x80, 0x80], &mut 0), None);
        assert_eq!(get_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut 0), None);
    }
}
