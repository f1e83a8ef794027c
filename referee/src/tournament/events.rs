//! What a tournament run does, as events for its reporters: the console
//! (`console.rs`), the progress bar (`progress.rs`), a live page. The runner
//! and the pool emit them and never print; a new observer is a new
//! [`Reporter`], registered where the command builds the run (`main.rs`).
//!
//! The events of its tables (a bot that failed to start, a warning) reach the
//! same reporter inside [`Event::Table`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::schedule::{GameKey, Matchup, Shard};
use super::standings::Standings;

#[derive(Debug)]
pub enum Event<'a> {
    /// An event of one of the tables.
    Table(&'a crate::events::Event<'a>),
    /// The check before the first game found an entrant that does not start.
    EntrantFailedToStart {
        name: &'a str,
        command: String,
        reason: &'a str,
    },
    /// `--keep-going`: the run goes on with the fallback in those seats.
    KeepGoing,
    /// Costs nothing recorded (the start check could not run); the text
    /// completes "warning: …".
    Warning(&'a str),
    /// The directory is prepared and its journal read: `so_far` holds the
    /// games of an earlier run (`--resume`) and those taken with `--from`.
    Opened {
        manifest: &'a Manifest,
        so_far: &'a BTreeMap<GameKey, GameOutcome>,
    },
    /// Round `round` of a format played by rounds is seated (all its
    /// matchups, this shard's or not), before any of its games is played.
    RoundSeated {
        round: u32,
        matchups: &'a [Matchup],
        so_far: &'a BTreeMap<GameKey, GameOutcome>,
    },
    /// The journal's last line was cut off (a crash mid-write); that game is
    /// played again.
    TornJournal { bytes: u64, journal: PathBuf },
    /// A round's games are about to be handed to the tables.
    RoundStarting(&'a RoundPlan),
    /// More tables than cores: bots near their time limit may time out.
    Oversubscribed { tables: usize, cores: usize },
    /// The format's advice on this run (a round robin of many entrants meets
    /// every pair in fewer tables as a balanced tournament); completes "hint: …".
    Hint(&'a str),
    /// The tables are playing: `done` of the round's `games` were already
    /// journaled (a resumed run).
    TablesStarted { games: u64, done: u64 },
    /// A game is journaled: it counts from now on, and its transcript is final.
    GameJournaled {
        key: GameKey,
        outcome: &'a GameOutcome,
        transcript: &'a Path,
        /// The round's games journaled so far, this one included.
        done: u64,
        /// Every game journaled so far, of every round.
        so_far: &'a BTreeMap<GameKey, GameOutcome>,
    },
    /// A few seconds went by (for progress lines in a log).
    Tick,
    /// The round's tables have stopped (done, interrupted or failed).
    TablesStopped,
    /// A game's transcript could not be written (a full disk): it is not
    /// journaled, and `--resume` plays it again.
    GameLost {
        key: GameKey,
        error: &'a crate::transcript::Lost,
    },
    /// A round of a format played by rounds is complete; `description` is its
    /// tables and who advanced, as the format tells it.
    RoundFinished { round: u32, description: &'a str },
    /// A format played by rounds is decided (`champion: …`).
    Decided { line: &'a str },
    /// The run is over: every game played, or stopped by Ctrl-C / SIGTERM with
    /// the standings so far (without an [`Event::Opened`] before it when the
    /// run was stopped during the check of its entrants).
    Ended {
        standings: &'a Standings,
        interrupted: bool,
        so_far: &'a BTreeMap<GameKey, GameOutcome>,
        /// The seed secret, when this end is the tournament's and its
        /// manifest now shows it (never a shard's, nor a round's with more
        /// to come).
        revealed: Option<&'a super::seed_secret::SeedSecret>,
    },
    /// The run failed after its directory was opened; the command says why.
    Failed {
        so_far: &'a BTreeMap<GameKey, GameOutcome>,
    },
}

/// What a round is about to play, for the line that announces it.
#[derive(Debug)]
pub struct RoundPlan {
    /// 0 for a format played in one go.
    pub round: u32,
    pub entrants: usize,
    /// This run's matchups of the round (its shard's, if sharded).
    pub matchups: usize,
    /// The round's matchups over all shards.
    pub in_round: usize,
    pub sets: u32,
    /// This run's games of the round, and of those not journaled yet.
    pub games: u64,
    pub to_play: u64,
    pub tables: usize,
    pub shard: Option<Shard>,
    pub seed: u64,
    pub dir: PathBuf,
}

/// Where a tournament's events go; called from the coordinator and from every
/// table's thread.
pub trait Reporter: Send + Sync {
    fn report(&self, event: &Event<'_>);
}

/// A reporter that shows nothing (for a caller that reads only the result).
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: &Event<'_>) {}
}

/// Several reporters, each told every event in turn.
pub struct Reporters(pub Vec<Box<dyn Reporter>>);

impl Reporter for Reporters {
    fn report(&self, event: &Event<'_>) {
        for r in &self.0 {
            r.report(event);
        }
    }
}

/// A table's reporter: its events go to the tournament's, inside [`Event::Table`].
pub struct ToTournament(pub Arc<dyn Reporter>);

impl crate::events::Reporter for ToTournament {
    fn report(&self, event: &crate::events::Event<'_>) {
        self.0.report(&Event::Table(event));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};

    use super::{Event, Reporter};
    use crate::tournament::schedule::GameKey;

    /// Checks each event against what came before, as it arrives.
    #[derive(Default)]
    struct Recorder {
        state: Mutex<Seen>,
    }

    #[derive(Default)]
    struct Seen {
        opened: bool,
        /// Tables playing: the round's games journaled so far.
        playing: Option<u64>,
        journaled: Vec<GameKey>,
        ended: Option<(u32, bool)>,
        revealed: bool,
        wrong: Vec<String>,
    }

    impl Reporter for Recorder {
        fn report(&self, event: &Event<'_>) {
            let mut s = self.state.lock().unwrap();
            if s.ended.is_some() {
                s.wrong.push(format!("after the end: {event:?}"));
            }
            if !s.opened && !matches!(event, Event::Opened { .. }) {
                s.wrong
                    .push(format!("before the directory was opened: {event:?}"));
            }
            match event {
                Event::Opened { so_far, .. } => {
                    // A fresh directory: nothing journaled before.
                    s.opened = so_far.is_empty();
                }
                Event::TablesStarted { done, .. } => s.playing = Some(*done),
                Event::GameJournaled {
                    key,
                    outcome,
                    transcript,
                    done,
                    so_far,
                } => {
                    let ok = s.playing.map(|d| d + 1) == Some(*done)
                        && outcome.key() == *key
                        && so_far.get(key) == Some(*outcome)
                        && transcript.is_file()
                        && transcript.ends_with(&outcome.transcript);
                    if !ok {
                        s.wrong.push(format!("game {key:?}: {event:?}"));
                    }
                    s.playing = Some(*done);
                    s.journaled.push(*key);
                }
                Event::TablesStopped => s.playing = None,
                Event::Ended {
                    standings,
                    interrupted,
                    revealed,
                    ..
                } => {
                    s.ended = Some((standings.games, *interrupted));
                    s.revealed = revealed.is_some();
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_journaled_game_is_told_once_with_its_transcript_then_the_end() {
        use clap::Parser;
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("t");
        let cli = crate::cli::Cli::try_parse_from([
            "referee",
            "tournament",
            "--entrant",
            "a=inproc:random",
            "--entrant",
            "b=inproc:heuristic",
            "--entrant",
            "c=inproc:random",
            "--entrant",
            "d=inproc:heuristic",
            "--seed",
            "9",
            "--jobs",
            "2",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        let crate::cli::Command::Tournament(args) = cli.command() else {
            unreachable!("a tournament command line")
        };
        let cfg = args.validate().unwrap();
        let recorder = Arc::new(Recorder::default());
        let cancel = tokio_util::sync::CancellationToken::new();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(crate::tournament::run(&cfg, &cancel, recorder.clone()))
            .unwrap();
        let seen = recorder.state.lock().unwrap();
        assert_eq!(seen.wrong, Vec::<String>::new());
        let journal = crate::tournament::journal::read(&out).unwrap().outcomes;
        assert!(journal.len() > 1, "a tournament of several games");
        let told: BTreeSet<GameKey> = seen.journaled.iter().copied().collect();
        assert_eq!(told.len(), seen.journaled.len(), "each game told once");
        assert_eq!(told, journal.keys().copied().collect());
        assert_eq!(seen.ended, Some((journal.len() as u32, false)));
        assert!(seen.revealed, "a whole tournament's end reveals its secret");
        let m = crate::tournament::manifest::Manifest::read(&out).unwrap();
        assert_eq!((m.revealed, m.seed_secret), (true, Some(cfg.secret)));
    }
}
