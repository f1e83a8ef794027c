//! The short human summary at the end of `referee play` (stdout). Teams are named
//! by their entrants ([`crate::names`]) everywhere, never by number.

use schmier_protocol::rules::HandScore;

use crate::config::PlayConfig;
use crate::names::scores_text;
use crate::session::MatchSummary;

pub fn print(cfg: &PlayConfig, summary: &MatchSummary) {
    let teams = &summary.teams;
    if summary.games.len() == 1 {
        let game = &summary.games[0];
        if !cfg.quiet {
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

/// The tally of the games finished so far, kept for [`print_interrupted_tally`].
static FINISHED: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Records the tally after each finished game of a match.
pub fn note_finished(summary: &MatchSummary) {
    let text = format!(
        "{} of the match's games finished:\n{}",
        summary.games.len(),
        tally_text(summary)
    );
    *FINISHED.lock().unwrap_or_else(|e| e.into_inner()) = text;
}

/// Prints the tally of the finished games (stderr) when a run is interrupted.
pub fn print_interrupted_tally() {
    let text = FINISHED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if text.is_empty() {
        eprintln!("referee: no game had finished");
    } else {
        eprint!("referee: {text}");
    }
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
