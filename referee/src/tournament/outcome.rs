//! What a tournament keeps of one finished game: the figures standings need,
//! read back from the game's transcript (the authoritative record) through the
//! one replay loop (`verify.rs`), so that the journal, a resumed run, a merge of
//! shards and `referee verify` all derive them the same way.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use schmier_protocol::rules::Event;

use super::schedule::GameKey;
use crate::load::Transcript;
use crate::transcript::Line;
use crate::verify::Inconsistency;

/// One journal line. Per-team arrays are indexed by team position (seat % 3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameOutcome {
    pub round: u32,
    pub matchup: u32,
    pub game: u32,
    pub seed: u64,
    /// Entrant index at each team position.
    pub teams: [usize; 3],
    /// The transcript, relative to the tournament directory.
    pub transcript: String,
    pub scores: [i32; 3],
    pub deals: u32,
    /// Team positions from first to last (the result line's ranking).
    pub ranking: [usize; 3],
    /// The team position credited with the win: ranked first, did not forfeit,
    /// and the game was decided (a capped game without forfeits has no winner).
    pub winner: Option<usize>,
    pub forfeited: Vec<usize>,
    /// Hands each team bid and made / bid and was set.
    pub made: [u32; 3],
    pub set: [u32; 3],
    /// Points each team won over all hands (before the bidder's set penalty).
    pub won: [i32; 3],
    /// Hands played (deals that were not thrown in).
    pub hands: u32,
    /// Faults per team position, by kind.
    pub faults: [BTreeMap<String, u32>; 3],
}

impl GameOutcome {
    pub fn key(&self) -> GameKey {
        GameKey {
            round: self.round,
            matchup: self.matchup,
            game: self.game,
        }
    }

    /// What pairing the next round needs of it.
    pub fn result(&self) -> super::schedule::GameResult {
        super::schedule::GameResult {
            key: self.key(),
            teams: self.teams,
            winner: self.winner,
            scores: self.scores,
        }
    }

    /// Reads the outcome of game `key` from its transcript at `dir/rel`, through
    /// the one reader and replay loop: the figures come from a transcript that
    /// checks out, or the error names the line that does not.
    pub fn read(dir: &Path, rel: &str, key: GameKey, teams: [usize; 3]) -> anyhow::Result<Self> {
        let path = dir.join(rel);
        let t = Transcript::read(&path)?;
        Self::of(&t, rel, key, teams).map_err(|e| {
            anyhow::anyhow!(
                "failed to read {}:{}: {}",
                path.display(),
                e.line,
                e.message
            )
        })
    }

    /// The outcome the transcript `t` (at `rel`) records for game `key`.
    pub fn of(
        t: &Transcript,
        rel: &str,
        key: GameKey,
        teams: [usize; 3],
    ) -> Result<Self, Inconsistency> {
        let mut out = GameOutcome {
            round: key.round,
            matchup: key.matchup,
            game: key.game,
            seed: 0,
            teams,
            transcript: rel.to_owned(),
            scores: [0; 3],
            deals: 0,
            ranking: [0, 1, 2],
            winner: None,
            forfeited: Vec::new(),
            made: [0; 3],
            set: [0; 3],
            won: [0; 3],
            hands: 0,
            faults: Default::default(),
        };
        let verified = crate::verify::verify(t, |_, line, _| match line {
            Line::Fault(f) => {
                *out.faults[f.seat.team().index()]
                    .entry(f.fault.name().to_owned())
                    .or_default() += 1;
            }
            Line::Event(Event::HandEnd(h)) => {
                let bidder = h.bidder.team().index();
                if h.made {
                    out.made[bidder] += 1;
                } else {
                    out.set[bidder] += 1;
                }
                for t in 0..3 {
                    out.won[t] += h.won[t];
                }
                out.hands += 1;
            }
            _ => {}
        })?;
        let r = verified.result;
        out.seed = verified.header.seed;
        out.scores = r.scores;
        out.deals = r.deals;
        out.ranking = r.ranking.map(|t| t.index());
        out.forfeited = r.forfeited.iter().map(|t| t.index()).collect();
        out.winner = crate::session::credited_winner(&r).map(|t| t.index());
        Ok(out)
    }
}
