//! The console of `referee tournament`: the [`Reporter`] that prints. Progress
//! goes to stderr (the bar is `progress.rs`), brackets and standings to stdout.

use std::path::PathBuf;

use super::config::TournamentConfig;
use super::events::{Event, Reporter, RoundPlan};
use super::seed_secret::SeedSecret;
use super::standings::Standings;
use crate::names::printable_lines;

pub struct Console {
    quiet: bool,
    out: PathBuf,
    /// The organiser's seed, said with the secret at the end.
    seed: u64,
    /// The command line that resumes this run, for the words on Ctrl-C.
    resume: String,
}

impl Console {
    pub fn new(cfg: &TournamentConfig, resume: String) -> Console {
        Console {
            quiet: cfg.quiet,
            out: cfg.out.clone(),
            seed: cfg.seed,
            resume,
        }
    }

    fn ended(&self, standings: &Standings, interrupted: bool, revealed: Option<&SeedSecret>) {
        if !interrupted {
            print!("{}", standings.table());
            println!(
                "{} games; standings in {}/standings.json and standings.csv",
                standings.games,
                self.out.display()
            );
            // Said `--quiet` or not: it is what makes the results checkable.
            if let Some(secret) = revealed {
                let seed = self.seed;
                println!(
                    "seed {seed}, seed secret {secret}: every game's deal followed from both; \
                     `--seed {seed} --seed-secret {secret}` deals them again"
                );
            }
            return;
        }
        if standings.games > 0 {
            println!(
                "PARTIAL standings after {} games (in {}):",
                standings.games,
                self.out
                    .join(crate::layout::tournament::PARTIAL_STANDINGS)
                    .display()
            );
            print!("{}", standings.table());
        }
        eprintln!(
            "referee: interrupted after {} recorded games; games in flight were discarded. Resume with:\n  {}",
            standings.games, self.resume
        );
    }

    /// What each round (or the one round of a format played in one go) plays.
    fn round_starting(&self, p: &RoundPlan) {
        eprintln!(
            "referee: {}{} entrants, {} matchup(s) of {} duplicate set(s) = {} games{}; {} to play on {} table(s) at once; seed {}; files in {}/",
            if p.round > 0 { format!("round {}: ", p.round) } else { String::new() },
            p.entrants,
            p.matchups,
            p.sets,
            p.games,
            p.shard.map_or(String::new(), |s| format!(" (shard {}/{} of {} matchups)", s.index, s.count, p.in_round)),
            p.to_play,
            p.tables,
            p.seed,
            p.dir.display()
        );
    }

    /// The lines said only to a person watching (not with `--quiet`).
    fn chatter(&self, event: &Event<'_>) {
        match event {
            Event::RoundStarting(plan) => self.round_starting(plan),
            Event::Oversubscribed { tables, cores } => eprintln!(
                "referee: warning: {tables} tables on {cores} core{}; bots that think for most of \
                 their time limit will share cores and may time out (lower --jobs, or raise --time-scale)",
                if *cores == 1 { "" } else { "s" }
            ),
            Event::Hint(hint) => eprintln!("referee: hint: {hint}"),
            _ => {}
        }
    }
}

impl Reporter for Console {
    fn report(&self, event: &Event<'_>) {
        match event {
            Event::Table(e) => {
                if let Some(line) = crate::report::table_line(e) {
                    eprintln!("{line}");
                }
            }
            Event::EntrantFailedToStart {
                name,
                command,
                reason,
            } => {
                // The reason ends with the bot's stderr; a resumed run's
                // command is its tournament.json's.
                let line = format!("entrant {name:?} ({command}) failed to start: {reason}");
                eprintln!("referee: {}", printable_lines(&line));
            }
            Event::KeepGoing => eprintln!(
                "referee: --keep-going: the fallback plays the seats of the entrants that failed to \
                 start (fault `start`); an entrant that never starts ranks below every entrant that did"
            ),
            Event::Warning(text) => eprintln!("referee: warning: {}", printable_lines(text)),
            Event::TornJournal { bytes, journal } => eprintln!(
                "referee: cut off a torn last line ({bytes} bytes) of {}; that game is played again",
                journal.display()
            ),
            Event::GameLost { key, error } => eprintln!(
                "referee: round {} matchup {} game {} lost: {}; it is not \
                 journaled (--resume plays it again)",
                key.round,
                key.matchup,
                key.game,
                printable_lines(&error.to_string())
            ),
            Event::RoundFinished { description, .. } => print!("{description}"),
            Event::Decided { line } => println!("{line}"),
            Event::Ended {
                standings,
                interrupted,
                revealed,
                ..
            } => self.ended(standings, *interrupted, *revealed),
            Event::RoundStarting(_) | Event::Oversubscribed { .. } | Event::Hint(_) => {
                if !self.quiet {
                    self.chatter(event);
                }
            }
            Event::Opened { .. }
            | Event::RoundSeated { .. }
            | Event::Failed { .. }
            | Event::TablesStarted { .. }
            | Event::GameJournaled { .. }
            | Event::Tick
            | Event::TablesStopped => {}
        }
    }
}
