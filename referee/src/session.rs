//! A session: six players, the handshake, one game at a time, shutdown.
//!
//! A bot process lives for the whole session and may sit at a different seat in
//! each game. The session owns the [`Slot`]s; `table.rs` borrows them for one game
//! at a time. `referee play` is one session (`play.rs`); a tournament table is one
//! per matchup, or one per game where its bots must not remember the duplicate set
//! (`tournament::pool::fresh_per_game`). What a person should hear of (a bot that
//! failed to start) goes to the session's [`Reporter`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::time::Instant;

use schmier_protocol::wire::ToBot;
use schmier_protocol::Team;
use schmier_sample_bots::Strategy;

use crate::bot::{LaunchError, Spawn};
use tokio_util::sync::CancellationToken;

use crate::config::{BotSpec, Isolation, TableSpec};
use crate::events::{Event, Reporter, StartFailure, Who};
use crate::fault::{Fault, FaultKind};
use crate::handshake;
use crate::player::Player;
use crate::slot::Slot;
use crate::table::{self, GamePlan, GameRecord};

/// How [`Session::play`] ended a game.
pub enum Played {
    /// Played to its end; the transcript is written.
    Finished(Box<GameRecord>),
    /// Played to its end, but its transcript could not be written (a full
    /// disk): only this game is lost, and the bots are ready for the next one.
    Lost(crate::transcript::Lost),
    /// Abandoned when the run was cancelled; its transcript stays `*.partial`.
    Interrupted,
}

/// One table's six bot processes, kept up across the games it plays (one game,
/// where each game has processes of its own).
pub struct Session {
    spec: TableSpec,
    stderr_dir: PathBuf,
    slots: Vec<Slot>,
    next_id: u64,
    played: u32,
    reporter: Arc<dyn Reporter>,
}

impl Session {
    /// Starts the six processes of `spec.lineup` and runs their handshake. Bots'
    /// stderr goes to `stderr_dir`; `seat_slot` is the lineup slot at each seat
    /// in the first game (for the console's words on a bot that fails to start).
    /// `None`: `cancel` fired before the bots were up (they are ended).
    pub async fn start(
        spec: TableSpec,
        stderr_dir: PathBuf,
        seat_slot: [usize; 6],
        cancel: &CancellationToken,
        reporter: Arc<dyn Reporter>,
    ) -> anyhow::Result<Option<Session>> {
        let prepared = Prepared::new(spec, stderr_dir).await?;
        Session::begin(prepared, seat_slot, cancel, reporter).await
    }

    /// Runs the bots of `prepared` and their handshake (see [`Session::start`]).
    pub async fn begin(
        prepared: Prepared,
        seat_slot: [usize; 6],
        cancel: &CancellationToken,
        reporter: Arc<dyn Reporter>,
    ) -> anyhow::Result<Option<Session>> {
        let Prepared {
            spec,
            stderr_dir,
            mut slots,
            spawned,
            held,
        } = prepared;
        let all: Vec<usize> = (0..slots.len()).collect();
        let failed = tokio::select! {
            failed = greet(&spec, &mut slots, &all, &spawned, held) => Some(failed),
            () = cancel.cancelled() => None,
        };
        let Some(failed) = failed else {
            shutdown(&mut slots, Duration::ZERO).await;
            return Ok(None);
        };
        let failed = failed?;
        end_failed(&mut slots, &failed).await;
        report_failed(&slots, &stderr_dir, &failed, Some(seat_slot), &*reporter);
        Ok(Some(Session {
            spec,
            stderr_dir,
            slots,
            next_id: 1,
            played: 0,
            reporter,
        }))
    }

    /// The bots' names, by lineup slot (each as it said in its hello).
    pub fn names(&self) -> Vec<&str> {
        self.slots.iter().map(|s| s.name.as_str()).collect()
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
    /// transcript stays `*.partial`). `Err`: the referee failed, not a bot.
    pub async fn play(
        &mut self,
        plan: &GamePlan,
        cancel: &CancellationToken,
    ) -> anyhow::Result<Played> {
        if self.played > 0 {
            let reporter = &*self.reporter;
            tokio::select! {
                r = restart_gone(&self.spec, &self.stderr_dir, &mut self.slots, reporter) => r?,
                () = cancel.cancelled() => return Ok(Played::Interrupted),
            }
        }
        self.played += 1;
        let record = tokio::select! {
            r = table::play_game(&self.spec, plan, &mut self.slots, &mut self.next_id) => r,
            () = cancel.cancelled() => return Ok(Played::Interrupted),
        };
        match record {
            Ok(record) => {
                if let Some(e) = &record.timings_lost {
                    let text = format!("game {} kept without its timings: {e}", plan.game);
                    self.reporter.report(&Event::Warning(&text));
                }
                Ok(Played::Finished(Box::new(record)))
            }
            // The one error a table returns that is not the referee failing.
            Err(e) => e.downcast().map(Played::Lost),
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

/// A table's six bot processes started as far as they go without running a
/// bot: sandboxed, each sandbox built (its cgroups, namespaces and mounts,
/// its `/proc`, the Landlock wrapper confined) and waiting for the referee's
/// word before it execs the bot (`landlock.rs`, `--hold`). A tournament
/// table builds the next game's while the current one is played
/// (`tournament/pool.rs`), so that a game's start costs about what an
/// unsandboxed one does, and no bot runs before its game. Unsandboxed, the
/// processes run at once: build one only to start it.
///
/// Dropped, each wrapper sees its stdin close and exits without running its
/// bot; [`Prepared::abandon`] also waits for that.
pub struct Prepared {
    spec: TableSpec,
    stderr_dir: PathBuf,
    slots: Vec<Slot>,
    /// The slots whose process owes an answer to `hello`.
    spawned: Vec<usize>,
    /// The processes wait for the word to run their bot.
    held: bool,
}

impl Prepared {
    /// Starts the six processes of `spec.lineup`, their stderr to
    /// `stderr_dir`, held if sandboxed.
    pub async fn new(spec: TableSpec, stderr_dir: PathBuf) -> anyhow::Result<Prepared> {
        std::fs::create_dir_all(&stderr_dir)
            .with_context(|| format!("failed to create {}", stderr_dir.display()))?;
        let mut slots: Vec<Slot> = spec
            .lineup
            .iter()
            .map(|s| Slot::new(s.clone(), default_name(s)))
            .collect();
        let all: Vec<usize> = (0..slots.len()).collect();
        let held = spec.isolation.sandbox.is_some();
        let spawned = place(&spec, &stderr_dir, &mut slots, &all, held).await?;
        Ok(Prepared {
            spec,
            stderr_dir,
            slots,
            spawned,
            held,
        })
    }

    /// Ends the processes without running their bots (the game they were
    /// built for is not played).
    pub async fn abandon(mut self) {
        shutdown(&mut self.slots, Duration::ZERO).await;
    }
}

/// Starts the bot of lineup slot `seat` alone, exactly as a `play` seat's bot is
/// started (its launch, environment, working directory, `hello` and startup
/// deadline), for `referee replay`. A bot that fails is told to `reporter` as
/// seat `seat` and comes back gone, with the reason.
pub(crate) async fn start_alone(
    cfg: &TableSpec,
    stderr_dir: &Path,
    seat: usize,
    reporter: &dyn Reporter,
) -> anyhow::Result<Slot> {
    std::fs::create_dir_all(stderr_dir)
        .with_context(|| format!("failed to create {}", stderr_dir.display()))?;
    let spec = cfg.lineup[seat].clone();
    let mut slots = vec![Slot::new(spec.clone(), default_name(&spec))];
    let mut seat_slot = [usize::MAX; 6];
    seat_slot[seat] = 0;
    let failed = start(cfg, stderr_dir, &mut slots, &[0]).await?;
    report_failed(&slots, stderr_dir, &failed, Some(seat_slot), reporter);
    Ok(slots.pop().expect("one slot"))
}

/// Restarts the bots that crashed or closed their pipes, if the policy says so.
async fn restart_gone(
    cfg: &TableSpec,
    stderr_dir: &std::path::Path,
    slots: &mut [Slot],
    reporter: &dyn Reporter,
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
    let failed = start(cfg, stderr_dir, slots, &gone).await?;
    end_failed(slots, &failed).await;
    report_failed(slots, stderr_dir, &failed, None, reporter);
    Ok(())
}

/// Starts the players of `which` slots and runs their handshake against one
/// deadline. A bot that fails is marked gone (the fallback plays for it); the
/// failed slots are returned.
async fn start(
    cfg: &TableSpec,
    stderr_dir: &std::path::Path,
    slots: &mut [Slot],
    which: &[usize],
) -> anyhow::Result<Vec<usize>> {
    let spawned = place(cfg, stderr_dir, slots, which, false).await?;
    greet(cfg, slots, which, &spawned, false).await
}

/// Waits, if `spec` is sandboxed, until the sandbox's view is held
/// (`Sandbox::held`): before the word that runs a held bot, and before a
/// tournament's first game (its start check does not wait). Fails if the
/// view cannot be held.
pub async fn view_held(spec: &TableSpec) -> anyhow::Result<()> {
    match &spec.isolation.sandbox {
        Some(sandbox) => Ok(crate::sandbox::Sandbox::held_async(sandbox).await?),
        None => Ok(()),
    }
}

/// Sends `hello` to the processes of `spawned` (after the word to run their
/// bot, if `held`) and waits for their answers against one deadline. A bot
/// that fails is marked gone (the fallback plays for it); the failed slots
/// among `which` are returned.
async fn greet(
    cfg: &TableSpec,
    slots: &mut [Slot],
    which: &[usize],
    spawned: &[usize],
    held: bool,
) -> anyhow::Result<Vec<usize>> {
    let hello = handshake::hello(cfg);
    if held {
        view_held(cfg).await?;
    }
    let mut greeted = Vec::new();
    for &i in spawned {
        let player = &mut slots[i].player;
        if held {
            // Queues the newline the held wrapper waits for.
            player.release();
        }
        match handshake::greet(player, &hello, cfg.time.write).await {
            Ok(()) => greeted.push(i),
            Err(reason) => player.retire(Fault::new(FaultKind::Start, reason)),
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
    Ok(failed)
}

/// Ends the processes of the `failed` slots, each keeping the reason it
/// failed for (the fallback plays for it), so that all a bot wrote to its
/// stderr before it failed is in its log when that is reported. A remote
/// seat is left to its link.
async fn end_failed(slots: &mut [Slot], failed: &[usize]) {
    for &i in failed {
        let player = &mut slots[i].player;
        if player.is_remote() {
            continue;
        }
        let fault = player.gone().cloned();
        std::mem::take(player).shutdown(Duration::ZERO).await;
        if let Some(fault) = fault {
            player.retire(fault);
        }
    }
}

/// Tells the reporter of each `failed` slot, with its reason and the end
/// of its stderr. `seat_slot`: where the slots sit in the session's first
/// game (`None`: they were restarted for a later one).
fn report_failed(
    slots: &[Slot],
    stderr_dir: &Path,
    failed: &[usize],
    seat_slot: Option<[usize; 6]>,
    reporter: &dyn Reporter,
) {
    for &i in failed {
        let (slot, log) = (
            &slots[i],
            crate::layout::stderr_log(stderr_dir, i, slots[i].starts - 1),
        );
        let f = slot.player.gone().expect("a failed slot");
        let seat = seat_slot.and_then(|seats| seats.iter().position(|&s| s == i));
        // Only a log with something in it is named: a program that could not be
        // run has none, and an empty one is removed if no game is played.
        let stderr_tail = handshake::stderr_tail(&log);
        let stderr_log = std::fs::metadata(&log)
            .is_ok_and(|m| m.len() > 0)
            .then_some(log);
        reporter.report(&Event::BotFailedToStart(&StartFailure {
            who: seat.map_or(Who::Restarted(i), Who::Seat),
            command: slot.spec.display(),
            reason: f.detail.clone(),
            stderr_log,
            stderr_tail,
        }));
    }
}

/// Puts a player in each of the `which` slots: the referee's own strategy, or
/// a bot process (sandboxed and `hold`: built, its bot not yet run). A bot
/// that cannot be started is a player gone for that reason. Returns the
/// slots whose process owes an answer to `hello`.
async fn place(
    cfg: &TableSpec,
    stderr_dir: &Path,
    slots: &mut [Slot],
    which: &[usize],
    hold: bool,
) -> anyhow::Result<Vec<usize>> {
    // The processes are started all at once (sandboxed, each start waits on
    // its sandbox's namespaces and cgroup: issue 27, item 2), and placed in
    // `which`'s order.
    let mut starting = Vec::new();
    for &i in which {
        let slot = &mut slots[i];
        let log = crate::layout::stderr_log(stderr_dir, i, slot.starts);
        slot.starts += 1;
        if let Some(strategy) = in_process(&slot.spec)? {
            slot.name = strategy.name().to_owned();
            slot.player = Player::in_process(strategy);
            continue;
        }
        let placed = match (&slot.spec, &cfg.isolation.remote) {
            (BotSpec::Remote(name), Some(hub)) => match hub.absent(name) {
                Some(why) => Err(why),
                None => Ok(crate::remote::seat::open(hub, name, cfg.time.max_line)),
            },
            (BotSpec::Remote(name), None) => Err(format!("remote:{name} needs --listen")),
            _ => {
                let (cfg, spec) = (cfg.clone(), slot.spec.clone());
                let task = tokio::spawn(async move { spawn(&cfg, i, &spec, log, hold).await });
                starting.push((i, Placing::Starting(task)));
                continue;
            }
        };
        starting.push((i, Placing::Placed(placed)));
    }
    let mut spawned = Vec::new();
    for (i, placing) in starting {
        let placed = match placing {
            Placing::Placed(placed) => placed,
            Placing::Starting(task) => started(task).await,
        };
        let slot = &mut slots[i];
        slot.player = match placed {
            Ok(player) => player,
            Err(reason) => Player::failed(Fault::new(FaultKind::Start, reason)),
        };
        if slot.player.listening() {
            spawned.push(i);
        }
    }
    Ok(spawned)
}

/// A slot's player as [`place`] gets it: at once, or from a start under way.
enum Placing {
    Placed(Result<Player, String>),
    Starting(tokio::task::JoinHandle<Result<Player, String>>),
}

/// The player a start under way (`tokio::spawn`ed) comes to, or why not.
pub(crate) async fn started(
    task: tokio::task::JoinHandle<Result<Player, String>>,
) -> Result<Player, String> {
    (task.await).unwrap_or_else(|e| Err(format!("the bot's start failed: {e}")))
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
async fn spawn(
    cfg: &TableSpec,
    i: usize,
    spec: &BotSpec,
    log: PathBuf,
    hold: bool,
) -> Result<Player, String> {
    let program = (spec.argv().ok())
        .and_then(|argv| argv.first().cloned())
        .unwrap_or_else(|| spec.display());
    let mut env = spec.env(&cfg.isolation.env);
    let launch = std::env::current_dir()
        .map_err(LaunchError::WorkingDirectory)
        .and_then(|cwd| spec.launch(&cwd, Isolation::path_in(&env)))
        .map_err(|e| launch_failure(&program, &e))
        .and_then(|mut launch| {
            launch.slot = Some(i);
            if let Some(base) = &cfg.isolation.scratch {
                let sandboxed = cfg.isolation.sandbox.is_some();
                let dir = scratch_dir(base, i, &mut launch, sandboxed)
                    .map_err(|e| spawn_failure(&program, &e))?;
                // Sandboxed, the bot sees it at a fixed path: the host's names
                // the round, matchup, game and slot.
                let shown = match sandboxed {
                    true => PathBuf::from(crate::sandbox::SCRATCH_INSIDE),
                    false => dir,
                };
                env.push((SCRATCH_VAR.to_owned(), shown.to_string_lossy().into_owned()));
            }
            Ok(launch)
        })?;
    Player::spawn_async(&Spawn {
        launch,
        env,
        sandbox: cfg.isolation.sandbox.clone(),
        max_line: cfg.time.max_line,
        limits: cfg.limits,
        stderr_log: Some(log),
        stderr_cap: cfg.stderr_cap,
        hold,
        before_any_game: false,
    })
    .await
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

/// Lineup slot `slot`'s scratch directory under `base`, given to `launch`.
/// Unsandboxed it is the bot's own folder, created if missing. Sandboxed, the
/// bot's `/scratch` is a tmpfs of its own and nothing reaches `base`: the path
/// only names that scratch (the uid a root referee runs the bot as follows
/// it), and no folder is made for it.
fn scratch_dir(
    base: &Path,
    slot: usize,
    launch: &mut crate::bot::Launch,
    sandboxed: bool,
) -> std::io::Result<PathBuf> {
    let dir = crate::layout::scratch(base, slot);
    if !sandboxed {
        std::fs::create_dir_all(&dir).map_err(|e| {
            std::io::Error::new(e.kind(), format!("failed to create {}: {e}", dir.display()))
        })?;
    }
    launch.scratch = Some(dir.clone());
    Ok(dir)
}

fn default_name(spec: &BotSpec) -> String {
    match spec {
        BotSpec::Builtin(name) | BotSpec::InProcess(name) => name.clone(),
        BotSpec::Human => "human".to_owned(),
        BotSpec::Remote(name) => name.clone(),
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
