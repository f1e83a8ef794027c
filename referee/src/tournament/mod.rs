//! A tournament: many tables above the table layer. A tour:
//!
//! - `args.rs`: the flags, laid over the tournament file (`config_file.rs`)
//!   and a resumed folder → a validated [`TournamentConfig`] (`config.rs`);
//!   `entrants.rs`: the entrants gathered and checked; `auto_shard.rs`:
//!   `--shard auto` from a Kubernetes or Slurm environment.
//! - `schedule.rs`: pure — matchups, duplicate sets, each game's key, seed and
//!   seating; shards.
//! - `format/`: one file per format behind one interface (`format/mod.rs`, the
//!   trait and the factory): a round's tables from the results so far, how its
//!   rounds read in the bracket, what its standings rank or add.
//! - `pool.rs`: plays the matchups on `--jobs` tables, each a
//!   [`crate::session::Session`].
//! - `outcome.rs`: the figures kept of a finished game, read from its transcript.
//! - `journal.rs`: `journal.jsonl`, appended and fsynced per game; `--resume`.
//! - `manifest.rs`: `tournament.json`, what the tournament in a directory is.
//! - `seed_secret.rs`: the secret mixed into `--seed` so no bot can find the
//!   deals from its hand, and where it is kept; `secret_args.rs`: where a
//!   run's secret comes from.
//! - `standings.rs`: standings, intervals and ratings and how they rank;
//!   `standings_render.rs`: them as JSON, CSV and a console table.
//! - `startcheck.rs`: every entrant started once, before the first game.
//! - `run.rs`: `referee tournament` — rounds, the coordinator that journals
//!   what the pool finishes; `out_folder.rs`: the `--out` folder made ready
//!   (new, resumed or overwritten).
//! - `events.rs`: what a run does, as events for reporters (the runner and the
//!   pool never print); `console.rs`: the reporter that prints;
//!   `progress.rs`: the reporter that shows the live bar or progress lines.
//! - `bracket.rs`: a round's bracket printed — its tables and game wins, and
//!   the format's summary of the round (who advances, byes, repeat meetings).
//! - `page.rs`: the tournament's page in the browser, kept current with
//!   `--page` and written for a finished folder by `show --html`.
//! - `merge.rs`: `referee merge` — shards back into one tournament.
//! - `audit.rs`: `referee verify` on a tournament folder — each journal line
//!   against its transcript.
//! - `folder.rs`: `--resume --out DIR` alone — the settings read back from
//!   the folder's manifest.
//! - `difference.rs`: where two manifests differ, in plain words (what a
//!   refused `--resume`, `--from` or `merge` says).

pub(crate) mod args;
pub mod audit;
mod auto_shard;
mod bracket;
pub(crate) mod config;
mod config_file;
mod console;
pub(crate) mod difference;
mod entrants;
pub mod events;
pub(crate) mod folder;
pub mod format;
pub(crate) mod journal;
pub(crate) mod manifest;
mod merge;
pub(crate) mod out_folder;
pub mod outcome;
pub mod page;
pub(crate) mod pool;
mod progress;
#[cfg(test)]
mod properties;
pub mod rating;
pub(crate) mod run;
pub mod schedule;
pub mod secret_args;
pub mod seed_secret;
pub mod standings;
mod standings_render;
pub(crate) mod startcheck;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;

use crate::layout::tournament::{STANDINGS, STANDINGS_CSV};
use crate::safe_create::write_atomic;

pub use args::TournamentArgs;
pub use config::TournamentConfig;
pub use console::Console;
pub use journal::discard_unplayed;
pub use merge::merge;
pub use progress::Progress;
pub use run::{run, Ended};
pub use standings::Standings;

/// Copies a game's transcript (and its timings, if kept) between tournament
/// directories.
fn copy_game(from: &Path, to: &Path, transcript: &str) -> anyhow::Result<()> {
    let timings = crate::config::Output::timings(Path::new(transcript));
    for (rel, required) in [(Path::new(transcript), true), (timings.as_path(), false)] {
        let src = from.join(rel);
        if !required && !src.exists() {
            continue; // timings are informative, not required
        }
        let dst = to.join(rel);
        if let Some(dir) = dst.parent() {
            // Timings live in a timings/ folder beside the transcripts.
            std::fs::create_dir_all(dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
        }
        // Through the atomic writer: the copy is durable before the journal
        // line that counts it is appended.
        let bytes =
            std::fs::read(&src).with_context(|| format!("failed to read {}", src.display()))?;
        write_atomic(&dst, &bytes)?;
    }
    Ok(())
}

/// A tournament over: its manifest rewritten to show the seed secret, so
/// that anyone can deal its games again (`seed_secret.rs`).
pub(crate) fn reveal(dir: &Path, manifest: &manifest::Manifest) -> anyhow::Result<()> {
    let revealed = manifest::Manifest {
        revealed: true,
        ..manifest.clone()
    };
    let path = dir.join(crate::layout::tournament::MANIFEST);
    Ok(write_atomic(&path, &revealed.bytes())?)
}

/// The end of a complete tournament (or merge): the journal in schedule order,
/// and the standings files.
pub(crate) fn finish(
    dir: &Path,
    manifest: &manifest::Manifest,
    outcomes: &BTreeMap<schedule::GameKey, outcome::GameOutcome>,
) -> anyhow::Result<Standings> {
    journal::rewrite_sorted(dir, outcomes)?;
    let standings = standings::compute(manifest, outcomes);
    write_atomic(&dir.join(STANDINGS), &standings.json())?;
    write_atomic(&dir.join(STANDINGS_CSV), &standings.csv())?;
    Ok(standings)
}
