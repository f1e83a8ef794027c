//! Progress of a run, a [`Reporter`]: a live bar (indicatif) with games done,
//! rate, ETA and the current leader on a terminal; otherwise a line every few
//! seconds (on each [`Event::Tick`]).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::config::TournamentConfig;
use super::events::{Event, Reporter};
use super::outcome::GameOutcome;
use super::schedule::GameKey;

/// The entrant with the most wins so far (ties: the earlier entrant).
fn leader(names: &[String], outcomes: &BTreeMap<GameKey, GameOutcome>) -> String {
    let mut wins = vec![0u32; names.len()];
    for o in outcomes.values() {
        if let Some(t) = o.winner {
            wins[o.teams[t]] += 1;
        }
    }
    let best = (0..names.len()).max_by_key(|&i| (wins[i], std::cmp::Reverse(i)));
    best.map_or(String::new(), |i| {
        format!("leader {} ({} wins)", names[i], wins[i])
    })
}

/// The progress of the tournament's rounds, one at a time.
pub struct Progress {
    quiet: bool,
    names: Vec<String>,
    round: Mutex<Option<Round>>,
}

/// A round's bar, and what its progress lines say.
struct Round {
    bar: ProgressBar,
    /// Lines rather than a bar: stderr is not a terminal.
    lines: bool,
    total: u64,
    done: u64,
    leader: String,
    started: Instant,
    /// Games already journaled when the round started (not counted in the rate).
    before: u64,
}

impl Progress {
    pub fn new(cfg: &TournamentConfig) -> Progress {
        Progress {
            quiet: cfg.quiet,
            names: cfg.entrants.iter().map(|e| e.name.clone()).collect(),
            round: Mutex::new(None),
        }
    }

    fn start(&self, total: u64, done: u64) -> Round {
        let terminal = std::io::stderr().is_terminal();
        let bar = if self.quiet || !terminal {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} games  {per_sec}  ETA {eta}  {msg}",
                )
                .expect("a valid template"),
            );
            bar
        };
        bar.set_position(done);
        Round {
            bar,
            lines: !self.quiet && !terminal,
            total,
            done,
            leader: String::new(),
            started: Instant::now(),
            before: done,
        }
    }
}

impl Round {
    fn line(&self) {
        if !self.lines {
            return;
        }
        let rate =
            (self.done - self.before) as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        eprintln!(
            "referee: {}/{} games, {rate:.1} games/s, {}",
            self.done, self.total, self.leader
        );
    }
}

impl Reporter for Progress {
    fn report(&self, event: &Event<'_>) {
        let mut round = self.round.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::TablesStarted { games, done } => *round = Some(self.start(*games, *done)),
            Event::GameJournaled { done, so_far, .. } => {
                if let Some(r) = round.as_mut() {
                    r.done = *done;
                    r.leader = leader(&self.names, so_far);
                    r.bar.set_position(r.done);
                    r.bar.set_message(r.leader.clone());
                }
            }
            Event::Tick => {
                if let Some(r) = round.as_ref() {
                    r.line();
                }
            }
            Event::TablesStopped => {
                if let Some(r) = round.take() {
                    r.bar.finish_and_clear();
                }
            }
            _ => {}
        }
    }
}
