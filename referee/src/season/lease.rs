//! Sets played by workers (`referee season worker`, `worker/`) under
//! leases: what a worker and the season's server say to each other, and how
//! the server judges a transcript a worker hands back.
//!
//! A worker asks for a set (`POST /api/worker/lease`, with its token, its
//! referee's version, its tables and whether it can sandbox) and is granted
//! one with a lease: the set, the games still to play, its versions (each
//! with the hash of its files, `blob.rs`) and the season's recorded
//! settings. It heartbeats while it plays (each one extends the lease) and
//! hands back each game's transcript. The coordinator (`run/workers.rs`)
//! answers every request, in its own loop, so the database has one writer.
//!
//! A transcript counts only if the lease is the worker's (same worker, same
//! lease id, not run out) and it checks out here: the rules and the
//! referee's bookkeeping replayed (`verify.rs`), the set's seed, the game's
//! number, the set's versions in its seats, and the season's settings in
//! its header. Anything else is refused; a lease run out is refused with
//! `409`, a transcript that does not check out with `422`, and the set goes
//! back to the queue.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::db::{SetRow, Version};
use super::settings::Settings;
use crate::load::Transcript;
use crate::tournament::outcome::GameOutcome;

/// A worker's request for a set: what it declares of itself.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ask {
    /// The worker's referee (name and version): transcripts record it, so
    /// it must be the season's.
    pub referee: String,
    /// Sets it plays at once: it holds no more leases than that.
    pub tables: usize,
    /// Whether its sandbox self-check passed: a sandboxed season's sets go
    /// only to workers that can sandbox.
    pub sandbox: bool,
    /// This worker process, drawn at its start: several processes may share
    /// one worker token (a Deployment's replicas, an array job's tasks), and
    /// `tables` bounds the leases of each.
    #[serde(default)]
    pub instance: String,
}

/// A version as a worker needs it to start it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shipped {
    pub id: i64,
    pub name: String,
    pub number: i64,
    pub command: String,
    /// The SHA-256 of its files' archive (`GET /api/worker/blobs/HASH`);
    /// `None`: no files to ship (a built-in bot, or a command that names
    /// what it runs).
    pub blob: Option<String>,
}

/// A set granted to a worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Granted {
    pub set: i64,
    /// The lease's id: every heartbeat and result names it.
    pub lease: String,
    /// How long the lease lasts from each heartbeat, in milliseconds.
    pub lease_ms: u64,
    /// The set's deal seed.
    pub seed: u64,
    /// Its versions, in the set's order.
    pub versions: [Shipped; 3],
    /// The games still to play.
    pub games: Vec<u32>,
    /// The season's recorded settings: every table is built from them.
    pub settings: Settings,
}

/// The server's answer to an ask: a set, or why there is none.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Offer {
    pub granted: Option<Granted>,
    /// The run has reached its `--sets` target: the worker may stop.
    pub done: bool,
}

/// What a worker asks of the coordinator, with its token.
pub enum Asked {
    Lease(Ask),
    Heartbeat {
        set: i64,
        lease: String,
    },
    Result {
        set: i64,
        game: u32,
        lease: String,
        transcript: bytes::Bytes,
    },
    /// The worker gives the set back (it stops, or a game was lost).
    Release {
        set: i64,
        lease: String,
    },
    /// May this token read blob `hash`?
    Blob {
        hash: String,
    },
    /// The end of a bot's stderr log on the worker (`stderr/FOLDER/FILE`,
    /// as a table writes it), kept where the server's own tables keep
    /// theirs, for the entrant's logs page.
    Stderr {
        set: i64,
        lease: String,
        folder: String,
        file: String,
        bytes: bytes::Bytes,
    },
}

/// The most of a bot's stderr log a worker sends (its end): twice what an
/// entrant's logs page shows.
pub const STDERR_TAIL: usize = 64 << 10;

/// A request from the site's worker routes to the coordinator.
pub struct Request {
    pub token: String,
    pub asked: Asked,
    pub reply: tokio::sync::oneshot::Sender<Answer>,
}

/// The coordinator's answer: an HTTP status and a JSON body, or a file to
/// send (a blob).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub json: serde_json::Value,
    pub file: Option<PathBuf>,
}

impl Answer {
    pub fn ok(json: serde_json::Value) -> Answer {
        Answer {
            status: 200,
            json,
            file: None,
        }
    }

    /// A refusal: `status`, and `{"error": why}` (plus `"lease": "lost"`
    /// on a 409, which tells the worker to drop its set).
    pub fn refused(status: u16, why: impl Into<String>) -> Answer {
        let mut json = serde_json::json!({ "error": why.into() });
        if status == 409 {
            json["lease"] = "lost".into();
        }
        Answer {
            status,
            json,
            file: None,
        }
    }
}

/// The channel the site's worker routes send requests on.
pub type Inbox = tokio::sync::mpsc::Receiver<Request>;

/// How long a lease lasts from each heartbeat, by default.
pub const LEASE_MS: u64 = 60_000;

/// The outcome of game `game` of set `set` from a worker's transcript
/// `bytes`, if it checks out as one of the season's games; why not, in
/// words, otherwise. The bytes are read from a file of `incoming` (the
/// transcript reader reads files), removed before returning.
pub fn judge(
    incoming: &Path,
    bytes: &[u8],
    set: &SetRow,
    game: u32,
    versions: &[Version],
    settings: &Settings,
) -> anyhow::Result<Result<GameOutcome, String>> {
    std::fs::create_dir_all(incoming)?;
    let file = tempfile::NamedTempFile::new_in(incoming)?;
    std::fs::write(file.path(), bytes)?;
    let t = match Transcript::read(file.path()) {
        Ok(t) => t,
        Err(e) => return Ok(Err(format!("not a whole transcript: {}", e.reason))),
    };
    Ok(check(&t, set, game, versions, settings))
}

fn check(
    t: &Transcript,
    set: &SetRow,
    game: u32,
    versions: &[Version],
    settings: &Settings,
) -> Result<GameOutcome, String> {
    let o = super::audit::derive(t, set, game, versions)?;
    let h = t.header().map_err(|e| e.to_string())?;
    let differ = [
        ("referee", h.referee != settings.referee),
        ("rules", h.rules != settings.rules),
        ("time control", h.time_control != settings.time_control),
        ("fault policy", h.fault_policy != settings.fault_policy),
        (
            "isolation",
            h.isolation.as_deref() != Some(&settings.isolation),
        ),
    ];
    let named: Vec<&str> = differ.iter().filter(|d| d.1).map(|d| d.0).collect();
    if !named.is_empty() {
        return Err(format!(
            "its header's {} are not the season's",
            named.join(", ")
        ));
    }
    Ok(o)
}
