//! The bracket of a knockout or Swiss round, printed as the round completes.

use std::collections::{BTreeMap, BTreeSet};

use super::config::TournamentConfig;
use super::outcome::GameOutcome;
use super::schedule::{advances, knockout_alive, Format, GameKey, GameResult, Matchup};

/// The bracket of round `r`, printed as it completes: each table, its game wins,
/// and for a knockout who advances.
pub(super) fn bracket_round(
    cfg: &TournamentConfig,
    r: u32,
    ms: &[Matchup],
    outcomes: &BTreeMap<GameKey, GameOutcome>,
) -> String {
    let name = |e: usize| cfg.entrants[e].name.as_str();
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
    let alive = knockout_alive(cfg.entrants.len(), cfg.sets, cfg.seed, r, &before);
    let mut out = format!("round {r}:\n");
    for m in ms {
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
        if cfg.format == Format::Knockout {
            out.push_str(&format!(
                " -> {} advances",
                name(advances(m, &games, &alive))
            ));
        }
        out.push('\n');
    }
    let seated: BTreeSet<usize> = ms.iter().flat_map(|m| m.entrants).collect();
    let pool: Vec<usize> = if cfg.format == Format::Knockout {
        alive
    } else {
        (0..cfg.entrants.len()).collect()
    };
    let byes: Vec<&str> = pool
        .into_iter()
        .filter(|e| !seated.contains(e))
        .map(name)
        .collect();
    if !byes.is_empty() {
        out.push_str(&format!("  bye: {}\n", byes.join(", ")));
    }
    out
}
