//! Typed errors for reading artifacts: every check names what it expected and what it got.

/// Why bytes are not a readable artifact (or a query ran into damaged data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("artifact too small: expected at least {expected} bytes, got {got}")]
    TooSmall { expected: u64, got: u64 },
    #[error("not a helix artifact: bad magic {got:02x?}")]
    BadMagic { got: [u8; 8] },
    #[error("unsupported format version {got} (this reader reads {min}..={max})")]
    UnsupportedVersion { got: u32, min: u32, max: u32 },
    #[error(
        "artifact needs a reader of format version {needs} or newer (this one reads up to {max})"
    )]
    TooNew { needs: u32, max: u32 },
    #[error("length mismatch: header says {expected} bytes, got {got}")]
    LengthMismatch { expected: u64, got: u64 },
    #[error("checksum mismatch: expected {expected:016x}, got {got:016x}")]
    Checksum { expected: u64, got: u64 },
    #[error("section {kind}: {reason}")]
    Section { kind: &'static str, reason: String },
    #[error("missing section {kind}")]
    MissingSection { kind: &'static str },
    #[error("count {what} out of range: expected at most {max}, got {got}")]
    Count {
        what: &'static str,
        max: u64,
        got: u64,
    },
    #[error("corrupt {what} at offset {offset}")]
    Corrupt { what: &'static str, offset: u64 },
    #[error("invalid UTF-8 in {what}")]
    Utf8 { what: &'static str },
    #[error("vector of entry row {doc}: {reason}")]
    Vector { doc: u32, reason: &'static str },
    #[error("query vector has {got} components, the artifact's vectors have {expected}")]
    QueryDimension { expected: u32, got: u64 },
}
