//! Before the first game, every entrant's command is started once and must say
//! hello within the startup limit, as `play` checks its six bots: an entrant
//! that cannot start is reported by name, with its reason, before anything is
//! written to the output folder, so the corrected command can be rerun into it.
//!
//! The processes run as a table would run them (environment, sandbox, limits),
//! all at once against one deadline, and are ended as soon as they have answered.

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
            continue; // the referee's own code: nothing to start
        }
        let log = crate::layout::startcheck_log(logs.path(), i);
        let (spec, bot) = (spec.clone(), e.bot.clone());
        starting.push((
            i,
            tokio::spawn(async move { spawn(&spec, &bot, log).await }),
        ));
    }
    let mut started: Vec<(usize, Result<Player, String>)> = Vec::new();
    for (i, task) in starting {
        let mut p = crate::session::started(task).await;
        if let Ok(bot) = &mut p {
            if let Err(reason) = handshake::greet(bot, &hello, spec.time.write).await {
                // Ended now, not left to run until the referee exits.
                std::mem::take(bot).shutdown(Duration::ZERO).await;
                p = Err(reason);
            }
        }
        started.push((i, p));
    }
    let deadline = spec
        .time
        .startup
        .map(|d| Instant::now() + d + spec.time.grace);
    let mut failures = Vec::new();
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
    Some(failures)
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
