//! The pool: up to `--jobs` tables at once, each playing its matchup's games
//! with [`Session`]s: six bot processes started for each game under the
//! competition policy or the sandbox, else kept up across the matchup's games
//! (restarted after a crash); see [`fresh_per_game`].
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

use super::events::{Event, Reporter, ToTournament};
use super::outcome::GameOutcome;
use super::schedule::{GameKey, Matchup};
use crate::config::TableSpec;
use crate::session::{Played, Prepared, Session};
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
    crate::layout::tournament::transcript(key.round, key.matchup, key.game)
}

/// Plays `jobs` on `tables` tables until done or `stop` fires; every finished
/// game's outcome is sent on `done`. A table that fails (the referee's own
/// error, not a bot's fault) stops the others and its error is returned.
/// What the tables do besides (a bot that failed to start, a lost game) goes
/// to `reporter`.
pub async fn run(
    dir: PathBuf,
    jobs: Vec<TableJob>,
    tables: usize,
    stop: CancellationToken,
    done: mpsc::Sender<GameOutcome>,
    reporter: Arc<dyn Reporter>,
) -> anyhow::Result<()> {
    let starting = Arc::new(Semaphore::new(STARTING));
    run_throttled(dir, jobs, tables, stop, done, reporter, starting).await
}

/// [`run`], its tables starting their bots under `starting`'s permits, which
/// other pools may share (a season runs a pool per set: one throttle for all).
pub async fn run_throttled(
    dir: PathBuf,
    jobs: Vec<TableJob>,
    tables: usize,
    stop: CancellationToken,
    done: mpsc::Sender<GameOutcome>,
    reporter: Arc<dyn Reporter>,
    starting: Arc<Semaphore>,
) -> anyhow::Result<()> {
    let shared = Shared {
        queue: Arc::new(Mutex::new(VecDeque::from(jobs))),
        starting,
        stop: stop.clone(),
        done,
        dir,
        reporter,
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
/// the stop token, where outcomes go, the tournament directory and reporter.
#[derive(Clone)]
struct Shared {
    queue: Arc<Mutex<VecDeque<TableJob>>>,
    starting: Arc<Semaphore>,
    stop: CancellationToken,
    done: mpsc::Sender<GameOutcome>,
    dir: PathBuf,
    reporter: Arc<dyn Reporter>,
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
            play_table(self, job).await?;
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

/// Whether each game of a table is played by processes started for it alone.
/// The six games of a duplicate set share their cards: a process kept from one
/// game to the next, or a file it left, would know from game 2 on which hands
/// its earlier seats now hold. A fresh process forgets; a scratch directory per
/// game (and, sandboxed, a private `/tmp` per process) leaves it nothing to
/// find. Kept processes (lenient policy, no sandbox) start once per matchup:
/// cheaper, and fine for developing a bot, not for a competition.
pub fn fresh_per_game(spec: &TableSpec) -> bool {
    // The competition policy is the one whose games count for something (a
    // fault forfeits); asked by that trait, not by equality with the constant,
    // so that a policy adjusted by a flag stays a competition's.
    spec.policy.forfeit || spec.isolation.sandbox.is_some()
}

/// Plays a matchup's games. Sandboxed, a game's sessions are fresh and the
/// next game's sandboxes are built while the current game is played
/// (`session::Prepared`: its bots are run only when their game begins).
async fn play_table(shared: &Shared, job: TableJob) -> anyhow::Result<()> {
    let fresh = fresh_per_game(&job.spec);
    let sessions: Vec<&[u32]> = if fresh {
        job.games.chunks(1).collect()
    } else {
        vec![&job.games]
    };
    let ahead = fresh && (job.spec.isolation.sandbox.as_ref()).is_some_and(|s| s.builds_ahead());
    let table = Table {
        shared,
        job: &job,
        fresh,
    };
    let mut next: Option<Prepared> = None;
    for (k, games) in sessions.iter().enumerate() {
        let following = sessions.get(k + 1).and_then(|g| g.first().copied());
        let (go_on, built) = table
            .play(games, next.take(), following.filter(|_| ahead))
            .await?;
        next = built;
        if !go_on {
            break;
        }
    }
    if let Some(unplayed) = next {
        unplayed.abandon().await;
    }
    Ok(())
}

/// One session of a table: its bots started, some of its matchup's games
/// played, its bots ended.
struct Table<'a> {
    shared: &'a Shared,
    job: &'a TableJob,
    /// The session plays one game (see [`fresh_per_game`]).
    fresh: bool,
}

impl Table<'_> {
    /// Plays `games` with one set of processes (`built` for them, if given),
    /// building the processes of game `following` meanwhile, if given.
    /// `Ok((false, _))`: stop the table (the run was interrupted or the
    /// coordinator stopped). The processes built for `following` are
    /// returned.
    async fn play(
        &self,
        games: &[u32],
        built: Option<Prepared>,
        following: Option<u32>,
    ) -> anyhow::Result<(bool, Option<Prepared>)> {
        let Some(&first) = games.first() else {
            return Ok((true, built));
        };
        let Some(mut session) = self.start(first, built).await? else {
            return Ok((false, None));
        };
        // Built once this game's bots are up, while it is played.
        let build = async {
            match following {
                Some(game) => self.build(game).await.map(Some),
                None => Ok(None),
            }
        };
        let play = async {
            let mut result = Ok(true);
            for (k, &game) in (1..).zip(games) {
                result = self.play_game(&mut session, k, game).await;
                if !matches!(result, Ok(true)) {
                    break;
                }
            }
            result
        };
        let (next, result) = tokio::join!(build, play);
        session.shutdown(&self.shared.stop).await;
        match (result, next) {
            (Ok(go_on), Ok(next)) => Ok((go_on, next)),
            (Err(e), Ok(Some(unplayed))) => {
                unplayed.abandon().await;
                Err(e)
            }
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        }
    }

    /// Starts the session's bots (at most [`STARTING`] tables at once) for a
    /// session whose first game is `first`, from the processes `built` for
    /// it if given. `None`: the run was stopped.
    async fn start(&self, first: u32, built: Option<Prepared>) -> anyhow::Result<Option<Session>> {
        let (shared, m) = (self.shared, &self.job.matchup);
        let tables = Arc::new(ToTournament(shared.reporter.clone()));
        let _permit = (shared.starting.acquire().await).expect("the semaphore stays open");
        let built = match built {
            Some(b) => b,
            None => self.build(first).await?,
        };
        Session::begin(built, m.seat_slot(first), &shared.stop, tables)
            .await
            .with_context(|| {
                format!(
                    "failed to start the table of round {} matchup {}",
                    m.round, m.index
                )
            })
    }

    /// The processes of a session whose first game is `first`, started as
    /// far as they go without running a bot (`session::Prepared`).
    async fn build(&self, first: u32) -> anyhow::Result<Prepared> {
        let m = &self.job.matchup;
        let mut spec = self.job.spec.clone();
        let stderr_dir = self.prepare(&mut spec, first)?;
        Prepared::new(spec, stderr_dir).await.with_context(|| {
            format!(
                "failed to start the table of round {} matchup {}",
                m.round, m.index
            )
        })
    }

    /// Plays the matchup's game `game`, the `k`-th of the session, and sends
    /// its outcome to the coordinator. `Ok(false)`: stop the table.
    async fn play_game(&self, session: &mut Session, k: u32, game: u32) -> anyhow::Result<bool> {
        let (shared, m) = (self.shared, &self.job.matchup);
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
            announced: k,
            // Kept processes count the games of the table's session, which
            // a resumed table starts partway: not recorded.
            record_announced: self.fresh,
            seed: m.game_seed(game),
            seat_slot: m.seat_slot(game),
            transcript: shared.dir.join(&rel),
        };
        // Kept processes see request ids rise through the matchup, from a
        // base that a resumed table also uses; fresh ones start at 1, so
        // the ids tell them nothing about the game's place in the matchup.
        if !self.fresh {
            session.first_request_id(m.first_request_id(game));
        }
        let played = session.play(&plan, &shared.stop).await.with_context(|| {
            format!(
                "failed to play round {} matchup {} game {game}",
                m.round, m.index
            )
        })?;
        match played {
            Played::Finished(_) => {}
            Played::Interrupted => {
                discard_partial(&plan.transcript);
                return Ok(false);
            }
            // A transcript that could not be written (a full disk): only this
            // game is lost; it is never journaled, and `--resume` plays it again.
            Played::Lost(error) => {
                shared
                    .reporter
                    .report(&Event::GameLost { key, error: &error });
                return Ok(true);
            }
        }
        let outcome = GameOutcome::read(&shared.dir, &rel, key, m.teams(game));
        if shared.stop.is_cancelled() {
            // Finished while the run was being stopped. The signal that
            // stops it may have reached the bots first (a cluster cancelling
            // a task signals every process in it), and a bot killed so
            // would be recorded as faulting: not journaled, and `--resume`
            // plays the game again.
            discard_game(&plan.transcript);
            return Ok(false);
        }
        // A closed channel: the coordinator stopped.
        Ok(shared.done.send(outcome?).await.is_ok())
    }

    /// Where the session's bots log, and their scratch directories (`--scratch`)
    /// in `spec`: the matchup's, or the game's, emptied first (a game abandoned
    /// by an interruption and played again after `--resume` deals the same
    /// cards: what its bots wrote the first time must be gone).
    fn prepare(&self, spec: &mut TableSpec, first: u32) -> anyhow::Result<PathBuf> {
        let m = &self.job.matchup;
        let table =
            crate::layout::tournament::table(&self.shared.dir, m.round, m.index, first, self.fresh);
        if let Some(base) = &spec.isolation.scratch {
            let path = base.join(&table.scratch);
            if self.fresh {
                match std::fs::remove_dir_all(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(anyhow::anyhow!(
                            "failed to empty the scratch directory {}: {e}",
                            path.display()
                        ))
                    }
                    _ => {}
                }
            }
            spec.isolation.scratch = Some(path);
        }
        Ok(table.logs)
    }
}

/// Removes what an abandoned game left: it was never recorded, and `--resume`
/// plays it again from the start.
/// Removes a finished game's transcript and timings (and any `.partial` left).
fn discard_game(transcript: &Path) {
    discard_partial(transcript);
    for path in [
        transcript.to_path_buf(),
        crate::config::Output::timings(transcript),
    ] {
        let _ = std::fs::remove_file(path);
    }
}

fn discard_partial(transcript: &Path) {
    for path in [
        transcript.to_path_buf(),
        crate::config::Output::timings(transcript),
    ] {
        let _ = std::fs::remove_file(crate::layout::partial(&path));
    }
}
