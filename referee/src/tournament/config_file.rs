//! The tournament file (TOML): its shape — the tournament's own fields, the
//! table's settings in the groups `play` shares, and `[[entrant]]` tables —
//! and reading it, with an unknown key or a bad value named by line. Its keys
//! are the long flags with `_` for `-`; `args.rs` lays the flags over it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Deserialize;

use super::format::FormatName;
use crate::settings::suggest;
use crate::settings::{
    ChannelArgs, IsolationArgs, LimitArgs, OutputArgs, PolicyArgs, RulesArgs, TimeArgs,
};

/// The tournament file: the tournament's own fields, the table's settings (as
/// [`TableArgs`]) and its entrants. serde cannot deny unknown fields beside
/// flattened ones, so they are collected in `unknown` and refused by name.
#[derive(Debug, Default, Deserialize)]
pub(super) struct FileConfig {
    pub seed: Option<u64>,
    pub format: Option<FormatName>,
    pub challengers: Option<Vec<String>>,
    pub rounds: Option<u32>,
    pub sets: Option<u32>,
    pub out: Option<PathBuf>,
    pub jobs: Option<usize>,
    pub fill: Option<String>,
    /// N for `--shard auto` (SCHMIER_SHARDS wins).
    pub shards: Option<u32>,
    pub page: Option<bool>,
    #[serde(default, rename = "entrant")]
    pub entrants: Vec<FileEntrant>,
    // Each group flattened here, not through TableArgs: serde hands a nested
    // flatten every key, and `unknown` would then hold the groups' keys too.
    #[serde(flatten)]
    pub time: TimeArgs,
    #[serde(flatten)]
    pub channel: ChannelArgs,
    #[serde(flatten)]
    pub policy: PolicyArgs,
    #[serde(flatten)]
    pub rules: RulesArgs,
    #[serde(flatten)]
    pub isolation: IsolationArgs,
    #[serde(flatten)]
    pub limits: LimitArgs,
    #[serde(flatten)]
    pub output: OutputArgs,
    #[serde(flatten)]
    pub unknown: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileEntrant {
    pub name: String,
    pub command: String,
    /// Its working directory (relative to where the referee is started).
    pub dir: Option<PathBuf>,
    /// Variables of its own, over the tournament's `env`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// Reads the tournament file at `path`; `long_flags` are `referee tournament`'s
/// long flags, from which an unknown key's nearest known one is suggested.
pub(super) fn read_file(
    path: &Path,
    long_flags: fn() -> Vec<String>,
) -> anyhow::Result<FileConfig> {
    let failed = || format!("failed to read the tournament file {}", path.display());
    let text = std::fs::read_to_string(path).with_context(failed)?;
    // Syntax errors come with their line from the parser.
    let table: toml::Table = toml::from_str(&text).with_context(failed)?;
    let file: FileConfig = match toml::from_str(&text) {
        Ok(file) => file,
        Err(e) if e.span().is_some_and(|s| s.start > 0) => {
            // E.g. a mistyped key of an [[entrant]]: serde lists the known ones.
            let e = suggest::unknown_field(&e.to_string());
            return Err(anyhow::anyhow!(e).context(failed()));
        }
        Err(e) => {
            // An error inside a flattened group is reported against the whole
            // document; the key that holds it is found by reading keys one by one.
            let culprit = table.iter().find_map(|(key, value)| {
                let one = toml::Table::from_iter([(key.clone(), value.clone())]);
                let err = toml::Value::Table(one).try_into::<FileConfig>().err()?;
                Some((key.clone(), err.message().to_owned()))
            });
            let Some((key, message)) = culprit else {
                return Err(anyhow::Error::new(e).context(failed()));
            };
            bail!("{}{}: `{key}`: {message}", failed(), line_of(&text, &key));
        }
    };
    if let Some((key, value)) = file.unknown.iter().next() {
        bail!(
            "{}{}: unknown field `{key}`{} (the fields are the long flags of \
             `referee tournament --help` with _ for -, and [[entrant]] tables)",
            failed(),
            line_of(&text, key),
            suggest::did_you_mean(
                key,
                file_keys(value, long_flags()).iter().map(String::as_str)
            )
        );
    }
    Ok(file)
}

/// The keys the tournament file knows, found by trying each long flag (with _
/// for -, and plural, as `challengers`) with the value given: a key the file
/// does not know lands in `unknown`, so nothing is suggested that it refuses.
fn file_keys(value: &toml::Value, longs: Vec<String>) -> Vec<String> {
    let names = longs.into_iter().flat_map(|l| {
        let key = l.replace('-', "_");
        [format!("{key}s"), key]
    });
    let known = |key: &String| {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        toml::Value::Table(one)
            .try_into::<FileConfig>()
            .map_or(true, |f| f.unknown.is_empty())
    };
    names.filter(known).collect()
}

/// ", line N" of the line that sets top-level `key` (or its table), if found.
fn line_of(text: &str, key: &str) -> String {
    let sets = |l: &str| {
        let l = l.trim_start().trim_start_matches('[');
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(['=', '.', ']']))
    };
    (text.lines().position(sets)).map_or(String::new(), |n| format!(", line {}", n + 1))
}
