//! A round's bracket: each table with its entrants' game wins, then what the
//! format makes of the round ([`RoundSummary`]: who advances, who sat out, how
//! many pairs met again). The format decides the summary from its own results
//! (its `Pairing::summary`); this file only writes it out, so no format's
//! logic ever runs on another's results (the Swiss crash came from a shared
//! printer running the knockout's branch on a Swiss).

use super::schedule::{GameResult, Matchup};

/// What a format makes of a round, for the console's bracket and the page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundSummary {
    /// By matchup index: who advances from the table (a knockout).
    pub advances: Vec<Option<usize>>,
    /// Who sat out the round.
    pub byes: Vec<usize>,
    /// How many pairs at the round's tables had met before (a format that
    /// avoids that).
    pub met_before: Option<u32>,
}

/// The lines of round `r` after its heading: matchups `ms`, this round's
/// results `this`, and the format's summary.
pub fn lines(names: &[String], ms: &[Matchup], this: &[&GameResult], s: &RoundSummary) -> String {
    let name = |e: usize| names.get(e).map_or("?", String::as_str);
    let mut out = String::new();
    for m in ms {
        let wins: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| {
                let w = (this.iter())
                    .filter(|g| {
                        g.key.matchup == m.index && g.winner.is_some_and(|p| g.teams[p] == e)
                    })
                    .count();
                format!("{} {w}", name(e))
            })
            .collect();
        out.push_str(&format!("  table {}: {}", m.index, wins.join(", ")));
        if let Some(&Some(e)) = s.advances.get(m.index as usize) {
            out.push_str(&format!(" -> {} advances", name(e)));
        }
        out.push('\n');
    }
    if !s.byes.is_empty() {
        let byes: Vec<&str> = s.byes.iter().map(|&e| name(e)).collect();
        out.push_str(&format!("  bye: {}\n", byes.join(", ")));
    }
    if let Some(again) = s.met_before.filter(|&n| n > 0) {
        out.push_str(&format!("  met before: {again} pair(s)\n"));
    }
    out
}
