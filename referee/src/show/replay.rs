//! A transcript replayed through the rules engine, step by step: each line with
//! the game state it leads to. `show` renders from this, and every seat's view of a
//! step comes from the engine's own view logic (`Game::view`, `Event::seen_by`),
//! the one place that decides what a seat sees.

use std::collections::VecDeque;

use anyhow::bail;

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
    /// Replays `t`; a line that does not follow from the rules is an error naming
    /// it (`referee verify` gives the full check).
    pub fn new(t: &Transcript) -> anyhow::Result<Replay> {
        let header = t.header()?.clone();
        let file = t.path.display();
        let (mut game, first) = Game::new(header.seed, header.rules);
        let mut expected: VecDeque<Event> = first.into();
        let mut steps = Vec::new();
        let mut deal = 0;
        for (n, line) in &t.lines[1..] {
            let what = match line {
                Line::Header(_) => bail!("failed to replay {file}:{n}: a second header"),
                Line::Fault(f) => What::Fault(f.clone()),
                Line::Result(r) => What::Result(r.clone()),
                Line::Event(e) => {
                    if let Some(want) = expected.pop_front() {
                        if *e != want {
                            bail!(
                                "failed to replay {file}:{n}: the rules give another event here \
                                 (run `referee verify` on it)"
                            );
                        }
                    } else {
                        let Some((_, action)) = e.decision() else {
                            bail!("failed to replay {file}:{n}: a decision is due here");
                        };
                        let mut out = Vec::new();
                        game.apply_into(action, &mut out)
                            .map_err(|err| anyhow::anyhow!("failed to replay {file}:{n}: {err}"))?;
                        let mut out = VecDeque::from(out);
                        if out.pop_front().as_ref() != Some(e) {
                            bail!("failed to replay {file}:{n}: the rules give another event here");
                        }
                        expected = out;
                    }
                    if let Event::Deal { deal: d, .. } = e {
                        deal = *d;
                    }
                    What::Event(e.clone())
                }
            };
            steps.push(Step {
                line: *n,
                deal,
                what,
                game: game.clone(),
            });
        }
        Ok(Replay { header, steps })
    }

    /// The deals the game had, thrown-in ones included.
    pub fn deals(&self) -> u32 {
        self.steps.iter().map(|s| s.deal).max().unwrap_or(0)
    }
}
