//! How the site's connections are served: HTTP/1 by hyper, under limits
//! that keep slow or idle clients from holding the site (a slowloris: many
//! connections that send nothing, or a byte a second).
//!
//! - **A cap on connections** ([`Limits::connections`]): a connection is
//!   accepted only while fewer are open; beyond the cap, new ones wait in
//!   the kernel's backlog (they are not refused, and nothing crashes) until
//!   one closes.
//! - **A header timeout** ([`Limits::header`]): a connection whose request
//!   head has not arrived whole within it is closed, and so is a kept-alive
//!   connection that sends no next request within it (hyper's
//!   `header_read_timeout`, which restarts at each request).
//! - **A request timeout** ([`Limits::request`]): reading a request's body
//!   and answering it, for every route but the two below ([`within`]);
//!   beyond it the answer is 408 and the connection is closed.
//! - **An upload's body** has its own bound ([`Limits::upload`], read by
//!   `upload.rs`): an archive of 32 MiB needs longer than a form. The
//!   upload's judging (check-bot) is not cut short: once its body has
//!   arrived, an upload is always answered with its verdict.
//! - **Event streams** (`/events`) live as long as their page by design:
//!   each gives back its connection's place under the cap when it starts
//!   and takes one of [`Limits::event_streams`] instead; beyond that cap a
//!   new stream is answered 503 (`events.rs`), and the page still works
//!   without live updates.
//! - **Request bodies** are capped (`mod.rs`: 4 KiB, an upload's 32 MiB and
//!   one byte).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::Failure;

/// The site's limits (`season serve`'s and `season run --serve`'s
/// `--site-…` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once, event streams aside.
    pub connections: usize,
    /// Event streams (`/events`) open at once.
    pub event_streams: usize,
    /// How long a request's head may take to arrive, and how long a kept-
    /// alive connection may wait for its next request.
    pub header: Duration,
    /// How long reading a request's body and answering it may take, but for
    /// an upload and an event stream.
    pub request: Duration,
    /// How long an upload's body may take to arrive.
    pub upload: Duration,
}

/// How long the site waits for its connections to finish when it stops.
const DRAIN: Duration = Duration::from_secs(5);

/// How long the site waits after a failed `accept` (no descriptor left:
/// the host's limit, not the cap) before it tries again.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// A connection's place under the cap, shared with its requests (a request
/// extension): an event stream gives it back ([`Slot::give_back`]), else it
/// is freed when the connection closes.
#[derive(Clone)]
pub struct Slot(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Slot {
    /// Frees the connection's place: it now holds an event stream, counted
    /// under its own cap.
    pub fn give_back(&self) {
        drop(self.0.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

/// Serves `app` on `listener` under `limits` until `cancel`; then stops
/// accepting, asks every connection to finish its request, and waits for
/// them (at most [`DRAIN`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    cancel: CancellationToken,
) -> anyhow::Result<()> {
    let places = Arc::new(Semaphore::new(limits.connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header);
    let mut connections = JoinSet::new();
    loop {
        let place = tokio::select! {
            place = places.clone().acquire_owned() => place?,
            _ = cancel.cancelled() => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("referee: season site: failed to accept a connection: {e}");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            _ = cancel.cancelled() => break,
        };
        let slot = Slot(Arc::new(Mutex::new(Some(place))));
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: Request<_>| {
            request.extensions_mut().insert(slot.clone());
            app.clone().oneshot(request.map(axum::body::Body::new))
        });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let cancel = cancel.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = cancel.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
        while connections.try_join_next().is_some() {}
    }
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(DRAIN, drained).await;
    Ok(())
}

/// Answers `request` within `limit` (its body read and its answer made), or
/// 408 and the connection closed.
pub async fn within(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let said = format!(
                "the request was not read and answered within {} s; send it again",
                limit.as_secs_f64()
            );
            let mut r = Failure(StatusCode::REQUEST_TIMEOUT, said).into_response();
            r.headers_mut()
                .insert(header::CONNECTION, "close".parse().expect("a header"));
            r
        }
    }
}
