//! The short human summary at the end of `referee play` (stdout).

use schmier_protocol::rules::HandScore;

use crate::config::PlayConfig;
use crate::session::MatchSummary;

pub fn print(cfg: &PlayConfig, summary: &MatchSummary) {
    let players: Vec<String> = cfg.table.lineup.iter().map(|b| b.display()).collect();
    if summary.games.len() == 1 {
        let game = &summary.games[0];
        if !cfg.quiet {
            for h in &game.hands {
                println!("{}", hand_line(h));
            }
        }
        println!(
            "game over after {} deals: {} — final scores {:?} (by seat team); transcript {}",
            game.deals,
            match game.winner {
                Some(w) => format!("lineup team {w} ({} / {}) wins", players[w], players[w + 3]),
                None => "no winner (hand cap)".into(),
            },
            game.scores,
            game.transcript
        );
    } else {
        println!(
            "match of {} games, seed {}:",
            summary.games.len(),
            summary.seed
        );
        for k in 0..3 {
            println!(
                "  lineup team {k} ({} / {}): {} wins",
                players[k],
                players[k + 3],
                summary.wins[k]
            );
        }
        if summary.no_winner > 0 {
            println!("  no winner: {}", summary.no_winner);
        }
    }
    let faults: u32 = summary.games.iter().map(|g| g.faults).sum();
    if faults > 0 {
        println!("{faults} fault(s) recorded; see the transcripts' \"fault\" lines");
    }
}

fn hand_line(h: &HandScore) -> String {
    let team = h.bidder.team().index();
    format!(
        "deal {:>3}: seat {} (team {team}) bid {} in {} — {} ({}); won {:?}, scores {:?}",
        h.deal,
        h.bidder.index(),
        h.bid,
        h.trump.symbol(),
        if h.made { "made" } else { "set" },
        points_text(h),
        h.won,
        h.scores
    )
}

fn points_text(h: &HandScore) -> String {
    let p = &h.points;
    let names = ["high", "low", "right", "left", "joker", "game"];
    names
        .iter()
        .zip(p.all())
        .map(|(n, t)| format!("{n}:{}", t.map_or("-".into(), |t| t.index().to_string())))
        .collect::<Vec<_>>()
        .join(" ")
}
