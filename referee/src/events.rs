//! What happens during a run, as data: the session, the table and `referee play`'s
//! match emit [`Event`]s to a [`Reporter`]; the console (`report.rs`) is one
//! reporter, a benchmark's quiet tables another. The core never prints: what a
//! person sees is decided in one place, and a new observer (a page, a log) is a new
//! reporter, not a change to the loop that plays the games.
//!
//! A tournament has events of its own above these (`tournament::events`); its
//! tables' events reach its reporter inside them.

use std::path::PathBuf;

use crate::summary::{GameSummary, MatchSummary};
use crate::transcript::Lost;

/// Something a run did that someone may want to see.
#[derive(Debug)]
pub enum Event<'a> {
    /// `referee play` is about to prepare its output and start its bots.
    MatchStarting,
    /// A bot did not start or did not say hello; the fallback plays its seat.
    BotFailedToStart(&'a StartFailure),
    /// Something went wrong that costs nothing recorded (a game kept without
    /// its timings); the text completes "warning: …".
    Warning(&'a str),
    /// A game of the match finished and its transcript is written.
    GameFinished {
        game: &'a GameSummary,
        /// The match's games, this one included.
        of: u32,
        teams: &'a [String; 3],
    },
    /// A game's transcript could not be written (a full disk): it is not counted.
    GameLost { game: u32, of: u32, error: &'a Lost },
    /// The match was stopped (Ctrl-C, SIGTERM); the games finished before.
    MatchInterrupted(&'a MatchSummary),
    /// Every game of the match was played (or lost).
    MatchFinished(&'a MatchSummary),
}

/// A bot that failed to start, and where to look.
#[derive(Debug)]
pub struct StartFailure {
    pub who: Who,
    /// The bot's command, as the user gave it.
    pub command: String,
    pub reason: String,
    /// Its stderr log, named only when the bot wrote something there.
    pub stderr_log: Option<PathBuf>,
    /// The last lines it wrote there (a traceback's end), the bot ended.
    pub stderr_tail: Vec<String>,
}

/// Which bot failed to start, in the words the console uses.
#[derive(Clone, Copy, Debug)]
pub enum Who {
    /// At the session's start: the seat it has in the first game.
    Seat(usize),
    /// Lineup slot `n`, restarted after it crashed in an earlier game.
    Restarted(usize),
}

/// Where a run's events go. Tables run on threads of their own, so a reporter
/// is shared between them and called from any of them.
pub trait Reporter: Send + Sync {
    fn report(&self, event: &Event<'_>);
}

/// A reporter that shows nothing (for a caller that reads only the result).
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: &Event<'_>) {}
}
