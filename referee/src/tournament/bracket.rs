//! What every format's bracket is made of: a round's tables, each with its
//! entrants' game wins, and who sat out. Each format composes its round from
//! these, adding its own lines (see its `Pairing::bracket`): a knockout who
//! advances and, at the end, the champion; a Swiss how many pairs met again.

use std::collections::BTreeMap;

use super::outcome::GameOutcome;
use super::schedule::{GameKey, GameResult, Matchup};

/// Round `r` as the bracket shows it: its matchups and the results.
pub struct RoundView<'a> {
    /// Entrant names, by entrant index.
    pub names: &'a [String],
    pub r: u32,
    pub ms: &'a [Matchup],
    /// The results of the rounds before this one.
    pub before: Vec<GameResult>,
    /// The results of this round.
    pub this: Vec<GameResult>,
}

impl<'a> RoundView<'a> {
    pub fn new(
        names: &'a [String],
        r: u32,
        ms: &'a [Matchup],
        outcomes: &BTreeMap<GameKey, GameOutcome>,
    ) -> RoundView<'a> {
        let results = |keep: &dyn Fn(u32) -> bool| -> Vec<GameResult> {
            outcomes
                .values()
                .filter(|o| keep(o.round))
                .map(|o| o.result())
                .collect()
        };
        RoundView {
            names,
            r,
            ms,
            before: results(&|round| round < r),
            this: results(&|round| round == r),
        }
    }

    /// An entrant's name; `?` for a number outside the field.
    pub fn name(&self, e: usize) -> &str {
        self.names.get(e).map_or("?", String::as_str)
    }

    /// The results of this round.
    pub fn games(&self) -> Vec<&GameResult> {
        self.this.iter().collect()
    }

    /// `  table I: NAME WINS, …` for a matchup of this round, without a line end.
    pub fn table(&self, m: &Matchup) -> String {
        let wins: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| {
                let w = self
                    .this
                    .iter()
                    .filter(|g| {
                        g.key.matchup == m.index && g.winner.is_some_and(|p| g.teams[p] == e)
                    })
                    .count();
                format!("{} {w}", self.name(e))
            })
            .collect();
        format!("  table {}: {}", m.index, wins.join(", "))
    }

    /// The line naming who sat out this round, or nothing when nobody did.
    pub fn byes(&self, byes: &[usize]) -> String {
        if byes.is_empty() {
            return String::new();
        }
        let names: Vec<&str> = byes.iter().map(|&e| self.name(e)).collect();
        format!("  bye: {}\n", names.join(", "))
    }
}
