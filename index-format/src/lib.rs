//! The helix knowledge format, shared by `helix-server` and `helix`: entry parsing,
//! the tokenizer, the artifact builder and the zero-copy reader with its queries.
//!
//! Bytes in, bytes out: this crate does no I/O (no filesystem, network, clock or mmap),
//! so both binaries parse, tokenize and rank identically. Callers pass the current time.

pub mod build;
pub mod delta;
pub mod entry;
pub mod error;
pub mod fusion;
pub mod layout;
mod postings;
pub mod query;
pub mod read;
pub mod relevance;
pub mod search;
pub mod secrets;
pub mod similar;
pub mod snippet;
pub mod tokenize;
pub mod validate;
pub mod vectors;
mod verify;
pub mod wire;

pub use build::{BuildError, BuildInfo, build, build_with_embeddings};
pub use entry::yaml;
pub use entry::{
    Census, Diagnostic, Entry, FileKind, GitMeta, Hidden, MAX_ENTRY_BYTES, REVIEW_AFTER, Root,
    STATUSES, Skip, format_day, glob_matches, hidden_entries, is_entry_path, is_glob,
    lifecycle_diagnostics, parse_day, parse_entry, render_entry, review_due, slugify,
};
pub use error::FormatError;
pub use fusion::{FusedHit, Fusion, FusionOptions, fuse};
pub use query::{Query, QueryTerm, Stats};
pub use read::{DECLARED_LEN_PREFIX, EntryRef, Index, Meta, TopicCount, declared_len};
pub use search::{Hit, Mode, SearchOptions};
pub use secrets::{SecretFinding, find_secret, find_secrets};
pub use similar::{Collection, DUPLICATE_THRESHOLD, Fingerprint, Similar, similarity};
pub use tokenize::{TOKENIZER_VERSION, Token, TokenKind, tokenize};
pub use validate::{
    FileSecret, ValidationError, find_secrets_in_entry_file, validate_edit, validate_new_entry,
};
pub use vectors::{
    Embeddings, Vector, VectorError, VectorFilter, VectorHit, Vectors, quantize, quantize_into,
};
pub use wire::NewEntry;
