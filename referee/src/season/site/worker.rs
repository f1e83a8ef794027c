//! The workers' routes (`season run --workers`), each with
//! `Authorization: Bearer TOKEN` (a worker's token, `season worker-token`):
//!
//! - `POST /api/worker/lease`, a JSON [`Ask`]: a set with a lease
//!   (`{"granted": {...}, "done": false}`), or none (`"granted": null`;
//!   `"done": true` once the run's `--sets` are finished);
//! - `POST /api/worker/sets/SET/heartbeat?lease=ID`: the lease extended;
//! - `POST /api/worker/sets/SET/games/GAME?lease=ID`, the transcript as
//!   the body: judged and counted;
//! - `POST /api/worker/sets/SET/release?lease=ID`: the set given back;
//! - `POST /api/worker/sets/SET/stderr/FOLDER/FILE?lease=ID`, the end of a
//!   bot's stderr log as the body: kept for the entrant's logs page;
//! - `GET /api/worker/blobs/HASH`: a version's files (`blob.rs`).
//!
//! The routes only carry each request to the coordinator (`lease.rs`,
//! `run/workers.rs`), which answers it; refusals are JSON `{"error": ...}`:
//! 401 not a worker's token, 409 not the current lease holder (with
//! `"lease": "lost"`), 422 a transcript that does not check out, 400 a
//! worker that cannot play this season, 429 a worker at its declared tables.

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use tokio::sync::{mpsc, oneshot};

use super::bearer;
use crate::season::lease::{Answer, Ask, Asked, Request, STDERR_TAIL};

/// The largest transcript a worker may hand back.
const TRANSCRIPT_LIMIT: usize = 64 << 20;

type Tx = mpsc::Sender<Request>;

/// The routes, sending each request on `tx`.
pub fn router(tx: Tx) -> Router {
    Router::new()
        .route("/api/worker/lease", post(lease))
        .route("/api/worker/sets/{set}/heartbeat", post(heartbeat))
        .route(
            "/api/worker/sets/{set}/games/{game}",
            post(result).layer(DefaultBodyLimit::max(TRANSCRIPT_LIMIT)),
        )
        .route("/api/worker/sets/{set}/release", post(release))
        .route(
            "/api/worker/sets/{set}/stderr/{folder}/{file}",
            post(stderr).layer(DefaultBodyLimit::max(STDERR_TAIL)),
        )
        .route("/api/worker/blobs/{hash}", get(blob))
        .with_state(tx)
}

#[derive(serde::Deserialize)]
struct LeaseQuery {
    lease: String,
}

/// Sends `asked` with the request's token to the coordinator; its answer.
async fn ask(tx: &Tx, headers: &HeaderMap, asked: Asked) -> Answer {
    let Some(token) = bearer(headers) else {
        return Answer::refused(
            401,
            "a worker's request needs its token: Authorization: Bearer TOKEN",
        );
    };
    let (reply, answer) = oneshot::channel();
    let sent = tx.send(Request {
        token,
        asked,
        reply,
    });
    match sent.await {
        Ok(()) => answer.await.unwrap_or_else(|_| stopping()),
        Err(_) => stopping(),
    }
}

fn stopping() -> Answer {
    Answer::refused(503, "the season's run is stopping; ask again later")
}

async fn respond(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let (Some(path), true) = (&a.file, status.is_success()) {
        return match tokio::fs::read(path).await {
            Ok(bytes) => (
                status,
                [(header::CONTENT_TYPE, "application/octet-stream")],
                bytes,
            )
                .into_response(),
            Err(e) => {
                eprintln!("referee: season site: cannot read {}: {e}", path.display());
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(serde_json::json!({"error": "the blob cannot be read"})),
                )
                    .into_response()
            }
        };
    }
    (status, Json(a.json)).into_response()
}

async fn lease(State(tx): State<Tx>, headers: HeaderMap, body: Bytes) -> Response {
    let asked: Ask = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => {
            return respond(Answer::refused(
                400,
                format!("the ask is not the JSON expected: {e}"),
            ))
            .await
        }
    };
    respond(ask(&tx, &headers, Asked::Lease(asked)).await).await
}

async fn heartbeat(
    State(tx): State<Tx>,
    UrlPath(set): UrlPath<i64>,
    Query(q): Query<LeaseQuery>,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::Heartbeat {
        set,
        lease: q.lease,
    };
    respond(ask(&tx, &headers, asked).await).await
}

async fn result(
    State(tx): State<Tx>,
    UrlPath((set, game)): UrlPath<(i64, u32)>,
    Query(q): Query<LeaseQuery>,
    headers: HeaderMap,
    transcript: Bytes,
) -> Response {
    let asked = Asked::Result {
        set,
        game,
        lease: q.lease,
        transcript,
    };
    respond(ask(&tx, &headers, asked).await).await
}

async fn release(
    State(tx): State<Tx>,
    UrlPath(set): UrlPath<i64>,
    Query(q): Query<LeaseQuery>,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::Release {
        set,
        lease: q.lease,
    };
    respond(ask(&tx, &headers, asked).await).await
}

async fn blob(
    State(tx): State<Tx>,
    UrlPath(hash): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    respond(ask(&tx, &headers, Asked::Blob { hash }).await).await
}

async fn stderr(
    State(tx): State<Tx>,
    UrlPath((set, folder, file)): UrlPath<(i64, String, String)>,
    Query(q): Query<LeaseQuery>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let asked = Asked::Stderr {
        set,
        lease: q.lease,
        folder,
        file,
        bytes,
    };
    respond(ask(&tx, &headers, asked).await).await
}
