//! The validated tournament (stage two of `referee tournament`'s arguments):
//! [`TournamentConfig`] and its [`Entrant`]s, what the runner, the start check,
//! the console and the page read. Built from the flags, the tournament file and
//! a resumed folder by `args.rs`.

use std::path::PathBuf;

use super::format::Format;
use super::schedule::Shard;
use crate::config::{BotSpec, TableSpec};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entrant {
    pub name: String,
    pub bot: BotSpec,
}

/// A validated tournament.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub entrants: Vec<Entrant>,
    pub format: Format,
    pub sets: u32,
    /// The organiser's seed (`--seed`, or drawn).
    pub seed: u64,
    /// Mixed into `seed` for every deal (`seed_secret.rs`).
    pub secret: super::seed_secret::SeedSecret,
    /// What every table shares; the lineup is filled in per matchup.
    pub table: TableSpec,
    pub out: PathBuf,
    pub jobs: usize,
    pub resume: bool,
    /// Replace the tournament already in `out` (else that is an error).
    pub overwrite: bool,
    /// Play even if an entrant fails the start check.
    pub keep_going: bool,
    pub shard: Option<Shard>,
    /// Knockout and Swiss: play only this round.
    pub round: Option<u32>,
    pub from: Option<PathBuf>,
    pub quiet: bool,
    /// Keep `out/index.html` current (`--page`).
    pub page: bool,
    /// `--listen` and the remote entrants (`remote/`).
    pub remote: Option<crate::remote::RemoteSpec>,
}
