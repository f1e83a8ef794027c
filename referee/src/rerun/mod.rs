//! `referee replay FILE --seat N -- CMD`: a recorded game replayed to a *live*
//! bot. The bot is started as a `play` seat's bot is, sent exactly what seat N
//! was sent in that game, and at each request its answer is compared with the
//! recorded one: "why did my bot do that?", reproduced.
//!
//! Not to be confused with `show/replay.rs` (and [`crate::verify::replay`]),
//! which replay a transcript through the rules engine alone, with no bot: this
//! module is built on them. Named `rerun` so the two do not read alike.
//!
//! - `script.rs`: the seat's messages, rebuilt from the transcript by the
//!   table's own builders.
//! - `live.rs`: the bot process, sent the script and judged at each request.
//! - `report.rs`: the outcome, as text or JSON.

mod live;
mod report;
mod script;

use std::path::PathBuf;

use schmier_protocol::Seat;

use crate::config::{BotSpec, Delivery, Isolation, TableSpec};

pub use report::Report;
pub use script::Answer;

/// A validated `referee replay` command.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    pub file: PathBuf,
    pub seat: Seat,
    /// Stop at the seat's K-th request (from 1) and show it, differences
    /// before it or not.
    pub at: Option<u32>,
    pub bot: BotSpec,
    /// Every bot's environment (`--bot-env`), as `play` builds it.
    pub env: Vec<(String, String)>,
    /// Hold the bot to no time limit (a bot under a debugger).
    pub no_timeouts: bool,
}

/// Replays the game to the live bot. `Err`: bad input (the file, the seat, a
/// request number the game does not have) or a bot that did not start.
pub async fn run(cfg: &ReplayConfig) -> anyhow::Result<Report> {
    let transcript = crate::load::Transcript::read(&cfg.file)?;
    let script = script::build(&transcript, cfg.seat)?;
    let requests = script.requests();
    if let Some(k) = cfg.at {
        if k == 0 || k > requests {
            anyhow::bail!(
                "--at {k}: {} was sent {requests} request(s) in {} (--at counts them from 1)",
                cfg.seat,
                cfg.file.display()
            );
        }
    }
    let spec = table_spec(cfg, &script);
    let stderr = tempfile::tempdir().map_err(|e| {
        anyhow::anyhow!("failed to create a temporary folder for the bot's stderr: {e}")
    })?;
    let run = live::replay(&spec, stderr.path(), &script, cfg.at).await;
    echo_stderr(stderr.path());
    let run = run?;
    Ok(Report::new(cfg, &script, &run))
}

/// The table a seat of this game sat at, as far as a bot can tell: the
/// recorded rules, policy and time control, this run's bot environment.
fn table_spec(cfg: &ReplayConfig, script: &script::Script) -> TableSpec {
    let h = &script.header;
    let mut lineup: [BotSpec; 6] = std::array::from_fn(|_| BotSpec::Builtin("random".into()));
    lineup[cfg.seat.index()] = cfg.bot.clone();
    TableSpec {
        lineup,
        rules: h.rules,
        time: crate::settings::recorded_time_control(&h.time_control, cfg.no_timeouts),
        policy: h.fault_policy,
        limits: Default::default(),
        isolation: Isolation {
            env: cfg.env.clone(),
            sandbox: None,
            scratch: None,
            remote: None,
        },
        events: Delivery::Batched,
        stderr_cap: crate::settings::STDERR_CAP,
        pace: None,
    }
}

/// What the bot wrote to stderr goes to ours: its own debugging output, next to
/// the decision it explains.
fn echo_stderr(dir: &std::path::Path) {
    let Ok(text) = std::fs::read(dir.join("player0.log")) else {
        return;
    };
    if !text.is_empty() {
        eprintln!("referee: the bot's stderr:");
        // Its own bytes (the log keeps them): shown escaped, lines kept.
        eprint!(
            "{}",
            crate::names::printable_lines(&String::from_utf8_lossy(&text))
        );
        if !text.ends_with(b"\n") {
            eprintln!();
        }
    }
}
