//! Tournament formats: how entrants are brought together. One file per format,
//! each a [`Pairing`] — its tables, round by round or all at once; what it makes
//! of a round for the bracket (who advances, who sat out, who met again) and who
//! won at the end; and what its standings rank by or report besides the common
//! figures. Everything else in a tournament (the pool, the journal, shards,
//! merge, standings, the bracket) asks the format through this interface and
//! never names one, so a format's logic runs only on its own results (the Swiss
//! crash came from a shared printer running the knockout's branch on a Swiss).
//!
//! [`Format`] is a format's identity as the manifest records it; the factory
//! ([`FormatName::build`] from the flags, [`Format::pairing`] for the rules)
//! is the one place that lists them all. Adding a format means its file and
//! this one: a variant of [`Format`] and of [`FormatName`], and an arm in each
//! factory `match` (the compiler finds them).

mod balanced;
mod gauntlet;
mod knockout;
mod round_robin;
mod swiss;
mod swiss_seating;

use std::collections::BTreeMap;
#[cfg(test)]
use std::collections::BTreeSet;

use anyhow::bail;

use super::bracket::{self, RoundSummary};
use super::outcome::GameOutcome;
use super::schedule::{numbered, GameKey, GameResult, Matchup};

pub use swiss::ROUNDS;

/// How entrants are brought together: the manifest's record of the format and
/// its parameters.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Format {
    /// Every combination of three entrants plays one matchup.
    RoundRobin,
    /// A balanced subset of the round robin for large fields: every pair of
    /// entrants meets exactly once (a Steiner triple system, n(n−1)/6 tables
    /// instead of n(n−1)(n−2)/6). Exists for n ≡ 1 or 3 (mod 6).
    Balanced,
    /// Each challenger plays every pair of the other (pool) entrants.
    Gauntlet {
        /// Entrant indices of the challengers.
        challengers: Vec<usize>,
    },
    /// Rounds of tables of three; each table's winner advances (see `knockout.rs`).
    Knockout,
    /// `rounds` rounds; each round's tables group entrants of similar standing
    /// (see `swiss.rs`).
    Swiss { rounds: u32 },
}

/// `--format`: how entrants are brought together (a [`Format`] without its
/// parameters, which come from --challenger and --rounds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormatName {
    /// Every three entrants meet.
    RoundRobin,
    /// A subset of the round robin in which every pair meets exactly once (7, 9,
    /// 13, 15, 19, … entrants).
    Balanced,
    /// Each --challenger against every pair of the others.
    Gauntlet,
    /// Table winners advance, until one is left.
    Knockout,
    /// --rounds rounds of tables of similar standing.
    Swiss,
}

/// What the flags and the tournament file give a format besides its name.
pub struct Params<'a> {
    /// Entrant names, by entrant index.
    pub entrants: &'a [String],
    /// `--challenger`, by name.
    pub challengers: &'a [String],
    /// `--rounds`.
    pub rounds: Option<u32>,
}

impl FormatName {
    /// The format from its name and parameters, checked against the field; an
    /// error names the flag and what is wrong.
    pub fn build(self, p: &Params) -> anyhow::Result<Format> {
        if self != FormatName::Gauntlet && !p.challengers.is_empty() {
            bail!("--challenger: only a gauntlet has challengers (--format gauntlet)");
        }
        if self != FormatName::Swiss && p.rounds.is_some() {
            bail!("--rounds: only a Swiss tournament has a number of rounds");
        }
        match self {
            FormatName::RoundRobin => Ok(Format::RoundRobin),
            FormatName::Balanced => balanced::build(p),
            FormatName::Gauntlet => gauntlet::build(p),
            FormatName::Knockout => Ok(Format::Knockout),
            FormatName::Swiss => swiss::build(p),
        }
    }
}

impl Format {
    /// The format's rules of play.
    pub fn pairing(&self) -> Box<dyn Pairing + '_> {
        match self {
            Format::RoundRobin => Box::new(round_robin::RoundRobin),
            Format::Balanced => Box::new(balanced::Balanced),
            Format::Gauntlet { challengers } => Box::new(gauntlet::Gauntlet { challengers }),
            Format::Knockout => Box::new(knockout::Knockout),
            Format::Swiss { rounds } => Box::new(swiss::Swiss { rounds: *rounds }),
        }
    }

    /// Whether the format is played round by round (see [`Pairing::by_rounds`]).
    pub fn by_rounds(&self) -> bool {
        self.pairing().by_rounds()
    }

    /// One format of each kind for a field of `entrants`, with parameters
    /// chosen by `choice`: what the property tests play, so that a new format
    /// is covered as soon as the factory knows it.
    #[cfg(test)]
    pub fn samples(entrants: usize, choice: u64) -> Vec<Format> {
        use clap::ValueEnum;
        FormatName::value_variants()
            .iter()
            .filter_map(|name| match name {
                FormatName::RoundRobin => Some(Format::RoundRobin),
                FormatName::Balanced => Some(Format::Balanced),
                FormatName::Gauntlet => gauntlet::sample(entrants, choice),
                FormatName::Knockout => Some(Format::Knockout),
                FormatName::Swiss => Some(swiss::sample()),
            })
            .collect()
    }
}

/// A format's rules: which tables a round seats, and what the bracket and the
/// standings make of its results. Every method is total: any results, even
/// ones the format would never produce, give an answer, never a panic.
pub trait Pairing {
    /// Whether the tables of a round follow from the results of the rounds
    /// before it (rounds numbered from 1), rather than all being known up front
    /// (one round, numbered 0).
    fn by_rounds(&self) -> bool {
        false
    }

    /// The tables of round `r` (0 for a format of one round, from 1 for one
    /// played by rounds), given `before`, the results of every earlier round;
    /// empty when there is no such round (the tournament is over).
    fn tables(&self, entrants: usize, r: u32, before: &[GameResult]) -> Vec<[usize; 3]>;

    /// What the format makes of round `r` (all of its `tables`, in matchup
    /// order), given `before`, the results of the rounds before it, and
    /// `this`, those of the round so far: by default, nothing beyond the
    /// tables. `advances` is by matchup index.
    fn summary(
        &self,
        _entrants: usize,
        _r: u32,
        tables: &[[usize; 3]],
        _before: &[GameResult],
        _this: &[&GameResult],
    ) -> RoundSummary {
        RoundSummary {
            advances: vec![None; tables.len()],
            ..RoundSummary::default()
        }
    }

    /// Who won the tournament, once round `r` has no tables (a knockout's
    /// champion); by default nobody is named.
    fn champion(&self, _entrants: usize, _r: u32, _before: &[GameResult]) -> Option<usize> {
        None
    }

    /// What the standings rank entrants by before their results, higher first
    /// (a knockout: the round reached); by default nothing.
    fn rank_first(&self, entrants: usize, _results: &[GameResult]) -> Vec<u32> {
        vec![0; entrants]
    }

    /// What [`Pairing::rank_first`] ranks by, in a few words for the
    /// standings' `ranked_by` line (`None`: it ranks nothing first).
    fn ranks_first_by(&self) -> Option<&'static str> {
        None
    }

    /// For a format that avoids them: how many times a pair shared a table
    /// again (each pair counted at every table after its first).
    fn repeat_meetings(&self, _entrants: usize, _results: &[GameResult]) -> Option<u32> {
        None
    }

    /// The (challenger, opponent) pairs whose head-to-head the standings
    /// report, in order.
    fn head_to_head(&self, _entrants: usize) -> Vec<(usize, usize)> {
        Vec::new()
    }

    /// Advice shown before a round of `tables` tables, e.g. a smaller format
    /// that fits the field.
    fn hint(&self, _entrants: usize, _tables: usize) -> Option<String> {
        None
    }

    /// The format in a few words for a reader, e.g. `Swiss, 5 rounds`; `name`
    /// gives an entrant's name.
    fn title(&self, name: &dyn Fn(usize) -> String) -> String;

    /// Test support: checks a round this format seated against the format's
    /// own promises (the common ones are checked by `properties.rs`).
    #[cfg(test)]
    fn check_round(&self, _round: &Played) {}

    /// Test support: checks a schedule played to its end.
    #[cfg(test)]
    fn check_end(&self, _end: &Played) {}
}

/// A round (or, for `Pairing::check_end`, the end of a schedule) as played,
/// for the checks of the format's own promises.
#[cfg(test)]
pub struct Played<'a> {
    /// Names the schedule in a failure: format, entrants, sets, seed.
    pub label: &'a str,
    pub entrants: usize,
    pub names: &'a [String],
    pub sets: u32,
    pub seed: u64,
    /// Whether to run the costlier checks (on two seeds of the seven).
    pub thorough: bool,
    /// The round (at the end: the first round without tables).
    pub r: u32,
    /// Its matchups (at the end: none).
    pub ms: &'a [Matchup],
    /// The entrants seated in it.
    pub seated: BTreeSet<usize>,
    /// The results of every round before it.
    pub before: &'a [GameResult],
}

/// The matchups of a format of one round (round robin, balanced, gauntlet), in
/// schedule order. A format played by rounds has none up front: see [`round`].
pub fn matchups(entrants: usize, format: &Format, sets: u32, seed: u64) -> Vec<Matchup> {
    let pairing = format.pairing();
    if pairing.by_rounds() {
        return Vec::new();
    }
    numbered(pairing.tables(entrants, 0, &[]), 0, sets, seed)
}

/// Round `r` (from 1) of a format played by rounds, from the results of rounds
/// `1..r` (all complete). `None` when the tournament is over (a knockout with
/// one entrant left, a Swiss after its last round) or has no rounds (a format of
/// one round, or `r` = 0).
pub fn round(
    entrants: usize,
    format: &Format,
    sets: u32,
    seed: u64,
    r: u32,
    before: &[GameResult],
) -> Option<Vec<Matchup>> {
    let pairing = format.pairing();
    if r == 0 || !pairing.by_rounds() {
        return None;
    }
    let tables = pairing.tables(entrants, r, before);
    if tables.is_empty() {
        return None;
    }
    Some(numbered(tables, r, sets, seed))
}

/// The bracket of round `r` (matchups `ms`) with the results in `outcomes`: its
/// heading, its tables and what the format makes of them.
pub fn bracket_round(
    names: &[String],
    format: &Format,
    r: u32,
    ms: &[Matchup],
    outcomes: &BTreeMap<GameKey, GameOutcome>,
) -> String {
    let results = |keep: &dyn Fn(u32) -> bool| -> Vec<GameResult> {
        (outcomes.values())
            .filter(|o| keep(o.round))
            .map(|o| o.result())
            .collect()
    };
    let (before, this) = (results(&|q| q < r), results(&|q| q == r));
    let this: Vec<&GameResult> = this.iter().collect();
    let tables: Vec<[usize; 3]> = ms.iter().map(|m| m.entrants).collect();
    let summary = format
        .pairing()
        .summary(names.len(), r, &tables, &before, &this);
    format!("round {r}:\n{}", bracket::lines(names, ms, &this, &summary))
}

/// The line that ends a format played by rounds, once round `r` has no tables:
/// the champion, for a format that names one.
pub fn last_line(
    names: &[String],
    format: &Format,
    r: u32,
    before: &[GameResult],
) -> Option<String> {
    let champion = format.pairing().champion(names.len(), r, before)?;
    Some(format!("champion: {}", names.get(champion)?))
}
