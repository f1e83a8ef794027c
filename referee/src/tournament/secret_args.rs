//! Where a run's seed secret comes from (`--seed-secret`,
//! `--seed-secret-file`, the folder it resumes, `--from`'s folder), and that
//! they agree. The secret itself and its mixing are `seed_secret.rs`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use super::seed_secret::{stored, SeedSecret};
use crate::layout::tournament::SEED_SECRET;

/// Where a run's secret comes from, beside the folder it resumes and the
/// folder `--from` gives.
#[derive(Args, Clone, Debug, Default)]
pub struct SecretArgs {
    /// Deal from this seed secret (64 hex digits) instead of a fresh one: with
    /// the same --seed it reproduces a finished run whose secret was published
    /// (its tournament.json, the end of its summary), from an empty folder.
    #[arg(long, value_name = "HEX", conflicts_with = "seed_secret_file")]
    pub seed_secret: Option<SeedSecret>,

    /// Read the seed secret from FILE (64 hex digits; e.g. `referee secret >
    /// FILE`, kept where no bot can read it): how every shard of a tournament
    /// deals from the same secret. Hidden from sandboxed bots.
    #[arg(long, value_name = "FILE")]
    pub seed_secret_file: Option<PathBuf>,
}

impl SecretArgs {
    /// The secret the run deals from: the one its folder keeps (`--resume`),
    /// the one given, the one of `--from`'s folder, or a fresh one. Any two
    /// of these that are there must agree; a shard must be given one.
    pub fn choose(
        &self,
        out: &Path,
        resume: bool,
        from: Option<&Path>,
        sharded: bool,
    ) -> anyhow::Result<SeedSecret> {
        let mut known: Vec<(String, SeedSecret)> = Vec::new();
        if resume {
            known.extend(folder_secret(out)?.map(|s| (format!("{}", out.display()), s)));
        }
        if let Some(s) = self.seed_secret {
            known.push(("--seed-secret".into(), s));
        }
        if let Some(path) = &self.seed_secret_file {
            let s = SeedSecret::read_file(path).context("--seed-secret-file")?;
            known.push((format!("--seed-secret-file {}", path.display()), s));
        }
        if let Some(from) = from {
            match folder_secret(from)? {
                Some(s) => known.push((format!("--from {}", from.display()), s)),
                None => bail!(
                    "--from {}: it keeps no seed secret ({SEED_SECRET} is missing), so its \
                     rounds cannot be continued with the same deals",
                    from.display()
                ),
            }
        }
        if let Some((b, _)) = known.iter().find(|(_, s)| *s != known[0].1) {
            bail!(
                "the seed secret of {} and that of {b} differ: they are not one \
                 tournament's (the secrets are not printed; compare the files)",
                known[0].0
            );
        }
        match known.first() {
            Some((_, s)) => Ok(*s),
            None if sharded => bail!(
                "--shard: every shard must deal from one seed secret, or the shards are \
                 different tournaments that cannot be merged; make one first (`referee \
                 secret > FILE`, somewhere no bot can read) and give every shard \
                 --seed-secret-file FILE"
            ),
            None => SeedSecret::draw(),
        }
    }

    /// The file the secret was read from, which sandboxed bots must not see.
    pub fn file(&self) -> Option<&Path> {
        self.seed_secret_file.as_deref()
    }
}

/// The secret a tournament folder keeps: its `seed-secret`, or the one its
/// finished `tournament.json` reveals; `None` when the folder holds no
/// tournament yet, or one made before there were secrets.
fn folder_secret(dir: &Path) -> anyhow::Result<Option<SeedSecret>> {
    if !dir.join(crate::layout::tournament::MANIFEST).is_file() {
        return stored(dir);
    }
    Ok(super::manifest::Manifest::read(dir)?.seed_secret)
}
