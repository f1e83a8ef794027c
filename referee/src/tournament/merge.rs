//! `referee merge SHARD_DIR... --out DIR`: combines the directories of shards
//! 0/N … N-1/N of one tournament into the directory an unsharded run would have
//! written — the same manifest, journal, standings and transcripts, byte for
//! byte. Refuses shards of different tournaments, a shard given twice, a missing
//! shard, and a shard that is not finished.
//!
//! Knockout and Swiss are sharded one round at a time: each shard of round R
//! holds the rounds before it (taken with `--from`) and its slice of round R;
//! the merge holds rounds 1..=R, from which round R+1's tables follow.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::manifest::Manifest;
use super::outcome::GameOutcome;
use super::schedule::{matchups, round, GameKey, GameResult, Matchup};
use super::standings::Standings;

pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<Standings> {
    let mut shards: BTreeMap<u32, (PathBuf, Manifest)> = BTreeMap::new();
    let mut whole: Option<(PathBuf, Manifest)> = None;
    for dir in dirs {
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
        let unsharded = Manifest {
            shard: None,
            ..m.clone()
        };
        match &whole {
            None => whole = Some((dir.clone(), unsharded)),
            Some((first, w)) => {
                if let Some(diff) = unsharded.difference(w) {
                    bail!(
                        "failed to merge: {} and {} are shards of different tournaments ({diff})",
                        dir.display(),
                        first.display()
                    );
                }
                let count = shards
                    .values()
                    .next()
                    .and_then(|(_, m)| m.shard)
                    .map(|s| s.count);
                if count != Some(shard.count) {
                    bail!(
                        "failed to merge: {} is shard {}/{}, but {} is one of {}",
                        dir.display(),
                        shard.index,
                        shard.count,
                        first.display(),
                        count.unwrap_or(0)
                    );
                }
            }
        }
        if let Some((other, _)) = shards.insert(shard.index, (dir.clone(), m)) {
            bail!(
                "failed to merge: shard {}/{} is given twice ({} and {})",
                shard.index,
                shard.count,
                other.display(),
                dir.display()
            );
        }
    }
    let Some((_, manifest)) = whole else {
        bail!("failed to merge: no shard directories given");
    };
    let count = shards
        .values()
        .next()
        .and_then(|(_, m)| m.shard)
        .map_or(0, |s| s.count);
    let missing: Vec<String> = (0..count)
        .filter(|k| !shards.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!("failed to merge: shard(s) {} missing", missing.join(", "));
    }
    if std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some()) {
        bail!("failed to merge: {} is not empty", out.display());
    }
    // Every shard's games; a game found in several shards (a Swiss or knockout
    // shard carries the earlier rounds it started from) must be the same in each.
    let mut outcomes: BTreeMap<GameKey, GameOutcome> = BTreeMap::new();
    let mut source: BTreeMap<GameKey, &Path> = BTreeMap::new();
    let mut per_shard = Vec::new();
    for (dir, m) in shards.values() {
        let got = super::journal::read(dir)?.outcomes;
        for (key, o) in &got {
            match outcomes.get(key) {
                Some(prev) if prev != o => bail!(
                    "failed to merge: {} and {} disagree on round {} matchup {} game {}",
                    source[key].display(),
                    dir.display(),
                    key.round,
                    key.matchup,
                    key.game
                ),
                Some(_) => {}
                None => {
                    outcomes.insert(*key, o.clone());
                    source.insert(*key, dir);
                }
            }
        }
        per_shard.push((dir, m.shard.expect("checked above"), got));
    }
    let n = manifest.entrants.len();
    let (last, earlier): (Vec<Matchup>, Vec<Matchup>) = if manifest.format.by_rounds() {
        let last_round = outcomes.keys().map(|k| k.round).max().unwrap_or(1);
        let mut earlier = Vec::new();
        let mut last = Vec::new();
        for r in 1..=last_round {
            let before: Vec<GameResult> = outcomes
                .values()
                .filter(|o| o.round < r)
                .map(|o| o.result())
                .collect();
            let ms = round(
                n,
                &manifest.format,
                manifest.sets,
                manifest.seed,
                r,
                &before,
            )
            .with_context(|| {
                format!("failed to merge: the tournament was over before round {r}")
            })?;
            if r < last_round {
                earlier.extend(ms);
            } else {
                last = ms;
            }
        }
        (last, earlier)
    } else {
        (
            matchups(n, &manifest.format, manifest.sets, manifest.seed),
            Vec::new(),
        )
    };
    if let Some(k) = earlier
        .iter()
        .flat_map(|m| m.keys())
        .find(|k| !outcomes.contains_key(k))
    {
        bail!(
            "failed to merge: round {} is not complete (matchup {} game {} is missing)",
            k.round,
            k.matchup,
            k.game
        );
    }
    for (dir, shard, got) in &per_shard {
        let want: Vec<GameKey> = last
            .iter()
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
    let known: std::collections::BTreeSet<GameKey> =
        earlier.iter().chain(&last).flat_map(|m| m.keys()).collect();
    if let Some(k) = outcomes.keys().find(|k| !known.contains(k)) {
        bail!(
            "failed to merge: {} records round {} matchup {} game {}, which is not in the schedule",
            source[k].display(),
            k.round,
            k.matchup,
            k.game
        );
    }
    // Everything is checked: only now is anything created, so a refused merge
    // (an unfinished shard, say) leaves no folder behind and its retry after
    // the shard is recovered starts clean.
    std::fs::create_dir_all(crate::layout::tournament::games(out))
        .with_context(|| format!("failed to create {}", out.display()))?;
    for (key, o) in &outcomes {
        super::copy_game(source[key], out, &o.transcript)?;
    }
    let manifest_path = out.join(crate::layout::tournament::MANIFEST);
    crate::safe_create::write_atomic(&manifest_path, &manifest.bytes())?;
    super::finish(out, &manifest, &outcomes)
}
