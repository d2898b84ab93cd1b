//! One module per CLI command; each exposes `Args` (clap) and `run(Args) -> Result<ExitCode>`.
//! Shared output helpers live here.

pub mod brief;
pub mod build;
pub mod check;
pub mod doctor;
pub mod edit;
pub mod init;
pub mod log;
pub mod read;
pub mod review;
pub mod search;
pub mod status;
pub mod store;
pub mod sync;
pub mod topics;
pub mod usage;

use std::path::PathBuf;

/// The current directory (where `.helix.toml` is looked up from).
pub fn cwd() -> anyhow::Result<PathBuf> {
    std::env::current_dir().map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))
}

/// Prints a JSON value on stdout.
pub fn print_json(v: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("serialising a JSON value cannot fail")
    );
}
