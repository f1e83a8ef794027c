//! `referee season serve DIR` (and `season run DIR --serve ADDR`): the
//! season's live site, an axum server reading `season.db` through
//! connections that never write (WAL: the run's writes are never blocked).
//!
//! - `/`: the standings, stating their order, kept current by a few lines
//!   of script that listen to `/events` and fetch `/standings-table`;
//! - `/entrants/NAME`: versions with lineage, the rating over time (an
//!   inline SVG), a cross-table, recent games with replay pages, faults in
//!   words, and a form for the entrant's own stderr logs (`logs.rs`);
//! - `/games/SET/GAME`: a game's replay page, made from its transcript by
//!   the replay page code (`show/html.rs`); the file is the one the
//!   database names for that game, never a name from the URL;
//! - `/final`: the final bracket's standings, once `DIR/final/` holds one;
//! - `/api/standings` (what `season standings --json` prints),
//!   `/api/entrants/NAME`, `/api/entrants/NAME/logs` (with
//!   `Authorization: Bearer TOKEN`);
//! - `POST /api/entrants/NAME/versions?command=CMD`: the entrant's upload,
//!   a `.tar.gz` body with its token (`upload.rs`);
//! - `/events`: server-sent events, one `sets` event as each set lands;
//! - `/api/worker/...`: with `season run --workers`, the workers' routes
//!   (`worker.rs`), answered by the run's coordinator.
//!
//! Every page is whole in itself: no external asset, no network. The
//! connections are served under a cap, with header and request timeouts
//! and a cap of event streams (`serve.rs`).

mod chart;
mod entrant;
mod events;
mod logs;
mod pages;
pub mod serve;
mod upload;
pub mod worker;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::db::Db;
use super::standings;
use crate::layout::season::DB;

/// The largest request body the site reads (the logs form's token), but
/// for an upload's (`upload::BODY_LIMIT`).
const BODY_LIMIT: usize = 4096;

/// What every handler shares: the season's folder, what the watcher saw
/// last, and the standings as of the watcher's last generation.
struct Site {
    dir: PathBuf,
    seen: watch::Receiver<events::Seen>,
    cache: Mutex<Option<Cached>>,
    /// Each entrant's page data, with the generation it was read at.
    entrants: Mutex<HashMap<String, (u64, Arc<entrant::Entrant>)>>,
    /// Cancelled when the site stops: the event streams end then, so the
    /// graceful shutdown has no endless response to wait for.
    stop: CancellationToken,
    limits: serve::Limits,
    /// The places of event streams ([`serve::Limits::event_streams`]).
    streams: Arc<tokio::sync::Semaphore>,
    /// Read-only connections a request left, for the next ones (at most
    /// [`IDLE`]): a PostgreSQL season's pages do not each pay for a new
    /// connection and its authentication.
    idle: Mutex<Vec<Db>>,
}

/// The most read-only connections the site keeps between requests.
const IDLE: usize = 4;

/// The standings computed at one generation of the database: as JSON, and
/// as the table of `/` and `/standings-table`. Every request but the first
/// after a change reads them from here (at most a poll, 250 ms, late).
struct Cached {
    generation: u64,
    json: Arc<String>,
    table: Arc<String>,
}

type Shared = Arc<Site>;

/// A request the site refuses or could not answer: a status and a sentence.
pub struct Failure(StatusCode, String);

impl Failure {
    fn not_found(what: String) -> Failure {
        Failure(StatusCode::NOT_FOUND, what)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        // The details (paths, SQLite's words) go to the organiser's console.
        eprintln!("referee: season site: {e:#}");
        Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the site failed to read the season (its console says why)".into(),
        )
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let mut text = self.1;
        text.push('\n');
        let mut r = (self.0, text).into_response();
        if self.0 == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                "Bearer".parse().expect("a header"),
            );
        }
        r
    }
}

/// Binds `addr` and serves the season in `dir` until `cancel`; the address
/// bound (a port of 0 picks one) once it listens, said on stderr.
pub async fn start(
    dir: &Path,
    addr: SocketAddr,
    limits: serve::Limits,
    cancel: CancellationToken,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<anyhow::Result<()>>)> {
    start_with(dir, addr, limits, cancel, None).await
}

/// [`start`], with `more` routes served beside the site's (the workers').
pub async fn start_with(
    dir: &Path,
    addr: SocketAddr,
    limits: serve::Limits,
    cancel: CancellationToken,
    more: Option<Router>,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<anyhow::Result<()>>)> {
    let db = Db::open_read_only(&dir.join(DB))?;
    let seen = events::watch(db)?;
    let site = Arc::new(Site {
        dir: dir.to_path_buf(),
        seen,
        cache: Mutex::new(None),
        entrants: Mutex::new(HashMap::new()),
        stop: cancel.clone(),
        limits,
        streams: Arc::new(tokio::sync::Semaphore::new(limits.event_streams)),
        idle: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("the site cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    eprintln!("referee: season site at http://{bound}/");
    // The workers' routes read a transcript's body, or answer, within the
    // uploads' bound: a slow body holds no connection longer than an
    // archive's may.
    let app = match more {
        Some(more) => router(site).merge(more.route_layer(axum::middleware::from_fn_with_state(
            limits.upload,
            serve::within,
        ))),
        None => router(site),
    };
    let task = tokio::spawn(serve::serve(listener, app, limits, cancel));
    Ok((bound, task))
}

/// Every route; all but an upload and the event stream answer within the
/// request timeout (`serve.rs`), and read at most [`BODY_LIMIT`] of a body.
fn router(site: Shared) -> Router {
    let timed = Router::new()
        .route("/", get(index))
        .route("/standings-table", get(standings_table))
        .route("/entrants/{name}", get(entrant_page))
        .route(
            "/entrants/{name}/logs",
            get(logs::page_bearer).post(logs_form),
        )
        .route("/games/{set}/{game}", get(replay))
        .route("/final", get(final_page))
        .route("/api/standings", get(api_standings))
        .route("/api/entrants/{name}", get(api_entrant))
        .route("/api/entrants/{name}/logs", get(logs::api))
        .route_layer(axum::middleware::from_fn_with_state(
            site.limits.request,
            serve::within,
        ));
    // An upload reads its body under its own bound (`upload.rs`); an event
    // stream lasts as long as its page.
    let untimed = Router::new()
        .route("/api/entrants/{name}/versions", post(upload::post))
        .route("/events", get(events::stream));
    timed
        .merge(untimed)
        .fallback(|| async { Failure::not_found("no such page on this season's site".into()) })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(site)
}

/// Runs `f` on a read-only connection (one a request left, or a new one),
/// off the async threads. A connection is kept for the next request only
/// after `f` succeeded on it, so a broken one is not handed on.
async fn with_db<T: Send + 'static>(
    site: &Shared,
    f: impl FnOnce(&Db, &Path) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    let site = site.clone();
    tokio::task::spawn_blocking(move || {
        let kept = site.idle.lock().expect("the idle connections").pop();
        let db = match kept {
            Some(db) => db,
            None => Db::open_read_only(&site.dir.join(DB))?,
        };
        let answer = f(&db, &site.dir)?;
        let mut idle = site.idle.lock().expect("the idle connections");
        if idle.len() < IDLE {
            idle.push(db);
        }
        Ok(answer)
    })
    .await
    .map_err(|e| Failure::from(anyhow::anyhow!("a request's task failed: {e}")))?
}

/// The standings as JSON and as a table, from the cache if they are current.
async fn standings_now(site: &Shared) -> Result<(Arc<String>, Arc<String>), Failure> {
    let generation = site.seen.borrow().generation;
    if let Some(c) = site.cache.lock().expect("the cache").as_ref() {
        if c.generation == generation {
            return Ok((c.json.clone(), c.table.clone()));
        }
    }
    let (json, table) = with_db(site, |db, _| {
        let s = standings::compute(db)?;
        Ok((Arc::new(s.json()), Arc::new(pages::standings_table(&s))))
    })
    .await?;
    // Kept under the generation read before computing: a change meanwhile
    // makes the next request compute them again.
    *site.cache.lock().expect("the cache") = Some(Cached {
        generation,
        json: json.clone(),
        table: table.clone(),
    });
    Ok((json, table))
}

async fn index(State(site): State<Shared>) -> Result<Html<String>, Failure> {
    let (_, table) = standings_now(&site).await?;
    let dir = site.dir.clone();
    let with_final = tokio::task::spawn_blocking(move || pages::has_final(&dir))
        .await
        .unwrap_or(false);
    Ok(Html(pages::standings(&table, with_final)))
}

async fn standings_table(State(site): State<Shared>) -> Result<Html<String>, Failure> {
    Ok(Html(standings_now(&site).await?.1.to_string()))
}

async fn api_standings(State(site): State<Shared>) -> Result<Response, Failure> {
    let json = standings_now(&site).await?.0.to_string();
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

/// Entrant `name`'s page data, from the cache if it is current (only
/// entrants that exist are kept: at most one entry per entrant).
async fn entrant_now(site: &Shared, name: String) -> Result<Arc<entrant::Entrant>, Failure> {
    let generation = site.seen.borrow().generation;
    if let Some((g, e)) = site.entrants.lock().expect("the cache").get(&name) {
        if *g == generation {
            return Ok(e.clone());
        }
    }
    let key = name.clone();
    let e = Arc::new(with_db(site, move |db, _| entrant::of(db, &name)).await?);
    let mut cache = site.entrants.lock().expect("the cache");
    cache.retain(|_, (g, _)| *g == generation);
    cache.insert(key, (generation, e.clone()));
    Ok(e)
}

async fn entrant_page(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
) -> Result<Html<String>, Failure> {
    Ok(Html(pages::entrant(&*entrant_now(&site, name).await?)))
}

async fn api_entrant(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response, Failure> {
    let e = entrant_now(&site, name).await?;
    Ok(axum::Json(&*e).into_response())
}

async fn replay(
    State(site): State<Shared>,
    UrlPath((set, game)): UrlPath<(i64, u32)>,
) -> Result<Html<String>, Failure> {
    with_db(&site, move |db, dir| {
        Ok(Html(entrant::replay(db, dir, set, game)?))
    })
    .await
}

async fn final_page(State(site): State<Shared>) -> Result<Html<String>, Failure> {
    let dir = site.dir.clone();
    tokio::task::spawn_blocking(move || pages::final_bracket(&dir))
        .await
        .map_err(|e| Failure::from(anyhow::anyhow!("a request's task failed: {e}")))?
        .map(Html)
}

/// The logs form: `token=…` posted from the entrant's page.
#[derive(serde::Deserialize)]
struct TokenForm {
    token: String,
}

async fn logs_form(
    State(site): State<Shared>,
    UrlPath(name): UrlPath<String>,
    Form(form): Form<TokenForm>,
) -> Result<Html<String>, Failure> {
    logs::page(&site, name, Some(form.token)).await
}

/// The token of an `Authorization: Bearer TOKEN` header.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    Some(token.to_owned())
}
