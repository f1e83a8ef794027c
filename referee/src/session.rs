//! A session: six bot processes, the handshake, the games of a match, shutdown.
//!
//! A bot process lives for the whole session and may sit at a different seat in
//! each game. The session owns the [`Slot`]s; `table.rs` borrows them for one game
//! at a time. `referee play` is one session; a tournament table is one per
//! matchup, or one per game where its bots must not remember the duplicate set
//! (`tournament::pool::fresh_per_game`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::Serialize;
use tokio::time::Instant;

use schmier_protocol::rules::EndReason;
use schmier_protocol::wire::ToBot;
use schmier_protocol::Team;
use schmier_sample_bots::Strategy;

use crate::bot::{LaunchError, Spawn};
use schmier_protocol::shuffle::derive_seed;
use tokio_util::sync::CancellationToken;

use crate::config::{BotSpec, Isolation, PlayConfig, TableSpec};
use crate::fault::{Fault, FaultKind};
use crate::handshake;
use crate::player::Player;
use crate::slot::Slot;
use crate::table::{self, GamePlan, GameRecord};

/// What a finished session reports.
#[derive(Debug, Serialize)]
pub struct MatchSummary {
    pub seed: u64,
    /// The lineup teams' names (slots `k` and `k + 3`), from their bots' names.
    pub teams: [String; 3],
    pub games: Vec<GameSummary>,
    /// Games won per lineup team (slots `k` and `k + 3`).
    pub wins: [u32; 3],
    pub no_winner: u32,
    /// Games whose transcript could not be written (a full disk): reported as
    /// they happened, not counted; the match went on without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<u32>,
}

#[derive(Debug, Serialize)]
pub struct GameSummary {
    pub game: u32,
    pub seed: u64,
    pub transcript: String,
    /// The lineup team credited with the game after forfeits (not the seat
    /// team: seats rotate).
    pub winner: Option<usize>,
    /// Final scores by lineup team.
    pub scores: [i32; 3],
    /// Lineup teams that forfeited the game.
    pub forfeited: Vec<usize>,
    pub deals: u32,
    pub reason: EndReason,
    pub faults: u32,
    #[serde(skip)]
    pub hands: Vec<schmier_protocol::rules::HandScore>,
    /// Where the table's time went in this game (for `referee bench`).
    #[serde(skip)]
    pub stats: crate::stats::TableStats,
}

/// `referee play`: one table, `cfg.games` games, stopped early (with
/// [`Interrupted`]) when `cancel` fires. The game in flight is then abandoned: its
/// transcript stays `*.partial`, every finished one is kept.
pub async fn run(cfg: &PlayConfig, cancel: &CancellationToken) -> anyhow::Result<MatchSummary> {
    let out = crate::outdir::prepare(&cfg.output, cfg.overwrite)?;
    let seats = std::array::from_fn(|s| cfg.slot_at(s, 0));
    let started = Session::start(cfg.table.clone(), cfg.output.stderr_dir(), seats, cancel).await;
    let mut session = started.inspect_err(|_| out.tidy_unplayed())?;
    let failed = session.failed_to_start();
    if !failed.is_empty() && !cfg.keep_going {
        session.shutdown(cancel).await;
        out.tidy_unplayed();
        // Named now that the bots are gone and their stderr is drained: only the
        // logs that hold something (and so were kept).
        let logs: Vec<String> = failed
            .iter()
            .map(|&i| crate::layout::stderr_log(&cfg.output.stderr_dir(), i, 0))
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
            .map(|p| p.display().to_string())
            .collect();
        anyhow::bail!(
            "failed to start {} of the six bots (see above{}); fix the command, or pass \
             --keep-going to play with the referee's fallback in their seats",
            failed.len(),
            match logs.is_empty() {
                true => String::new(),
                false => format!("; what they wrote to stderr is in {}", logs.join(", ")),
            }
        );
    }
    let names: Vec<&str> = session.slots.iter().map(|s| s.name.as_str()).collect();
    let mut summary = MatchSummary {
        seed: cfg.seed,
        teams: crate::names::team_names(&names),
        games: Vec::new(),
        wins: [0; 3],
        no_winner: 0,
        lost: Vec::new(),
    };
    let mut failure = None;
    for g in 0..cfg.games {
        let plan = GamePlan {
            match_seed: cfg.seed,
            game: g + 1,
            // Every game of a match has a seed of its own: a bot that remembers
            // the cards of earlier games learns nothing about this one's.
            announced: g + 1,
            record_announced: true,
            seed: derive_seed(cfg.seed, u64::from(g)),
            seat_slot: std::array::from_fn(|s| cfg.slot_at(s, g)),
            transcript: cfg.output.transcript(g + 1),
        };
        match session.play(&plan, cancel).await {
            Ok(record) => {
                let GameRecord {
                    seed,
                    transcript,
                    result,
                    hands,
                    stats,
                } = record;
                // Seat team t holds lineup team slot_at(t, g) % 3 this game.
                let lineup = |t: Team| cfg.slot_at(t.index(), g) % 3;
                let winner = result.winner.map(lineup);
                let mut scores = [0; 3];
                for t in Team::all() {
                    scores[lineup(t)] = result.scores[t.index()];
                }
                let forfeited: Vec<usize> = result.forfeited.iter().map(|&t| lineup(t)).collect();
                match winner {
                    Some(w) => summary.wins[w] += 1,
                    None => summary.no_winner += 1,
                }
                if !cfg.quiet && cfg.games > 1 {
                    eprintln!(
                        "game {}/{}: {} -> {}",
                        g + 1,
                        cfg.games,
                        crate::report::outcome_text(&summary.teams, winner, scores, &forfeited),
                        transcript.display()
                    );
                }
                summary.games.push(GameSummary {
                    game: g + 1,
                    seed,
                    transcript: transcript.display().to_string(),
                    winner,
                    scores,
                    forfeited,
                    deals: result.deals,
                    reason: result.reason,
                    faults: result.faults.iter().sum(),
                    hands,
                    stats,
                });
                crate::report::note_finished(&summary);
            }
            // Only this game is lost: the table played it out, so the bots are
            // ready for the next one, and every finished transcript stays.
            Err(e) if e.is::<crate::transcript::Lost>() => {
                eprintln!(
                    "referee: game {}/{} lost: {e:#}; it is not counted",
                    g + 1,
                    cfg.games
                );
                summary.lost.push(g + 1);
            }
            Err(e) => {
                failure = Some(match e.downcast::<Interrupted>() {
                    Ok(i) => anyhow::Error::new(i),
                    Err(e) => e.context(format!("failed to play game {}", g + 1)),
                });
                break;
            }
        }
    }
    session.shutdown(cancel).await;
    if summary.games.is_empty() {
        out.tidy_unplayed();
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// The run was stopped by its cancellation token (Ctrl-C, SIGTERM) before it
/// finished; what was finished is kept.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// One table's six bot processes, kept up across the games it plays (one game,
/// where each game has processes of its own).
pub struct Session {
    spec: TableSpec,
    stderr_dir: PathBuf,
    slots: Vec<Slot>,
    next_id: u64,
    played: u32,
}

impl Session {
    /// Starts the six processes of `spec.lineup` and runs their handshake. Bots'
    /// stderr goes to `stderr_dir`; `seat_slot` is the lineup slot at each seat
    /// in the first game (for the console's words on a bot that fails to start).
    pub async fn start(
        spec: TableSpec,
        stderr_dir: PathBuf,
        seat_slot: [usize; 6],
        cancel: &CancellationToken,
    ) -> anyhow::Result<Session> {
        std::fs::create_dir_all(&stderr_dir)
            .with_context(|| format!("failed to create {}", stderr_dir.display()))?;
        let slots = tokio::select! {
            slots = start_bots(&spec, &stderr_dir, seat_slot) => slots?,
            () = cancel.cancelled() => return Err(Interrupted.into()),
        };
        Ok(Session {
            spec,
            stderr_dir,
            slots,
            next_id: 1,
            played: 0,
        })
    }

    /// The lineup slots whose bot failed to start or to say hello (each already
    /// reported on the console with its reason); the fallback plays for them.
    pub fn failed_to_start(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].player.gone().is_some())
            .collect()
    }

    /// Makes the next request id `id` (it must not go back: ids increase through a
    /// session). A tournament table that keeps its processes numbers each game's
    /// requests from a base derived from its place in the schedule, so a resumed
    /// table sends the same ids.
    pub fn first_request_id(&mut self, id: u64) {
        debug_assert!(id >= self.next_id, "request ids never go back");
        self.next_id = self.next_id.max(id);
    }

    /// Plays one game. Bots that crashed in an earlier game are restarted first
    /// (if the policy says so). When `cancel` fires the game is abandoned (its
    /// transcript stays `*.partial`) and [`Interrupted`] is returned.
    pub async fn play(
        &mut self,
        plan: &GamePlan,
        cancel: &CancellationToken,
    ) -> anyhow::Result<GameRecord> {
        if self.played > 0 {
            tokio::select! {
                r = restart_gone(&self.spec, &self.stderr_dir, &mut self.slots) => r?,
                () = cancel.cancelled() => return Err(Interrupted.into()),
            }
        }
        self.played += 1;
        tokio::select! {
            r = table::play_game(&self.spec, plan, &mut self.slots, &mut self.next_id) => r,
            () = cancel.cancelled() => Err(Interrupted.into()),
        }
    }

    /// Says `bye` and ends every process; at once (no grace) when cancelled.
    pub async fn shutdown(mut self, cancel: &CancellationToken) {
        let grace = if cancel.is_cancelled() {
            Duration::ZERO
        } else {
            self.spec.time.shutdown
        };
        shutdown(&mut self.slots, grace).await;
    }
}

/// Spawns the six processes and runs the handshake, all against one deadline.
async fn start_bots(
    cfg: &TableSpec,
    stderr_dir: &std::path::Path,
    seat_slot: [usize; 6],
) -> anyhow::Result<Vec<Slot>> {
    let mut slots: Vec<Slot> = cfg
        .lineup
        .iter()
        .map(|spec| Slot::new(spec.clone(), default_name(spec)))
        .collect();
    let all: Vec<usize> = (0..slots.len()).collect();
    start(cfg, stderr_dir, &mut slots, &all, Some(seat_slot)).await?;
    Ok(slots)
}

/// Starts the bot of lineup slot `seat` alone, exactly as a `play` seat's bot is
/// started (its launch, environment, working directory, `hello` and startup
/// deadline), for `referee replay`. A bot that fails is reported on the console
/// as seat `seat` and comes back gone, with the reason.
pub(crate) async fn start_alone(
    cfg: &TableSpec,
    stderr_dir: &Path,
    seat: usize,
) -> anyhow::Result<Slot> {
    std::fs::create_dir_all(stderr_dir)
        .with_context(|| format!("failed to create {}", stderr_dir.display()))?;
    let spec = cfg.lineup[seat].clone();
    let mut slots = vec![Slot::new(spec.clone(), default_name(&spec))];
    let mut seat_slot = [usize::MAX; 6];
    seat_slot[seat] = 0;
    start(cfg, stderr_dir, &mut slots, &[0], Some(seat_slot)).await?;
    Ok(slots.pop().expect("one slot"))
}

/// Restarts the bots that crashed or closed their pipes, if the policy says so.
async fn restart_gone(
    cfg: &TableSpec,
    stderr_dir: &std::path::Path,
    slots: &mut [Slot],
) -> anyhow::Result<()> {
    if !cfg.policy.restart {
        return Ok(());
    }
    let gone: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i].player.gone().is_some())
        .collect();
    for &i in &gone {
        std::mem::take(&mut slots[i].player)
            .shutdown(Duration::ZERO)
            .await;
    }
    start(cfg, stderr_dir, slots, &gone, None).await.map(drop)
}

/// Starts the players of `which` slots and runs their handshake against one
/// deadline. A bot that fails is marked gone (the fallback plays for it) and
/// reported on the console with its reason; the failed slots are returned.
/// `seat_slot`: where the slots sit in the session's first game (`None`: they
/// are restarted for a later one).
async fn start(
    cfg: &TableSpec,
    stderr_dir: &std::path::Path,
    slots: &mut [Slot],
    which: &[usize],
    seat_slot: Option<[usize; 6]>,
) -> anyhow::Result<Vec<usize>> {
    let hello = handshake::hello(cfg);
    let mut greeted = Vec::new();
    for &i in which {
        if connect(cfg, stderr_dir, i, &mut slots[i], &hello).await? {
            greeted.push(i);
        }
    }
    let deadline = cfg
        .time
        .startup
        .map(|d| Instant::now() + d + cfg.time.grace);
    for &i in &greeted {
        let slot = &mut slots[i];
        match handshake::answer(&mut slot.player, deadline, cfg.time.startup).await {
            Ok(name) => slot.name = name,
            Err(reason) => slot.player.retire(Fault::new(FaultKind::Start, reason)),
        }
    }
    let failed: Vec<usize> = which
        .iter()
        .copied()
        .filter(|&i| slots[i].player.gone().is_some())
        .collect();
    for &i in &failed {
        let (slot, log) = (
            &slots[i],
            crate::layout::stderr_log(stderr_dir, i, slots[i].starts - 1),
        );
        let f = slot.player.gone().expect("a failed slot");
        let seat = seat_slot.and_then(|seats| seats.iter().position(|&s| s == i));
        let who = match seat {
            Some(seat) => format!("seat {seat}"),
            None => format!("player {i}, restarted,"),
        };
        // Only a log with something in it is named: a program that could not be
        // run has none, and an empty one is removed if no game is played.
        let stderr = match std::fs::metadata(&log) {
            Ok(m) if m.len() > 0 => format!("; its stderr is in {}", log.display()),
            _ => String::new(),
        };
        eprintln!(
            "referee: {who} ({}) failed to start: {}{stderr}",
            slot.spec.display(),
            f.detail,
        );
    }
    Ok(failed)
}

/// Puts a player in slot `i`: the referee's own strategy, or a bot process
/// sent `hello`. `true`: it owes an answer to `hello`. A bot that cannot be
/// started or sent `hello` is a player gone for that reason.
async fn connect(
    cfg: &TableSpec,
    stderr_dir: &Path,
    i: usize,
    slot: &mut Slot,
    hello: &[u8],
) -> anyhow::Result<bool> {
    let log = crate::layout::stderr_log(stderr_dir, i, slot.starts);
    slot.starts += 1;
    if let Some(strategy) = in_process(&slot.spec)? {
        slot.name = strategy.name().to_owned();
        slot.player = Player::in_process(strategy);
        return Ok(false);
    }
    slot.player = match spawn(cfg, i, &slot.spec, log) {
        Ok(mut player) => {
            if let Err(reason) = handshake::greet(&mut player, hello, cfg.time.write).await {
                player.retire(Fault::new(FaultKind::Start, reason));
            }
            player
        }
        Err(reason) => Player::failed(Fault::new(FaultKind::Start, reason)),
    };
    Ok(slot.player.listening())
}

/// The strategy of a bot the referee plays itself (`inproc:*`, a person at
/// the terminal); `None` for a bot process.
fn in_process(spec: &BotSpec) -> anyhow::Result<Option<Box<dyn Strategy + Send>>> {
    match spec {
        BotSpec::Human => Ok(Some(Box::new(crate::human::Human::at_terminal()))),
        BotSpec::InProcess(name) => schmier_sample_bots::by_name(name)
            .with_context(|| format!("failed to find the built-in bot {name:?}"))
            .map(Some),
        _ => Ok(None),
    }
}

/// Spawns lineup slot `i`'s bot process, its stderr to `log`; `Err`: why it
/// could not be started, in the terms a user can act on.
fn spawn(cfg: &TableSpec, i: usize, spec: &BotSpec, log: PathBuf) -> Result<Player, String> {
    let program = (spec.argv().ok())
        .and_then(|argv| argv.first().cloned())
        .unwrap_or_else(|| spec.display());
    let mut env = spec.env(&cfg.isolation.env);
    let launch = std::env::current_dir()
        .map_err(LaunchError::WorkingDirectory)
        .and_then(|cwd| spec.launch(&cwd, Isolation::path_in(&env)))
        .map_err(|e| launch_failure(&program, &e))
        .and_then(|mut launch| {
            if let Some(base) = &cfg.isolation.scratch {
                let sandbox = cfg.isolation.sandbox.as_deref();
                let dir = scratch_dir(base, i, &mut launch, sandbox)
                    .map_err(|e| spawn_failure(&program, &e))?;
                env.push((SCRATCH_VAR.to_owned(), dir.to_string_lossy().into_owned()));
            }
            Ok(launch)
        })?;
    Player::spawn(&Spawn {
        launch,
        env,
        sandbox: cfg.isolation.sandbox.clone(),
        max_line: cfg.time.max_line,
        limits: cfg.limits,
        stderr_log: Some(log),
        stderr_cap: cfg.stderr_cap,
    })
    .map_err(|e| spawn_failure(&program, &e))
}

/// Why a bot's program could not be started, in the terms a user can act on.
pub(crate) fn spawn_failure(program: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "not found: no program {program:?} (not on PATH, or a wrong path; a bot \
             you build, such as a Rust bot, must be built first)"
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "permission denied: {program:?} cannot be executed (a folder, or a file \
             without the execute bit: chmod +x, or run it through its interpreter)"
        ),
        _ => format!("failed to run {program:?}: {e}"),
    }
}

/// Why a bot's command could not be resolved, in the same terms.
pub(crate) fn launch_failure(program: &str, e: &LaunchError) -> String {
    match e.is_not_found() {
        // The launcher's own words: it looks programs up on the bots' PATH.
        true => format!("not found: {e}"),
        false => format!("failed to run {program:?}: {e}"),
    }
}

/// The team a match credits with a game: the first-ranked team, if it did not
/// forfeit, and if the game had a winner or a forfeit decided it (a capped game
/// with no forfeit has no winner).
pub(crate) fn credited_winner(result: &crate::transcript::ResultRecord) -> Option<Team> {
    let first = result.ranking[0];
    let decided = result.winner.is_some() || !result.forfeited.is_empty();
    (decided && !result.forfeited.contains(&first)).then_some(first)
}

/// The variable that tells a bot where its `--scratch` directory is.
pub const SCRATCH_VAR: &str = "SCHMIER_SCRATCH";

/// Lineup slot `slot`'s writable directory under `base`, created if missing,
/// given to `launch` and handed to the user its sandbox runs as.
fn scratch_dir(
    base: &Path,
    slot: usize,
    launch: &mut crate::bot::Launch,
    sandbox: Option<&crate::bot::Sandbox>,
) -> std::io::Result<PathBuf> {
    let dir = crate::layout::scratch(base, slot);
    std::fs::create_dir_all(&dir).map_err(|e| {
        std::io::Error::new(e.kind(), format!("failed to create {}: {e}", dir.display()))
    })?;
    launch.scratch = Some(dir.clone());
    if let Some(uid) = sandbox.and_then(|s| s.run_as(launch)) {
        let (user, group) = (
            nix::unistd::Uid::from_raw(uid),
            nix::unistd::Gid::from_raw(uid),
        );
        nix::unistd::chown(&dir, Some(user), Some(group)).map_err(|e| {
            std::io::Error::other(format!(
                "failed to hand {} to uid {uid}: {e}",
                dir.display()
            ))
        })?;
    }
    Ok(dir)
}

fn default_name(spec: &BotSpec) -> String {
    match spec {
        BotSpec::Builtin(name) | BotSpec::InProcess(name) => name.clone(),
        BotSpec::Human => "human".to_owned(),
        BotSpec::Command { argv, .. } => argv.last().cloned().unwrap_or_default(),
    }
}

/// Says `bye` to every bot and ends every process group, concurrently.
async fn shutdown(slots: &mut [Slot], grace: Duration) {
    let bye = serde_json::to_vec(&ToBot::Bye {
        reason: "session over".into(),
    })
    .expect("messages serialize");
    let mut tasks = tokio::task::JoinSet::new();
    for slot in slots.iter_mut() {
        let mut player = std::mem::take(&mut slot.player);
        player.say_bye(&bye);
        tasks.spawn(player.shutdown(grace));
    }
    while tasks.join_next().await.is_some() {}
}
