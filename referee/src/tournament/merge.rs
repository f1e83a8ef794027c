//! `referee merge SHARD_DIR... --out DIR`: combines the directories of shards
//! 0/N … N-1/N of one tournament into the directory an unsharded run would have
//! written — the same manifest, journal, standings and transcripts, byte for
//! byte. Refuses shards of different tournaments, a shard given twice, a missing
//! shard, and a shard that is not finished.
//!
//! Knockout and Swiss are sharded one round at a time: each shard of round R
//! holds the rounds before it (taken with `--from`) and its slice of round R;
//! the merge holds rounds 1..=R, from which round R+1's tables follow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::format::{matchups, round};
use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::schedule::{GameKey, GameResult, Matchup, Shard};
use super::standings::Standings;

pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<Standings> {
    let shards = Shards::read(dirs)?;
    super::out_folder::refuse_nested(out)?;
    if crate::layout::holds_anything(out) {
        bail!("failed to merge: {} is not empty", out.display());
    }
    let games = Games::gather(&shards)?;
    let schedule = Schedule::of(&shards.manifest, &games.outcomes)?;
    schedule.check(&shards, &games)?;
    // Everything is checked: only now is anything created, so a refused merge
    // (an unfinished shard, say) leaves no folder behind and its retry after
    // the shard is recovered starts clean.
    std::fs::create_dir_all(crate::layout::tournament::games(out))
        .with_context(|| format!("failed to create {}", out.display()))?;
    for (key, o) in &games.outcomes {
        super::copy_game(games.source[key], out, &o.transcript)?;
    }
    let manifest = &shards.manifest;
    // The secret the shards dealt from (the same in each, as checked), kept
    // as an unsharded run keeps it.
    if let Some(secret) = &manifest.seed_secret {
        super::seed_secret::store(out, secret)?;
    }
    let manifest_path = out.join(crate::layout::tournament::MANIFEST);
    crate::safe_create::write_atomic(&manifest_path, &manifest.bytes())?;
    let standings = super::finish(out, manifest, &games.outcomes)?;
    if over(manifest, &games.outcomes) {
        super::reveal(out, manifest)?;
    }
    Ok(standings)
}

/// Whether the merged games end the tournament: always for a format played
/// in one go; for knockout and Swiss, when no round follows the last merged.
fn over(manifest: &Manifest, outcomes: &BTreeMap<GameKey, GameOutcome>) -> bool {
    if !manifest.format.by_rounds() {
        return true;
    }
    let last = outcomes.keys().map(|k| k.round).max().unwrap_or(1);
    let results: Vec<GameResult> = outcomes.values().map(|o| o.result()).collect();
    let (n, m) = (manifest.entrants.len(), manifest);
    round(n, &m.format, m.sets, m.deal_seed(), last + 1, &results).is_none()
}

/// The shard directories of one tournament, every one of them present once.
struct Shards {
    /// The tournament they are shards of (their manifest without the shard).
    manifest: Manifest,
    /// By shard index: the directory and the shard.
    dirs: BTreeMap<u32, (PathBuf, Shard)>,
}

impl Shards {
    fn read(dirs: &[PathBuf]) -> anyhow::Result<Shards> {
        let mut shards: BTreeMap<u32, (PathBuf, Shard)> = BTreeMap::new();
        // The first directory, its tournament and its shard count.
        let mut first: Option<(&Path, Manifest, u32)> = None;
        for dir in dirs {
            let (unsharded, shard) = read_shard(dir)?;
            match &first {
                None => first = Some((dir, unsharded, shard.count)),
                Some((first, whole, count)) => {
                    same_tournament(dir, &unsharded, shard, first, whole, *count)?
                }
            }
            if let Some((other, _)) = shards.insert(shard.index, (dir.clone(), shard)) {
                bail!(
                    "failed to merge: shard {}/{} is given twice ({} and {})",
                    shard.index,
                    shard.count,
                    other.display(),
                    dir.display()
                );
            }
        }
        let Some((_, manifest, count)) = first else {
            bail!("failed to merge: no shard directories given");
        };
        let missing: Vec<String> = (0..count)
            .filter(|k| !shards.contains_key(k))
            .map(|k| format!("{k}/{count}"))
            .collect();
        if !missing.is_empty() {
            bail!("failed to merge: shard(s) {} missing", missing.join(", "));
        }
        Ok(Shards {
            manifest,
            dirs: shards,
        })
    }
}

/// A shard directory's tournament (without the shard) and its shard.
fn read_shard(dir: &Path) -> anyhow::Result<(Manifest, Shard)> {
    let m = Manifest::read(dir).with_context(|| {
        format!(
            "failed to merge: {} is not a tournament directory",
            dir.display()
        )
    })?;
    let Some(shard) = m.shard else {
        bail!(
            "failed to merge: {} holds a whole tournament, not a shard (--shard K/N)",
            dir.display()
        );
    };
    Ok((Manifest { shard: None, ..m }, shard))
}

/// Refuses a shard of another tournament than the first directory's, or one
/// of another shard count.
fn same_tournament(
    dir: &Path,
    unsharded: &Manifest,
    shard: Shard,
    first: &Path,
    whole: &Manifest,
    count: u32,
) -> anyhow::Result<()> {
    let sides = super::difference::Sides {
        ours: &format!("in {}", dir.display()),
        theirs: &format!("in {}", first.display()),
    };
    if let Some(diff) = unsharded.difference(whole, &sides) {
        bail!(
            "failed to merge: {} and {} are shards of different tournaments ({diff})",
            dir.display(),
            first.display()
        );
    }
    if count != shard.count {
        bail!(
            "failed to merge: {} is shard {}/{}, but {} is one of {count}",
            dir.display(),
            shard.index,
            shard.count,
            first.display(),
        );
    }
    Ok(())
}

/// Every shard's games.
struct Games<'a> {
    outcomes: BTreeMap<GameKey, GameOutcome>,
    /// The directory each game is taken from.
    source: BTreeMap<GameKey, &'a Path>,
    /// What each shard holds, by shard index.
    per_shard: BTreeMap<u32, BTreeMap<GameKey, GameOutcome>>,
}

impl<'a> Games<'a> {
    /// A game found in several shards (a shard of a format played by rounds
    /// carries the earlier rounds it started from) must be the same in each.
    fn gather(shards: &'a Shards) -> anyhow::Result<Games<'a>> {
        let mut games = Games {
            outcomes: BTreeMap::new(),
            source: BTreeMap::new(),
            per_shard: BTreeMap::new(),
        };
        for (index, (dir, _)) in &shards.dirs {
            let got = super::journal::read(dir)?.outcomes;
            for (key, o) in &got {
                match games.outcomes.get(key) {
                    Some(prev) if prev != o => bail!(
                        "failed to merge: {} and {} disagree on round {} matchup {} game {}",
                        games.source[key].display(),
                        dir.display(),
                        key.round,
                        key.matchup,
                        key.game
                    ),
                    Some(_) => {}
                    None => {
                        games.outcomes.insert(*key, o.clone());
                        games.source.insert(*key, dir);
                    }
                }
            }
            games.per_shard.insert(*index, got);
        }
        Ok(games)
    }
}

/// The schedule the shards played: the last round they hold, sliced between
/// them, and (for a format played by rounds) the rounds before it, which every
/// shard started from.
struct Schedule {
    last: Vec<Matchup>,
    earlier: Vec<Matchup>,
}

impl Schedule {
    fn of(manifest: &Manifest, outcomes: &BTreeMap<GameKey, GameOutcome>) -> anyhow::Result<Self> {
        let (n, format) = (manifest.entrants.len(), &manifest.format);
        if !format.by_rounds() {
            return Ok(Schedule {
                last: matchups(n, format, manifest.sets, manifest.deal_seed()),
                earlier: Vec::new(),
            });
        }
        let last_round = outcomes.keys().map(|k| k.round).max().unwrap_or(1);
        let mut schedule = Schedule {
            last: Vec::new(),
            earlier: Vec::new(),
        };
        for r in 1..=last_round {
            let before: Vec<GameResult> = outcomes
                .values()
                .filter(|o| o.round < r)
                .map(|o| o.result())
                .collect();
            let ms = round(n, format, manifest.sets, manifest.deal_seed(), r, &before)
                .with_context(|| {
                    format!("failed to merge: the tournament was over before round {r}")
                })?;
            if r < last_round {
                schedule.earlier.extend(ms);
            } else {
                schedule.last = ms;
            }
        }
        Ok(schedule)
    }

    /// The earlier rounds are complete, every shard has played its slice of
    /// the last, and no game lies outside the schedule.
    fn check(&self, shards: &Shards, games: &Games) -> anyhow::Result<()> {
        if let Some(k) = (self.earlier.iter())
            .flat_map(|m| m.keys())
            .find(|k| !games.outcomes.contains_key(k))
        {
            bail!(
                "failed to merge: round {} is not complete (matchup {} game {} is missing)",
                k.round,
                k.matchup,
                k.game
            );
        }
        for (index, (dir, shard)) in &shards.dirs {
            let got = &games.per_shard[index];
            let want: Vec<GameKey> = (self.last.iter())
                .filter(|x| shard.holds(x))
                .flat_map(|x| x.keys())
                .collect();
            let done = want.iter().filter(|k| got.contains_key(k)).count();
            if done < want.len() {
                bail!(
                    "failed to merge: shard {}/{} in {} is not finished ({done} of {} games); run it again with --resume",
                    shard.index,
                    shard.count,
                    dir.display(),
                    want.len()
                );
            }
        }
        let known: BTreeSet<GameKey> = (self.earlier.iter().chain(&self.last))
            .flat_map(|m| m.keys())
            .collect();
        if let Some(k) = games.outcomes.keys().find(|k| !known.contains(k)) {
            bail!(
                "failed to merge: {} records round {} matchup {} game {}, which is not in the schedule",
                games.source[k].display(),
                k.round,
                k.matchup,
                k.game
            );
        }
        Ok(())
    }
}
