//! The helix client as a library: every module of the `helix` and `helix-net` binaries.
//! `cli` is the shared command line; `main.rs` and `bin/helix-net.rs` only dispatch.

pub mod cli;
pub mod commands;
pub mod compile;
pub mod config;
pub mod hook;
pub mod install;
pub mod knowledge;
pub mod mcp;
pub mod paths;
pub mod pending;
pub mod sync;
