//! The bracket of a knockout or Swiss round, printed as the round completes:
//! each table and its game wins, then what the format makes of the round — for
//! a knockout who advances, who had a bye and, at the end, the champion; for a
//! Swiss who sat out and how many pairs met again. Each format's lines come from
//! that format's own code (`knockout.rs`, `swiss.rs`).

use std::collections::BTreeMap;

use super::knockout;
use super::outcome::GameOutcome;
use super::schedule::{Format, GameKey, GameResult, Matchup};
use super::swiss;

/// The bracket of round `r` (matchups `ms`), with the results in `outcomes`.
pub(super) fn bracket_round(
    names: &[String],
    format: &Format,
    r: u32,
    ms: &[Matchup],
    outcomes: &BTreeMap<GameKey, GameOutcome>,
) -> String {
    let name = |e: usize| names.get(e).map_or("?", String::as_str);
    let before: Vec<GameResult> = outcomes
        .values()
        .filter(|o| o.round < r)
        .map(|o| o.result())
        .collect();
    let this: Vec<GameResult> = outcomes
        .values()
        .filter(|o| o.round == r)
        .map(|o| o.result())
        .collect();
    let games: Vec<&GameResult> = this.iter().collect();
    let knockout = match format {
        Format::Knockout => knockout::round(names.len(), &before, r),
        _ => None,
    };
    let mut out = format!("round {r}:\n");
    for (i, m) in ms.iter().enumerate() {
        let wins: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| {
                let w = games
                    .iter()
                    .filter(|g| {
                        g.key.matchup == m.index && g.winner.is_some_and(|p| g.teams[p] == e)
                    })
                    .count();
                format!("{} {w}", name(e))
            })
            .collect();
        out.push_str(&format!("  table {}: {}", m.index, wins.join(", ")));
        if let Some(k) = knockout.as_ref().filter(|k| i < k.tables.len()) {
            out.push_str(&format!(" -> {} advances", name(k.advances(i, &games))));
        }
        out.push('\n');
    }
    let byes: Vec<usize> = match (&knockout, format) {
        (Some(k), _) => k.byes.clone(),
        (None, Format::Swiss { .. }) => (0..names.len())
            .filter(|e| ms.iter().all(|m| !m.entrants.contains(e)))
            .collect(),
        _ => Vec::new(),
    };
    if !byes.is_empty() {
        let byes: Vec<&str> = byes.into_iter().map(name).collect();
        out.push_str(&format!("  bye: {}\n", byes.join(", ")));
    }
    if let Format::Swiss { .. } = format {
        let met = swiss::Met::new(names.len(), &before);
        let again: u32 = ms
            .iter()
            .map(|m| {
                let [a, b, c] = m.entrants;
                [(a, b), (a, c), (b, c)]
                    .iter()
                    .filter(|&&(x, y)| met.times(x, y) > 0)
                    .count() as u32
            })
            .sum();
        if again > 0 {
            out.push_str(&format!("  met before: {again} pair(s)\n"));
        }
    }
    out
}

/// The line that ends a format played by rounds, once round `r` has none left
/// to play: a knockout's champion.
pub(super) fn last_line(
    names: &[String],
    format: &Format,
    r: u32,
    before: &[GameResult],
) -> Option<String> {
    match format {
        Format::Knockout => match knockout::alive_before(names.len(), before, r)[..] {
            [champion] => Some(format!("champion: {}", names.get(champion)?)),
            _ => None,
        },
        _ => None,
    }
}
