//! `/events`: server-sent events as sets land. One watcher thread holds a
//! read-only connection and asks SQLite's `data_version` (which changes when
//! another connection commits) four times a second; when it changed, it
//! counts the finished sets and publishes a new [`Seen`]: its generation
//! tells the standings' cache (`mod.rs`) to compute them again, and a new
//! count of sets goes to every listener.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use super::Shared;
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
pub async fn stream(
    State(site): State<Shared>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut rx = site.seen.clone();
    rx.mark_changed();
    let stop = site.stop.clone();
    let events = stream::unfold((rx, None), move |(mut rx, sent)| {
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
                    return Some((Ok(event), (rx, Some(n))));
                }
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
