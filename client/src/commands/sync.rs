//! `helix sync`: download changed artifacts, push pending entries, one line per project.
//! It talks to the server, so `helix-net` runs it (`helix_client_net::sync`); only its
//! command line lives here.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print nothing unless something failed (for hooks and cron).
    #[arg(long, short)]
    pub quiet: bool,
}
