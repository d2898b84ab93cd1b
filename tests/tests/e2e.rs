//! End-to-end suite: the real `helix-server` and `helix` binaries against each other on
//! loopback, with real git repositories, isolated developer machines and no mocks.

mod e2e {
    pub mod harness;
    mod team_story;
}
