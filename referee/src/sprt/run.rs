//! `referee sprt`'s coordinator: a tournament of one matchup (new, base, third)
//! whose duplicate sets are queued one table job each on the tournament's pool.
//! Games are journaled as they finish, in any order; the test counts a set only
//! when every set before it is counted, so what it decides — and when — is the
//! same for any `--jobs`. When it decides, the pool is stopped; sets played or
//! under way past the deciding one are discarded (their games are removed and
//! not journaled), so the folder holds exactly the counted sets.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::args::SprtConfig;
use super::gsprt::{Sequential, Verdict};
use super::measure::{set_difference, BASE, NEW};
use super::progress::Progress;
use super::report::Report;
use crate::config::TableSpec;
use crate::layout;
use crate::tournament::events::Reporter;
use crate::tournament::format::matchups;
use crate::tournament::journal::Journal;
use crate::tournament::manifest::Manifest;
use crate::tournament::outcome::GameOutcome;
use crate::tournament::pool::{self, TableJob};
use crate::tournament::schedule::{GameKey, Matchup, SET};

/// How a run ended.
pub enum Ended {
    /// The test decided, or reached --max-sets.
    Done {
        report: Box<Report>,
        /// Games finished past the deciding set and discarded.
        discarded: usize,
    },
    /// Stopped by Ctrl-C / SIGTERM after this many counted sets.
    Interrupted { sets: u32 },
}

/// The test over the journal's games, advanced set by set in order.
struct State {
    matchup: Matchup,
    outcomes: BTreeMap<GameKey, GameOutcome>,
    test: Sequential,
    differences: Vec<f64>,
    verdict: Option<Verdict>,
}

impl State {
    fn games_of(&self, set: u32) -> impl Iterator<Item = GameKey> + '_ {
        let first = (set - 1) * SET + 1;
        (first..first + SET).map(|game| GameKey {
            round: self.matchup.round,
            matchup: self.matchup.index,
            game,
        })
    }

    /// Counts every complete set after the last counted one, in order, until
    /// the test decides or a set is incomplete. Whether anything was counted.
    fn advance(&mut self) -> bool {
        let before = self.test.sets();
        while self.verdict.is_none() && self.test.sets() < self.matchup.sets {
            let set = self.test.sets() + 1;
            let games: Option<Vec<&GameOutcome>> =
                self.games_of(set).map(|k| self.outcomes.get(&k)).collect();
            let Some(games) = games else { break };
            let d = set_difference(games);
            self.differences.push(d);
            self.verdict = self.test.push(d);
        }
        if self.verdict.is_none() && self.test.sets() == self.matchup.sets {
            self.verdict = Some(Verdict::Inconclusive);
        }
        self.test.sets() > before
    }
}

pub async fn run(cfg: &SprtConfig, cancel: &CancellationToken) -> anyhow::Result<Ended> {
    let t = &cfg.tournament;
    let dir = &t.out;
    let schedule = matchups(3, &t.format, t.sets, t.deal_seed());
    let manifest = Manifest {
        sprt: Some(cfg.hypotheses.record()),
        ..crate::tournament::run::manifest(t, &schedule)
    };
    // The tournament's console, for what the start check and the tables report
    // (a bot that failed to start, a lost game); the test's own lines are
    // printed by `sprt/command.rs` and `sprt/progress.rs`.
    let console: Arc<dyn Reporter> = Arc::new(crate::tournament::Console::new(t, String::new()));
    let Some(failed) = crate::tournament::startcheck::check(t, cancel, &*console).await else {
        return Ok(Ended::Interrupted { sets: 0 });
    };
    if let Some(f) = failed.first() {
        let e = &t.entrants[f.entrant];
        bail!(
            "failed to start --{} ({}): {}; nothing was played or written. \
             `referee check-bot -- CMD` checks a bot",
            e.name,
            e.bot.display(),
            f.reason
        );
    }
    crate::session::view_held(&t.table).await?;
    if t.overwrite {
        remove_own_files(dir)?;
    }
    if t.resume {
        raise_max_sets(dir, &manifest)?;
    }
    crate::tournament::out_folder::prepare(dir, &manifest, t.resume, t.overwrite)?;
    crate::outdir::check_free_space(dir)?;
    let (mut journal, loaded) = Journal::open(dir)?;
    if loaded.torn > 0 {
        eprintln!(
            "referee: cut off a torn last line ({} bytes) of {}; that game is played again",
            loaded.torn,
            dir.join(layout::tournament::JOURNAL).display()
        );
    }
    let mut state = State {
        matchup: schedule[0].clone(),
        outcomes: loaded.outcomes,
        test: Sequential::new(cfg.hypotheses),
        differences: Vec::new(),
        verdict: None,
    };
    state.advance();
    if state.verdict.is_none() && play(cfg, &mut state, &mut journal, cancel, &console).await? {
        return Ok(Ended::Interrupted {
            sets: state.test.sets(),
        });
    }
    // Closed before the journal is rewritten in its place (Windows refuses
    // a rename over an open file).
    journal.close();
    finish(cfg, &manifest, state)
}

/// Plays the sets not yet complete until the test decides. Returns whether
/// the run was interrupted before it did.
async fn play(
    cfg: &SprtConfig,
    state: &mut State,
    journal: &mut Journal,
    cancel: &CancellationToken,
    console: &Arc<dyn Reporter>,
) -> anyhow::Result<bool> {
    let t = &cfg.tournament;
    let m = state.matchup.clone();
    let jobs = set_jobs(cfg, state);
    let tables = t.jobs.min(jobs.len()).max(1);
    announce(cfg, state, tables);
    crate::tournament::run::check_open_files(tables as u64, t.remote.as_ref())?;
    crate::tournament::run::warn_oversubscribed(tables, &**console);
    let progress = Progress::new(t.quiet);
    let stop = cancel.child_token();
    let (tx, mut rx) = mpsc::channel::<GameOutcome>(64);
    let (out, reporter) = (t.out.clone(), console.clone());
    let pool = tokio::spawn(pool::run(out, jobs, tables, stop.clone(), tx, reporter));
    let mut failure = None;
    while let Some(o) = rx.recv().await {
        if state.verdict.is_some() || failure.is_some() {
            continue; // finished after the verdict: discarded in `finish`
        }
        // Recorded before it counts; a journal that cannot be written stops the run.
        if let Err(e) = journal.record(&o) {
            stop.cancel();
            failure = Some(e);
            continue;
        }
        state.outcomes.insert(o.key(), o);
        let before = state.test.sets();
        if state.advance() {
            progress.set(&state.test, before, m.sets);
        }
        if state.verdict.is_some() {
            stop.cancel();
        }
    }
    let pooled = pool.await.context("failed to run the pool")?;
    progress.finish();
    if let Some(e) = failure {
        return Err(e);
    }
    pooled?;
    if state.verdict.is_some() {
        return Ok(false);
    }
    if cancel.is_cancelled() {
        return Ok(true);
    }
    let set = state.test.sets() + 1;
    let missing = state
        .games_of(set)
        .find(|k| !state.outcomes.contains_key(k))
        .map_or(0, |k| k.game);
    bail!(
        "failed to finish: set {set} game {missing} was not played (see above); --resume plays it"
    )
}

/// The table jobs of the sets not yet counted, one job per set: a table plays
/// a set and takes the next, so `--jobs N` plays N sets at once. A set's games
/// already in the journal are not played again.
fn set_jobs(cfg: &SprtConfig, state: &State) -> Vec<TableJob> {
    let t = &cfg.tournament;
    let m = &state.matchup;
    let mut spec = t.table.clone();
    spec.lineup = std::array::from_fn(|slot| t.entrants[m.entrants[slot % 3]].bot.clone());
    (state.test.sets() + 1..=m.sets)
        .map(|set| TableJob {
            matchup: m.clone(),
            spec: set_spec(&spec, set),
            games: state
                .games_of(set)
                .filter(|k| !state.outcomes.contains_key(k))
                .map(|k| k.game)
                .collect(),
        })
        .filter(|j| !j.games.is_empty())
        .collect()
}

/// The line that opens a run: the hypotheses, how far it may go, where it writes.
fn announce(cfg: &SprtConfig, state: &State, tables: usize) {
    let t = &cfg.tournament;
    if t.quiet {
        return;
    }
    let h = cfg.hypotheses;
    eprintln!(
        "referee: sprt: H0 {} vs H1 {} points per game, α {} β {}; up to {} sets of {SET} games \
         ({} counted from the journal); {tables} table(s) at once; seed {}; files in {}/",
        h.h0,
        h.h1,
        h.alpha,
        h.beta,
        state.matchup.sets,
        state.test.sets(),
        t.seed,
        t.out.display()
    );
}

/// The table settings of set `set`. A table that keeps its processes through
/// its games (lenient policy, no sandbox) gives them one scratch directory per
/// matchup (`--scratch`); a tournament has one table per matchup, an SPRT one
/// per set, several at once: each set gets a directory of its own, so two
/// tables never share one.
fn set_spec(spec: &TableSpec, set: u32) -> TableSpec {
    let mut spec = spec.clone();
    if !pool::fresh_per_game(&spec) {
        if let Some(base) = &spec.isolation.scratch {
            spec.isolation.scratch = Some(base.join(format!("set-{set:04}")));
        }
    }
    spec
}

/// Keeps the counted sets only: the journal in order, the standings of the
/// three bots, and the SPRT's own files; every other game's files removed.
fn finish(cfg: &SprtConfig, manifest: &Manifest, state: State) -> anyhow::Result<Ended> {
    let dir = &cfg.tournament.out;
    let last = state.test.sets() * SET;
    let kept: BTreeMap<_, _> = (state.outcomes.into_iter())
        .filter(|(k, _)| k.game <= last)
        .collect();
    let [new, base] = [NEW, BASE].map(|e| {
        let forfeited = |o: &&GameOutcome| (o.forfeited.iter()).any(|&t| o.teams[t] == e);
        kept.values().filter(forfeited).count() as u32
    });
    let forfeits = super::report::Forfeits { new, base };
    let discarded = remove_games_after(dir, last)?;
    crate::tournament::finish(dir, manifest, &kept)?;
    // The test is over: its deals may be known now (a later --resume with a
    // larger --max-sets deals from this published secret; SECURITY.md).
    crate::tournament::reveal(dir, manifest)?;
    let verdict = state
        .verdict
        .expect("play returns with a verdict or an error");
    let report = Report::new(cfg, &state.test, &state.differences, verdict, forfeits);
    crate::safe_create::write_atomic(&dir.join(layout::tournament::SPRT_REPORT), &report.json())?;
    crate::safe_create::write_atomic(
        &dir.join(layout::tournament::SPRT_PAGE),
        super::html::render(&report).as_bytes(),
    )?;
    Ok(Ended::Done {
        report: Box::new(report),
        discarded,
    })
}

/// Removes the transcripts, timings and logs of games after `last`: played
/// past the verdict (or in an earlier run of a test that has decided).
/// Returns how many transcripts were removed.
fn remove_games_after(dir: &Path, last: u32) -> anyhow::Result<usize> {
    let mut transcripts = 0;
    let places = layout::tournament::per_game_folders(dir);
    let games = places[0].clone();
    for place in places {
        let Ok(entries) = std::fs::read_dir(&place) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(game) = name.to_str().and_then(layout::tournament::game_of) else {
                continue;
            };
            if game <= last {
                continue;
            }
            let path = e.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.with_context(|| format!("failed to remove {}", path.display()))?;
            transcripts += usize::from(place == games);
        }
    }
    Ok(transcripts)
}

/// `--resume` with a larger `--max-sets` continues an inconclusive test: a
/// set's deal depends on its number, not on how many sets there may be, so the
/// sets played are the same games either way and the manifest takes the new
/// maximum. A smaller one stays an error (`prepare` names the difference): it
/// would drop sets already played.
fn raise_max_sets(dir: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let Ok(old) = Manifest::read(dir) else {
        return Ok(()); // `prepare` says what is wrong with the folder
    };
    let same_test = Manifest {
        sets: manifest.sets,
        games: manifest.games,
        revealed: false,
        ..old.clone()
    };
    if old.sets < manifest.sets && same_test == *manifest {
        crate::safe_create::write_atomic(
            &dir.join(layout::tournament::MANIFEST),
            &manifest.bytes(),
        )?;
    }
    Ok(())
}

/// `--overwrite`: the SPRT's own files; the tournament's are removed by
/// `prepare`, which also refuses a folder that holds no tournament.
fn remove_own_files(dir: &Path) -> anyhow::Result<()> {
    if !dir.join(layout::tournament::MANIFEST).is_file() {
        return Ok(());
    }
    for name in [
        layout::tournament::SPRT_REPORT,
        layout::tournament::SPRT_PAGE,
    ] {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("--overwrite: failed to remove {}: {e}", path.display())
            }
            _ => {}
        }
    }
    Ok(())
}
