//! `--resume --out DIR` with nothing else: the tournament's settings read back
//! from `DIR/tournament.json`, so that continuing a run needs only its folder.
//!
//! The folder is a source of settings only when the command names no
//! tournament of its own (no tournament file, no `--entrant`): then every
//! setting not given by a flag is the folder's, and a flag given (say
//! `--decision-ms 500`) is compared with it like any other. A command that
//! does name its tournament (the original command line with `--resume`) stands
//! on its own, as a new run would, and must match the folder: leaving out
//! `--sandbox` there is a difference, refused by name, never a silent change of
//! how the bots run. What a manifest does not record — `--bot-env`, the
//! entrants' own directories and variables, `--events`, `--jobs`, the
//! `--scratch` folder's path — is not part of what identifies a tournament
//! and takes its default unless given again.

use std::path::Path;

use anyhow::Context;

use super::config::Entrant;
use super::manifest::Manifest;
use crate::settings::{
    ChannelArgs, ClockName, IsolationArgs, LimitArgs, PolicyArgs, PolicyName, RulesArgs, TableArgs,
    TimeArgs,
};

/// The manifest in `out`, if `--resume` may take its settings from it: a
/// tournament's folder for `referee tournament`, an SPRT's for `referee sprt`
/// (`sprt`), each named as what it is when it is the other.
pub fn settings(out: &Path, sprt: bool) -> anyhow::Result<Option<Manifest>> {
    let manifest = crate::layout::tournament::MANIFEST;
    if !out.join(manifest).is_file() {
        super::out_folder::refuse_play_folder(out, "resume")?;
        anyhow::bail!(
            "failed to resume: {} holds no tournament ({manifest} is missing); give the \
             folder of an interrupted tournament, or the tournament's settings to start one",
            out.display()
        );
    }
    let m = Manifest::read(out)
        .with_context(|| format!("failed to resume the tournament in {}", out.display()))?;
    super::out_folder::refuse_other_kind(out, sprt, &m)?;
    Ok(Some(m))
}

/// The table's settings the manifest records, as flags would give them: the
/// lowest layer of the merge. `scale` is the `--time-scale` given over it: the
/// recorded limits are already scaled, so they are divided by it here.
pub fn table_args(m: &Manifest, scale: Option<f64>) -> TableArgs {
    let recorded = Recorded {
        time_control: &m.time_control,
        isolation: m.isolation.as_ref(),
        fault_policy: &m.fault_policy,
        rules: &m.rules,
    };
    recorded_table_args(&recorded, scale)
}

/// The settings of a table as a folder records them: a tournament's manifest,
/// or a season's settings (`season/settings.rs`).
pub struct Recorded<'a> {
    pub time_control: &'a crate::transcript::TimeControlRecord,
    pub isolation: Option<&'a crate::isolation_record::IsolationRecord>,
    pub fault_policy: &'a crate::config::FaultPolicy,
    pub rules: &'a schmier_protocol::rules::RulesConfig,
}

/// [`table_args`] of any record of a table's settings.
pub fn recorded_table_args(m: &Recorded<'_>, scale: Option<f64>) -> TableArgs {
    let tc = m.time_control;
    let unscaled = |ms: u64| match scale {
        Some(s) if s > 0.0 && s.is_finite() => (ms as f64 / s).round() as u64,
        _ => ms,
    };
    let limited = tc.decision_ms.is_some();
    let isolation = m.isolation;
    let limits = isolation.map(|i| &i.limits);
    let p = m.fault_policy;
    TableArgs {
        time: TimeArgs {
            decision_ms: tc.decision_ms.map(unscaled),
            startup_ms: tc.startup_ms.map(unscaled),
            grace_ms: Some(unscaled(tc.grace_ms)),
            time_bank_ms: Some(unscaled(tc.time_bank_ms)),
            time_scale: None,
            clock: Some(match tc.clock {
                crate::config::Clock::Wall => ClockName::Wall,
                crate::config::Clock::Cpu => ClockName::Cpu,
            }),
            no_timeouts: Some(!limited),
            timeouts: false,
        },
        channel: ChannelArgs {
            events: None,
            pace_ms: isolation.and_then(|i| i.pace_ms),
        },
        policy: PolicyArgs {
            policy: Some(match p.forfeit {
                true => PolicyName::Competition,
                false => PolicyName::Lenient,
            }),
            max_faults: Some(p.max_faults.unwrap_or(0)),
            no_restart: Some(!p.restart),
            ..PolicyArgs::default()
        },
        rules: RulesArgs {
            stick_the_dealer: Some(m.rules.stick_the_dealer),
            trump_anytime: Some(m.rules.trump_anytime),
            ..RulesArgs::default()
        },
        isolation: IsolationArgs {
            sandbox: isolation.map(|i| i.sandbox.is_some()),
            scratch_mb: isolation.and_then(|i| i.scratch_bytes).map(|b| b >> 20),
            ..IsolationArgs::default()
        },
        limits: LimitArgs {
            limit_memory_mb: limits.and_then(|l| l.memory_bytes).map(|b| b >> 20),
            limit_cpu_s: limits.and_then(|l| l.cpu_seconds),
            limit_files: limits.and_then(|l| l.open_files),
            limit_procs: limits.and_then(|l| l.processes),
            limit_cpus: limits
                .and_then(|l| l.cpu_millicores)
                .map(|m| m as f64 / 1000.0),
            max_line_bytes: Some(tc.max_line_bytes),
            stderr_cap: limits.map(|l| l.stderr_cap_bytes),
            // As played: frozen or not, whatever the host of the resume
            // could do by default.
            freeze_waiting: limits.map(|l| l.frozen_while_waiting),
            // Not recorded (the host's matter, as --jobs): the resuming
            // referee's default.
            bot_nice: None,
        },
        output: Default::default(),
    }
}

/// The entrants as the manifest records them: each command read back as it
/// was displayed (`referee bot NAME` is the built-in bot NAME). Where an
/// entrant ran is not recorded (docs/organisers.md: not part of what identifies a
/// tournament): `--entrant-dir` gives it again.
pub fn entrants(m: &Manifest) -> anyhow::Result<Vec<Entrant>> {
    (m.entrants.iter())
        .map(|e| {
            let what = format!("entrant {:?} of tournament.json", e.name);
            let bot = match e.command.strip_prefix("referee bot ") {
                Some(name) => crate::settings::parse_bot(&format!("builtin:{name}"), &what)?,
                None => crate::settings::parse_bot(&e.command, &what)?,
            };
            Ok(Entrant {
                name: e.name.clone(),
                bot,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    use super::super::args::TournamentArgs;
    use super::*;

    fn config(args: &[&str]) -> anyhow::Result<super::super::TournamentConfig> {
        let argv = std::iter::once("t").chain(args.iter().copied());
        let matches = TournamentArgs::augment_args(clap::Command::new("t"))
            .try_get_matches_from(argv)
            .unwrap();
        TournamentArgs::from_arg_matches(&matches)
            .unwrap()
            .validate()
    }

    fn manifest(cfg: &super::super::TournamentConfig) -> Manifest {
        let schedule =
            super::super::format::matchups(cfg.entrants.len(), &cfg.format, cfg.sets, cfg.seed);
        super::super::run::manifest(cfg, &schedule)
    }

    #[test]
    fn resumed_from_its_folder_alone_a_tournament_is_the_same_tournament() {
        let runs: [&[&str]; 4] = [
            &[],
            &[
                "--policy",
                "lenient",
                "--max-faults",
                "2",
                "--no-restart",
                "--clock",
                "cpu",
                "--time-bank-ms",
                "700",
                "--decision-ms",
                "250",
                "--grace-ms",
                "20",
                "--stick-the-dealer",
                "--limit-files",
                "90",
                "--limit-cpu-s",
                "30",
                "--max-line-bytes",
                "4096",
                "--stderr-cap",
                "999",
                "--pace-ms",
                "40",
                "--sets",
                "2",
            ],
            &["--no-timeouts", "--format", "swiss", "--rounds", "2"],
            &["--time-scale", "2.5", "--decision-ms", "300"],
        ];
        for flags in runs {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("t").display().to_string();
            let mut args = vec!["--seed", "77", "--fill", "inproc:random", "--out", &out];
            args.extend([
                "--entrant",
                "a=inproc:heuristic",
                "--entrant",
                "b=builtin:random",
            ]);
            args.extend(flags);
            let first = manifest(&config(&args).unwrap());
            std::fs::create_dir_all(&out).unwrap();
            std::fs::write(dir.path().join("t/tournament.json"), first.bytes()).unwrap();
            let secret = first.seed_secret.expect("a new tournament draws a secret");
            crate::tournament::seed_secret::store(&dir.path().join("t"), &secret).unwrap();
            let mut resume = vec!["--resume", "--out", &out];
            // A time scale given again applies to nothing the folder gives.
            if flags.contains(&"--time-scale") {
                resume.extend(["--time-scale", "2.5"]);
            }
            let again = manifest(&config(&resume).unwrap());
            assert_eq!(
                again.difference(
                    &first,
                    &crate::tournament::difference::Sides {
                        ours: "resumed",
                        theirs: "first",
                    }
                ),
                None,
                "{flags:?}"
            );
            assert_eq!(again, first, "{flags:?}");
        }
    }
}
