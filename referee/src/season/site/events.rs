//! `/events`: server-sent events as sets land. One watcher thread holds a
//! read-only connection and asks SQLite's `data_version` (which changes when
//! another connection commits) four times a second; when it changed, it
//! counts the finished sets and publishes a new [`Seen`]: its generation
//! tells the standings' cache (`mod.rs`) to compute them again, and a new
//! count of sets goes to every listener.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::watch;

use super::serve::Slot;
use super::{Failure, Shared};
use crate::season::db::Db;

/// How often the watcher asks the database.
const POLL: Duration = Duration::from_millis(250);

/// What the watcher saw last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Counts the commits seen (one or more each time).
    pub generation: u64,
    /// Finished sets.
    pub sets: i64,
}

/// Starts the watcher on `db`; what it sees, kept current.
pub fn watch(db: Db) -> anyhow::Result<watch::Receiver<Seen>> {
    let (tx, rx) = watch::channel(Seen {
        generation: 0,
        sets: db.finished_count()?,
    });
    let mut seen = db.data_version()?;
    std::thread::Builder::new()
        .name("season-site-watch".into())
        .spawn(move || loop {
            std::thread::sleep(POLL);
            if tx.is_closed() {
                return;
            }
            let now = match db.data_version() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("referee: season site: cannot watch the database: {e:#}");
                    continue;
                }
            };
            if now == seen {
                continue;
            }
            seen = now;
            if let Ok(sets) = db.finished_count() {
                tx.send_modify(|s| {
                    s.generation += 1;
                    s.sets = sets;
                });
            }
        })?;
    Ok(rx)
}

/// The event stream: `sets` with `{"sets": N}` at once, then at each change.
/// It takes one of the site's places for event streams (503 when none is
/// free: the page works without) and gives back its connection's place
/// under the connection cap (`serve.rs`), since it lasts as long as its
/// page.
pub async fn stream(State(site): State<Shared>, slot: Option<Extension<Slot>>) -> Response {
    let Ok(place) = site.streams.clone().try_acquire_owned() else {
        let said = format!(
            "the site serves at most {} event streams at once (--site-event-streams); \
             the page works without live updates: reload it later",
            site.limits.event_streams
        );
        let mut r = Failure(StatusCode::SERVICE_UNAVAILABLE, said).into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, "30".parse().expect("a header"));
        return r;
    };
    if let Some(Extension(slot)) = slot {
        slot.give_back();
    }
    let mut rx = site.seen.clone();
    rx.mark_changed();
    let stop = site.stop.clone();
    let events = stream::unfold((rx, None, place), move |(mut rx, sent, place)| {
        let stop = stop.clone();
        async move {
            loop {
                tokio::select! {
                    changed = rx.changed() => changed.ok()?,
                    _ = stop.cancelled() => return None,
                }
                let n = rx.borrow_and_update().sets;
                if sent != Some(n) {
                    let event = Event::default()
                        .event("sets")
                        .data(format!("{{\"sets\":{n}}}"));
                    return Some((Ok::<_, Infallible>(event), (rx, Some(n), place)));
                }
            }
        }
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
