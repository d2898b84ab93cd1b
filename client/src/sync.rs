//! Sync engine: conditional download of each followed project's artifact into the cache
//! (verify, then atomic rename), pushing pending entries, and local-mode compilation.

use crate::config::ProjectConfig;
use anyhow::Result;

/// Compiles the local knowledge directory into the local cache (local mode).
pub fn compile_local(cfg: &ProjectConfig, project: &str) -> Result<()> {
    let _ = (cfg, project);
    anyhow::bail!("local compile not implemented yet")
}
