//! `referee tournament`: prepares the directory (or checks it for `--resume`),
//! hands the games still to play to the pool, journals each finished game as it
//! arrives, shows progress, and at the end writes the standings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::TournamentConfig;
use super::events::{Event, Reporter, RoundPlan};
use super::format::{bracket_round, last_line, matchups, round};
use super::journal::Journal;
use super::manifest::{EntrantRecord, Manifest};
use super::out_folder::prepare;
use super::outcome::GameOutcome;
use super::pool::{self, TableJob};
use super::schedule::{GameKey, GameResult, Matchup};
use super::standings::Standings;
use crate::layout::tournament::{JOURNAL, PARTIAL_STANDINGS};

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
        referee: Some(crate::REFEREE.into()),
        isolation: Some(cfg.table.isolation_record()),
        sprt: None,
        matchups: schedule.len() as u32,
        games: schedule.iter().map(|m| m.games()).sum(),
        shard: cfg.shard,
        seed_secret: Some(cfg.secret),
        revealed: false,
    }
}

/// Plays the tournament (or its shard, or its round `--round`) into `cfg.out`,
/// telling `reporter` what happens, the end included.
pub async fn run(
    cfg: &TournamentConfig,
    cancel: &CancellationToken,
    reporter: Arc<dyn Reporter>,
) -> anyhow::Result<Ended> {
    let one_round = matchups(cfg.entrants.len(), &cfg.format, cfg.sets, cfg.deal_seed());
    let manifest = manifest(cfg, &one_round);
    let Some((journal, outcomes)) = open(cfg, &manifest, cancel, &*reporter).await? else {
        let none = BTreeMap::new();
        let standings = super::standings::compute(&manifest, &none);
        reporter.report(&Event::Ended {
            standings: &standings,
            interrupted: true,
            so_far: &none,
            revealed: None,
        });
        return Ok(Ended::Interrupted(standings));
    };
    reporter.report(&Event::Opened {
        manifest: &manifest,
        so_far: &outcomes,
    });
    let mut run = Coordinator {
        cfg,
        cancel,
        reporter: &reporter,
        journal,
        outcomes,
        revealed: false,
    };
    let ended = run.rounds(&manifest, &one_round).await;
    let so_far = &run.outcomes;
    match &ended {
        Ok(Ended::Complete(standings)) => reporter.report(&Event::Ended {
            standings,
            interrupted: false,
            so_far,
            revealed: run.revealed.then_some(&cfg.secret),
        }),
        Ok(Ended::Interrupted(standings)) => reporter.report(&Event::Ended {
            standings,
            interrupted: true,
            so_far,
            revealed: None,
        }),
        Err(_) => reporter.report(&Event::Failed { so_far }),
    }
    ended
}

/// Checks the entrants, prepares the directory and reads its journal (and
/// `--from`'s earlier rounds). `None`: interrupted during the check.
async fn open(
    cfg: &TournamentConfig,
    manifest: &Manifest,
    cancel: &CancellationToken,
    reporter: &dyn Reporter,
) -> anyhow::Result<Option<(Journal, BTreeMap<GameKey, GameOutcome>)>> {
    let dir = &cfg.out;
    // Before anything is written: a broken entrant must not leave a folder that
    // blocks the corrected rerun.
    let Some(failed) = super::startcheck::check(cfg, cancel, reporter).await else {
        return Ok(None);
    };
    refuse_unstarted(cfg, &failed, reporter)?;
    crate::session::view_held(&cfg.table).await?;
    prepare(dir, manifest, cfg.resume, cfg.overwrite)?;
    crate::outdir::check_free_space(dir)?;
    let (mut journal, loaded) = Journal::open(dir)?;
    if loaded.torn > 0 {
        reporter.report(&Event::TornJournal {
            bytes: loaded.torn as u64,
            journal: dir.join(JOURNAL),
        });
    }
    let mut outcomes = loaded.outcomes;
    if let (Some(from), Some(round)) = (&cfg.from, cfg.round) {
        if outcomes.is_empty() {
            import(from, dir, manifest, round, &mut journal, &mut outcomes)?;
        }
    }
    Ok(Some((journal, outcomes)))
}

/// After the last round: every journaled game is in the schedule, and the
/// standings are written (those of an interrupted run are superseded); if
/// the tournament is over (`reveal`), its manifest now shows the seed secret.
fn complete(
    dir: &Path,
    manifest: &Manifest,
    known: &BTreeSet<GameKey>,
    outcomes: &BTreeMap<GameKey, GameOutcome>,
    reveal: bool,
) -> anyhow::Result<Standings> {
    if let Some(stray) = outcomes.keys().find(|k| !known.contains(k)) {
        bail!(
            "failed to resume: the journal in {} records round {} matchup {} game {}, which is not in this run's schedule",
            dir.display(),
            stray.round,
            stray.matchup,
            stray.game
        );
    }
    let standings = super::finish(dir, manifest, outcomes)?;
    if reveal {
        super::reveal(dir, manifest)?;
    }
    let partial = dir.join(PARTIAL_STANDINGS);
    match std::fs::remove_file(&partial) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("failed to remove {}: {e}", partial.display())
        }
        _ => {}
    }
    Ok(standings)
}

/// Reports each entrant that failed the start check, and stops the run before
/// any game unless `--keep-going`.
fn refuse_unstarted(
    cfg: &TournamentConfig,
    failed: &[super::startcheck::Failure],
    reporter: &dyn Reporter,
) -> anyhow::Result<()> {
    for f in failed {
        let e = &cfg.entrants[f.entrant];
        reporter.report(&Event::EntrantFailedToStart {
            name: &e.name,
            command: e.bot.display(),
            reason: &f.reason,
        });
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
    reporter.report(&Event::KeepGoing);
    Ok(())
}

/// The run's state between rounds: the journal and what it holds so far.
struct Coordinator<'a> {
    cfg: &'a TournamentConfig,
    cancel: &'a CancellationToken,
    reporter: &'a Arc<dyn Reporter>,
    journal: Journal,
    outcomes: BTreeMap<GameKey, GameOutcome>,
    /// Set when the run ended the tournament and revealed its seed secret.
    revealed: bool,
}

impl Coordinator<'_> {
    fn names(&self) -> Vec<String> {
        self.cfg.entrants.iter().map(|e| e.name.clone()).collect()
    }

    /// Plays round after round (the one round of a format played in one go)
    /// until the tournament, or this run's `--round`, is over.
    async fn rounds(
        &mut self,
        manifest: &Manifest,
        one_round: &[Matchup],
    ) -> anyhow::Result<Ended> {
        let cfg = self.cfg;
        let by_rounds = cfg.format.by_rounds();
        let mut known: BTreeSet<GameKey> = BTreeSet::new();
        let mut r = u32::from(by_rounds);
        // Whether the tournament is over when the loop ends (not only this
        // run's --round).
        let mut over = true;
        loop {
            let ms = match by_rounds {
                true => match self.next_round(r)? {
                    Some(ms) => ms,
                    None => break,
                },
                false => one_round.to_vec(),
            };
            known.extend(ms.iter().flat_map(|m| m.keys()));
            if cfg.round.is_some_and(|want| r < want) {
                self.check_complete(r, &ms)?;
                r += 1;
                continue;
            }
            if by_rounds {
                let (round, matchups, so_far) = (r, ms.as_slice(), &self.outcomes);
                self.reporter.report(&Event::RoundSeated {
                    round,
                    matchups,
                    so_far,
                });
            }
            let mine: Vec<&Matchup> = ms
                .iter()
                .filter(|m| cfg.shard.is_none_or(|s| s.holds(m)))
                .collect();
            if self.play_round(&mine, ms.len(), r).await? {
                let so_far = super::standings::compute(manifest, &self.outcomes);
                let partial = cfg.out.join(PARTIAL_STANDINGS);
                crate::safe_create::write_atomic(&partial, &so_far.json())?;
                return Ok(Ended::Interrupted(so_far));
            }
            if by_rounds {
                let description = bracket_round(&self.names(), &cfg.format, r, &ms, &self.outcomes);
                let (round, description) = (r, description.as_str());
                self.reporter
                    .report(&Event::RoundFinished { round, description });
            }
            if !by_rounds || cfg.round == Some(r) {
                over = !by_rounds || self.decided_after(r);
                break;
            }
            r += 1;
        }
        // A shard's end is not the tournament's: the others still deal.
        self.revealed = over && cfg.shard.is_none();
        self.journal.close();
        let (dir, outcomes) = (&cfg.out, &self.outcomes);
        complete(dir, manifest, &known, outcomes, self.revealed).map(Ended::Complete)
    }

    /// Whether a format played by rounds has no round after `r`.
    fn decided_after(&self, r: u32) -> bool {
        let cfg = self.cfg;
        let results: Vec<GameResult> = (self.outcomes.values())
            .filter(|o| o.round <= r)
            .map(|o| o.result())
            .collect();
        let (n, seed) = (cfg.entrants.len(), cfg.deal_seed());
        round(n, &cfg.format, cfg.sets, seed, r + 1, &results).is_none()
    }

    /// Round `r` of a format played by rounds, from the results before it;
    /// `None` when the tournament is decided (said, for a knockout).
    fn next_round(&self, r: u32) -> anyhow::Result<Option<Vec<Matchup>>> {
        let cfg = self.cfg;
        let before: Vec<GameResult> = (self.outcomes.values())
            .filter(|o| o.round < r)
            .map(|o| o.result())
            .collect();
        let n = cfg.entrants.len();
        if let Some(ms) = round(n, &cfg.format, cfg.sets, cfg.deal_seed(), r, &before) {
            return Ok(Some(ms));
        }
        if let Some(want) = cfg.round.filter(|&want| want >= r) {
            bail!(
                "failed to play round {want}: the tournament was over after round {}; \
                 to write its standings, run it without --round (with --resume in {})",
                r - 1,
                cfg.out.display()
            );
        }
        if let Some(line) = last_line(&self.names(), &cfg.format, r, &before) {
            self.reporter.report(&Event::Decided { line: &line });
        }
        Ok(None)
    }

    /// `--round R`: a round before R, taken from the journal, must be whole.
    fn check_complete(&self, r: u32, ms: &[Matchup]) -> anyhow::Result<()> {
        let want = self.cfg.round.unwrap_or(r);
        let missing = (ms.iter().flat_map(|m| m.keys())).find(|k| !self.outcomes.contains_key(k));
        if let Some(k) = missing {
            bail!(
                "failed to play round {want}: round {r} is not complete in {} (matchup {} game {} is missing); \
                 finish it first, or merge its shards and pass --from MERGED_DIR",
                self.cfg.out.display(),
                k.matchup,
                k.game
            );
        }
        Ok(())
    }

    /// Plays the games of `mine` (this run's share of round `r`, of `in_round`
    /// matchups) that the journal lacks. Returns whether the run was interrupted.
    async fn play_round(
        &mut self,
        mine: &[&Matchup],
        in_round: usize,
        r: u32,
    ) -> anyhow::Result<bool> {
        let (cfg, reporter) = (self.cfg, self.reporter);
        let wanted: Vec<GameKey> = mine.iter().flat_map(|m| m.keys()).collect();
        let jobs = self.table_jobs(mine);
        let done = wanted
            .iter()
            .filter(|k| self.outcomes.contains_key(k))
            .count() as u64;
        let plan = RoundPlan {
            round: r,
            entrants: cfg.entrants.len(),
            matchups: mine.len(),
            in_round,
            sets: cfg.sets,
            games: wanted.len() as u64,
            to_play: jobs.iter().map(|j| j.games.len() as u64).sum(),
            tables: cfg.jobs.min(jobs.len()).max(1),
            shard: cfg.shard,
            seed: cfg.seed,
            dir: cfg.out.clone(),
        };
        announce(cfg, &plan, &**reporter)?;
        reporter.report(&Event::TablesStarted {
            games: plan.games,
            done,
        });
        let stop = self.cancel.child_token();
        let (tx, rx) = mpsc::channel::<GameOutcome>(64);
        let (dir, tables) = (cfg.out.clone(), plan.tables);
        let pool = pool::run(dir, jobs, tables, stop.clone(), tx, reporter.clone());
        let pool = tokio::spawn(pool);
        let failure = self.journal_games(rx, &stop, done).await;
        let pooled = pool.await.context("failed to run the pool")?;
        reporter.report(&Event::TablesStopped);
        if let Some(e) = failure {
            return Err(e);
        }
        pooled?;
        if self.cancel.is_cancelled() {
            return Ok(true);
        }
        if let Some(missing) = wanted.iter().find(|k| !self.outcomes.contains_key(k)) {
            bail!(
                "failed to finish: round {} matchup {} game {} was not played",
                missing.round,
                missing.matchup,
                missing.game
            );
        }
        Ok(false)
    }

    /// Each matchup's games the journal lacks, and the table that plays them.
    fn table_jobs(&self, mine: &[&Matchup]) -> Vec<TableJob> {
        let cfg = self.cfg;
        mine.iter()
            .map(|m| {
                let mut spec = cfg.table.clone();
                spec.lineup =
                    std::array::from_fn(|slot| cfg.entrants[m.entrants[slot % 3]].bot.clone());
                TableJob {
                    matchup: (*m).clone(),
                    spec,
                    games: (m.keys())
                        .filter(|k| !self.outcomes.contains_key(k))
                        .map(|k| k.game)
                        .collect(),
                }
            })
            .filter(|j| !j.games.is_empty())
            .collect()
    }

    /// Journals each game the pool finishes, until the pool is done; `done`
    /// of the round's games were journaled before. A journal that cannot be
    /// written stops the run: its error is returned once the pool has stopped.
    async fn journal_games(
        &mut self,
        mut rx: mpsc::Receiver<GameOutcome>,
        stop: &CancellationToken,
        mut done: u64,
    ) -> Option<anyhow::Error> {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        tick.tick().await;
        let mut failure = None;
        loop {
            tokio::select! {
                o = rx.recv() => {
                    let Some(o) = o else { break };
                    // Recorded before it counts.
                    if let Err(e) = self.journal.record(&o) {
                        stop.cancel();
                        failure.get_or_insert(e);
                        continue;
                    }
                    done += 1;
                    self.journaled(o, done);
                }
                _ = tick.tick() => self.reporter.report(&Event::Tick),
            }
        }
        failure
    }

    fn journaled(&mut self, o: GameOutcome, done: u64) {
        let (key, transcript) = (o.key(), self.cfg.out.join(&o.transcript));
        self.outcomes.insert(key, o);
        self.reporter.report(&Event::GameJournaled {
            key,
            outcome: &self.outcomes[&key],
            transcript: &transcript,
            done,
            so_far: &self.outcomes,
        });
    }
}

/// Tells what the round plays, checks that its tables have the files they
/// need, and warns of what may cost a bot its games.
fn announce(
    cfg: &TournamentConfig,
    plan: &RoundPlan,
    reporter: &dyn Reporter,
) -> anyhow::Result<()> {
    reporter.report(&Event::RoundStarting(plan));
    check_open_files(plan.tables as u64, cfg.remote.as_ref())?;
    warn_oversubscribed(plan.tables, reporter);
    if let Some(hint) = cfg.format.pairing().hint(cfg.entrants.len(), plan.in_round) {
        reporter.report(&Event::Hint(&hint));
    }
    Ok(())
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
    let sides = super::difference::Sides {
        ours: "in this run",
        theirs: &format!("in {}", from.display()),
    };
    if let Some(diff) = a.difference(&b, &sides) {
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

/// Raises the soft open-file limit if the tables need it, or says how many
/// tables fit. `remote`: the run's remote seats, whose hub holds a reserve
/// of its own ([`crate::remote::descriptors::reserve`]); a remote seat's
/// connections take the place of a local bot's pipes in a table's files.
pub(crate) fn check_open_files(
    tables: u64,
    remote: Option<&crate::remote::RemoteSpec>,
) -> anyhow::Result<()> {
    let hub = remote.map_or(0, crate::remote::descriptors::reserve);
    let need = 64 + hub + tables * FILES_PER_TABLE;
    let Some((soft, hard)) = crate::os::sys::open_files() else {
        return Ok(());
    };
    if need <= soft {
        return Ok(());
    }
    if need <= hard && crate::os::sys::set_open_files(need, hard) {
        return Ok(());
    }
    bail!(
        "failed to start: {tables} tables need about {need} open files, but the limit is {soft} (hard limit {hard}); \
         use --jobs {} or raise `ulimit -n`",
        (hard.saturating_sub(64 + hub) / FILES_PER_TABLE).max(1)
    )
}

/// One seat of a table thinks at a time, so a table keeps about one core busy
/// with bots that use their time; more tables than cores make bots share
/// cores, and a bot near its time limit may then lose on time.
pub(crate) fn warn_oversubscribed(tables: usize, reporter: &dyn Reporter) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if tables > cores {
        reporter.report(&Event::Oversubscribed { tables, cores });
    }
}
