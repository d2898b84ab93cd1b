//! `helix doctor`: checks configuration, token, server reachability, cache integrity and
//! hook installation, and prints what to fix. It talks to the server, so `helix-net` runs it
//! (`helix_client_net::doctor`); only its command line lives here.

#[derive(Debug, clap::Args)]
pub struct Args {}
