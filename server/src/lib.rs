//! `helix-server`: ingests knowledge repositories with gix, compiles each commit into a
//! versioned index artifact, and serves artifacts, status and writes over HTTP API v1.

pub mod auth;
pub mod config;
pub mod error;
pub mod fsutil;
pub mod git;
pub mod http;
pub mod metrics;
pub mod project;
pub mod store;

use std::future::Future;
use std::net::SocketAddr;

pub use config::Config;
pub use error::AppError;
pub use http::{AppState, app};

/// Serves `config` on `listener` until `shutdown` resolves, then lets in-flight requests
/// (and the writes they wait for) finish and stops the project workers.
pub async fn serve(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let state = AppState::start(config).await?;
    let router = app(state.clone());
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await?;
    tracing::info!("stopped accepting requests; finishing queued work");
    state.shutdown().await;
    Ok(())
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
