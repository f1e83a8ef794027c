//! `DIR/tournament.json`: what the tournament in a directory is — entrants,
//! format, seed, sets, rules, time control, fault policy, and the shard. A resumed
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
use crate::transcript::TimeControlRecord;

use crate::layout::tournament::MANIFEST;
pub const FORMAT: &str = "schmier-tournament/1";

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
    pub matchups: u32,
    pub games: u32,
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

    /// The top-level fields in which `self` and `other` differ, if any.
    pub fn difference(&self, other: &Manifest) -> Option<String> {
        let a = serde_json::to_value(self).expect("manifests serialize");
        let b = serde_json::to_value(other).expect("manifests serialize");
        let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (a, b) else {
            unreachable!("a manifest is an object")
        };
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        let shown = |v: Option<&serde_json::Value>| v.map_or("absent".into(), |v| v.to_string());
        let diffs: Vec<String> = keys
            .into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| format!("{k}: {} here, {} there", shown(a.get(k)), shown(b.get(k))))
            .collect();
        (!diffs.is_empty()).then(|| diffs.join("; "))
    }
}
