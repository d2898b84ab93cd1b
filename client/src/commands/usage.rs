//! `helix usage`: how the team's agents used a project's entries (docs/usage.md), from the
//! server's summary of the usage reports. It talks to the server, so `helix-net` runs it
//! (`helix_client_net::usage`); only its command line lives here.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The followed project (default: the first one in .helix.toml).
    #[arg(long, short)]
    pub project: Option<String>,
    /// The window, in days up to today (UTC).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub days: u32,
    /// List instead the entries no agent was given in the window (id, title, date): the
    /// candidates to improve or retire.
    #[arg(long)]
    pub unused: bool,
    /// Print the server's JSON instead of tables for people.
    #[arg(long)]
    pub json: bool,
}
