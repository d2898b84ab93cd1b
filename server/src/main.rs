//! `helix-server`: the team knowledge server binary (serve, and `token add`).
//! Logs go to stderr; stdout carries the listening address and new tokens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use helix_server::auth::tokens;
use helix_server::config::{Config, Scope};

#[derive(Debug, Parser)]
#[command(name = "helix-server", version, about = "helix team knowledge server")]
struct Cli {
    /// Configuration file (TOML). Without one, the embedded default is used.
    #[arg(long, global = true, env = "HELIX_SERVER_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on (overrides the config), e.g. 127.0.0.1:7700 or 0.0.0.0:0.
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Data directory (overrides the config).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Log as JSON lines.
    #[arg(long)]
    log_json: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve (the default).
    Serve,
    /// Manage tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Create a token, print it once, store only its sha256 in the config file.
    Add {
        #[arg(long)]
        project: String,
        #[arg(long)]
        name: String,
        /// Comma-separated scopes: read, write, review.
        #[arg(long, default_value = "read")]
        scope: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_json);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("helix-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (`target=level` directives, comma-separated, as
/// `info,tower_http=warn`, the default; a value that does not parse means the default).
/// `Targets` rather than `EnvFilter`: the same directives without span and field filters,
/// which helix does not use, and without the regex engine they would build in.
fn init_logging(json: bool) {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let filter: Targets = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            Targets::new()
                .with_default(tracing::Level::INFO)
                .with_target("tower_http", tracing::Level::WARN)
        });
    // Colours only for a person at a terminal: journald, files and pipes get plain text.
    let fmt = tracing_subscriber::fmt::layer()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter);
    if json {
        registry.with(fmt.json()).init();
    } else {
        registry.with(fmt).init();
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Token {
            command:
                TokenCommand::Add {
                    project,
                    name,
                    scope,
                },
        }) => {
            let path = cli
                .config
                .context("`token add` needs --config FILE (the file the token is stored in)")?;
            let mut scopes = Vec::new();
            for s in scope.split(',').filter(|s| !s.trim().is_empty()) {
                scopes.push(
                    Scope::parse(s).with_context(|| {
                        format!("unknown scope {s:?} (use read, write, review)")
                    })?,
                );
            }
            let token = tokens::add_token(&path, &project, &name, &scopes)?;
            println!("{token}");
            eprintln!(
                "token for {name} on project {project} stored (hashed) in {}; it is shown only once; a running server loads it on SIGHUP (systemctl reload helix-server) or at its next restart",
                path.display()
            );
            Ok(())
        }
        Some(Command::Serve) | None => serve(cli.config, cli.listen, cli.data_dir),
    }
}

fn serve(
    path: Option<PathBuf>,
    listen: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    let embedded = path.is_none();
    let mut cfg = match &path {
        Some(p) => Config::load(p)?,
        None => Config::embedded_default(),
    };
    if let Some(l) = listen {
        cfg.listen = l;
    }
    if let Some(d) = data_dir {
        cfg.data_dir = d;
    }
    let (listen_now, data_now) = (cfg.listen, cfg.data_dir.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let shutdown = helix_server::shutdown_signal().context("cannot install signal handlers")?;
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .with_context(|| format!("cannot listen on {}", cfg.listen))?;
        let addr = listener.local_addr()?;
        if embedded {
            tracing::info!(
                "no config given: serving project `default` from {} on http://{addr}; loopback clients need no token",
                cfg.data_dir.join("projects/default/repo.git").display()
            );
        } else {
            tracing::info!(projects = cfg.projects.len(), "listening on http://{addr}");
        }
        println!("listening on http://{addr}");
        // SIGHUP reads the file again (tokens, webhook secrets), with the same overrides.
        let reload: Option<helix_server::Reload> = path.map(|p| {
            Box::new(move || {
                let mut c = Config::load(&p)?;
                c.listen = listen_now;
                c.data_dir = data_now.clone();
                Ok(c)
            }) as helix_server::Reload
        });
        helix_server::serve(cfg, listener, shutdown, reload).await?;
        anyhow::Ok(())
    })
}
