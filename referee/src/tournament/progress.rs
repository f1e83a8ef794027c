//! Progress of a run: a live bar (indicatif) with games done, rate, ETA and the
//! current leader on a terminal; otherwise a line every few seconds.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::outcome::GameOutcome;
use super::schedule::GameKey;

/// The entrant with the most wins so far (ties: the earlier entrant).
pub(super) fn leader(names: &[&str], outcomes: &BTreeMap<GameKey, GameOutcome>) -> String {
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

/// A live bar on a terminal; otherwise a line every few seconds.
pub(super) struct Progress {
    bar: ProgressBar,
    lines: bool,
    total: u64,
    state: std::sync::Mutex<(u64, String, std::time::Instant, u64)>,
}

impl Progress {
    pub(super) fn new(total: u64, done: u64, quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = if quiet || !terminal {
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
        Progress {
            bar,
            lines: !quiet && !terminal,
            total,
            state: std::sync::Mutex::new((done, String::new(), std::time::Instant::now(), done)),
        }
    }

    pub(super) fn update(&self, done: u64, leader: String) {
        self.bar.set_position(done);
        self.bar.set_message(leader.clone());
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 = done;
        s.1 = leader;
    }

    pub(super) fn line(&self) {
        if !self.lines {
            return;
        }
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let rate = (s.0 - s.3) as f64 / s.2.elapsed().as_secs_f64().max(1e-3);
        eprintln!(
            "referee: {}/{} games, {rate:.1} games/s, {}",
            s.0, self.total, s.1
        );
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
