//! Shared helpers for the end-to-end tests live in `tests/e2e.rs`.
