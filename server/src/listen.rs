//! The accept loop: HTTP/1.1 with a deadline for each request's headers (also between
//! keep-alive requests), a cap on open connections below the fd limit, graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::connect_info::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::ServiceExt;

/// File descriptors kept free for everything that is not a connection: artifacts, the
/// repositories, `git` pipes, logs.
const RESERVED_FDS: u64 = 128;

/// How the accept loop bounds its clients.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest a client may take to send a complete request head (from connecting, or from
    /// the end of the previous response on a kept-alive connection).
    pub header_timeout: Duration,
    /// Most connections open at once; more wait in the kernel's backlog until one closes.
    pub max_connections: usize,
}

/// Raises the soft open-file limit to the hard one (servers need many sockets; the soft
/// default is often 1024) and returns the connections that then fit, at most `wanted`.
pub fn fit_connections(wanted: usize) -> usize {
    let limit = raise_nofile_limit();
    let room = limit.saturating_sub(RESERVED_FDS).max(16);
    wanted.min(usize::try_from(room).unwrap_or(usize::MAX))
}

#[cfg(unix)]
#[allow(unsafe_code)] // two plain libc calls on a local struct
fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above; a failure leaves the old limit, which is read back below.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
    let cur = lim.rlim_cur as u64;
    cur
}

#[cfg(not(unix))]
fn raise_nofile_limit() -> u64 {
    u64::MAX
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting and lets open
/// connections finish their current request.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    // Receivers are held by connections: `closing.send` asks them to finish, and
    // `open.closed()` resolves when the last one is gone.
    let (closing, _) = watch::channel(false);
    let (open, _) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    let mut full_logged = false;
    loop {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => {
                full_logged = false;
                p
            }
            Err(_) => {
                if !full_logged {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        "connection limit reached; new connections wait until one closes"
                    );
                    full_logged = true;
                }
                tokio::select! {
                    p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
                    _ = &mut shutdown => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(v) => v,
                Err(e) => {
                    // Out of descriptors or memory, or a connection reset before accept:
                    // back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let app = app.clone();
            async move {
                let resp = app
                    .oneshot(req.map(Body::new))
                    .await
                    .unwrap_or_else(|e: Infallible| match e {});
                Ok::<_, Infallible>(resp)
            }
        });
        let mut closing = closing.subscribe();
        let open = open.subscribe();
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            let mut asked = false;
            loop {
                tokio::select! {
                    r = conn.as_mut() => {
                        if let Err(e) = r {
                            tracing::debug!(peer = %peer, error = %e, "connection closed");
                        }
                        break;
                    }
                    _ = closing.changed(), if !asked => {
                        asked = true;
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(permit);
            drop(open);
        });
    }
    drop(listener);
    let _ = closing.send(true);
    open.closed().await;
}
