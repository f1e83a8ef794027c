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
}
