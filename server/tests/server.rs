//! Integration tests of `helix-server`: the real binary on a loopback port against real git
//! repositories made with the `git` program; one test binary, modules under `tests/server/`.

#[path = "server/common.rs"]
mod common;

#[path = "server/api.rs"]
mod api;

#[path = "server/deploy.rs"]
mod deploy;

#[path = "server/edits.rs"]
mod edits;

#[path = "server/faults.rs"]
mod faults;

#[path = "server/lifecycle.rs"]
mod lifecycle;

#[path = "server/repos.rs"]
mod repos;

#[path = "server/review.rs"]
mod review;
