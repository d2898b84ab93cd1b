//! `helix-net`: the `helix` commands that talk to a server — `sync`, `review`, `usage`, `doctor`,
//! `mcp` — which `helix` hands over to by exec. Any other command works here too.

use clap::Parser;
use helix_client::cli::{self, Cli, NetCommand};
use helix_client_net::{doctor, embedder, mcp, review, sync, usage};
use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run(Cli::parse(), |cmd| match cmd {
        NetCommand::Sync(a) => sync::run(a),
        NetCommand::Review(a) => review::run(a),
        NetCommand::Usage(a) => usage::run(a),
        NetCommand::Doctor(a) => doctor::run(a),
        NetCommand::Mcp => mcp::run().map(|()| ExitCode::SUCCESS),
        NetCommand::Embedder(a) => embedder::run(a),
    })
}
