//! `referee season`'s subcommands and their flags.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::settings::TableArgs;
use crate::tournament::format::FormatName;

/// Sets a new version plays first, by default.
pub const MIN_SETS: u32 = 3;
/// The most sets two versions play together, by default.
pub const PAIR_CAP: u32 = 50;

#[derive(Args, Debug)]
pub struct SeasonArgs {
    #[command(subcommand)]
    pub command: SeasonCommand,
}

#[derive(Subcommand, Debug)]
pub enum SeasonCommand {
    /// Open a season in DIR: its settings (time control, fault policy,
    /// sandbox, limits, matchmaking) fixed and recorded in DIR/season.db,
    /// its seed secret drawn, and its first entrants submitted.
    #[command(allow_negative_numbers = true)]
    Init(Box<InitArgs>),
    /// Play the season's sets until --sets N are finished (or Ctrl-C): up to
    /// --jobs sets at once, each of three versions on one deal, chosen by the
    /// matchmaking policy; a run killed at any moment is resumed by running it
    /// again.
    Run(RunArgs),
    /// Submit a new version of an entrant (a new entrant if NAME is new): it
    /// is checked with check-bot under the season's time limits and, if it
    /// passes, replaces the entrant's current version from the next set on,
    /// also while `season run` runs.
    Submit(SubmitArgs),
    /// Print the standings: each entrant's current version ranked by rating,
    /// with its earlier versions below it.
    Standings(StandingsArgs),
    /// The season's end: freeze submissions, take the first --top N entrants
    /// of the standings and play a tournament among their current versions in
    /// DIR/final (under the season's settings, dealt from its secret). Run it
    /// again to resume it; once it is complete the season is closed.
    Final(FinalArgs),
    /// Close the season: nothing more is played, and its seed secret is
    /// revealed (printed and kept in season.db), so anyone can deal its games
    /// again.
    Close {
        /// The season's folder.
        dir: PathBuf,
    },
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The season's folder (new, or empty).
    pub dir: PathBuf,
    /// A first entrant, `NAME=CMD` (repeat): submitted as by `season submit`.
    #[arg(long = "entrant", value_name = "NAME=CMD")]
    pub entrants: Vec<String>,
    /// The season's seed; every deal mixes it with a secret drawn now and
    /// revealed when the season is closed. Random if absent.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Sets each new version plays before others are anchored again.
    #[arg(long, value_name = "N", default_value_t = MIN_SETS)]
    pub min_sets: u32,
    /// The most sets two versions play together.
    #[arg(long, value_name = "N", default_value_t = PAIR_CAP)]
    pub pair_cap: u32,
    /// Admit the --entrant bots without running check-bot on them.
    #[arg(long)]
    pub unchecked: bool,
    #[command(flatten)]
    pub table: TableArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// Sets played at once. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Stop once the season has N finished sets in all (the sets under way
    /// when it is reached are finished first). Without it, the run goes on
    /// until Ctrl-C or SIGTERM, waiting for submissions when nothing can be
    /// played.
    #[arg(long, value_name = "N")]
    pub sets: Option<u64>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// The entrant.
    pub name: String,
    /// The version's folder: its command is read and run there, recorded
    /// with it. [default: the working directory]
    #[arg(long = "bot-dir", value_name = "DIR")]
    pub bot_dir: Option<PathBuf>,
    /// Admit it without running check-bot (recorded as such).
    #[arg(long)]
    pub unchecked: bool,
    /// The bot's command, after `--` (one word with spaces is split like a
    /// shell would), or `builtin:NAME`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct StandingsArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// JSON instead of the table: every version, with its rating history.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct FinalArgs {
    /// The season's folder.
    pub dir: PathBuf,
    /// How many entrants play the final: the first N of the standings (at
    /// least 3), each with its current version. Needed the first time; a
    /// rerun resumes the final as it was called.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// How the finalists are brought together (as `tournament --format`;
    /// their standings order is a knockout's seeding). [default: round-robin]
    #[arg(long, value_enum)]
    pub format: Option<FormatName>,
    /// Duplicate sets per matchup of the final. [default: 1]
    #[arg(long, value_name = "N")]
    pub sets: Option<u32>,
    /// Rounds of a Swiss final.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,
    /// Tables played at once. [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}
