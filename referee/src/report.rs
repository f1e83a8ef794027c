//! The console of `referee play`: a [`Reporter`] that turns the run's events into
//! the lines a person reads (stderr as it goes, the summary on stdout at the
//! end). Teams are named by their entrants ([`crate::names`]) everywhere, never
//! by number.

use schmier_protocol::rules::HandScore;

use crate::config::PlayConfig;
use crate::events::{Event, Reporter, StartFailure, Who};
use crate::names::scores_text;
use crate::summary::MatchSummary;

/// What the console needs to know of the match besides its events.
pub struct Console {
    quiet: bool,
    games: u32,
    seed: u64,
    secret_seed: bool,
    output: String,
}

impl Console {
    pub fn new(cfg: &PlayConfig) -> Console {
        Console {
            quiet: cfg.quiet,
            games: cfg.games,
            seed: cfg.seed,
            secret_seed: cfg.secret_seed,
            output: cfg.output.describe(),
        }
    }

    fn starting(&self) {
        if self.quiet {
            return;
        }
        // A drawn seed stays secret until the run ends: bots share the terminal.
        // Not "seed secret": that is the tournament's other number (seeds.md).
        let seed = match self.secret_seed {
            true => "drawn at random, hidden from the bots (printed when the run ends)".to_owned(),
            false => self.seed.to_string(),
        };
        eprintln!(
            "referee: seed {seed} — {} game(s), transcripts in {}",
            self.games, self.output
        );
    }

    /// The drawn seed, kept secret while bots share the terminal, once the run
    /// is over however it ended (finished, interrupted, or bots that failed to
    /// start): the games played so far are reproducible only with it.
    pub fn reveal_seed(&self) {
        if self.secret_seed && !self.quiet {
            eprintln!("referee: the match seed was {}", self.seed);
        }
    }

    fn finished(&self, summary: &MatchSummary) {
        print(self.quiet, summary);
        self.reveal_seed();
        if !summary.lost.is_empty() {
            eprintln!(
                "referee: {} of {} game(s) lost (their transcripts could not be written, see \
                 above); the {} other transcript(s) are kept",
                summary.lost.len(),
                self.games,
                summary.games.len()
            );
        }
    }
}

impl Reporter for Console {
    fn report(&self, event: &Event<'_>) {
        match event {
            Event::MatchStarting => self.starting(),
            Event::GameFinished { game, of, teams } => {
                if !self.quiet && *of > 1 {
                    eprintln!(
                        "game {}/{of}: {} -> {}",
                        game.game,
                        outcome_text(teams, game.winner, game.scores, &game.forfeited),
                        game.transcript
                    );
                }
            }
            Event::GameLost { .. } => Troubles.report(event),
            Event::MatchInterrupted(summary) => {
                eprintln!("referee: interrupted; every bot process was ended. Completed games' transcripts are kept; the game in progress was left as *.partial.");
                eprint!("{}", interrupted_tally(summary));
                self.reveal_seed();
            }
            Event::MatchFinished(summary) => self.finished(summary),
            Event::BotFailedToStart(_) | Event::Warning(_) => Troubles.report(event),
        }
    }
}

/// The console of a match whose results the caller reads (a benchmark's
/// tables): only what went wrong at the table is printed, never a summary.
pub struct Troubles;

impl Reporter for Troubles {
    fn report(&self, event: &Event<'_>) {
        match event {
            Event::GameLost { game, of, error } => {
                eprintln!("referee: game {game}/{of} lost: {error}; it is not counted");
            }
            _ => {
                if let Some(line) = table_line(event) {
                    eprintln!("{line}");
                }
            }
        }
    }
}

/// The console line of a table's own events, the same in `play` and in a
/// tournament: a bot that failed to start, a warning.
pub fn table_line(event: &Event<'_>) -> Option<String> {
    let line = match event {
        Event::BotFailedToStart(f) => start_failure_line(f),
        Event::Warning(text) => format!("referee: warning: {text}"),
        _ => return None,
    };
    // A reason can quote what a bot wrote (its stderr, a reply).
    Some(crate::names::printable_lines(&line).into_owned())
}

fn start_failure_line(f: &StartFailure) -> String {
    let who = match f.who {
        Who::Seat(seat) => format!("seat {seat}"),
        Who::Restarted(i) => format!("player {i}, restarted,"),
    };
    let stderr = match (&f.stderr_log, f.stderr_tail.is_empty()) {
        (Some(log), true) => format!("; its stderr is in {}", log.display()),
        (Some(log), false) => format!(
            "; its stderr is in {}, and ends:\n    {}",
            log.display(),
            f.stderr_tail.join("\n    ")
        ),
        (None, _) => String::new(),
    };
    format!(
        "referee: {who} ({}) failed to start: {}{stderr}",
        f.command, f.reason
    )
}

/// The summary at the end of a match (stdout): one game's deals and result, or
/// the match's tally.
fn print(quiet: bool, summary: &MatchSummary) {
    let teams = &summary.teams;
    if summary.games.len() == 1 {
        let game = &summary.games[0];
        if !quiet {
            // One game: seat team k is lineup team k.
            for h in &game.hands {
                println!("{}", hand_line(teams, h));
            }
        }
        println!(
            "game over after {} deals: {}; transcript {}",
            game.deals,
            outcome_text(teams, game.winner, game.scores, &game.forfeited),
            game.transcript
        );
    } else {
        println!(
            "match of {} games, seed {}:",
            summary.games.len(),
            summary.seed
        );
        print!("{}", tally_text(summary));
    }
    let faults: u32 = summary.games.iter().map(|g| g.faults).sum();
    if faults > 0 {
        println!("{faults} fault(s) recorded; see the transcripts' \"fault\" lines");
    }
}

/// The tally of the games finished when a match was interrupted (stderr).
fn interrupted_tally(summary: &MatchSummary) -> String {
    if summary.games.is_empty() {
        return "referee: no game had finished\n".to_owned();
    }
    format!(
        "referee: {} of the match's games finished:\n{}",
        summary.games.len(),
        tally_text(summary)
    )
}

/// Games won per team, one line each (also printed when a match is interrupted).
pub fn tally_text(summary: &MatchSummary) -> String {
    let mut out = String::new();
    for (k, name) in summary.teams.iter().enumerate() {
        out += &format!("  {name}: {} win(s)\n", summary.wins[k]);
    }
    if summary.no_winner > 0 {
        out += &format!("  no winner: {}\n", summary.no_winner);
    }
    out
}

/// `"heuristic wins — heuristic 22, random #1 9, random #2 -3"`, naming forfeits.
/// `winner`, `scores` and `forfeited` are by the teams `names` names.
pub fn outcome_text(
    names: &[String; 3],
    winner: Option<usize>,
    scores: [i32; 3],
    forfeited: &[usize],
) -> String {
    let mut text = match winner {
        Some(w) => format!("{} wins", names[w]),
        None => "no winner".to_owned(),
    };
    text += &format!(" — {}", scores_text(names, scores));
    if !forfeited.is_empty() {
        let who: Vec<&str> = forfeited.iter().map(|&t| names[t].as_str()).collect();
        text += &format!(" ({} forfeited: faults)", who.join(", "));
    }
    text
}

fn hand_line(teams: &[String; 3], h: &HandScore) -> String {
    let team = &teams[h.bidder.team().index()];
    format!(
        "deal {:>3}: {team} ({}) bid {} in {} — {}; {}; scores {}",
        h.deal,
        h.bidder,
        h.bid,
        h.trump.symbol(),
        if h.made { "made" } else { "set" },
        points_text(teams, h),
        scores_text(teams, h.scores)
    )
}

fn points_text(teams: &[String; 3], h: &HandScore) -> String {
    let names = ["high", "low", "right", "left", "joker", "game"];
    names
        .iter()
        .zip(h.points.all())
        .map(|(n, t)| format!("{n} {}", t.map_or("nobody", |t| teams[t.index()].as_str())))
        .collect::<Vec<_>>()
        .join(", ")
}
