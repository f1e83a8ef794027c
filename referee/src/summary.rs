//! What a match of `referee play` keeps of its games: per game the outcome by
//! lineup team, and the tally. Events carry it to reporters; `play` returns it.

use serde::Serialize;

use schmier_protocol::rules::{EndReason, HandScore};

use crate::stats::TableStats;

/// What a finished (or interrupted) match reports.
#[derive(Debug, Serialize)]
pub struct MatchSummary {
    pub seed: u64,
    /// The lineup teams' names (slots `k` and `k + 3`), from their bots' names.
    pub teams: [String; 3],
    pub games: Vec<GameSummary>,
    /// Games won per lineup team (slots `k` and `k + 3`).
    pub wins: [u32; 3],
    pub no_winner: u32,
    /// Games whose transcript could not be written (a full disk): reported as
    /// they happened, not counted; the match went on without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<u32>,
}

impl MatchSummary {
    /// A match of the teams `teams` with no game played yet.
    pub fn new(seed: u64, teams: [String; 3]) -> MatchSummary {
        MatchSummary {
            seed,
            teams,
            games: Vec::new(),
            wins: [0; 3],
            no_winner: 0,
            lost: Vec::new(),
        }
    }

    /// Counts a finished game.
    pub fn add(&mut self, game: GameSummary) {
        match game.winner {
            Some(w) => self.wins[w] += 1,
            None => self.no_winner += 1,
        }
        self.games.push(game);
    }
}

#[derive(Debug, Serialize)]
pub struct GameSummary {
    pub game: u32,
    pub seed: u64,
    pub transcript: String,
    /// The lineup team credited with the game after forfeits (not the seat
    /// team: seats rotate).
    pub winner: Option<usize>,
    /// Final scores by lineup team.
    pub scores: [i32; 3],
    /// Lineup teams that forfeited the game.
    pub forfeited: Vec<usize>,
    pub deals: u32,
    pub reason: EndReason,
    pub faults: u32,
    #[serde(skip)]
    pub hands: Vec<HandScore>,
    /// Where the table's time went in this game (for `referee bench`).
    #[serde(skip)]
    pub stats: TableStats,
}
