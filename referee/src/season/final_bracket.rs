//! `referee season final DIR --top N`: the season's end. Calling it freezes
//! submissions (recorded in `season.db`, so a `season submit` or an upload
//! afterwards is refused, and `season run` plays no more sets), takes the
//! first N entrants of the standings (their order: rating, then the
//! interval's lower bound, then name — `standings.rs`), and plays a
//! tournament among their current versions in `DIR/final/`, an ordinary
//! tournament folder (`show`, `verify`, its standings and page read it).
//!
//! Its tables are built from the season's recorded settings alone, as the
//! season's are, and the season's whole folder is hidden from sandboxed
//! bots. Its deals come from the season's secret: the final's secret is
//! derived from it (`SeedSecret::derive`, on the season's seed) and the
//! final's seed is the season's, so anyone given the season's secret (at
//! its close) deals the final again. What was called (the finalists, the
//! format, the sets) is recorded, so running the command again resumes the
//! final exactly as `tournament --resume` does; once the final is complete
//! the season is closed and its secret revealed.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::args::FinalArgs;
use super::db::{Db, Version};
use super::settings::{bot, Settings};
use crate::tournament::config::{Entrant, TournamentConfig};
use crate::tournament::format::{Format, FormatName, Params};
use crate::tournament::seed_secret::SeedSecret;

/// Sets per matchup of a final, by default.
pub const SETS: u32 = 1;

/// The final as called: what every run of it plays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Called {
    /// `--top N`.
    pub top: usize,
    /// The finalists' versions, in standings order (the tournament's
    /// entrants in that order: a knockout's seeds).
    pub finalists: Vec<i64>,
    pub format: Format,
    pub sets: u32,
    /// When submissions were frozen (seconds since the epoch).
    pub frozen: i64,
}

/// The final recorded in `db`, if it was called.
pub fn called(db: &Db) -> anyhow::Result<Option<Called>> {
    match db.get(super::db::FINAL)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("season.db's record of the final does not read: {e}")),
    }
}

/// The final's secret: derived from the season's on its seed.
pub fn secret(season: &SeedSecret, seed: u64) -> SeedSecret {
    season.derive(seed)
}

/// Runs `season final`: calls the final (the first time) and plays it, or
/// resumes it.
pub fn main(a: &FinalArgs) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    let _lock = crate::lock::hold(
        &dir.display().to_string(),
        dir,
        &dir.join(crate::layout::LOCK),
    )?;
    let db = Db::open(&dir.join(crate::layout::season::DB))?;
    let called = match called(&db)? {
        Some(c) => {
            same_as_called(a, &c)?;
            c
        }
        None => {
            if db.get("closed")?.is_some() {
                bail!(
                    "the season in {} is closed; it has no final to play",
                    dir.display()
                );
            }
            call(&db, a)?
        }
    };
    let cfg = config(dir, &db, &called, a)?;
    let complete = play(cfg)?;
    if complete && db.get("closed")?.is_none() {
        let secret = crate::tournament::seed_secret::stored(dir)?
            .with_context(|| format!("{} has no seed-secret", dir.display()))?;
        db.close(&secret)?;
        println!(
            "the final is over and the season in {} is closed; its seed secret: {secret}",
            dir.display()
        );
    }
    Ok(match complete {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(crate::shutdown::signal_exit_code().unwrap_or(130)),
    })
}

/// Calls the final: the first `--top` entrants of the standings, the format
/// and sets of the flags; records it, which freezes submissions.
fn call(db: &Db, a: &FinalArgs) -> anyhow::Result<Called> {
    let Some(top) = a.top else {
        bail!("--top N: how many entrants of the standings play the final (at least 3)");
    };
    if top < 3 {
        bail!("--top {top}: a final needs at least three entrants (a table seats three)");
    }
    let standings = super::standings::compute(db)?;
    let ranked: Vec<_> = (standings.entrants.iter())
        .filter(|r| r.rating.is_some())
        .collect();
    if ranked.len() < top {
        bail!(
            "--top {top}: only {} entrant(s) have a rating (a finished set of their current \
             version); play more sets first, or call a smaller final",
            ranked.len()
        );
    }
    let finalists = &ranked[..top];
    let names: Vec<String> = finalists.iter().map(|r| r.entrant.clone()).collect();
    let called = Called {
        top,
        finalists: finalists.iter().map(|r| r.version).collect(),
        format: format(a, &names)?,
        sets: sets(a)?,
        frozen: super::db::now(),
    };
    db.set(super::db::FINAL, &serde_json::to_string(&called)?)?;
    println!(
        "submissions to the season are frozen; the final ({} set(s) per table) is among the top \
         {top} of the standings ({}): {}",
        called.sets,
        super::standings::ORDER,
        crate::names::printable(&names.join(", "))
    );
    Ok(called)
}

fn format(a: &FinalArgs, names: &[String]) -> anyhow::Result<Format> {
    a.format.unwrap_or(FormatName::RoundRobin).build(&Params {
        entrants: names,
        challengers: &[],
        rounds: a.rounds,
    })
}

fn sets(a: &FinalArgs) -> anyhow::Result<u32> {
    match a.sets.unwrap_or(SETS) {
        0 => bail!("--sets must be at least 1"),
        n => Ok(n),
    }
}

/// A rerun resumes the final as called: a flag given must say the same.
fn same_as_called(a: &FinalArgs, c: &Called) -> anyhow::Result<()> {
    let differs = |flag: &str, given: String, recorded: String| {
        anyhow::anyhow!(
            "the final was called with {flag} {recorded}, not {given}; run `season final` \
             again without it to resume the final as called"
        )
    };
    if let Some(top) = a.top.filter(|&t| t != c.top) {
        return Err(differs("--top", top.to_string(), c.top.to_string()));
    }
    if let Some(sets) = a.sets.filter(|&s| s != c.sets) {
        return Err(differs("--sets", sets.to_string(), c.sets.to_string()));
    }
    if a.format.is_some() || a.rounds.is_some() {
        let names: Vec<String> = (0..c.top).map(|i| i.to_string()).collect();
        let given = format(a, &names)?;
        if given != c.format {
            let show = |f: &Format| serde_json::to_string(f).unwrap_or_default();
            return Err(differs("--format", show(&given), show(&c.format)));
        }
    }
    Ok(())
}

/// The final as a tournament: the finalists' current versions, under the
/// season's settings, into `DIR/final`.
fn config(dir: &Path, db: &Db, called: &Called, a: &FinalArgs) -> anyhow::Result<TournamentConfig> {
    let settings = Settings::read(db)?;
    let versions = db.versions()?;
    let finalists: Vec<Version> = (called.finalists.iter())
        .map(|id| {
            (versions.iter().find(|v| v.id == *id).cloned())
                .with_context(|| format!("the final names version {id}, not in the season"))
        })
        .collect::<anyhow::Result<_>>()?;
    let entrants = (finalists.iter())
        .map(|v| {
            Ok(Entrant {
                name: v.name.clone(),
                bot: bot(v)?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let season_secret = crate::tournament::seed_secret::stored(dir)?
        .with_context(|| format!("{} has no seed-secret", dir.display()))?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    Ok(TournamentConfig {
        entrants,
        format: called.format.clone(),
        sets: called.sets,
        seed: settings.seed,
        secret: secret(&season_secret, settings.seed),
        // Hides the season's whole folder (its secret, its database and the
        // final's folder in it) from sandboxed bots.
        table: settings.table(dir, &finalists)?,
        out: crate::layout::season::final_dir(dir),
        jobs,
        resume: false,
        overwrite: false,
        keep_going: false,
        shard: None,
        round: None,
        from: None,
        quiet: a.quiet,
        page: false,
        remote: None,
    })
}

/// Plays (or resumes) the final's tournament; whether it is complete.
fn play(mut cfg: TournamentConfig) -> anyhow::Result<bool> {
    use crate::tournament::events::{Reporter, Reporters};
    use crate::tournament::{Console, Ended, Progress};
    let out = cfg.out.clone();
    let _lock = crate::lock::hold(
        &out.display().to_string(),
        &out,
        &out.join(crate::layout::LOCK),
    )?;
    let fresh = !crate::layout::holds_anything(&out);
    cfg.resume = !fresh;
    let season = out.parent().unwrap_or(&out).display().to_string();
    let again = format!("referee season final {}", shlex::try_quote(&season)?);
    let reporters: Vec<Box<dyn Reporter>> = vec![
        Box::new(Console::new(&cfg, again)),
        Box::new(Progress::new(&cfg)),
    ];
    let reporter = Arc::new(Reporters(reporters));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let ended = runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::shutdown::cancel_on_signals(cancel.clone());
        crate::tournament::run(&cfg, &cancel, reporter).await
    });
    if ended.is_err() && fresh {
        // Nothing half-done blocks the corrected rerun.
        crate::tournament::discard_unplayed(&out);
    }
    Ok(matches!(ended?, Ended::Complete(_)))
}
