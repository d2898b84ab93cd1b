//! The local half of the helix client: configuration, cache, knowledge, pending entries,
//! hooks, the installer and the local commands, for the `helix` binary (and, as a library,
//! for `helix-net` in `client-net/`). No network code: `cli` is the shared command line.

pub mod cache;
pub mod cli;
pub mod commands;
pub mod compile;
pub mod config;
pub mod edit;
pub mod hook;
pub mod human;
pub mod install;
pub mod journal;
pub mod knowledge;
pub mod paths;
pub mod pending;
pub mod semantic;
pub mod stale;
pub mod sys;
pub mod usage;
