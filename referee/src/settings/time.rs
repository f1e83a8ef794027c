//! The time control, and how the table talks to the bots.

use std::time::Duration;

use anyhow::bail;
use clap::Args;
use serde::Deserialize;

use super::{choice_name, millis, switch, with_default, Merge};
use crate::config::{Clock, Delivery, TimeControl};

pub const DECISION_MS: u64 = 1000;
pub const STARTUP_MS: u64 = 10_000;
const GRACE_MS: u64 = 50;
const TIME_BANK_MS: u64 = 0;
const TIME_SCALE: f64 = 1.0;
const CLOCK: ClockName = ClockName::Wall;
const EVENTS: DeliveryName = DeliveryName::Live;
/// How long bots get to exit after `bye` before they are signalled (scaled).
const SHUTDOWN_MS: u64 = 1000;
/// The shortest time a write to a bot may block (scaled), however short the
/// decision limit: a pipe a bot drains between its own moves.
const MIN_WRITE_MS: u64 = 1000;

#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeArgs {
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = millis::limit_flag, help = with_default("Time a bot has for each decision, in milliseconds.", DECISION_MS))]
    #[serde(default, deserialize_with = "millis::limit_key")]
    pub decision_ms: Option<u64>,

    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = millis::limit_flag, help = with_default("Time a bot has to answer hello after it is started, in milliseconds.", STARTUP_MS))]
    #[serde(default, deserialize_with = "millis::limit_key")]
    pub startup_ms: Option<u64>,

    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = millis::allowance_flag, help = with_default("Allowance added to every deadline for pipe and scheduling latency (the bot is told the limit without it), in milliseconds.", GRACE_MS))]
    #[serde(default, deserialize_with = "millis::allowance_key")]
    pub grace_ms: Option<u64>,

    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = millis::allowance_flag, help = with_default("Per-game time bank per seat, in milliseconds: a decision that takes longer than --decision-ms draws the excess from it (chess-style).", TIME_BANK_MS))]
    #[serde(default, deserialize_with = "millis::allowance_key")]
    pub time_bank_ms: Option<u64>,

    #[arg(long, value_name = "F", allow_negative_numbers = true, help = with_default("Multiply every time limit by this factor (for slow machines).", TIME_SCALE))]
    pub time_scale: Option<f64>,

    #[arg(long, value_enum, help = with_default("The clock decisions are timed on: `wall` (elapsed time) or `cpu` (CPU time the bot's processes used, so a busy host cannot make a bot lose on time; Linux only, with a wall-clock backstop of ten times the limit).", choice_name(&CLOCK)))]
    pub clock: Option<ClockName>,

    /// No time limits at all (for debugging a bot under a debugger).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL", hide_possible_values = true, overrides_with = "timeouts")]
    pub no_timeouts: Option<bool>,

    /// Time limits after all (undoes --no-timeouts, e.g. the file's
    /// `no_timeouts = true`).
    #[arg(long, overrides_with = "no_timeouts")]
    #[serde(skip)]
    pub timeouts: bool,
}

impl Merge for TimeArgs {
    fn merge(self, lower: Self) -> Self {
        TimeArgs {
            decision_ms: self.decision_ms.or(lower.decision_ms),
            startup_ms: self.startup_ms.or(lower.startup_ms),
            grace_ms: self.grace_ms.or(lower.grace_ms),
            time_bank_ms: self.time_bank_ms.or(lower.time_bank_ms),
            time_scale: self.time_scale.or(lower.time_scale),
            clock: self.clock.or(lower.clock),
            no_timeouts: switch(self.no_timeouts, self.timeouts).or(lower.no_timeouts),
            timeouts: false,
        }
    }
}

impl TimeArgs {
    /// The time control; `max_line` is the longest line a bot may send
    /// (`--max-line-bytes`, a limit of [`super::LimitArgs`]).
    pub fn resolve(&self, max_line: usize) -> anyhow::Result<TimeControl> {
        let time_scale = self.time_scale.unwrap_or(TIME_SCALE);
        if !(time_scale.is_finite() && time_scale > 0.0) {
            bail!("--time-scale must be a positive number, got {time_scale}");
        }
        let no_timeouts = switch(self.no_timeouts, self.timeouts).unwrap_or(false);
        let scale = |ms: u64| Duration::from_secs_f64(ms as f64 * time_scale / 1000.0);
        let limited = |ms: u64| (!no_timeouts).then(|| scale(ms));
        let decision_ms = self.decision_ms.unwrap_or(DECISION_MS);
        let startup_ms = self.startup_ms.unwrap_or(STARTUP_MS);
        for (flag, ms) in [("--decision-ms", decision_ms), ("--startup-ms", startup_ms)] {
            // The bots are told whole milliseconds: a limit scaled below one
            // would reach them as `time_ms: 0`.
            if let Err(e) = millis::limit(i128::from(ms)) {
                bail!("{flag}: {e}");
            }
            if scale(ms) < Duration::from_millis(1) {
                bail!(
                    "{flag} {ms} scaled by --time-scale {time_scale} is under 1 ms: \
                     a bot would have no time at all to answer"
                );
            }
        }
        Ok(TimeControl {
            clock: self.clock.unwrap_or(CLOCK).into(),
            bank: scale(self.time_bank_ms.unwrap_or(TIME_BANK_MS)),
            startup: limited(startup_ms),
            decision: limited(decision_ms),
            grace: scale(self.grace_ms.unwrap_or(GRACE_MS)),
            max_line,
            write: scale(decision_ms.max(MIN_WRITE_MS)),
            shutdown: scale(SHUTDOWN_MS),
        })
    }
}

/// The time control a transcript records, as a table would run it (`None`
/// limits with `no_timeouts`): what `referee replay` holds a bot to.
pub fn recorded_time_control(
    r: &crate::transcript::TimeControlRecord,
    no_timeouts: bool,
) -> TimeControl {
    let ms = Duration::from_millis;
    let limited = |v: Option<u64>| v.filter(|_| !no_timeouts).map(ms);
    TimeControl {
        clock: r.clock,
        bank: ms(r.time_bank_ms),
        startup: limited(r.startup_ms),
        decision: limited(r.decision_ms),
        grace: ms(r.grace_ms),
        max_line: r.max_line_bytes,
        write: ms(r.decision_ms.unwrap_or(DECISION_MS).max(MIN_WRITE_MS)),
        shutdown: ms(SHUTDOWN_MS),
    }
}

/// How the table talks to the bots: when events are written, and how soon a
/// decision's consequences may be released (the timing channel).
#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelArgs {
    #[arg(long, value_enum, help = with_default("When seats are sent game events: `live` (as they happen, so a bot can think on others' time) or `batched` (with the seat's next request: one write per decision, the fastest). Transcripts are the same either way.", choice_name(&EVENTS)))]
    pub events: Option<DeliveryName>,

    /// Release each decision's consequences (its events, to every seat) no
    /// earlier than MS milliseconds after its request was sent, so a bot's reply
    /// delay below MS tells the other seats nothing (the timing channel: see
    /// SECURITY.md). Set it to --decision-ms plus --grace-ms to hide every
    /// in-time reply's delay; each decision then takes MS. Not scaled by
    /// --time-scale. Transcripts are the same with or without it. 0 is no pace.
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = millis::allowance_flag)]
    #[serde(default, deserialize_with = "millis::allowance_key")]
    pub pace_ms: Option<u64>,
}

impl Merge for ChannelArgs {
    fn merge(self, lower: Self) -> Self {
        ChannelArgs {
            events: self.events.or(lower.events),
            pace_ms: self.pace_ms.or(lower.pace_ms),
        }
    }
}

impl ChannelArgs {
    pub fn delivery(&self) -> Delivery {
        self.events.unwrap_or(EVENTS).into()
    }

    /// `--pace-ms`, if any (0 is none).
    pub fn pace(&self) -> Option<Duration> {
        self.pace_ms.filter(|&ms| ms > 0).map(Duration::from_millis)
    }
}

/// `--clock`: the CLI's names, mapped onto [`Clock`] (the wire and transcript type
/// does not depend on the argument parser).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockName {
    Wall,
    Cpu,
}

impl From<ClockName> for Clock {
    fn from(c: ClockName) -> Clock {
        match c {
            ClockName::Wall => Clock::Wall,
            ClockName::Cpu => Clock::Cpu,
        }
    }
}

/// `--events`, mapped onto [`Delivery`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryName {
    Live,
    Batched,
}

impl From<DeliveryName> for Delivery {
    fn from(d: DeliveryName) -> Delivery {
        match d {
            DeliveryName::Live => Delivery::Live,
            DeliveryName::Batched => Delivery::Batched,
        }
    }
}
