//! `DIR/tournament.json`: what the tournament in a directory is — entrants,
//! format, seed (and, once it is over, the seed secret), sets, rules, time control, fault policy, the referee, how bots
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

use super::seed_secret::{deal_seed, SeedSecret};
use crate::layout::tournament::MANIFEST;
/// Version 2 added `referee` and `isolation` (how the bots were run); version
/// 3 the seed secret: every deal derives from `seed` mixed with it, where
/// versions 1 and 2 dealt from `seed` itself. Older manifests are still read
/// (and their deals are still theirs); a resume of one is refused by name.
pub const FORMAT: &str = "schmier-tournament/3";
/// The formats whose deals follow from the seed alone.
const BEFORE_SECRETS: [&str; 2] = ["schmier-tournament/1", "schmier-tournament/2"];

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
    /// What `seed` is mixed with (`seed_secret.rs`). In memory whenever the
    /// run or the folder has it; in the file only once [`Self::revealed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_secret: Option<SeedSecret>,
    /// Whether the file shows `seed_secret`: only when the tournament (or
    /// test) is over, never for a shard or a round with more to come.
    #[serde(skip)]
    pub revealed: bool,
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
    /// The file's bytes: the seed secret left out unless revealed.
    pub fn bytes(&self) -> Vec<u8> {
        let sealed;
        let shown = match self.revealed {
            true => self,
            false => {
                sealed = Manifest {
                    seed_secret: None,
                    ..self.clone()
                };
                &sealed
            }
        };
        let mut out = serde_json::to_vec_pretty(shown).expect("manifests serialize");
        out.push(b'\n');
        out
    }

    /// The seed every game's seed derives from (`schedule.rs`).
    pub fn deal_seed(&self) -> u64 {
        deal_seed(self.seed, self.seed_secret.as_ref())
    }

    /// The manifest in `dir`, with the seed secret the folder keeps when the
    /// file does not reveal it. A manifest of format 3 or later without a
    /// secret anywhere is refused: its deals cannot be known.
    pub fn read(dir: &Path) -> anyhow::Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("failed to read {}", path.display()))?;
        let mut m: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("failed to read {}", path.display()))?;
        m.revealed = m.seed_secret.is_some();
        if m.seed_secret.is_none() && !BEFORE_SECRETS.contains(&m.format_version.as_str()) {
            m.seed_secret = super::seed_secret::stored(dir)?;
            if m.seed_secret.is_none() {
                anyhow::bail!(
                    "failed to read {}: the tournament's seed secret is in neither it nor {}, \
                     so its deals cannot be known (if the secret was published, copy it \
                     into {} as 64 hex digits)",
                    path.display(),
                    dir.join(crate::layout::tournament::SEED_SECRET).display(),
                    crate::layout::tournament::SEED_SECRET
                );
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    use super::*;

    /// The manifest of a small tournament as a new run writes it.
    fn written() -> Manifest {
        let argv = ["t", "--seed", "7", "--fill", "inproc:random"]
            .into_iter()
            .chain(["--entrant", "a=inproc:heuristic", "--out", "unused"]);
        let matches = super::super::args::TournamentArgs::augment_args(clap::Command::new("t"))
            .try_get_matches_from(argv)
            .unwrap();
        let cfg = super::super::args::TournamentArgs::from_arg_matches(&matches)
            .unwrap()
            .validate()
            .unwrap();
        let schedule =
            super::super::format::matchups(cfg.entrants.len(), &cfg.format, cfg.sets, cfg.seed);
        super::super::run::manifest(&cfg, &schedule)
    }

    #[test]
    fn the_secret_is_in_the_file_only_once_revealed_and_read_back_from_the_folder() {
        let m = written();
        let secret = m.seed_secret.expect("a new run has a secret");
        let sealed = String::from_utf8(m.bytes()).unwrap();
        assert!(!sealed.contains("seed_secret") && !sealed.contains(&secret.to_string()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST), &sealed).unwrap();
        // No secret anywhere: its deals cannot be known, and it says so.
        let e = format!("{:#}", Manifest::read(dir.path()).unwrap_err());
        assert!(e.contains("seed-secret"), "{e}");
        super::super::seed_secret::store(dir.path(), &secret).unwrap();
        let read = Manifest::read(dir.path()).unwrap();
        assert_eq!((read.seed_secret, read.revealed), (Some(secret), false));
        assert_eq!(read.deal_seed(), secret.mix(7));
        assert_ne!(read.deal_seed(), 7);
        let revealed = Manifest {
            revealed: true,
            ..m.clone()
        };
        let shown = String::from_utf8(revealed.bytes()).unwrap();
        assert!(
            shown.contains(&format!("\"seed_secret\": \"{secret}\"")),
            "{shown}"
        );
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join(MANIFEST), &shown).unwrap();
        let read = Manifest::read(other.path()).unwrap();
        assert_eq!((read.seed_secret, read.revealed), (Some(secret), true));
    }

    /// A manifest from before seed secrets (format 2) is still read, and its
    /// deals are still its seed's alone.
    #[test]
    fn a_format_2_manifest_reads_and_deals_from_its_seed() {
        let sealed = String::from_utf8(written().bytes()).unwrap();
        let old = sealed.replace(FORMAT, "schmier-tournament/2");
        assert_ne!(old, sealed);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST), old).unwrap();
        let read = Manifest::read(dir.path()).unwrap();
        assert_eq!(read.seed_secret, None);
        assert_eq!(read.deal_seed(), 7);
    }
}
