//! Before the first game, every entrant's command is started once and must say
//! hello within the startup limit, as `play` checks its six bots: an entrant
//! that cannot start is reported by name, with its reason, before anything is
//! written to the output folder, so the corrected command can be rerun into it.
//!
//! The processes run as a table would run them (environment, sandbox, limits),
//! all at once against one deadline, and are ended as soon as they have answered.
//!
//! A remote entrant (`NAME=remote`) is first waited for, up to `--remote-wait`
//! (`remote/wait.rs`): one whose `referee connect` does not connect by then
//! fails the check; one that did is checked as a local entrant is, through a
//! seat opened for it (its connector starts its bot, which must say hello).

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::TournamentConfig;
use super::events::{Event, Reporter};
use crate::bot::Spawn;
use crate::config::{BotSpec, Isolation, TableSpec};
use crate::handshake;
use crate::player::Player;

/// An entrant that failed the check.
pub struct Failure {
    pub entrant: usize,
    pub reason: String,
}

/// The entrants (by index) whose command does not start and say hello; `None`
/// when `cancel` fired first.
pub async fn check(
    cfg: &TournamentConfig,
    cancel: &CancellationToken,
    reporter: &dyn Reporter,
) -> Option<Vec<Failure>> {
    let (mut failures, remote) = remote_entrants(cfg, cancel).await?;
    let logs = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            // The check is a courtesy: without a scratch folder the games still
            // report a bot that cannot start, as faults.
            let text = format!("cannot check the entrants before the first game: {e}");
            reporter.report(&Event::Warning(&text));
            return Some(Vec::new());
        }
    };
    let began = Instant::now();
    let spec = &cfg.table;
    let hello = handshake::hello(spec);
    // Every entrant's process is started at once (a sandboxed start waits on
    // its sandbox), then each is sent hello in turn.
    let mut starting = Vec::new();
    for (i, e) in cfg.entrants.iter().enumerate() {
        if matches!(
            e.bot,
            BotSpec::InProcess(_) | BotSpec::Human | BotSpec::Remote(_)
        ) {
            continue; // the referee's own code, or a connector's: nothing to start
        }
        let log = crate::layout::startcheck_log(logs.path(), i);
        let (spec, bot) = (spec.clone(), e.bot.clone());
        starting.push((
            i,
            tokio::spawn(async move { spawn(&spec, &bot, log).await }),
        ));
    }
    let starting = (starting
        .into_iter()
        .map(|(i, task)| (i, Starting::Spawned(task))))
    .chain(
        remote
            .into_iter()
            .map(|(i, seat)| (i, Starting::Open(seat))),
    );
    let started = greet_all(starting, &hello, spec.time.write).await;
    let deadline = spec
        .time
        .startup
        .map(|d| Instant::now() + d + spec.time.grace);
    for (i, p) in started {
        let reason = match p {
            Err(reason) => Some(reason),
            Ok(mut bot) => {
                let answer = tokio::select! {
                    a = handshake::answer(&mut bot, deadline, spec.time.startup) => a,
                    () = cancel.cancelled() => {
                        bot.shutdown(Duration::ZERO).await;
                        return None;
                    }
                };
                bot.shutdown(Duration::ZERO).await;
                answer.err()
            }
        };
        if let Some(reason) = reason {
            let tail = stderr_tail(&crate::layout::startcheck_log(logs.path(), i));
            failures.push(Failure {
                entrant: i,
                reason: reason + &tail,
            });
        }
    }
    tracing::debug!("entrants checked in {:?}", began.elapsed());
    failures.sort_by_key(|f| f.entrant);
    Some(failures)
}

/// An entrant's bot on its way: a process of the referee's, or a remote
/// seat opened (its connector starts the bot).
enum Starting {
    Spawned(tokio::task::JoinHandle<Result<Player, String>>),
    Open(Player),
}

/// Each bot once started (or opened), sent `hello`; those that could not
/// be, with the reason.
async fn greet_all(
    starting: impl Iterator<Item = (usize, Starting)>,
    hello: &[u8],
    write: Duration,
) -> Vec<(usize, Result<Player, String>)> {
    let mut started = Vec::new();
    for (i, starting) in starting {
        let mut p = match starting {
            Starting::Spawned(task) => crate::session::started(task).await,
            Starting::Open(seat) => Ok(seat),
        };
        if let Ok(bot) = &mut p {
            if let Err(reason) = handshake::greet(bot, hello, write).await {
                // Ended now, not left to run until the referee exits.
                std::mem::take(bot).shutdown(Duration::ZERO).await;
                p = Err(reason);
            }
        }
        started.push((i, p));
    }
    started
}

/// The remote entrants: waited for (`--remote-wait`); those that did not
/// connect have failed, the others each have a seat open to be checked.
/// `None` when `cancel` fired first.
async fn remote_entrants(
    cfg: &TournamentConfig,
    cancel: &CancellationToken,
) -> Option<(Vec<Failure>, Vec<(usize, Player)>)> {
    let (mut failed, mut open) = (Vec::new(), Vec::new());
    let Some(hub) = &cfg.table.isolation.remote else {
        return Some((failed, open));
    };
    let missing = crate::remote::wait::connectors(hub, cancel).await?;
    for (i, e) in cfg.entrants.iter().enumerate() {
        let BotSpec::Remote(name) = &e.bot else {
            continue;
        };
        if missing.contains(name) {
            let reason = crate::remote::wait::not_connected(hub, name);
            failed.push(Failure { entrant: i, reason });
        } else {
            let max_line = cfg.table.time.max_line;
            open.push((i, crate::remote::seat::open(hub, name, max_line)));
        }
    }
    Some((failed, open))
}

async fn spawn(spec: &TableSpec, bot: &BotSpec, log: std::path::PathBuf) -> Result<Player, String> {
    let env = bot.env(&spec.isolation.env);
    let program = (bot.argv().ok())
        .and_then(|argv| argv.first().cloned())
        .unwrap_or_else(|| bot.display());
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let launch = bot
        .launch(&cwd, Isolation::path_in(&env))
        .map_err(|e| crate::session::launch_failure(&program, &e))?;
    Player::spawn_async(&Spawn {
        launch,
        env,
        sandbox: spec.isolation.sandbox.clone(),
        max_line: spec.time.max_line,
        limits: spec.limits,
        stderr_log: Some(log),
        stderr_cap: spec.stderr_cap,
        hold: false,
        // Sent hello and ended before any game is dealt: it may run while
        // the view is still being held (`Sandbox::held`).
        before_any_game: true,
    })
    .await
    .map_err(|e| crate::session::spawn_failure(&program, &e))
}

/// The last lines of a failed bot's stderr, to go with its reason.
fn stderr_tail(log: &std::path::Path) -> String {
    let lines = handshake::stderr_tail(log);
    if lines.is_empty() {
        return String::new();
    }
    format!("; its stderr ends:\n    {}", lines.join("\n    "))
}
