//! A transcript replayed through the rules engine (the one replay loop,
//! [`crate::verify::replay`]), step by step: each line with the game state it
//! leads to. `show` renders from this, and every seat's view of a
//! step comes from the engine's own view logic (`Game::view`, `Event::seen_by`),
//! the one place that decides what a seat sees.

use schmier_protocol::rules::{Event, Game};

use crate::load::Transcript;
use crate::transcript::{FaultRecord, Header, Line, ResultRecord};

/// What a transcript line recorded.
#[derive(Clone, Debug)]
pub enum What {
    Event(Event),
    Fault(FaultRecord),
    Result(ResultRecord),
}

/// One transcript line and the game after the action that produced it (for an
/// event the engine derived, such as a trick or a new deal, that is the state
/// after the whole batch).
pub struct Step {
    /// 1-based line number in the transcript.
    pub line: usize,
    /// The deal this line belongs to (0 before the first deal).
    pub deal: u32,
    pub what: What,
    pub game: Game,
}

pub struct Replay {
    pub header: Header,
    pub steps: Vec<Step>,
}

impl Replay {
    /// Replays `t` through the one replay loop ([`crate::verify::replay`]); a
    /// line that does not check out is an error naming the file and the line. A
    /// game cut short (no result line) replays up to where it stops.
    pub fn new(t: &Transcript) -> anyhow::Result<Replay> {
        let mut steps = Vec::new();
        let mut deal = 0;
        let replayed = crate::verify::replay(t, |n, line, game| {
            let what = match line {
                Line::Header(_) => return,
                Line::Fault(f) => What::Fault(f.clone()),
                Line::Result(r) => What::Result(r.clone()),
                Line::Event(e) => {
                    if let Event::Deal { deal: d, .. } = e {
                        deal = *d;
                    }
                    What::Event(e.clone())
                }
            };
            steps.push(Step {
                line: n,
                deal,
                what,
                game: game.clone(),
            });
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "failed to replay {}:{}: {} (`referee verify` checks the whole file)",
                t.path.display(),
                e.line,
                e.message
            )
        })?;
        Ok(Replay {
            header: replayed.header,
            steps,
        })
    }

    /// The deals the game had, thrown-in ones included.
    pub fn deals(&self) -> u32 {
        self.steps.iter().map(|s| s.deal).max().unwrap_or(0)
    }
}
