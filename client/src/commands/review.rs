//! `helix review list|approve|reject`: a reviewer's view of a project's proposals (projects
//! whose server reviews writes). It talks to the server, so `helix-net` runs it
//! (`helix_client_net::review`); only its command line lives here.

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
    /// The followed project (default: the first one in .helix.toml).
    #[arg(long, short, global = true)]
    pub project: Option<String>,
    /// Print the server's JSON instead of lines for people.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// The open proposals (with --all, the decided ones too).
    List {
        #[arg(long)]
        all: bool,
    },
    /// Land a proposal on the project's branch and delete its proposal branch.
    Approve { id: String },
    /// Delete a proposal's branch; its author's client sets the entry aside.
    Reject {
        id: String,
        /// Why, for the author.
        #[arg(long)]
        reason: Option<String>,
    },
}
