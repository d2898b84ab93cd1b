//! Sentence embeddings in the artifact: the optional `VECTORS` section (docs/index-format.md
//! draws it). Model-agnostic: vectors come in as `f32` from whatever embeds the entries,
//! queries as `f32` of the same model; this module quantises, stores, checks and searches.
//!
//! - [`quantize`]: int8 per vector, symmetric, round to nearest, with an `f32` scale that
//!   makes the decoded vector unit length.
//! - [`Embeddings`]: what [`crate::build_with_embeddings`] takes (vectors keyed by entry
//!   id, so the bytes do not depend on the input order).
//! - [`Vectors`]: the section read in place (`Index::vectors`), each row a [`Vector`];
//!   [`Vectors::top_k`] is the brute-force search (`search.rs`).

mod search;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ops::Range;

use zerocopy::FromBytes;
use zerocopy::little_endian::F32;

pub use search::{VectorFilter, VectorHit};

use crate::error::FormatError;
use crate::layout::*;

/// Largest magnitude of a stored code: the largest component of every vector is ±127, so
/// the codes are symmetric (−128 is never written).
pub const CODE_MAX: i8 = 127;

/// Sentence embeddings to store in an artifact, by entry id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Embeddings {
    /// What produced the vectors (model name and revision): a reader embeds its queries
    /// with the same model, or does not search them. At most [`MAX_MODEL_ID_LEN`] bytes.
    pub model: String,
    /// Components per vector, 1 to [`MAX_VECTOR_DIM`].
    pub dim: usize,
    /// Each entry's vector by entry id, any length (they are L2-normalised here). Entries
    /// without one are stored without a vector; ids of no entry are ignored.
    pub vectors: HashMap<String, Vec<f32>>,
}

/// Why a vector cannot be quantised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    #[error("a component is not a finite number")]
    NotFinite,
    #[error("every component is zero: the vector has no direction")]
    Zero,
}

/// Quantises `v` (any length ≥ 1): L2-normalised, its components coded as int8 with the
/// largest ±[`CODE_MAX`] and the others rounded to nearest (half away from zero). Returns
/// the scale `1 / ‖codes‖₂`, so that `scale × codes` is a unit vector and a dot product
/// with a unit query is a cosine. Deterministic, and idempotent: quantising the decoded
/// vector ([`Vector::to_f32`]) gives the same codes and scale again.
pub fn quantize(v: &[f32]) -> Result<(f32, Vec<i8>), VectorError> {
    let mut codes = vec![0i8; v.len()];
    let scale = quantize_into(v, &mut codes)?;
    Ok((scale, codes))
}

/// [`quantize`] into `codes` (as long as `v`; extra codes are left alone), returning the
/// scale.
pub fn quantize_into(v: &[f32], codes: &mut [i8]) -> Result<f32, VectorError> {
    let mut norm2 = 0.0f64;
    quantize_with(v, f64::from(CODE_MAX), |i, c| {
        if let Some(out) = codes.get_mut(i) {
            *out = c as i8;
        }
        norm2 += c * c;
    })?;
    Ok((1.0 / norm2.sqrt()) as f32)
}

/// Codes `v` so that its largest component is ±`limit`: `put(i, code)` for every
/// component, `code` an integer-valued `f64` in `-limit..=limit`. Normalising to unit
/// length first would not change a code (the scale cancels), so it is not done.
pub(crate) fn quantize_with(
    v: &[f32],
    limit: f64,
    mut put: impl FnMut(usize, f64),
) -> Result<(), VectorError> {
    let mut max = 0.0f64;
    for &x in v {
        if !x.is_finite() {
            return Err(VectorError::NotFinite);
        }
        max = max.max(f64::from(x).abs());
    }
    if max == 0.0 {
        return Err(VectorError::Zero);
    }
    let factor = limit / max;
    for (i, &x) in v.iter().enumerate() {
        put(i, libm::round(f64::from(x) * factor).clamp(-limit, limit));
    }
    Ok(())
}

/// Where the parts of a `VECTORS` section are, checked by `open` (absolute byte ranges).
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    dim: usize,
    model: Range<usize>,
    scales: Range<usize>,
    codes: Range<usize>,
    section: Range<usize>,
}

/// The `open` check of a `VECTORS` section at `section` of `data` (O(1)): header, model id,
/// one scale and one row of codes per entry, nothing else. `None` when the section is
/// absent or its scheme is not one this reader knows (a newer writer's: skipped, as an
/// unknown section is).
pub(crate) fn geometry(
    data: &[u8],
    section: Range<usize>,
    entry_count: u32,
) -> Result<Option<Geometry>, FormatError> {
    if section.is_empty() {
        return Ok(None);
    }
    let bad = |reason: String| FormatError::Section {
        kind: SectionKind::Vectors.name(),
        reason,
    };
    let bytes = &data[section.clone()];
    let Ok((head, _)) = VectorsHeader::read_from_prefix(bytes) else {
        return Err(bad(format!(
            "{} bytes, shorter than its {}-byte header",
            bytes.len(),
            size_of::<VectorsHeader>()
        )));
    };
    if head.scheme.get() != VECTOR_SCHEME_I8 {
        return Ok(None);
    }
    let (dim, count, model_len) = (head.dim.get(), head.count.get(), head.model_len.get());
    if dim == 0 || dim > MAX_VECTOR_DIM {
        return Err(bad(format!("dimension {dim} outside 1..={MAX_VECTOR_DIM}")));
    }
    if count != entry_count {
        return Err(bad(format!(
            "{count} rows, header says {entry_count} entries"
        )));
    }
    if model_len > MAX_MODEL_ID_LEN {
        return Err(FormatError::Count {
            what: "vector model id bytes",
            max: MAX_MODEL_ID_LEN.into(),
            got: model_len.into(),
        });
    }
    // Every factor is below 2^32, so the sum cannot overflow a u64.
    let (dim64, count64) = (u64::from(dim), u64::from(count));
    let expected = size_of::<VectorsHeader>() as u64
        + u64::from(model_len)
        + count64 * size_of::<F32>() as u64
        + count64 * dim64;
    if bytes.len() as u64 != expected {
        return Err(bad(format!(
            "{} bytes, expected {expected} for {count} rows of {dim} components",
            bytes.len()
        )));
    }
    let model_start = section.start + size_of::<VectorsHeader>();
    let scales_start = model_start + model_len as usize;
    let codes_start = scales_start + count as usize * size_of::<F32>();
    let model = model_start..scales_start;
    std::str::from_utf8(&data[model.clone()]).map_err(|_| FormatError::Utf8 {
        what: "vector model id",
    })?;
    Ok(Some(Geometry {
        dim: dim as usize,
        model,
        scales: scales_start..codes_start,
        codes: codes_start..section.end,
        section,
    }))
}

/// The `VECTORS` section of an open artifact, read in place: one [`Vector`] (or none) per
/// entry row.
#[derive(Debug, Clone)]
pub struct Vectors<'a> {
    dim: usize,
    model: &'a str,
    scales: &'a [F32],
    codes: &'a [i8],
    section: Range<usize>,
    /// What the filters of [`Vectors::top_k`] read.
    pub(crate) entries: &'a [EntryRecord],
    pub(crate) topics: &'a [TopicRecord],
    pub(crate) strings: &'a [u8],
    pub(crate) hidden: &'a [HiddenRecord],
}

/// One entry's stored vector: `scale × codes` is its unit-length direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vector<'a> {
    pub scale: f32,
    pub codes: &'a [i8],
}

impl Vector<'_> {
    /// The decoded vector (unit length up to rounding): what to hand back to
    /// [`crate::build_with_embeddings`] for an entry whose text did not change, which
    /// stores the same bytes again.
    pub fn to_f32(&self) -> Vec<f32> {
        self.codes
            .iter()
            .map(|&c| f32::from(c) * self.scale)
            .collect()
    }

    /// Cosine with a unit vector `query` of the same length (0 when the lengths differ),
    /// in `f32` from the codes (lane by lane, so it vectorises; [`Vectors::top_k`] codes
    /// the query as int16 instead, which is faster).
    pub fn dot(&self, query: &[f32]) -> f32 {
        const LANES: usize = 16;
        if query.len() != self.codes.len() {
            return 0.0;
        }
        let (q_chunks, q_tail) = query.as_chunks::<LANES>();
        let (c_chunks, c_tail) = self.codes.as_chunks::<LANES>();
        let mut acc = [0.0f32; LANES];
        for (qa, ca) in q_chunks.iter().zip(c_chunks) {
            for ((a, &q), &c) in acc.iter_mut().zip(qa).zip(ca) {
                *a += q * f32::from(c);
            }
        }
        let tail: f32 = q_tail
            .iter()
            .zip(c_tail)
            .map(|(&q, &c)| q * f32::from(c))
            .sum();
        (acc.iter().sum::<f32>() + tail) * self.scale
    }
}

impl<'a> Vectors<'a> {
    pub(crate) fn new(
        data: &'a [u8],
        g: &Geometry,
        entries: &'a [EntryRecord],
        topics: &'a [TopicRecord],
        strings: &'a [u8],
        hidden: &'a [HiddenRecord],
    ) -> Option<Self> {
        Some(Vectors {
            dim: g.dim,
            model: std::str::from_utf8(data.get(g.model.clone())?).ok()?,
            scales: <[F32]>::ref_from_bytes(data.get(g.scales.clone())?).ok()?,
            codes: <[i8]>::ref_from_bytes(data.get(g.codes.clone())?).ok()?,
            section: g.section.clone(),
            entries,
            topics,
            strings,
            hidden,
        })
    }

    /// Components per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The id of the model that produced the vectors.
    pub fn model(&self) -> &'a str {
        self.model
    }

    /// Rows: the artifact's entry count.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Entries that have a vector.
    pub fn count_present(&self) -> usize {
        self.scales.iter().filter(|s| s.get() != 0.0).count()
    }

    /// The byte range of the section in the file: what a vector search reads, for a
    /// caller that wants it paged in ahead of the first query.
    pub fn file_range(&self) -> Range<usize> {
        self.section.clone()
    }

    /// Entry `doc`'s vector; `None` when it has none (or `doc` is out of range).
    pub fn get(&self, doc: u32) -> Option<Vector<'a>> {
        let scale = self.scales.get(doc as usize)?.get();
        if scale == 0.0 {
            return None;
        }
        let start = (doc as usize).checked_mul(self.dim)?;
        let codes = self.codes.get(start..start.checked_add(self.dim)?)?;
        Some(Vector { scale, codes })
    }

    /// Each row's scale and codes, in document order (a scale of 0: no vector).
    pub(crate) fn rows(&self) -> impl Iterator<Item = (f32, &'a [i8])> + 'a {
        self.scales
            .iter()
            .map(|s| s.get())
            .zip(self.codes.chunks_exact(self.dim))
    }

    /// `verify`'s check of every row: a scale of 0 has all-zero codes; any other scale is
    /// finite and positive, its codes lie in ±127 with a largest magnitude of 127, and
    /// `scale × codes` has unit length.
    pub(crate) fn verify(&self) -> Result<(), FormatError> {
        for (doc, (scale, codes)) in self.rows().enumerate() {
            let doc = doc as u32;
            let bad = |reason| Err(FormatError::Vector { doc, reason });
            if scale == 0.0 {
                if codes.iter().any(|&c| c != 0) {
                    return bad("codes without a scale");
                }
                continue;
            }
            if !(scale.is_finite() && scale > 0.0) {
                return bad("scale not a positive finite number");
            }
            let mut max = 0u8;
            let mut norm2 = 0u64;
            for &c in codes {
                if c == i8::MIN {
                    return bad("code -128 (the codes are symmetric)");
                }
                max = max.max(c.unsigned_abs());
                norm2 += u64::from(c.unsigned_abs()).pow(2);
            }
            if max != CODE_MAX as u8 {
                return bad("largest code is not 127");
            }
            let length = f64::from(scale) * (norm2 as f64).sqrt();
            if (length - 1.0).abs() > 1e-5 {
                return bad("decoded vector is not unit length");
            }
        }
        Ok(())
    }
}

/// The `VECTORS` section's bytes for `docs` (id-sorted): header, model id, scales, codes.
pub(crate) fn section_bytes<'e>(
    embeddings: &Embeddings,
    ids: impl ExactSizeIterator<Item = &'e str>,
) -> Result<Vec<u8>, crate::BuildError> {
    use crate::BuildError;
    use zerocopy::IntoBytes;
    use zerocopy::little_endian::U32;

    let dim = embeddings.dim;
    if dim == 0 || dim > MAX_VECTOR_DIM as usize {
        return Err(BuildError::EmbeddingDimension { dim });
    }
    let model = embeddings.model.as_bytes();
    if model.len() > MAX_MODEL_ID_LEN as usize {
        return Err(BuildError::EmbeddingModel { len: model.len() });
    }
    let rows = ids.len();
    let count = u32::try_from(rows).map_err(|_| BuildError::TooLarge { what: "vectors" })?;
    let head = VectorsHeader {
        dim: U32::new(dim as u32),
        scheme: U32::new(VECTOR_SCHEME_I8),
        count: U32::new(count),
        model_len: U32::new(model.len() as u32),
    };
    let mut scales: Vec<F32> = Vec::with_capacity(rows);
    let mut codes: Vec<i8> = vec![0; rows.saturating_mul(dim)];
    for (row, id) in ids.enumerate() {
        let Some(v) = embeddings.vectors.get(id) else {
            scales.push(F32::new(0.0));
            continue;
        };
        if v.len() != dim {
            return Err(BuildError::VectorDimension {
                id: id.to_owned(),
                expected: dim,
                got: v.len(),
            });
        }
        let scale = quantize_into(v, &mut codes[row * dim..(row + 1) * dim]).map_err(|error| {
            BuildError::BadVector {
                id: id.to_owned(),
                error,
            }
        })?;
        scales.push(F32::new(scale));
    }
    let mut out = Vec::with_capacity(
        size_of::<VectorsHeader>() + model.len() + rows * (size_of::<F32>() + dim),
    );
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(model);
    out.extend_from_slice(scales.as_bytes());
    out.extend_from_slice(codes.as_bytes());
    Ok(out)
}

/// Characters of an entry's body embedded by default (its head: what a note is about is
/// said first, and a long body would only be cut by the model's token limit).
pub const DEFAULT_BODY_CHARS: usize = 1000;

/// The text embedded for an entry: its title, the front matter's `name` and `description`,
/// its tags, and the first `body_chars` characters of its body, one per line (empty parts
/// left out).
pub fn entry_text(e: &crate::Entry, body_chars: usize) -> String {
    let text = |key| match e.extra.get(key) {
        Some(serde_json::Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let tags: Vec<&str> = e.tags.iter().map(String::as_str).collect();
    entry_text_of(
        &e.title,
        text("name"),
        text("description"),
        &tags,
        &e.body,
        body_chars,
    )
}

/// [`entry_text`] of an entry read from an artifact: the same text for the same entry, so a
/// compile can reuse the vector of an entry whose text did not change.
pub fn entry_ref_text(e: &crate::EntryRef<'_>, body_chars: usize) -> String {
    let extra: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(e.extra_json).unwrap_or_default();
    let text = |key| match extra.get(key) {
        Some(serde_json::Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    entry_text_of(
        e.title,
        text("name"),
        text("description"),
        &e.tags,
        e.body,
        body_chars,
    )
}

fn entry_text_of(
    title: &str,
    name: Option<&str>,
    description: Option<&str>,
    tags: &[&str],
    body: &str,
    body_chars: usize,
) -> String {
    let mut parts: Vec<&str> = vec![title.trim()];
    parts.extend(name.map(str::trim));
    parts.extend(description.map(str::trim));
    let tags = tags.join(", ");
    parts.push(&tags);
    let body = match body.char_indices().nth(body_chars) {
        Some((i, _)) => &body[..i],
        None => body,
    };
    parts.push(body.trim());
    parts.retain(|p| !p.is_empty());
    parts.join("\n")
}
