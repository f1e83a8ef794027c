//! `referee sprt`'s flags (stage one) and the validated [`SprtConfig`] (stage
//! two). The run is a tournament of three entrants — new, base, third — in one
//! matchup of up to --max-sets duplicate sets, so the table's settings are the
//! tournament's, built by the same function.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use super::gsprt::Hypotheses;
use crate::config::BotSpec;
use crate::settings::{fresh_seed, parse_bot, with_default, Merge, TableArgs};
use crate::tournament::args::table_spec;
use crate::tournament::config::Entrant;
use crate::tournament::format::Format;
use crate::tournament::TournamentConfig;

const THIRD: &str = "builtin:heuristic";
const H0: f64 = 0.0;
const H1: f64 = 2.0;
const ALPHA: f64 = 0.05;
const BETA: f64 = 0.05;
const MAX_SETS: u32 = 1000;
/// Every set still to play is queued at the start (one table job each), so
/// the queue is bounded: 60,000 games is far past any useful test.
const MAX_SETS_LIMIT: u32 = 10_000;

/// The entrant names: new is entrant 0, base 1, third 2 (see `measure.rs`).
pub const NAMES: [&str; 3] = ["new", "base", "third"];

#[derive(Args, Debug)]
#[command(
    after_help = "The measure is the duplicate score difference, new minus base, \
    in points per game, one value per duplicate set (six games on one deal, the three \
    bots rotated through every arrangement). Exit status: 0 when the test ended (H0, H1, \
    or inconclusive at --max-sets: read the verdict), 2 on bad input or a failure, 130 \
    (128 + the signal) when interrupted; --resume continues."
)]
pub struct SprtArgs {
    /// The changed bot (a command, `builtin:NAME` or `inproc:NAME`). Required,
    /// except with `--resume --out DIR`, which reads it from DIR.
    #[arg(long, value_name = "CMD")]
    pub new: Option<String>,

    /// The bot it is compared with (required as --new is).
    #[arg(long, value_name = "CMD")]
    pub base: Option<String>,

    #[arg(long, value_name = "CMD", help = with_default("The third team at every table.", THIRD))]
    pub third: Option<String>,

    #[arg(long, value_name = "POINTS", allow_hyphen_values = true, help = with_default("H0: new minus base is this many points per game of duplicate score (no better).", H0))]
    pub h0: Option<f64>,

    #[arg(long, value_name = "POINTS", allow_hyphen_values = true, help = with_default("H1: new minus base is this many points per game (the smallest gain worth finding; must exceed --h0).", H1))]
    pub h1: Option<f64>,

    #[arg(long, value_name = "P", help = with_default("Chance of accepting H1 when H0 holds.", ALPHA))]
    pub alpha: Option<f64>,

    #[arg(long, value_name = "P", help = with_default("Chance of accepting H0 when H1 holds.", BETA))]
    pub beta: Option<f64>,

    #[arg(long, value_name = "N", help = with_default("Stop, inconclusive, after this many sets (at most 10000).", MAX_SETS))]
    pub max_sets: Option<u32>,

    /// Tables played at once; the verdict and every file are the same for any
    /// value. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Seed; every set's deal derives from it and a secret drawn at the
    /// start (see --seed-secret), revealed with the verdict. Random if
    /// absent; kept in --out (tournament.json, sprt.json).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub secret: crate::tournament::secret_args::SecretArgs,

    /// Output directory. [default: schmier-out/sprt-SEED]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Continue the test in --out: its journal's sets count, in order, and only
    /// the games it lacks are played. A larger --max-sets continues a test that
    /// ended inconclusive. Without --new, --base and --third, the bots, seed,
    /// hypotheses and table settings are read from --out.
    #[arg(long)]
    pub resume: bool,

    /// Print the result as JSON (what --out/sprt.json holds) instead of a line.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub table: TableArgs,

    /// `--listen` for a bot written `remote:NAME` (`remote/`).
    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
}

/// A validated SPRT.
#[derive(Clone, Debug)]
pub struct SprtConfig {
    /// The three entrants' tournament: one matchup, --max-sets sets.
    pub tournament: TournamentConfig,
    pub hypotheses: Hypotheses,
    pub json: bool,
}

impl SprtArgs {
    pub fn validate(&self) -> anyhow::Result<SprtConfig> {
        let folder = self.folder()?;
        let folder = folder.as_ref();
        let recorded = folder.and_then(|m| m.sprt);
        let hypotheses = self.hypotheses(recorded)?;
        let max_sets = (self.max_sets.or(folder.map(|m| m.sets))).unwrap_or(MAX_SETS);
        if !(1..=MAX_SETS_LIMIT).contains(&max_sets) {
            bail!("--max-sets must be from 1 to {MAX_SETS_LIMIT}, got {max_sets}");
        }
        let entrants = match folder {
            Some(m) => crate::tournament::folder::entrants(m)?,
            None => self.entrants()?,
        };
        let table = match folder {
            Some(m) => (self.table.clone()).merge(crate::tournament::folder::table_args(
                m,
                self.table.time.time_scale,
            )),
            None => self.table.clone(),
        };
        if table.policy.keep_going() {
            bail!(
                "--keep-going: an SPRT compares the bots that play; one that fails to start \
                 must be fixed first (`referee check-bot -- CMD`)"
            );
        }
        let quiet = table.output.quiet;
        let seed = match (self.seed, folder) {
            (None, Some(m)) => m.seed,
            _ => self.seed()?,
        };
        let jobs = self
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            bail!("--jobs must be at least 1");
        }
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("schmier-out/sprt-{seed}")));
        let overwrite = table.output.overwrite();
        if self.resume && overwrite {
            bail!(
                "--resume and --overwrite: continue the test in {} or replace it, not both",
                out.display()
            );
        }
        let secret = self.secret.choose(&out, self.resume, None, false)?;
        let table = table_spec(&table, &entrants, &out, self.secret.file())?;
        let entrants_bots: Vec<BotSpec> = entrants.iter().map(|e| e.bot.clone()).collect();
        Ok(SprtConfig {
            tournament: TournamentConfig {
                entrants,
                format: Format::RoundRobin,
                sets: max_sets,
                seed,
                secret,
                table,
                out,
                jobs,
                resume: self.resume,
                overwrite,
                keep_going: false,
                shard: None,
                round: None,
                from: None,
                quiet,
                // An SPRT's sets are not a tournament to watch.
                page: false,
                remote: (self.remote).validate(
                    crate::cli::remote_names(entrants_bots.iter()),
                    crate::remote::args::seats_at_once(jobs),
                )?,
            },
            hypotheses,
            json: self.json,
        })
    }

    /// With `--resume` and no bot given: the folder's manifest, from which
    /// every setting not given here is taken (`tournament/folder.rs`).
    fn folder(&self) -> anyhow::Result<Option<crate::tournament::manifest::Manifest>> {
        let named = self.new.is_some() || self.base.is_some() || self.third.is_some();
        if !self.resume || named {
            return Ok(None);
        }
        let out = match (&self.out, self.seed) {
            (Some(out), _) => out.clone(),
            (None, Some(seed)) => PathBuf::from(format!("schmier-out/sprt-{seed}")),
            (None, None) => bail!(
                "--resume: give --out DIR, the folder of the test to continue (its \
                 settings are read from DIR/tournament.json)"
            ),
        };
        crate::tournament::folder::settings(&out, true)
    }

    /// New, base and third as the tournament's three entrants.
    fn entrants(&self) -> anyhow::Result<Vec<Entrant>> {
        let (Some(new), Some(base)) = (&self.new, &self.base) else {
            bail!(
                "--new and --base name the two bots compared; both are needed (only \
                 `--resume --out DIR` reads them from the folder of a test)"
            );
        };
        let third = self.third.as_deref().unwrap_or(THIRD);
        let mut entrants = Vec::new();
        for (name, cmd) in NAMES.into_iter().zip([&**new, base, third]) {
            let bot = parse_bot(cmd, &format!("--{name}"))?;
            if bot == BotSpec::Human {
                bail!("--{name} human: an SPRT plays hundreds of games; give a bot's command");
            }
            entrants.push(Entrant {
                name: name.to_owned(),
                bot,
            });
        }
        Ok(entrants)
    }

    /// `--seed` (no warning: the seed secret keeps it from being enough), or
    /// a fresh one.
    fn seed(&self) -> anyhow::Result<u64> {
        self.seed.map_or_else(fresh_seed, Ok)
    }

    /// The flags' hypotheses, else the folder's (`recorded`), else the defaults.
    fn hypotheses(
        &self,
        recorded: Option<crate::tournament::manifest::TestRecord>,
    ) -> anyhow::Result<Hypotheses> {
        let h = Hypotheses {
            h0: (self.h0.or(recorded.map(|r| r.h0))).unwrap_or(H0),
            h1: (self.h1.or(recorded.map(|r| r.h1))).unwrap_or(H1),
            alpha: (self.alpha.or(recorded.map(|r| r.alpha))).unwrap_or(ALPHA),
            beta: (self.beta.or(recorded.map(|r| r.beta))).unwrap_or(BETA),
        };
        for (flag, v) in [("--h0", h.h0), ("--h1", h.h1)] {
            if !v.is_finite() {
                bail!("{flag} must be a number of points per game, got {v}");
            }
        }
        if h.h1 <= h.h0 {
            bail!(
                "--h1 ({}) must be greater than --h0 ({}): H1 is the gain worth finding, H0 \
                 the difference that is not",
                h.h1,
                h.h0
            );
        }
        for (flag, p) in [("--alpha", h.alpha), ("--beta", h.beta)] {
            if !(p > 0.0 && p < 0.5) {
                bail!("{flag} must be a probability above 0 and below 0.5, got {p}");
            }
        }
        Ok(h)
    }
}
