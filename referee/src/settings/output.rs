//! What becomes of an output folder that already holds a run, and how much is
//! printed.

use clap::Args;
use serde::Deserialize;

use super::{switch, Merge};

#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputArgs {
    /// Write into an output folder that already holds a run: `play` deletes its
    /// game-*.jsonl transcripts and timings first, `tournament` its games,
    /// journal, manifest and standings, so nothing old is mixed with the new.
    /// Without it such a folder is an error.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "no_overwrite")]
    pub overwrite: Option<bool>,

    /// Refuse a folder that holds a run (undoes --overwrite, e.g. the file's
    /// `overwrite = true`).
    #[arg(long, overrides_with = "overwrite")]
    #[serde(skip)]
    pub no_overwrite: bool,

    /// Print only the final result (no progress).
    #[arg(long, short)]
    #[serde(skip)]
    pub quiet: bool,
}

impl Merge for OutputArgs {
    fn merge(self, lower: Self) -> Self {
        OutputArgs {
            overwrite: switch(self.overwrite, self.no_overwrite).or(lower.overwrite),
            no_overwrite: false,
            quiet: self.quiet,
        }
    }
}

impl OutputArgs {
    pub fn overwrite(&self) -> bool {
        switch(self.overwrite, self.no_overwrite).unwrap_or(false)
    }
}
