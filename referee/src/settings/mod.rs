//! The settings `play` and `tournament` share, one typed group per concern. Each
//! group is one struct that clap flattens into both commands and that the
//! tournament file deserialises into (its keys are the long flags with `_` for
//! `-`), so a setting is declared, documented and defaulted in exactly one place:
//!
//! - `time.rs`: the time control (`--decision-ms`, `--clock`, …) and how the
//!   table talks to bots (`--events`).
//! - `millis.rs`: how a time in milliseconds is read from a flag or a key
//!   (a limit is at least 1 ms, an allowance at least 0).
//! - `policy.rs`: the fault policy (`--policy`, `--max-faults`, `--keep-going`, …)
//!   and the rules variants.
//! - `isolation.rs`: how bot processes run (`--sandbox`, `--bot-env`,
//!   `--scratch`) and their limits (`--limit-*`, `--max-line-bytes`,
//!   `--stderr-cap`).
//! - `host.rs`: what the run asks of the operating system, refused before
//!   anything starts where this one cannot honour it.
//! - `output.rs`: what happens to an output folder that holds a run
//!   (`--overwrite`) and how much is printed.
//! - `suggest.rs`: "did you mean" for a mistyped key of the tournament file
//!   or name of a built-in bot.
//! - `table.rs`: all the groups together, flattened by both commands.
//! - `bots.rs`: a bot command as the user writes it, and the run's seed.
//!
//! Every field is an `Option` (or a list): absent means "not given here". A run's
//! value is the flag's if given, else the file's, else the default named in the
//! group's `resolve` — field by field ([`Merge`]). A boolean has its opposite
//! flag (`--sandbox` / `--no-sandbox`), so a flag can override the file either way.

mod bots;
mod host;
mod isolation;
pub(crate) mod millis;
mod output;
mod policy;
pub(crate) mod suggest;
mod table;
mod time;

pub use bots::{fresh_seed, parse_bot, unknown_builtin, warn_given_seed};
pub use isolation::{
    cpu_millicores, parse_env, sandbox_for, IsolationArgs, LimitArgs, MAX_LINE_BYTES, SCRATCH_MB,
    STDERR_CAP,
};
pub use output::OutputArgs;
pub use policy::{PolicyArgs, PolicyName, RulesArgs};
pub use table::TableArgs;
pub use time::{
    recorded_time_control, ChannelArgs, ClockName, DeliveryName, TimeArgs, DECISION_MS, STARTUP_MS,
};

/// A settings group merged with a lower-priority one (the tournament file's),
/// field by field: a value given here wins.
pub trait Merge {
    fn merge(self, lower: Self) -> Self;
}

/// A boolean flag and its opposite (`--sandbox`, `--no-sandbox`): which was
/// given last, if either (clap's `overrides_with` keeps only the last).
pub(crate) fn switch(on: Option<bool>, off: bool) -> Option<bool> {
    if off {
        Some(false)
    } else {
        on
    }
}

/// A flag's help with its default, so the default is written once, in code.
pub(crate) fn with_default(help: &str, default: impl std::fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

/// The name a flag takes for one of its values (`wall` for [`ClockName::Wall`]).
pub(crate) fn choice_name<T: clap::ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        isolation: IsolationArgs,
        #[command(flatten)]
        time: TimeArgs,
    }

    fn flags(args: &[&str]) -> Flags {
        Flags::parse_from(std::iter::once("t").chain(args.iter().copied()))
    }

    fn file(sandbox: Option<bool>, decision_ms: Option<u64>) -> (IsolationArgs, TimeArgs) {
        let isolation = IsolationArgs {
            sandbox,
            ..IsolationArgs::default()
        };
        let time = TimeArgs {
            decision_ms,
            ..TimeArgs::default()
        };
        (isolation, time)
    }

    #[test]
    fn a_switch_beats_the_file_in_both_directions_and_absent_keeps_it() {
        let cases = [
            (&["--no-sandbox"][..], Some(true), false),
            (&["--sandbox"][..], Some(false), true),
            (&[][..], Some(true), true),
            (&[][..], Some(false), false),
            (&[][..], None, false),
            // The last of a pair wins.
            (&["--sandbox", "--no-sandbox"][..], None, false),
            (&["--no-sandbox", "--sandbox"][..], None, true),
            (&["--sandbox=false"][..], Some(true), false),
        ];
        for (args, in_file, want) in cases {
            let merged = flags(args).isolation.merge(file(in_file, None).0);
            assert_eq!(
                merged.sandbox(),
                want,
                "{args:?} over sandbox = {in_file:?}"
            );
        }
    }

    #[test]
    fn a_number_from_a_flag_beats_the_file_and_the_default_comes_last() {
        let ms = |args: &[&str], in_file| {
            let time = flags(args).time.merge(file(None, in_file).1);
            time.resolve(1024).unwrap().decision.unwrap().as_millis()
        };
        assert_eq!(ms(&["--decision-ms", "300"], Some(2000)), 300);
        assert_eq!(ms(&[], Some(2000)), 2000);
        assert_eq!(ms(&[], None), u128::from(time::DECISION_MS));
    }
}
