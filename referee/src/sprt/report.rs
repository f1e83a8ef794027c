//! What an SPRT concluded: `DIR/sprt.json` (and `--json`), and the one-line
//! verdict. Nothing here depends on wall time or `--jobs`, so the file is the
//! same bytes for the same seed and bots.

use serde::Serialize;

use super::args::SprtConfig;
use super::gsprt::{Sequential, Verdict, MIN_SETS};

/// Version 2 added `seed_secret`, what every deal mixed with `seed`; version
/// 3 `forfeits`.
pub const FORMAT: &str = "schmier-sprt/3";

/// What the test measures, in words (also in the file).
const MEASURE: &str =
    "duplicate score difference, new minus base, points per game, one value per duplicate set";

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub new: String,
    pub base: String,
    pub third: String,
    pub seed: u64,
    /// The seed secret (`tournament/seed_secret.rs`), revealed with the verdict.
    pub seed_secret: String,
    pub measure: &'static str,
    pub h0: f64,
    pub h1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The LLR bounds: H0 accepted at or below `lower`, H1 at or above `upper`.
    pub lower: f64,
    pub upper: f64,
    pub max_sets: u32,
    pub verdict: Verdict,
    pub sets: u32,
    pub games: u32,
    /// The mean difference, points per game.
    pub estimate: f64,
    /// Its 95% interval; absent before two sets.
    pub interval: Option<[f64; 2]>,
    pub llr: f64,
    /// Counted games new and base forfeited: each counts the worst duplicate
    /// score of its set, not what the stand-in that finished it scored.
    pub forfeits: Forfeits,
    /// Each counted set, in order.
    pub history: Vec<SetRecord>,
}

/// Counted games each compared bot forfeited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Forfeits {
    pub new: u32,
    pub base: u32,
}

impl Forfeits {
    /// "new forfeited 2 of the 180 counted games", one clause per bot that
    /// forfeited any, joined by "; " (`None`: neither did).
    pub fn text(&self, games: u32) -> Option<String> {
        let said: Vec<String> = [("new", self.new), ("base", self.base)]
            .into_iter()
            .filter(|&(_, n)| n > 0)
            .map(|(who, n)| format!("{who} forfeited {n} of the {games} counted game(s)"))
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SetRecord {
    pub set: u32,
    pub difference: f64,
    /// The LLR after this set.
    pub llr: f64,
}

/// Six decimals: the file stays readable (a set's difference is a multiple of
/// 1/12) and the same on every platform that rounds IEEE doubles alike.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl Report {
    pub fn new(
        cfg: &SprtConfig,
        test: &Sequential,
        differences: &[f64],
        verdict: Verdict,
        forfeits: Forfeits,
    ) -> Self {
        let t = &cfg.tournament;
        let h = cfg.hypotheses;
        let bot = |i: usize| t.entrants[i].bot.display();
        Report {
            format: FORMAT,
            new: bot(0),
            base: bot(1),
            third: bot(2),
            seed: t.seed,
            seed_secret: t.secret.to_string(),
            measure: MEASURE,
            h0: h.h0,
            h1: h.h1,
            alpha: h.alpha,
            beta: h.beta,
            lower: round(h.lower()),
            upper: round(h.upper()),
            max_sets: t.sets,
            verdict,
            sets: test.sets(),
            games: test.sets() * crate::tournament::schedule::SET,
            estimate: round(test.estimate()),
            interval: test.interval().map(|i| i.map(round)),
            llr: round(test.llr()),
            forfeits,
            history: (1..)
                .zip(differences.iter().zip(&test.history))
                .map(|(set, (&d, &llr))| SetRecord {
                    set,
                    difference: round(d),
                    llr: round(llr),
                })
                .collect(),
        }
    }

    pub fn json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("reports serialize");
        out.push(b'\n');
        out
    }

    /// The verdict in words, e.g. `H1 accepted (new gains at least 2 points per game)`.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Verdict::H1 => format!(
                "H1 accepted: new beats base by {} points per game or more",
                self.h1
            ),
            Verdict::H0 => format!(
                "H0 accepted: new does not beat base by {} points per game",
                self.h1
            ),
            Verdict::Inconclusive if self.sets < MIN_SETS => format!(
                "inconclusive at --max-sets {} (the test decides nothing before {MIN_SETS} sets)",
                self.max_sets
            ),
            Verdict::Inconclusive => format!("inconclusive at --max-sets {}", self.max_sets),
        }
    }

    /// The one-line verdict: the conclusion, the estimate and its interval,
    /// the LLR and its bounds, sets and games.
    pub fn line(&self) -> String {
        let interval = self.interval.map_or(String::new(), |[lo, hi]| {
            format!(" (95% CI {lo:+.2} to {hi:+.2})")
        });
        format!(
            "{}. new − base {:+.2} points per game{interval}; LLR {:+.2} (bounds {:+.2}, {:+.2}); {} sets, {} games",
            self.verdict_text(),
            self.estimate,
            self.llr,
            self.lower,
            self.upper,
            self.sets,
            self.games
        )
    }
}
