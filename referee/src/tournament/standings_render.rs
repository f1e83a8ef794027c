//! The standings as they are written and shown: `standings.json`,
//! `standings.csv` (after a `# ranked by: …` line) and the aligned console
//! table with, for a small field, the likelihood-of-superiority matrix under
//! it. What the figures are and how they rank is `standings.rs`.
//!
//! A spreadsheet opening `standings.csv` evaluates a cell that starts with
//! `=`, `+`, `-` or `@` as a formula (`=HYPERLINK(…)`, or worse, a command
//! through DDE): the name is the one text cell an organiser does not write
//! letter by letter (a tournament file can come from the entrants), so it is
//! written through [`spreadsheet_text`]. The figures are numbers the referee
//! formats, and a negative one (`-3`) must stay a number, so they are not.

use std::collections::BTreeMap;

use super::standings::Standings;

/// The console prints the superiority matrix up to this many entrants (the
/// JSON carries it up to [`super::standings::SUPERIORITY_LIMIT`]).
const SUPERIORITY_PRINTED: usize = 10;

impl Standings {
    pub fn json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("standings serialize");
        out.push(b'\n');
        out
    }

    /// The CSV table, after one line that says what it is ranked by
    /// (`# ranked by: …`, the one line that is not a row).
    pub fn csv(&self) -> Vec<u8> {
        let mut w =
            csv::Writer::from_writer(format!("# ranked by: {}\n", self.ranked_by).into_bytes());
        let head = [
            "rank",
            "name",
            "games",
            "wins",
            "win_rate",
            "win_rate_low",
            "win_rate_high",
            "duplicate_score",
            "rating",
            "rating_low",
            "rating_high",
            "rating_error",
            "points_per_hand",
            "points_for",
            "points_against",
            "bids_made",
            "bids_set",
            "faults",
            "forfeits",
        ];
        w.write_record(head).expect("writing to memory");
        for r in &self.entrants {
            w.write_record([
                r.rank.to_string(),
                spreadsheet_text(&r.name).into_owned(),
                r.games.to_string(),
                r.wins.to_string(),
                r.win_rate.to_string(),
                r.win_rate_ci[0].to_string(),
                r.win_rate_ci[1].to_string(),
                r.duplicate_score.to_string(),
                r.rating.to_string(),
                r.rating_ci[0].to_string(),
                r.rating_ci[1].to_string(),
                r.rating_error.to_string(),
                r.points_per_hand.to_string(),
                r.points_for.to_string(),
                r.points_against.to_string(),
                r.bids_made.to_string(),
                r.bids_set.to_string(),
                faults_text(&r.faults),
                r.forfeits.to_string(),
            ])
            .expect("writing to memory");
        }
        w.into_inner().expect("writing to memory")
    }

    /// The aligned table printed at the end of a run.
    pub fn table(&self) -> String {
        let mut rows = vec![[
            "#",
            "entrant",
            "games",
            "wins",
            "win %",
            "95% CI",
            "dup",
            "rating ± 95%",
            "pts/hand",
            "made/set",
            "faults",
            "forfeits",
        ]
        .map(String::from)];
        for r in &self.entrants {
            rows.push([
                r.rank.to_string(),
                r.name.clone(),
                r.games.to_string(),
                r.wins.to_string(),
                format!("{:.1}", r.win_rate * 100.0),
                format!(
                    "{:.1}–{:.1}",
                    r.win_rate_ci[0] * 100.0,
                    r.win_rate_ci[1] * 100.0
                ),
                format!("{:+.2}", r.duplicate_score),
                format!(
                    "{:+.1} ± {:.1}",
                    r.rating,
                    (r.rating_ci[1] - r.rating_ci[0]) / 2.0
                ),
                format!("{:.2}", r.points_per_hand),
                format!("{}/{}", r.bids_made, r.bids_set),
                faults_text(&r.faults),
                r.forfeits.to_string(),
            ]);
        }
        let mut widths = [0; 12];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    let pad = w - cell.chars().count();
                    // Names left-aligned, figures right-aligned.
                    if i == 1 {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push_str(&format!("ranked by: {}\n", self.ranked_by));
        out.push_str(&self.superiority_table());
        if let Some(n) = self.repeat_meetings {
            out.push_str(&format!(
                "repeat meetings: {n} (pairs of entrants seated together again)\n"
            ));
        }
        for h in &self.head_to_head {
            out.push_str(&format!(
                "{} vs {}: {:+.2} points a game over {} games (95% CI {:+.2} to {:+.2})\n",
                h.challenger, h.opponent, h.score_difference, h.games, h.ci[0], h.ci[1]
            ));
        }
        out
    }
}

impl Standings {
    /// The likelihood-of-superiority matrix as printed under the table, for a
    /// field of up to [`SUPERIORITY_PRINTED`]: row entrant over column
    /// entrant, in percent, columns by rank.
    fn superiority_table(&self) -> String {
        let Some(m) = &self.likelihood_of_superiority else {
            return String::new();
        };
        if m.len() > SUPERIORITY_PRINTED {
            return String::new();
        }
        let width = (self.entrants.iter())
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        let mut out = String::from("likelihood of superiority (row over column, %):\n");
        let heads: Vec<String> = (1..=m.len()).map(|k| format!("{k:>5}")).collect();
        out.push_str(&format!("{:<width$}  {}\n", "over", heads.join(" ")));
        for (r, row) in self.entrants.iter().zip(m) {
            let cells: Vec<String> = (row.iter())
                .map(|p| p.map_or(format!("{:>5}", "-"), |p| format!("{:>5.1}", p * 100.0)))
                .collect();
            out.push_str(&format!("{:<width$}  {}\n", r.name, cells.join(" ")));
        }
        out
    }
}

/// `text` as a spreadsheet shows it rather than evaluates it: the OWASP rule
/// for CSV injection, a leading `'` (which the spreadsheet does not show)
/// before a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return.
/// Only for text cells: `-3` through it is no longer a number.
pub(crate) fn spreadsheet_text(text: &str) -> std::borrow::Cow<'_, str> {
    match text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        true => format!("'{text}").into(),
        false => text.into(),
    }
}

fn faults_text(faults: &BTreeMap<String, u32>) -> String {
    if faults.is_empty() {
        return "-".into();
    }
    faults
        .iter()
        .map(|(k, n)| format!("{k}:{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::spreadsheet_text;

    #[test]
    fn a_cell_a_spreadsheet_would_evaluate_is_shown_as_text_and_others_pass() {
        for formula in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(1)",
            "\t=1",
            "\r=1",
        ] {
            assert_eq!(spreadsheet_text(formula), format!("'{formula}"));
        }
        for plain in ["alice", "bob=2", "a-b", "", "'quoted"] {
            assert_eq!(spreadsheet_text(plain), plain);
        }
    }
}
