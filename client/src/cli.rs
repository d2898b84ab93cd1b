//! The command line shared by both binaries: `helix` (everything local, and every hook)
//! and `helix-net` (the commands that talk to a server: `sync`, `review`, `usage`, `doctor`,
//! `mcp`).
//!
//! The network commands reach [`run`] through a closure so that the `helix` binary never
//! references reqwest, rustls, tokio or rmcp: the linker leaves them out, and a hook process
//! starts several hundred microseconds faster (docs/benchmarks.md, Hooks).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

use crate::{commands, hook, install};

/// `helix` command line.
#[derive(Debug, Parser)]
#[command(name = "helix", version, about = "Team knowledge for AI coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// One `helix` command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a knowledge directory into an artifact file.
    Build(commands::build::Args),
    /// Report invalid entries of a knowledge directory (exit 1 if any).
    Check(commands::check::Args),
    /// Search the followed projects (or one artifact with --index).
    ///
    /// Entries that contain every query word come first, then entries that contain some of
    /// them, each group in order of the printed score. `--explain` ranks as the hooks do: by
    /// score alone, any query word.
    Search(commands::search::Args),
    /// Print one entry.
    Read(commands::read::Args),
    /// Compact summary: topics with counts, or one topic's entries.
    Brief(commands::brief::Args),
    /// List topics with entry counts.
    Topics(commands::topics::Args),
    /// Server, projects, cache age, pending entries, last sync.
    Status(commands::status::Args),
    /// What the hooks injected, when and why.
    Log(commands::log::Args),
    /// Write a .helix.toml for this code repository.
    Init(commands::init::Args),
    /// Download changed artifacts and push pending entries.
    Sync(commands::sync::Args),
    /// Store a new entry (pending until the next sync).
    Store(commands::store::Args),
    /// List, approve or reject proposals (projects whose server reviews writes).
    Review(commands::review::Args),
    /// How the team's agents used a project's entries: injections, people, sessions, reads
    /// (from the usage reports `helix sync` sends; docs/usage.md).
    Usage(commands::usage::Args),
    /// Edit an entry in $EDITOR or with --title/--body/…; retire or supersede entries
    /// (pending until the next sync, refused there if the entry changed meanwhile).
    Edit(commands::edit::Args),
    /// Check configuration, token, server, cache and hooks; say what to fix.
    Doctor(commands::doctor::Args),
    /// Serve search, store, read, brief and topics to Claude Code over MCP (stdio).
    Mcp,
    /// Keep the embedding model loaded and embed queries for the hooks and searches over a
    /// per-user Unix socket; exits when idle. Started on demand.
    #[command(hide = true)]
    Embedder(crate::semantic::EmbedderArgs),
    /// Run one agent hook (`--agent NAME`; Claude Code by default): event JSON on stdin,
    /// answer on stdout, always exit 0.
    Hook(hook::HookArgs),
    /// Install, remove or inspect helix's hooks and MCP server in an agent's settings
    /// (Claude Code, Codex, Copilot CLI, Gemini CLI, Cursor).
    Hooks {
        #[command(subcommand)]
        command: install::HooksCommand,
    },
}

/// A command that talks to a server, run by `helix-net`.
#[derive(Debug)]
pub enum NetCommand {
    Sync(commands::sync::Args),
    Review(commands::review::Args),
    Usage(commands::usage::Args),
    Doctor(commands::doctor::Args),
    Mcp,
    Embedder(crate::semantic::EmbedderArgs),
}

/// Runs `cli`; network commands go to `net`.
pub fn run(cli: Cli, net: impl FnOnce(NetCommand) -> anyhow::Result<ExitCode>) -> ExitCode {
    if !matches!(
        cli.command,
        Command::Mcp | Command::Hook(_) | Command::Embedder(_)
    ) {
        restore_default_sigpipe();
    }
    let result = match cli.command {
        Command::Build(a) => commands::build::run(a),
        Command::Check(a) => commands::check::run(a),
        Command::Search(a) => commands::search::run(a),
        Command::Read(a) => commands::read::run(a),
        Command::Brief(a) => commands::brief::run(a),
        Command::Topics(a) => commands::topics::run(a),
        Command::Status(a) => commands::status::run(a),
        Command::Log(a) => commands::log::run(a),
        Command::Init(a) => commands::init::run(a),
        Command::Sync(a) => net(NetCommand::Sync(a)),
        Command::Store(a) => commands::store::run(a),
        Command::Review(a) => net(NetCommand::Review(a)),
        Command::Usage(a) => net(NetCommand::Usage(a)),
        Command::Edit(a) => commands::edit::run(a),
        Command::Doctor(a) => net(NetCommand::Doctor(a)),
        Command::Mcp => net(NetCommand::Mcp),
        Command::Embedder(a) => net(NetCommand::Embedder(a)),
        Command::Hook(a) => Ok(hook::run(&a)),
        Command::Hooks { command } => install::run(&command),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("helix: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Rust ignores SIGPIPE, so `println!` panics when stdout is a closed pipe (`helix search |
/// head`). For the data-printing commands, behave like every Unix filter: die quietly.
/// Hooks and the MCP server keep ignoring it: they must always exit cleanly.
#[allow(unsafe_code)]
fn restore_default_sigpipe() {
    // SAFETY: called once at start-up on the main thread before any other thread exists;
    // setting a signal disposition to SIG_DFL has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
