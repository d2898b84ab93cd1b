//! `helix doctor`.

use anyhow::Result;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_a: Args) -> Result<ExitCode> {
    anyhow::bail!("helix doctor: not implemented yet")
}
