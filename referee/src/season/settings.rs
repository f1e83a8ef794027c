//! A season's settings, fixed at `season init` and recorded in `season.db`:
//! the organiser's seed, the table's settings as a tournament's manifest
//! records them (rules, time control, fault policy, isolation and limits) and
//! the matchmaking policy. `season run` rebuilds every table from this record
//! alone (`tournament/folder.rs` reads it back into flags), so no run can play
//! under other settings than the season was opened with.

use std::path::Path;

use serde::{Deserialize, Serialize};

use schmier_protocol::rules::RulesConfig;

use super::db::{Db, Version};
use super::matchmaking::Policy;
use crate::config::{BotSpec, FaultPolicy, TableSpec};
use crate::isolation_record::IsolationRecord;
use crate::settings::TableArgs;
use crate::tournament::config::Entrant;
use crate::tournament::folder::{recorded_table_args, Recorded};
use crate::transcript::TimeControlRecord;

/// The recorded settings (the `settings` key of `season.db`, as JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The organiser's seed; every deal mixes it with the season's secret.
    pub seed: u64,
    pub rules: RulesConfig,
    pub time_control: TimeControlRecord,
    pub fault_policy: FaultPolicy,
    pub isolation: IsolationRecord,
    /// The referee that opened the season (name and version).
    pub referee: String,
    pub policy: Policy,
    /// The organiser opted in, at `init`, to uploads (`season submit
    /// --archive`, the site's `POST …/versions`) into a season whose bots run
    /// without a sandbox (`--allow-unsandboxed-uploads`). Absent (a season
    /// made before the option): not opted in, so such a season refuses them.
    #[serde(default)]
    pub allow_unsandboxed_uploads: bool,
}

impl Settings {
    /// The settings of a new season from its flags; an error names the bad one.
    pub fn new(table: &TableArgs, dir: &Path, seed: u64, policy: Policy) -> anyhow::Result<Self> {
        refuse_unrecorded(table)?;
        let spec = crate::tournament::args::table_spec(table, &[], dir, None)?;
        Ok(Settings {
            seed,
            rules: spec.rules,
            time_control: spec.time.record(),
            fault_policy: spec.policy,
            isolation: spec.isolation_record(),
            referee: crate::REFEREE.to_owned(),
            policy,
            allow_unsandboxed_uploads: false,
        })
    }

    pub fn read(db: &Db) -> anyhow::Result<Self> {
        let text = db.setting("settings")?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("season.db's settings do not read back: {e}"))
    }

    pub fn write(&self, db: &Db) -> anyhow::Result<()> {
        db.set("settings", &serde_json::to_string(self)?)
    }

    /// Whether the season's bots run in the sandbox.
    pub fn sandboxed(&self) -> bool {
        self.isolation.sandbox.is_some()
    }

    /// Whether the season takes uploads from entrants: its bots run in the
    /// sandbox, or the organiser opted in without one ([`UNSANDBOXED`]).
    pub fn takes_uploads(&self) -> bool {
        self.sandboxed() || self.allow_unsandboxed_uploads
    }

    /// What the season does with uploads, in words (said by `init`).
    pub fn uploads_line(&self) -> &'static str {
        match (self.sandboxed(), self.allow_unsandboxed_uploads) {
            (true, _) => "uploads: taken, checked and played in the season's sandbox",
            (false, false) => {
                "uploads: refused (the season has no sandbox; `season init \
                 --allow-unsandboxed-uploads` would take them)"
            }
            (false, true) => {
                "uploads: taken WITHOUT a sandbox (--allow-unsandboxed-uploads): an uploaded \
                 bot runs as this user and can read everything it can"
            }
        }
    }

    /// The settings of every table, for the versions `versions` (the
    /// sandbox, when the season has one, is built for their commands).
    pub fn table(&self, dir: &Path, versions: &[Version]) -> anyhow::Result<TableSpec> {
        let recorded = Recorded {
            time_control: &self.time_control,
            isolation: Some(&self.isolation),
            fault_policy: &self.fault_policy,
            rules: &self.rules,
        };
        let args = recorded_table_args(&recorded, None);
        let entrants = versions
            .iter()
            .map(|v| {
                Ok(Entrant {
                    name: format!("{} v{}", v.name, v.number),
                    bot: bot(v)?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        crate::tournament::args::table_spec(&args, &entrants, dir, None)
    }
}

/// Why an unsandboxed season refuses uploads, and what its organiser can do.
pub const UNSANDBOXED: &str = "this season runs its bots without a sandbox, so it takes no \
    uploads: an uploaded bot would run as the organiser's user and could read the other \
    entrants' files, season.db and the seed secret. The organiser can open a season with \
    `season init --sandbox` (Linux), or, trusting every uploader, with `season init \
    --allow-unsandboxed-uploads`; a version can still be submitted from the organiser's \
    command line (`season submit DIR NAME -- CMD`)";

/// The table flags the record cannot hold (a tournament's manifest does not
/// either): given at `init`, they would be lost by the first `run`, so they
/// are refused there rather than dropped.
fn refuse_unrecorded(table: &TableArgs) -> anyhow::Result<()> {
    let given = [
        ("--bot-env", !table.isolation.bot_env.is_empty()),
        ("--scratch", table.isolation.scratch.is_some()),
        ("--events", table.channel.events.is_some()),
        ("--bot-nice", table.limits.bot_nice.is_some()),
    ];
    let named: Vec<&str> = (given.iter())
        .filter(|(_, g)| *g)
        .map(|(f, _)| *f)
        .collect();
    if !named.is_empty() {
        anyhow::bail!(
            "{}: a season cannot record this setting yet, so its runs would not keep it; \
             leave it out",
            named.join(", ")
        );
    }
    Ok(())
}

/// How a version's bot is started: its command, read in its directory.
pub fn bot(v: &Version) -> anyhow::Result<BotSpec> {
    let what = format!("{} version {}", v.name, v.number);
    let mut spec = crate::settings::parse_bot(&v.command, &what)?;
    if let (BotSpec::Command { dir, .. }, Some(d)) = (&mut spec, &v.dir) {
        *dir = Some(d.into());
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: Policy = Policy {
        min_sets: 1,
        pair_cap: 1,
    };

    #[test]
    fn the_record_rebuilds_the_flags_given_and_refuses_what_it_cannot_hold() {
        use clap::{Args, FromArgMatches};
        let parse = |argv: &[&str]| {
            let cmd = TableArgs::augment_args(clap::Command::new("t"));
            let m = cmd.try_get_matches_from(argv).unwrap();
            TableArgs::from_arg_matches(&m).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let given = parse(&[
            "t",
            "--decision-ms",
            "300",
            "--max-faults",
            "2",
            "--stick-the-dealer",
        ]);
        let s = Settings::new(&given, dir.path(), 5, POLICY).unwrap();
        let spec = s.table(dir.path(), &[]).unwrap();
        assert_eq!(spec.time.record(), s.time_control);
        assert_eq!(s.time_control.decision_ms, Some(300));
        assert_eq!(spec.policy, s.fault_policy);
        assert_eq!(spec.policy.max_faults, Some(2));
        assert!(spec.rules.stick_the_dealer);
        assert_eq!(spec.isolation_record(), s.isolation);
        let env = parse(&["t", "--bot-env", "A=1", "--events", "batched"]);
        let err = Settings::new(&env, dir.path(), 5, POLICY)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--bot-env, --events: a season cannot record"),
            "{err}"
        );
    }

    /// A season made before `--allow-unsandboxed-uploads` has no such key in
    /// its settings: it reads as not opted in, so without a sandbox it takes
    /// no uploads; with the sandbox it does.
    #[test]
    fn a_season_without_the_key_is_not_opted_in_to_unsandboxed_uploads() {
        let dir = tempfile::tempdir().unwrap();
        use clap::{Args, FromArgMatches};
        let cmd = TableArgs::augment_args(clap::Command::new("t"));
        let table = TableArgs::from_arg_matches(&cmd.get_matches_from(["t"])).unwrap();
        let s = Settings::new(&table, dir.path(), 5, POLICY).unwrap();
        let mut old: serde_json::Value = serde_json::to_value(&s).unwrap();
        old.as_object_mut()
            .unwrap()
            .remove("allow_unsandboxed_uploads")
            .expect("the key is written");
        let read: Settings = serde_json::from_value(old).unwrap();
        assert!(!read.allow_unsandboxed_uploads && !read.takes_uploads());
        let opted = Settings {
            allow_unsandboxed_uploads: true,
            ..read.clone()
        };
        assert!(opted.takes_uploads());
        assert!(opted.uploads_line().contains("WITHOUT a sandbox"));
        assert!(read.uploads_line().starts_with("uploads: refused"));
    }
}
