//! `POST /api/entrants/NAME/versions?command=CMD`: an entrant's own upload
//! over HTTP, with `Authorization: Bearer TOKEN` and the `.tar.gz` as the
//! body. The site only carries it to [`crate::season::upload::submit_archive`],
//! which judges the token, the command and every entry before anything is
//! written, and runs `check-bot`; the answer is its verdict as JSON.
//!
//! Statuses: 201 admitted; 200 taken but refused by `check-bot` (the report
//! says why; the version is recorded and never plays); 401 no token; 403 a
//! token that is not this entrant's, or a season without a sandbox whose
//! organiser did not opt in to uploads (JSON: `"error": "unsandboxed"`); 400
//! a refused command or archive; 413 an archive over the cap; 409 a closed
//! season; 500 the referee's failure.
//! One upload is judged at a time (each runs a bot through `check-bot`).

use std::sync::Mutex;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{bearer, Failure, Shared};
use crate::season::unpack::{Refusal, CAPS};
use crate::season::upload::{self, UploadError};

/// The largest body the route reads: the archive's cap, and one byte more
/// so that an archive over it is told so by the unpacker's words.
pub const BODY_LIMIT: usize = CAPS.archive as usize + 1;

/// Uploads are judged one at a time.
static JUDGING: Mutex<()> = Mutex::new(());

#[derive(serde::Deserialize)]
pub struct UploadQuery {
    command: Option<String>,
}

pub async fn post(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    let Some(token) = bearer(&headers) else {
        return Err(Failure(
            StatusCode::UNAUTHORIZED,
            "an upload needs its entrant's token: Authorization: Bearer TOKEN".into(),
        ));
    };
    let Some(command) = query.command.filter(|c| !c.trim().is_empty()) else {
        return Err(Failure(
            StatusCode::BAD_REQUEST,
            "an upload needs its command: ?command=python3%20bot.py (URL-encoded)".into(),
        ));
    };
    let body = archive(body, site.limits.upload).await?;
    let dir = site.dir.clone();
    let judged = tokio::task::spawn_blocking(move || {
        let _one = JUDGING.lock().unwrap_or_else(|e| e.into_inner());
        upload::submit_archive(&dir, &name, &token, &command, &body)
    })
    .await
    .map_err(|e| anyhow::anyhow!("the upload's task failed: {e}"))?;
    let done = match judged {
        Ok(done) => done,
        Err(UploadError::Unsandboxed) => return Ok(unsandboxed()),
        Err(e) => return Err(refused(e)),
    };
    let status = match done.admitted {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    let answer = serde_json::json!({
        "version": done.number,
        "admitted": done.admitted,
        "checked": done.checked,
        "report": done.report,
        "files": done.files,
        "bytes": done.bytes,
    });
    Ok((status, axum::Json(answer)).into_response())
}

/// The upload's body, at most [`BODY_LIMIT`] bytes, arrived within `limit`
/// (`serve.rs`: the site's other requests have a shorter bound); else 413
/// or 408.
async fn archive(body: Body, limit: std::time::Duration) -> Result<Vec<u8>, Failure> {
    use futures_util::StreamExt;
    let mut chunks = body.into_data_stream();
    let mut bytes = Vec::new();
    let read = async {
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| {
                Failure(
                    StatusCode::BAD_REQUEST,
                    format!("the archive could not be read: {e}"),
                )
            })?;
            if bytes.len() + chunk.len() > BODY_LIMIT {
                return Err(Failure(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the archive is over {} bytes; an upload is at most {} bytes (compressed)",
                        CAPS.archive, CAPS.archive
                    ),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(limit, read).await {
        Ok(read) => read.map(|()| bytes),
        Err(_) => Err(Failure(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the archive did not arrive within {} s (--site-upload-timeout); send it again",
                limit.as_secs()
            ),
        )),
    }
}

/// The refusal of a season without a sandbox whose organiser did not opt
/// in: 403, as JSON saying why and what the organiser can do.
fn unsandboxed() -> Response {
    let answer = serde_json::json!({
        "error": "unsandboxed",
        "message": UploadError::Unsandboxed.to_string(),
        "organiser": "season init --sandbox (Linux), or season init \
                      --allow-unsandboxed-uploads to take uploads without a sandbox",
    });
    (StatusCode::FORBIDDEN, axum::Json(answer)).into_response()
}

/// An upload not taken, as its status and sentence.
fn refused(e: UploadError) -> Failure {
    let status = match &e {
        UploadError::Forbidden => StatusCode::FORBIDDEN,
        UploadError::Closed => StatusCode::CONFLICT,
        UploadError::Unsandboxed => StatusCode::FORBIDDEN,
        UploadError::Archive(Refusal::ArchiveTooLarge { .. }) => StatusCode::PAYLOAD_TOO_LARGE,
        UploadError::Refused(_) | UploadError::Archive(_) => StatusCode::BAD_REQUEST,
        UploadError::Internal(_) => {
            return Failure::from(anyhow::anyhow!("{e}"));
        }
    };
    Failure(status, e.to_string())
}
