//! Builder: entries in, artifact bytes out. Deterministic: the same entries and
//! [`BuildInfo`] always give the same bytes; the checksum is computed while writing.

use crate::entry::Entry;

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

/// Why entries could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("duplicate entry id {id}")]
    DuplicateId { id: String },
    #[error("artifact would exceed the format's 4 GiB section limit ({what})")]
    TooLarge { what: &'static str },
}

/// Compiles `entries` (any order) into artifact bytes.
pub fn build(entries: &[Entry], info: &BuildInfo) -> Result<Vec<u8>, BuildError> {
    let _ = (entries, info);
    unimplemented!("being written")
}
