//! The fault policy and the rules variants.

use clap::Args;
use serde::Deserialize;

use schmier_protocol::rules::RulesConfig;

use super::{choice_name, switch, with_default, Merge};
use crate::config::FaultPolicy;

const POLICY: PolicyName = PolicyName::Competition;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyName {
    Competition,
    Lenient,
}

#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyArgs {
    #[arg(long, value_enum, help = with_default("Fault policy: `competition` (a team with any faulted seat forfeits the game and is ranked last; a seat is replaced by the fallback after 3 faults) or `lenient` (no forfeits; replaced only after a crash or closed pipe). In a tournament, under `competition` every game also gets bot processes of its own (docs/organisers.md: \"A game's processes are its own\").", choice_name(&POLICY)))]
    pub policy: Option<PolicyName>,

    /// Faults a seat may commit in one game before the fallback plays for it for
    /// the rest of the game (overrides the policy's; 0 = never).
    #[arg(long, value_name = "N")]
    pub max_faults: Option<u32>,

    /// Do not restart a bot that crashed or closed its pipes for the next game
    /// (by default it is restarted; within a game the fallback plays for it).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "restart")]
    pub no_restart: Option<bool>,

    /// Restart crashed bots after all (undoes --no-restart, e.g. the file's
    /// `no_restart = true`).
    #[arg(long, overrides_with = "no_restart")]
    #[serde(skip)]
    pub restart: bool,

    /// Play even if a bot fails to start or to say hello (the fallback plays its
    /// seats, its fault is `start`, and its team forfeits under the competition
    /// policy; a tournament ranks an entrant that never started last). Without
    /// it such a failure is reported and the run exits with status 2 before any
    /// game.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "no_keep_going")]
    pub keep_going: Option<bool>,

    /// Stop before any game if a bot fails to start (undoes --keep-going, e.g.
    /// the file's `keep_going = true`).
    #[arg(long, overrides_with = "keep_going")]
    #[serde(skip)]
    pub no_keep_going: bool,
}

impl Merge for PolicyArgs {
    fn merge(self, lower: Self) -> Self {
        PolicyArgs {
            policy: self.policy.or(lower.policy),
            max_faults: self.max_faults.or(lower.max_faults),
            no_restart: switch(self.no_restart, self.restart).or(lower.no_restart),
            restart: false,
            keep_going: switch(self.keep_going, self.no_keep_going).or(lower.keep_going),
            no_keep_going: false,
        }
    }
}

impl PolicyArgs {
    pub fn resolve(&self) -> FaultPolicy {
        let mut p = match self.name() {
            PolicyName::Competition => FaultPolicy::COMPETITION,
            PolicyName::Lenient => FaultPolicy::LENIENT,
        };
        if let Some(m) = self.max_faults {
            p.max_faults = (m > 0).then_some(m);
        }
        p.restart = !switch(self.no_restart, self.restart).unwrap_or(false);
        p
    }

    pub fn name(&self) -> PolicyName {
        self.policy.unwrap_or(POLICY)
    }

    /// Whether a run goes on when a bot fails to start.
    pub fn keep_going(&self) -> bool {
        switch(self.keep_going, self.no_keep_going).unwrap_or(false)
    }
}

#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesArgs {
    /// Rules variant: the dealer may not pass after five passes, from the first deal.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "no_stick_the_dealer")]
    pub stick_the_dealer: Option<bool>,

    /// Undo --stick-the-dealer (e.g. the file's `stick_the_dealer = true`).
    #[arg(long, overrides_with = "stick_the_dealer")]
    #[serde(skip)]
    pub no_stick_the_dealer: bool,

    /// Rules variant: a trump may be played even when the seat could follow suit.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "no_trump_anytime")]
    pub trump_anytime: Option<bool>,

    /// Undo --trump-anytime (e.g. the file's `trump_anytime = true`).
    #[arg(long, overrides_with = "trump_anytime")]
    #[serde(skip)]
    pub no_trump_anytime: bool,
}

impl Merge for RulesArgs {
    fn merge(self, lower: Self) -> Self {
        RulesArgs {
            stick_the_dealer: switch(self.stick_the_dealer, self.no_stick_the_dealer)
                .or(lower.stick_the_dealer),
            no_stick_the_dealer: false,
            trump_anytime: switch(self.trump_anytime, self.no_trump_anytime)
                .or(lower.trump_anytime),
            no_trump_anytime: false,
        }
    }
}

impl RulesArgs {
    pub fn resolve(&self) -> RulesConfig {
        let standard = RulesConfig::default();
        RulesConfig {
            stick_the_dealer: switch(self.stick_the_dealer, self.no_stick_the_dealer)
                .unwrap_or(standard.stick_the_dealer),
            trump_anytime: switch(self.trump_anytime, self.no_trump_anytime)
                .unwrap_or(standard.trump_anytime),
            ..standard
        }
    }
}
