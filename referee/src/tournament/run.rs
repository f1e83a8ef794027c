//! `referee tournament`: prepares the directory (or checks it for `--resume`),
//! hands the games still to play to the pool, journals each finished game as it
//! arrives, shows progress, and at the end writes the standings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::TournamentConfig;
use super::format::{bracket_round, last_line, matchups, round};
use super::journal::Journal;
use super::manifest::{EntrantRecord, Manifest};
use super::outcome::GameOutcome;
use super::page::LivePage;
use super::pool::{self, TableJob};
use super::progress::{leader, Progress};
use super::schedule::{GameKey, GameResult, Matchup};
use super::standings::Standings;
use crate::layout::tournament::{JOURNAL, MANIFEST, PARTIAL_STANDINGS};

/// Open files a table needs: three pipes and a log per bot, two transcripts, slack.
const FILES_PER_TABLE: u64 = 32;

/// How a run ended.
pub enum Ended {
    /// Every game of this run's schedule (or shard) is played.
    Complete(Standings),
    /// Stopped by Ctrl-C / SIGTERM; the standings so far.
    Interrupted(Standings),
}

pub fn manifest(cfg: &TournamentConfig, schedule: &[Matchup]) -> Manifest {
    Manifest {
        format_version: super::manifest::FORMAT.into(),
        seed: cfg.seed,
        format: cfg.format.clone(),
        sets: cfg.sets,
        entrants: cfg
            .entrants
            .iter()
            .map(|e| EntrantRecord {
                name: e.name.clone(),
                command: e.bot.display(),
            })
            .collect(),
        rules: cfg.table.rules,
        time_control: cfg.table.time.record(),
        fault_policy: cfg.table.policy,
        matchups: schedule.len() as u32,
        games: schedule.iter().map(|m| m.games()).sum(),
        shard: cfg.shard,
    }
}

pub async fn run(cfg: &TournamentConfig, cancel: &CancellationToken) -> anyhow::Result<Ended> {
    let n = cfg.entrants.len();
    let one_round = matchups(n, &cfg.format, cfg.sets, cfg.seed);
    let manifest = manifest(cfg, &one_round);
    let dir = &cfg.out;
    // Before anything is written: a broken entrant must not leave a folder that
    // blocks the corrected rerun.
    let Some(failed) = super::startcheck::check(cfg, cancel).await else {
        return Ok(Ended::Interrupted(super::standings::compute(
            &manifest,
            &BTreeMap::new(),
        )));
    };
    refuse_unstarted(cfg, &failed)?;
    prepare(dir, &manifest, cfg.resume, cfg.overwrite)?;
    crate::outdir::check_free_space(dir)?;
    let (mut journal, loaded) = Journal::open(dir)?;
    if loaded.torn > 0 {
        eprintln!(
            "referee: cut off a torn last line ({} bytes) of {}; that game is played again",
            loaded.torn,
            dir.join(JOURNAL).display()
        );
    }
    let mut outcomes = loaded.outcomes;
    if let (Some(from), Some(round)) = (&cfg.from, cfg.round) {
        if outcomes.is_empty() {
            import(from, dir, &manifest, round, &mut journal, &mut outcomes)?;
        }
    }
    let mut page = LivePage::new(cfg.page, dir, &manifest, &outcomes);
    let by_rounds = cfg.format.by_rounds();
    let names: Vec<String> = cfg.entrants.iter().map(|e| e.name.clone()).collect();
    let mut known: BTreeSet<GameKey> = BTreeSet::new();
    let mut r = u32::from(by_rounds);
    loop {
        let ms: Vec<Matchup> = if by_rounds {
            let before: Vec<GameResult> = outcomes
                .values()
                .filter(|o| o.round < r)
                .map(|o| o.result())
                .collect();
            match round(n, &cfg.format, cfg.sets, cfg.seed, r, &before) {
                Some(ms) => ms,
                None => {
                    if let Some(want) = cfg.round.filter(|&want| want >= r) {
                        bail!(
                            "failed to play round {want}: the tournament was over after round {}; \
                             to write its standings, run it without --round (with --resume in {})",
                            r - 1,
                            dir.display()
                        );
                    }
                    if let Some(line) = last_line(&names, &cfg.format, r, &before) {
                        println!("{line}");
                    }
                    break;
                }
            }
        } else {
            one_round.clone()
        };
        known.extend(ms.iter().flat_map(|m| m.keys()));
        if let Some(want) = cfg.round.filter(|&want| r < want) {
            if let Some(k) = ms
                .iter()
                .flat_map(|m| m.keys())
                .find(|k| !outcomes.contains_key(k))
            {
                bail!(
                    "failed to play round {want}: round {r} is not complete in {} (matchup {} game {} is missing); \
                     finish it first, or merge its shards and pass --from MERGED_DIR",
                    dir.display(),
                    k.matchup,
                    k.game
                );
            }
            r += 1;
            continue;
        }
        if by_rounds {
            page.on_round(r, &ms, &outcomes);
        }
        let played = play_round(cfg, &ms, r, &mut journal, &mut outcomes, &mut page, cancel);
        let interrupted = played
            .await
            .inspect_err(|_| page.on_end(&outcomes, false))?;
        if interrupted {
            page.on_end(&outcomes, false);
            let so_far = super::standings::compute(&manifest, &outcomes);
            crate::safe_create::write_atomic(&dir.join(PARTIAL_STANDINGS), &so_far.json())?;
            return Ok(Ended::Interrupted(so_far));
        }
        if by_rounds {
            print!("{}", bracket_round(&names, &cfg.format, r, &ms, &outcomes));
        }
        if !by_rounds || cfg.round == Some(r) {
            break;
        }
        r += 1;
    }
    if let Some(stray) = outcomes.keys().find(|k| !known.contains(k)) {
        bail!(
            "failed to resume: the journal in {} records round {} matchup {} game {}, which is not in this run's schedule",
            dir.display(),
            stray.round,
            stray.matchup,
            stray.game
        );
    }
    let standings = super::finish(dir, &manifest, &outcomes)?;
    page.on_end(&outcomes, true);
    // The standings of an interrupted run are superseded by the whole ones.
    let partial = dir.join(PARTIAL_STANDINGS);
    match std::fs::remove_file(&partial) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("failed to remove {}: {e}", partial.display())
        }
        _ => {}
    }
    Ok(Ended::Complete(standings))
}

/// Reports each entrant that failed the start check, and stops the run before
/// any game unless `--keep-going`.
fn refuse_unstarted(
    cfg: &TournamentConfig,
    failed: &[super::startcheck::Failure],
) -> anyhow::Result<()> {
    for f in failed {
        let e = &cfg.entrants[f.entrant];
        eprintln!(
            "referee: entrant {:?} ({}) failed to start: {}",
            e.name,
            e.bot.display(),
            f.reason
        );
    }
    if failed.is_empty() {
        return Ok(());
    }
    if !cfg.keep_going {
        bail!(
            "failed to start {} of the {} entrants (see above); nothing was played or written. \
             Fix the command (`referee check-bot -- CMD` checks one), or pass --keep-going to \
             play with the referee's fallback in their seats (an entrant that never started \
             ranks last)",
            failed.len(),
            cfg.entrants.len()
        );
    }
    eprintln!(
        "referee: --keep-going: the fallback plays the seats of the entrants that failed to \
         start (fault `start`); an entrant that never starts ranks below every entrant that did"
    );
    Ok(())
}

/// Plays the games of this run's share of round `r` (matchups `ms`) that the
/// journal lacks. Returns whether the run was interrupted.
async fn play_round(
    cfg: &TournamentConfig,
    ms: &[Matchup],
    r: u32,
    journal: &mut Journal,
    outcomes: &mut BTreeMap<GameKey, GameOutcome>,
    page: &mut LivePage,
    cancel: &CancellationToken,
) -> anyhow::Result<bool> {
    let dir = &cfg.out;
    let in_round = ms.len();
    let mine: Vec<&Matchup> = ms
        .iter()
        .filter(|m| cfg.shard.is_none_or(|s| s.holds(m)))
        .collect();
    let wanted: Vec<GameKey> = mine.iter().flat_map(|m| m.keys()).collect();
    let jobs: Vec<TableJob> = mine
        .iter()
        .map(|m| {
            let mut spec = cfg.table.clone();
            spec.lineup =
                std::array::from_fn(|slot| cfg.entrants[m.entrants[slot % 3]].bot.clone());
            TableJob {
                matchup: (*m).clone(),
                spec,
                games: m
                    .keys()
                    .filter(|k| !outcomes.contains_key(k))
                    .map(|k| k.game)
                    .collect(),
            }
        })
        .filter(|j| !j.games.is_empty())
        .collect();
    let total = wanted.len() as u64;
    let done = wanted.iter().filter(|k| outcomes.contains_key(k)).count() as u64;
    let todo: u64 = jobs.iter().map(|j| j.games.len() as u64).sum();
    let tables = cfg.jobs.min(jobs.len()).max(1);
    if !cfg.quiet {
        eprintln!(
            "referee: {}{} entrants, {} matchup(s) of {} duplicate set(s) = {} games{}; {} to play on {} table(s) at once; seed {}; files in {}/",
            if r > 0 { format!("round {r}: ") } else { String::new() },
            cfg.entrants.len(),
            mine.len(),
            cfg.sets,
            total,
            cfg.shard.map_or(String::new(), |s| format!(" (shard {}/{} of {in_round} matchups)", s.index, s.count)),
            todo,
            tables,
            cfg.seed,
            dir.display()
        );
    }
    check_open_files(tables as u64)?;
    warn_oversubscribed(tables, cfg.quiet);
    let hint = cfg.format.pairing().hint(cfg.entrants.len(), in_round);
    if let Some(hint) = hint.filter(|_| !cfg.quiet) {
        eprintln!("referee: hint: {hint}");
    }

    let progress = Progress::new(total, done, cfg.quiet);
    let stop = cancel.child_token();
    let (tx, mut rx) = mpsc::channel::<GameOutcome>(64);
    let pool = tokio::spawn(pool::run(dir.clone(), jobs, tables, stop.clone(), tx));
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    tick.tick().await;
    let mut failure = None;
    let names: Vec<&str> = cfg.entrants.iter().map(|e| e.name.as_str()).collect();
    let mut count = done;
    loop {
        tokio::select! {
            o = rx.recv() => {
                let Some(o) = o else { break };
                // Recorded before it counts; a journal that cannot be written stops the run.
                if let Err(e) = journal.record(&o) {
                    stop.cancel();
                    failure.get_or_insert(e);
                    continue;
                }
                let key = o.key();
                outcomes.insert(key, o);
                page.on_game_journaled(key, outcomes);
                count += 1;
                progress.update(count, leader(&names, outcomes));
            }
            _ = tick.tick() => progress.line(),
        }
    }
    let pooled = pool.await.context("failed to run the pool")?;
    progress.finish();
    if let Some(e) = failure {
        return Err(e);
    }
    pooled?;
    if cancel.is_cancelled() {
        return Ok(true);
    }
    if let Some(missing) = wanted.iter().find(|k| !outcomes.contains_key(k)) {
        bail!(
            "failed to finish: round {} matchup {} game {} was not played",
            missing.round,
            missing.matchup,
            missing.game
        );
    }
    Ok(false)
}

/// `--from DIR`: takes the rounds before `round` from a finished (or merged)
/// directory of the same tournament, transcripts included.
fn import(
    from: &Path,
    dir: &Path,
    manifest: &Manifest,
    round: u32,
    journal: &mut Journal,
    outcomes: &mut BTreeMap<GameKey, GameOutcome>,
) -> anyhow::Result<()> {
    let theirs = Manifest::read(from)?;
    let (a, b) = (
        Manifest {
            shard: None,
            ..manifest.clone()
        },
        Manifest {
            shard: None,
            ..theirs
        },
    );
    if let Some(diff) = a.difference(&b) {
        bail!(
            "failed to take earlier rounds from {}: it holds a different tournament ({diff})",
            from.display()
        );
    }
    for (key, o) in super::journal::read(from)?.outcomes {
        if key.round >= round {
            continue;
        }
        super::copy_game(from, dir, &o.transcript)?;
        journal.record(&o)?;
        outcomes.insert(key, o);
    }
    Ok(())
}

/// A new run needs an empty (or absent) directory; `--resume` needs the same
/// tournament's directory; `--overwrite` replaces the tournament in it.
pub(crate) fn prepare(
    dir: &Path,
    manifest: &Manifest,
    resume: bool,
    overwrite: bool,
) -> anyhow::Result<()> {
    let busy = |dir: &Path| std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
    if busy(dir) && overwrite {
        remove_tournament(dir)?;
    }
    let busy = busy(dir);
    if busy && !resume {
        if !dir.join(MANIFEST).is_file() {
            bail!(
                "failed to start: {} is not empty and holds no tournament; choose another --out",
                dir.display()
            );
        }
        bail!(
            "failed to start: {} is not empty; add --resume to continue the tournament in it, \
             --overwrite to replace it, or choose another --out",
            dir.display()
        );
    }
    if busy {
        let old = Manifest::read(dir)
            .with_context(|| format!("failed to resume: {} holds no tournament", dir.display()))?;
        if let Some(diff) = manifest.difference(&old) {
            bail!(
                "failed to resume: {} holds a different tournament ({diff})",
                dir.display()
            );
        }
        return Ok(());
    }
    std::fs::create_dir_all(crate::layout::tournament::games(dir))
        .with_context(|| format!("failed to create {}", dir.display()))?;
    Ok(crate::safe_create::write_atomic(
        &dir.join(MANIFEST),
        &manifest.bytes(),
    )?)
}

/// `--overwrite`: removes what a tournament writes, and only from a folder that
/// holds one (its manifest), so a mistyped --out never deletes anything else.
/// Whatever else is in the folder stays, and keeps it busy.
fn remove_tournament(dir: &Path) -> anyhow::Result<()> {
    if !dir.join(MANIFEST).is_file() {
        bail!(
            "failed to start: {} is not empty and holds no tournament ({} is missing), so \
             --overwrite deletes nothing there; choose another --out",
            dir.display(),
            MANIFEST
        );
    }
    for name in crate::layout::tournament::FILES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("--overwrite: failed to remove {}: {e}", path.display())
            }
            _ => {}
        }
    }
    for name in crate::layout::tournament::FOLDERS {
        let path = dir.join(name);
        match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("--overwrite: failed to remove {}: {e}", path.display())
            }
            _ => {}
        }
    }
    Ok(())
}

/// Raises the soft open-file limit if the tables need it, or says how many
/// tables fit.
pub(crate) fn check_open_files(tables: u64) -> anyhow::Result<()> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let need = 64 + tables * FILES_PER_TABLE;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    if need <= soft {
        return Ok(());
    }
    if need <= hard && setrlimit(Resource::RLIMIT_NOFILE, need, hard).is_ok() {
        return Ok(());
    }
    bail!(
        "failed to start: {tables} tables need about {need} open files, but the limit is {soft} (hard limit {hard}); \
         use --jobs {} or raise `ulimit -n`",
        (hard.saturating_sub(64) / FILES_PER_TABLE).max(1)
    )
}

/// One seat of a table thinks at a time, so a table keeps about one core busy with
/// bots that use their time; more tables than cores make bots share cores, and a
/// bot near its time limit may then lose on time.
pub(crate) fn warn_oversubscribed(tables: usize, quiet: bool) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if tables > cores && !quiet {
        eprintln!(
            "referee: warning: {tables} tables on {cores} cores; bots that think for most of \
             their time limit will share cores and may time out (lower --jobs, or raise --time-scale)"
        );
    }
}
