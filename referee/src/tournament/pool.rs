//! The pool: up to `--jobs` tables at once, each its own [`Session`] (six bot
//! processes kept up across the games of its matchup, restarted after a crash).
//! A finished game's outcome goes to the coordinator, which journals it; a table
//! never writes shared state itself. Spawns are throttled: at most
//! [`STARTING`] tables start their bots at the same time.
//!
//! Which table plays a matchup, and in what order tables finish, changes nothing
//! recorded: a game's seed, seating and request ids come from the schedule.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::outcome::GameOutcome;
use super::schedule::{GameKey, Matchup};
use crate::config::TableSpec;
use crate::session::{Interrupted, Session};
use crate::table::GamePlan;

/// Tables that may be starting their bots at once.
pub const STARTING: usize = 2;

/// One matchup's games still to play, and the table that plays them.
pub struct TableJob {
    pub matchup: Matchup,
    pub spec: TableSpec,
    /// Game numbers (from 1), ascending.
    pub games: Vec<u32>,
}

/// The transcript of a game, relative to the tournament directory.
pub fn transcript_name(key: GameKey) -> String {
    format!(
        "games/r{:02}-m{:04}-g{:03}.jsonl",
        key.round, key.matchup, key.game
    )
}

/// Plays `jobs` on `tables` tables until done or `stop` fires; every finished
/// game's outcome is sent on `done`. A table that fails (the referee's own
/// error, not a bot's fault) stops the others and its error is returned.
pub async fn run(
    dir: PathBuf,
    jobs: Vec<TableJob>,
    tables: usize,
    stop: CancellationToken,
    done: mpsc::Sender<GameOutcome>,
) -> anyhow::Result<()> {
    let shared = Shared {
        queue: Arc::new(Mutex::new(VecDeque::from(jobs))),
        starting: Arc::new(Semaphore::new(STARTING)),
        stop: stop.clone(),
        done,
        dir,
    };
    let mut workers = JoinSet::new();
    let mut failure: Option<anyhow::Error> = None;
    for k in 0..tables {
        match spawn_table(k, shared.clone()) {
            Ok(end) => {
                workers.spawn(async move {
                    end.await
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a table's thread panicked")))
                });
            }
            Err(e) => {
                stop.cancel();
                failure = Some(anyhow::Error::new(e).context("failed to start a table's thread"));
                break;
            }
        }
    }
    drop(shared);
    while let Some(joined) = workers.join_next().await {
        let error = match joined {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e,
            Err(e) => anyhow::anyhow!("failed to run a table: {e}"),
        };
        stop.cancel();
        failure.get_or_insert(error);
    }
    failure.map_or(Ok(()), Err)
}

/// What every table shares: the matchups still to play, the start throttle,
/// the stop token, where outcomes go, and the tournament directory.
#[derive(Clone)]
struct Shared {
    queue: Arc<Mutex<VecDeque<TableJob>>>,
    starting: Arc<Semaphore>,
    stop: CancellationToken,
    done: mpsc::Sender<GameOutcome>,
    dir: PathBuf,
}

impl Shared {
    /// Plays matchups from the queue until it is empty or the run stops.
    async fn work(&self) -> anyhow::Result<()> {
        loop {
            let job = self
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front();
            let Some(job) = job else { return Ok(()) };
            if self.stop.is_cancelled() {
                return Ok(());
            }
            play_table(&self.dir, job, &self.starting, &self.stop, &self.done).await?;
        }
    }
}

/// Table `k`: [`Shared::work`] on a thread of its own with a single-threaded
/// runtime, so its bots' replies wake the thread that waits for them, never
/// another worker's (BENCHMARKS.md, `referee bench`). Its result arrives on the
/// channel returned.
fn spawn_table(
    k: usize,
    shared: Shared,
) -> std::io::Result<tokio::sync::oneshot::Receiver<anyhow::Result<()>>> {
    let (ended, end) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("table-{k}"))
        .spawn(move || {
            let result = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("failed to start a table's runtime")
                .and_then(|runtime| runtime.block_on(shared.work()));
            let _ = ended.send(result);
        })?;
    Ok(end)
}

async fn play_table(
    dir: &Path,
    job: TableJob,
    starting: &Semaphore,
    stop: &CancellationToken,
    done: &mpsc::Sender<GameOutcome>,
) -> anyhow::Result<()> {
    let m = &job.matchup;
    let Some(&first) = job.games.first() else {
        return Ok(());
    };
    // A resumed table logs to a directory of its own, so no log is overwritten.
    let stderr_dir = dir
        .join("stderr")
        .join(format!("r{:02}-m{:04}-from-g{first:03}", m.round, m.index));
    let mut spec = job.spec.clone();
    // Each matchup's bots their own scratch directories (`--scratch`).
    if let Some(base) = &spec.isolation.scratch {
        spec.isolation.scratch = Some(base.join(format!("r{:02}-m{:04}", m.round, m.index)));
    }
    let session = {
        let _permit = starting.acquire().await.expect("the semaphore stays open");
        Session::start(spec, stderr_dir, stop).await
    };
    let mut session = match session {
        Ok(s) => s,
        Err(e) if e.is::<Interrupted>() => return Ok(()),
        Err(e) => {
            return Err(e.context(format!(
                "failed to start the table of round {} matchup {}",
                m.round, m.index
            )))
        }
    };
    let mut result = Ok(());
    for &game in &job.games {
        let key = GameKey {
            round: m.round,
            matchup: m.index,
            game,
        };
        let rel = transcript_name(key);
        let plan = GamePlan {
            match_seed: m.seed,
            // The header's game number is the set: see `Matchup::game_seed`.
            game: m.set_of(game),
            seed: m.game_seed(game),
            seat_slot: m.seat_slot(game),
            transcript: dir.join(&rel),
        };
        session.first_request_id(m.first_request_id(game));
        match session.play(&plan, stop).await {
            Ok(_) => {}
            Err(e) if e.is::<Interrupted>() => {
                discard_partial(&plan.transcript);
                break;
            }
            // A transcript that could not be written (a full disk): only this game
            // is lost; it is never journaled, and `--resume` plays it again.
            Err(e) if e.is::<crate::transcript::Lost>() => {
                eprintln!(
                    "referee: round {} matchup {} game {game} lost: {e:#}; it is not \
                     journaled (--resume plays it again)",
                    m.round, m.index
                );
                continue;
            }
            Err(e) => {
                result = Err(e.context(format!(
                    "failed to play round {} matchup {} game {game}",
                    m.round, m.index
                )));
                break;
            }
        }
        match GameOutcome::read(dir, &rel, key, m.teams(game)) {
            Ok(o) => {
                if done.send(o).await.is_err() {
                    break; // the coordinator stopped
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    session.shutdown(stop).await;
    result
}

/// Removes what an abandoned game left: it was never recorded, and `--resume`
/// plays it again from the start.
fn discard_partial(transcript: &Path) {
    for path in [
        transcript.to_path_buf(),
        crate::config::Output::timings(transcript),
    ] {
        let mut partial = path.into_os_string();
        partial.push(".partial");
        let _ = std::fs::remove_file(partial);
    }
}
