//! Progress of an SPRT: after each counted set, the LLR placed between its
//! bounds — a live line on a terminal, otherwise a line every few sets.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::gsprt::Sequential;

/// On a pipe or in a log: one line per this many sets (and the last).
const EVERY: u32 = 10;
/// Characters between the two bounds in the gauge.
const GAUGE: usize = 30;

pub struct Progress {
    bar: ProgressBar,
    lines: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = if quiet || !terminal {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(ProgressStyle::with_template("{msg}").expect("a valid template"));
            bar
        };
        Progress {
            bar,
            lines: !quiet && !terminal,
        }
    }

    /// The test after sets were counted; `before` of them were counted already.
    pub fn set(&self, test: &Sequential, before: u32, max_sets: u32) {
        let text = describe(test, max_sets);
        self.bar.set_message(text.clone());
        let crossed = test.sets() / EVERY > before / EVERY;
        if self.lines && (crossed || test.sets() == max_sets) {
            eprintln!("referee: {text}");
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `set 12/1000  H0 -2.94 [·······|····●·······] +2.94 H1  LLR +0.41  estimate +1.20`
pub fn describe(test: &Sequential, max_sets: u32) -> String {
    let h = test.hypotheses;
    let (lower, upper) = (h.lower(), h.upper());
    let llr = test.llr();
    let at = ((llr - lower) / (upper - lower) * GAUGE as f64)
        .round()
        .clamp(0.0, GAUGE as f64) as usize;
    let zero = ((-lower) / (upper - lower) * GAUGE as f64).round() as usize;
    let gauge: String = (0..=GAUGE)
        .map(|i| match i {
            _ if i == at => '●',
            _ if i == zero => '|',
            _ => '·',
        })
        .collect();
    format!(
        "set {}/{max_sets}  H0 {lower:+.2} [{gauge}] {upper:+.2} H1  LLR {llr:+.2}  estimate {:+.2} points per game",
        test.sets(),
        test.estimate()
    )
}
