//! End-to-end tests of helix live in `tests/e2e.rs` (one integration-test binary); this
//! library is empty on purpose: the tests spawn the real binaries and link none of them.
