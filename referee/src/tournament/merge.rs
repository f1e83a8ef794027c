//! `referee merge SHARD_DIR... --out DIR`: combines the directories of shards
//! 0/N … N-1/N of one tournament into the directory an unsharded run would have
//! written — the same manifest, journal, standings and transcripts, byte for
//! byte. Refuses shards of different tournaments, a shard given twice, a missing
//! shard, and a shard that is not finished.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::manifest::Manifest;
use super::schedule::{matchups, GameKey};
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
    let schedule = matchups(
        manifest.entrants.len(),
        &manifest.format,
        manifest.sets,
        manifest.seed,
    );
    std::fs::create_dir_all(out.join("games"))
        .with_context(|| format!("failed to create {}", out.display()))?;
    let mut outcomes = BTreeMap::new();
    for (dir, m) in shards.values() {
        let shard = m.shard.expect("checked above");
        let want: Vec<GameKey> = schedule
            .iter()
            .filter(|x| shard.holds(x))
            .flat_map(|x| x.keys())
            .collect();
        let got = super::journal::read(dir)?.outcomes;
        let done = want.iter().filter(|k| got.contains_key(k)).count();
        if done < want.len() || got.len() != want.len() {
            bail!(
                "failed to merge: shard {}/{} in {} is not finished ({done} of {} games); run it again with --resume",
                shard.index,
                shard.count,
                dir.display(),
                want.len()
            );
        }
        for (key, o) in got {
            for rel in [o.transcript.clone(), timings_of(&o.transcript)] {
                let from = dir.join(&rel);
                if rel != o.transcript && !from.exists() {
                    continue; // timings are informative, not required
                }
                let to = out.join(&rel);
                if let Some(dir) = to.parent() {
                    // Timings live in a timings/ folder beside the transcripts.
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("failed to create {}", dir.display()))?;
                }
                std::fs::copy(&from, to).with_context(|| {
                    format!("failed to copy {} to {}", from.display(), out.display())
                })?;
            }
            outcomes.insert(key, o);
        }
    }
    super::write_atomic(&out.join(super::manifest::FILE), &manifest.bytes())?;
    super::finish(out, &manifest, &outcomes)
}

fn timings_of(transcript: &str) -> String {
    crate::config::Output::timings(Path::new(transcript))
        .to_string_lossy()
        .into_owned()
}
