//! End-to-end suite: the real `helix-server` and `helix` binaries against each other on
//! loopback, with real git repositories, isolated developer machines and no mocks.
//!
//! Run: `cargo test -p helix-tests` (or `cargo test --workspace`). The binaries are found next
//! to this test executable and brought up to date with one `cargo build -p helix-server -p
//! helix-client -p helix-client-net` first; `HELIX_TEST_NO_BUILD=1` uses them as they are.

mod e2e {
    mod browser;
    mod edits;
    pub mod harness;
    mod readme;
    mod replicas;
    mod review;
    mod semantic;
    pub mod site;
    mod team_story;
    mod usage;
    mod usage_server;
    mod web;
    pub mod webdriver;
}
