//! `referee sprt`: is the new bot better than the base? A sequential test on
//! duplicate sets that stops as soon as the evidence suffices. A tour:
//!
//! - `args.rs`: flags → a validated [`SprtConfig`] (a three-entrant
//!   tournament and the hypotheses).
//! - `measure.rs`: a set's difference, new minus base, points per game of
//!   duplicate score — the one observation the test takes per set.
//! - `gsprt.rs`: the test itself, pure: the generalized log-likelihood ratio,
//!   Wald's bounds, the estimate and its interval (and why sets, not games).
//! - `run.rs`: the coordinator over the tournament's pool and journal; sets
//!   counted in order, so `--jobs` changes nothing recorded.
//! - `report.rs`: `sprt.json` and the one-line verdict; `html.rs`: `sprt.html`,
//!   the LLR against sets between its bounds as an inline SVG.
//! - `progress.rs`: the LLR between its bounds while it runs.
//! - `command.rs`: printing and exit status.
//! - `calibration.rs` (tests only): a thousand simulated tests on real set
//!   differences, measuring the error rates.

mod args;
#[cfg(test)]
mod calibration;
mod command;
mod gsprt;
mod html;
mod measure;
mod progress;
mod report;
mod run;

pub use args::{SprtArgs, SprtConfig};
pub use command::main;
