//! `helix`: the helix client: offline cache, Claude Code hooks, CLI. The commands that talk
//! to a server (`sync`, `doctor`, `mcp`) run in `helix-net`, installed beside this binary,
//! so that this one — started for every hook — links no HTTP, TLS or async runtime.

use clap::Parser;
use helix_client::cli::{self, Cli};
use helix_client::hook;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Hooks run on every tool call: skip building the whole CLI parser for them.
    if let Some(code) = hook::fast_path() {
        return code;
    }
    cli::run(Cli::parse(), |_| exec_net())
}

/// Replaces this process with `helix-net` and the same arguments (stdio, environment and
/// exit status carry over; `helix mcp` keeps speaking on the same pipes).
fn exec_net() -> anyhow::Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let net = exe.with_file_name("helix-net");
    let err = std::process::Command::new(&net)
        .args(std::env::args_os().skip(1))
        .exec();
    anyhow::bail!(
        "cannot run {}: {err} (it is installed next to helix: `cargo install --path client` installs both)",
        net.display()
    )
}
