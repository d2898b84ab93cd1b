//! `helix-server`: ingests knowledge repositories with gix, compiles each commit into a
//! versioned index artifact, and serves artifacts, status and writes over HTTP API v1.

pub mod auth;
pub mod config;
pub mod error;
pub mod forge;
pub mod git;
pub mod http;
pub mod knowledge;
pub mod listen;
pub mod metrics;
pub mod project;
pub mod semantic;
pub mod state;
pub mod store;
pub mod sys;
pub mod transfer;
pub mod usage;
pub mod web;

use std::future::Future;

pub use config::{Config, ConfigError};
pub use error::AppError;
pub use http::app;
pub use state::{AppState, ServeError};

/// Reads the configuration file again, for a reload.
pub type Reload = Box<dyn Fn() -> Result<Config, ConfigError> + Send + Sync + 'static>;

/// Serves `config` on `listener` until `shutdown` resolves, then lets in-flight requests
/// (and the writes they wait for) finish and stops the project workers. With `reload`, a
/// SIGHUP reads the configuration again and puts its tokens and webhook secrets in force
/// (see [`AppState::reload`]).
pub async fn serve(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    reload: Option<Reload>,
) -> Result<(), ServeError> {
    // Before the projects load, so that an early SIGHUP is not fatal.
    let hangups = match reload {
        Some(r) => Some((hangup_signal().map_err(ServeError::Signal)?, r)),
        None => None,
    };
    let state = AppState::start(config).await?;
    if let Some((mut hangups, reload)) = hangups {
        let state = state.clone();
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                match reload() {
                    Ok(cfg) => {
                        let warnings = state.reload(cfg);
                        tracing::info!(
                            "configuration reloaded: its tokens and webhook secrets are in force"
                        );
                        for w in warnings {
                            tracing::warn!("{w}");
                        }
                    }
                    Err(e) => tracing::error!(
                        "configuration reload failed, the previous one stays in force: {e:#}"
                    ),
                }
            }
        });
    }
    let router = app(state.clone());
    let limits = listen::Limits {
        header_timeout: std::time::Duration::from_secs(state.config.header_timeout_secs),
        max_connections: listen::fit_connections(state.config.max_connections),
    };
    tracing::debug!(?limits, "accepting connections");
    listen::serve(listener, router, limits, shutdown).await;
    tracing::info!("stopped accepting requests; finishing queued work");
    state.shutdown().await;
    Ok(())
}

#[cfg(unix)]
fn hangup_signal() -> std::io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
}

/// No SIGHUP here: a stream that never yields.
#[cfg(not(unix))]
fn hangup_signal() -> std::io::Result<NoHangups> {
    Ok(NoHangups)
}

#[cfg(not(unix))]
struct NoHangups;

#[cfg(not(unix))]
impl NoHangups {
    async fn recv(&mut self) -> Option<()> {
        std::future::pending().await
    }
}

/// Installs SIGINT/SIGTERM handlers now (so a signal that arrives during start-up is not
/// fatal) and returns a future that resolves when one arrives.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            tracing::info!("shutdown signal received");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async move {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutdown signal received");
        })
    }
}
