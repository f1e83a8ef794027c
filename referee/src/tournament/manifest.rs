//! `DIR/tournament.json`: what the tournament in a directory is — entrants,
//! format, seed, sets, rules, time control, fault policy, the referee, how bots
//! are run (sandbox, limits, pace), and the shard. A resumed
//! run must match it exactly; shards merge only if they match except for the
//! shard. No wall-clock data, so an unsharded run and merged shards write the same
//! bytes.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use schmier_protocol::rules::RulesConfig;

use super::format::Format;
use super::schedule::Shard;
use crate::config::FaultPolicy;
use crate::isolation_record::IsolationRecord;
use crate::transcript::TimeControlRecord;

use crate::layout::tournament::MANIFEST;
/// Version 2 added `referee` and `isolation` (how the bots were run); a
/// version 1 manifest is still read, and a resume of it is refused by name.
pub const FORMAT: &str = "schmier-tournament/2";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format_version: String,
    pub seed: u64,
    pub format: Format,
    pub sets: u32,
    pub entrants: Vec<EntrantRecord>,
    pub rules: RulesConfig,
    pub time_control: TimeControlRecord,
    pub fault_policy: FaultPolicy,
    /// The referee that plays it (name and version): a resume or a shard by
    /// another version would mix two referees' games.
    #[serde(default)]
    pub referee: Option<String>,
    /// How every bot process is run: sandbox, limits, pace, scratch (what each
    /// transcript header records too).
    #[serde(default)]
    pub isolation: Option<IsolationRecord>,
    pub matchups: u32,
    pub games: u32,
    /// `referee sprt`: the hypotheses its sets are a test of; absent for a
    /// tournament.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<TestRecord>,
    /// The slice this directory plays; absent for a whole (or merged) tournament.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntrantRecord {
    pub name: String,
    pub command: String,
}

/// What an SPRT tests, in points per game of duplicate-score difference (new
/// minus base), with its error rates: `--h0`, `--h1`, `--alpha`, `--beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRecord {
    pub h0: f64,
    pub h1: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl Manifest {
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("manifests serialize");
        out.push(b'\n');
        out
    }

    pub fn read(dir: &Path) -> anyhow::Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("failed to read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("failed to read {}", path.display()))
    }
}
