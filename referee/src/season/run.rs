//! `referee season run DIR`: the coordinator. It keeps up to `--jobs` sets
//! under way, each a duplicate set (six games, one deal) played by the
//! tournament's pool (`tournament/pool.rs`) on a table of its own, so a slow
//! set holds up no other: a free table takes the next set at once. Between
//! events it reads the database for versions submitted meanwhile.
//!
//! The database is the record. A set is planned (written) before its first
//! game; each finished game is written with the outcome read from its
//! transcript, and the game that completes a set writes the set's end and
//! the refitted ratings in the same transaction (`db.rs`). Killed at any
//! moment, a run leaves sets planned and games recorded; the next run plays
//! the planned sets' missing games first — the same games, dealt from the
//! set's recorded seed, so their transcripts are the same bytes — and only
//! then plans new ones.
//!
//! Stops at `--sets N` finished sets in all, or on Ctrl-C / SIGTERM (the games
//! under way are abandoned and played again by the next run).
//!
//! With `--workers`, a set is also leased to a worker that asks for one
//! (`run/workers.rs`, `lease.rs`): the coordinator answers the workers'
//! requests in the same loop, and a set under a live lease is played by no
//! table here; a lease run out puts its set back in the queue.
//!
//! A remote version (`remote.rs`) is planned only while its connector is
//! connected to the run's listener; a planned set of one whose connector is
//! not (a resumed run's) waits up to `--remote-wait` from the run's start
//! while other sets are played, then is played as its seats come
//! (docs/organisers.md, "Remote versions"). Its seats are served by this
//! process, so a set with a remote version is never leased to a worker.

/// The workers' requests, answered by the coordinator.
mod workers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::db::{self, Db, SetRow, Version};
use super::matchmaking;
use super::remote;
use super::settings::{bot, Settings};
use crate::config::TableSpec;
use crate::tournament::events::{Event, Reporter};
use crate::tournament::outcome::GameOutcome;
use crate::tournament::pool::{self, TableJob};
use crate::tournament::schedule::{Matchup, SET};

/// How often a run waiting for a table or a submission reads the database.
const POLL: Duration = Duration::from_millis(250);

/// What `season run` is asked to do.
pub struct RunOptions {
    /// Sets played at once.
    pub jobs: usize,
    /// Stop once the season has this many finished sets.
    pub sets: Option<u64>,
    pub quiet: bool,
    /// Sets may be leased to workers, each lease lasting this long (in
    /// milliseconds) from its last heartbeat; `None`: no workers.
    pub lease_ms: Option<u64>,
    /// The listener of the remote versions' seats (`--listen`).
    pub hub: Option<Arc<crate::remote::Hub>>,
    /// How long a planned set waits for a remote version's connector.
    pub remote_wait: Duration,
}

/// How a run ended.
pub struct Ended {
    /// Sets that finished during this run.
    pub finished: u64,
    /// Finished sets in the season.
    pub total: u64,
    /// Stopped by a signal.
    pub interrupted: bool,
}

/// Plays the season in `dir` until `opts` says stop.
pub async fn run(
    dir: &Path,
    opts: &RunOptions,
    cancel: &CancellationToken,
) -> anyhow::Result<Ended> {
    run_with(dir, opts, cancel, None).await
}

/// [`run`], answering the workers' requests from `inbox` (with
/// `opts.lease_ms`).
pub async fn run_with(
    dir: &Path,
    opts: &RunOptions,
    cancel: &CancellationToken,
    inbox: Option<super::lease::Inbox>,
) -> anyhow::Result<Ended> {
    let db = Db::open(&dir.join(crate::layout::season::DB))?;
    db.ensure_worker_tables()?;
    if inbox.is_none() {
        // No worker can hand a set back to this run: every set is its own.
        db.drop_all_leases()?;
    }
    if db.get("closed")?.is_some() {
        anyhow::bail!(
            "the season in {} is closed; nothing more is played",
            dir.display()
        );
    }
    db.refuse_frozen("play the season's sets")?;
    let settings = Settings::read(&db)?;
    let secret = crate::tournament::seed_secret::stored(dir)?.with_context(|| {
        format!(
            "{} has no seed-secret: not a season folder, or it was removed",
            dir.display()
        )
    })?;
    crate::outdir::check_free_space(dir)?;
    let games = crate::layout::tournament::games(dir);
    std::fs::create_dir_all(&games)
        .with_context(|| format!("failed to create {}", games.display()))?;
    let (tx, rx) = mpsc::channel::<GameOutcome>(64);
    let stop = cancel.child_token();
    let mut c = Coordinator {
        dir: dir.to_path_buf(),
        deal_seed: secret.mix(settings.seed),
        settings,
        db,
        opts,
        versions: Vec::new(),
        spec: None,
        tables: JoinSet::new(),
        under_way: BTreeSet::new(),
        tx,
        stop,
        reporter: Arc::new(SeasonConsole),
        starting: Arc::new(tokio::sync::Semaphore::new(pool::STARTING)),
        finished: 0,
        waiting_said: false,
        began: tokio::time::Instant::now(),
        present: BTreeSet::new(),
        served: BTreeSet::new(),
        held_said: BTreeSet::new(),
        unshippable: BTreeSet::new(),
    };
    let result = c.play(rx, inbox, cancel).await;
    c.stop.cancel();
    while c.tables.join_next().await.is_some() {}
    result?;
    Ok(Ended {
        finished: c.finished,
        total: c.total_finished()?,
        interrupted: cancel.is_cancelled(),
    })
}

struct Coordinator<'a> {
    dir: PathBuf,
    deal_seed: u64,
    settings: Settings,
    db: Db,
    opts: &'a RunOptions,
    /// Every version, as last read.
    versions: Vec<Version>,
    /// The tables' settings for `versions`.
    spec: Option<TableSpec>,
    /// Each set under way: its id and how its pool ended.
    tables: JoinSet<(i64, anyhow::Result<()>)>,
    under_way: BTreeSet<i64>,
    tx: mpsc::Sender<GameOutcome>,
    stop: CancellationToken,
    reporter: Arc<dyn Reporter>,
    /// At most [`pool::STARTING`] sets start their bots at once, as in a
    /// tournament.
    starting: Arc<tokio::sync::Semaphore>,
    finished: u64,
    waiting_said: bool,
    /// When the run started (a planned set's wait for a remote version's
    /// connector counts from then).
    began: tokio::time::Instant,
    /// The remote names whose connector was connected, as last seen.
    present: BTreeSet<String>,
    /// The remote names the listener serves.
    served: BTreeSet<String>,
    /// The sets said to wait for a connector.
    held_said: BTreeSet<i64>,
    /// The versions whose folder could not be packed for a worker
    /// (`run/workers.rs`): planned for this run's own tables only.
    unshippable: BTreeSet<i64>,
}

impl Coordinator<'_> {
    async fn play(
        &mut self,
        mut rx: mpsc::Receiver<GameOutcome>,
        mut inbox: Option<super::lease::Inbox>,
        cancel: &CancellationToken,
    ) -> anyhow::Result<()> {
        let mut poll = tokio::time::interval(POLL);
        loop {
            if !cancel.is_cancelled() {
                self.refresh().await?;
                self.reap()?;
                self.roll_call();
                self.fill()?;
            }
            let idle = self.under_way.is_empty() && self.db.leases()?.is_empty();
            if idle && self.target_reached()? {
                if let Some(inbox) = inbox.as_mut() {
                    self.linger(inbox, cancel).await?;
                }
                return Ok(());
            }
            if self.under_way.is_empty() && cancel.is_cancelled() {
                return Ok(());
            }
            tokio::select! {
                Some(o) = rx.recv() => self.record(o)?,
                Some(r) = async { inbox.as_mut()?.recv().await }, if inbox.is_some() => {
                    self.answer(r).await?;
                }
                Some(joined) = self.tables.join_next(), if !self.tables.is_empty() => {
                    // Its games were sent before its pool returned.
                    while let Ok(o) = rx.try_recv() {
                        self.record(o)?;
                    }
                    self.ended(joined)?;
                }
                _ = poll.tick() => {}
                _ = cancel.cancelled(), if !cancel.is_cancelled() => {}
            }
        }
    }

    fn total_finished(&self) -> anyhow::Result<u64> {
        Ok(self.db.sets()?.iter().filter(|s| s.finished).count() as u64)
    }

    fn target_reached(&self) -> anyhow::Result<bool> {
        Ok(match self.opts.sets {
            Some(n) => self.total_finished()? >= n,
            None => false,
        })
    }

    /// Reads the versions again; if any was submitted, the tables' settings
    /// are built anew (a sandbox must see the new version's folder).
    async fn refresh(&mut self) -> anyhow::Result<()> {
        let versions = self.db.versions()?;
        if self.spec.is_some() && versions == self.versions {
            return Ok(());
        }
        for v in versions
            .iter()
            .skip(self.versions.len())
            .filter(|v| v.admitted)
        {
            if !self.opts.quiet && self.spec.is_some() {
                eprintln!(
                    "referee: season: {} v{} joins ({})",
                    v.name, v.number, v.checked
                );
            }
        }
        let admitted: Vec<Version> = versions.iter().filter(|v| v.admitted).cloned().collect();
        self.serve(&admitted)?;
        if self.opts.lease_ms.is_some() {
            self.pack_for_workers(&admitted);
        }
        let mut spec = self.settings.table(&self.dir, &admitted)?;
        spec.isolation.remote.clone_from(&self.opts.hub);
        crate::session::view_held(&spec).await?;
        self.spec = Some(spec);
        self.versions = versions;
        self.waiting_said = false;
        Ok(())
    }

    /// Serves each remote name of `admitted` that the listener does not
    /// serve yet (one submitted while the run runs); without a listener,
    /// says once that it cannot play.
    fn serve(&mut self, admitted: &[Version]) -> anyhow::Result<()> {
        for name in admitted.iter().filter_map(remote::name) {
            if !self.served.insert(name.to_owned()) {
                continue;
            }
            match &self.opts.hub {
                Some(hub) => remote::register(hub, &self.dir, name)?,
                None if !self.opts.quiet => eprintln!(
                    "referee: season: remote:{name} is a remote seat and this run has no \
                     --listen: it is not planned, and a set of it planned before waits up to \
                     {} (--remote-wait), then is played with its seats failing to start",
                    crate::remote::args::show_wait(self.opts.remote_wait)
                ),
                None => {}
            }
        }
        Ok(())
    }

    /// Notes which remote versions' connectors came or left since last
    /// time, and says so.
    fn roll_call(&mut self) {
        let hub = self.opts.hub.as_deref();
        let now: BTreeSet<String> = (self.served.iter())
            .filter(|n| hub.is_some_and(|h| h.connected(n)))
            .cloned()
            .collect();
        if !self.opts.quiet {
            for n in now.difference(&self.present) {
                eprintln!("referee: season: remote:{n} connected; it is planned from now on");
            }
            for n in self.present.difference(&now) {
                eprintln!(
                    "referee: season: remote:{n} left; it is not planned until it connects again"
                );
            }
        }
        if now != self.present {
            self.waiting_said = false;
        }
        self.present = now;
    }

    /// Whether set `set` may start now: each of its remote versions'
    /// connectors is connected, or the run has waited `--remote-wait`.
    fn ready(&mut self, set: &SetRow) -> bool {
        let waited = self.began.elapsed() >= self.opts.remote_wait;
        let away: Vec<&str> = (set.versions.iter())
            .filter_map(|id| self.versions.iter().find(|v| v.id == *id))
            .filter_map(remote::name)
            .filter(|n| !self.present.contains(*n))
            .collect();
        if away.is_empty() || waited {
            return true;
        }
        if !self.opts.quiet && self.held_said.insert(set.id) {
            eprintln!(
                "referee: season: set {} waits for remote:{} to connect (up to {} from the \
                 run's start, --remote-wait; then it is played, its seats failing to start)",
                set.id,
                away.join(", remote:"),
                crate::remote::args::show_wait(self.opts.remote_wait)
            );
        }
        false
    }

    /// Starts sets on the free tables: planned ones first (a resumed
    /// season's, each once its remote versions are there), then new ones,
    /// while the target allows.
    fn fill(&mut self) -> anyhow::Result<()> {
        while self.under_way.len() < self.opts.jobs {
            let sets = self.db.sets()?;
            let leased = self.leased()?;
            let waiting: Vec<&SetRow> = (sets.iter())
                .filter(|s| {
                    !s.finished && !self.under_way.contains(&s.id) && !leased.contains(&s.id)
                })
                .collect();
            let open = waiting.into_iter().find(|s| self.ready(s));
            let set = match open {
                Some(s) => s.clone(),
                None => {
                    let unfinished = sets.iter().filter(|s| !s.finished).count() as u64;
                    let done = sets.len() as u64 - unfinished;
                    if self.opts.sets.is_some_and(|n| done + unfinished >= n) {
                        return Ok(());
                    }
                    let Some(set) = self.plan(&sets, false)? else {
                        return Ok(());
                    };
                    set
                }
            };
            self.start(&set)?;
        }
        Ok(())
    }

    /// Plans the next set by the matchmaking policy; `None` if none can be.
    /// For a worker, without remote versions: their seats are served here.
    fn plan(&mut self, sets: &[SetRow], for_worker: bool) -> anyhow::Result<Option<SetRow>> {
        let mut current: BTreeMap<i64, &Version> = BTreeMap::new();
        for v in self.versions.iter().filter(|v| v.admitted) {
            current.insert(v.entrant, v);
        }
        // A remote version whose connector is away is not planned (its
        // entrant's older versions are not either: they are retired).
        let active: Vec<i64> = (current.into_values())
            .filter(|v| match remote::name(v) {
                None => !(for_worker && self.unshippable.contains(&v.id)),
                Some(n) => !for_worker && self.present.contains(n),
            })
            .map(|v| v.id)
            .collect();
        let ratings: BTreeMap<i64, f64> = (self.db.latest_ratings()?.into_iter())
            .map(|r| (r.version, r.rating))
            .collect();
        let planned: Vec<(i64, [i64; 3])> = sets.iter().map(|s| (s.id, s.versions)).collect();
        let (candidates, met) = matchmaking::candidates(&active, &planned, &ratings);
        let Some(versions) = matchmaking::next(&candidates, &met, self.settings.policy) else {
            if !self.waiting_said && !self.opts.quiet && self.under_way.is_empty() {
                eprintln!(
                    "referee: season: nothing to play ({} active entrant(s) there; a set needs \
                     three, and no pair may pass the cap of {} sets); waiting for a submission \
                     or a remote version's connector",
                    active.len(),
                    self.settings.policy.pair_cap
                );
                self.waiting_said = true;
            }
            return Ok(None);
        };
        let deal = self.deal_seed;
        let seed = |id: i64| schmier_protocol::shuffle::derive_seed(deal, id as u64);
        let id = self.db.plan_set(versions, seed)?;
        Ok(Some(SetRow {
            id,
            versions,
            seed: seed(id),
            finished: false,
        }))
    }

    /// Hands set `set`'s games not yet recorded to a table of its own.
    fn start(&mut self, set: &SetRow) -> anyhow::Result<()> {
        let recorded = self.db.recorded(set.id)?;
        let games: Vec<u32> = (1..=SET).filter(|g| !recorded.contains(g)).collect();
        let spec = self.spec.as_ref().expect("refresh builds the spec first");
        let job = table_job(set, spec, &self.versions, games)?;
        let (dir, tx, stop, reporter, starting) = (
            self.dir.clone(),
            self.tx.clone(),
            self.stop.clone(),
            self.reporter.clone(),
            self.starting.clone(),
        );
        let id = set.id;
        self.tables.spawn(async move {
            (
                id,
                pool::run_throttled(dir, vec![job], 1, stop, tx, reporter, starting).await,
            )
        });
        self.under_way.insert(id);
        Ok(())
    }

    /// Writes a finished game (and, if it completes its set, the ratings).
    fn record(&mut self, o: GameOutcome) -> anyhow::Result<()> {
        let set = i64::from(o.matchup);
        let complete = self.db.record_game(set, &o, |tx| {
            let games = db::finished_games(tx)?;
            let before = db::latest_ratings_in(tx)?;
            Ok(super::ratings::refit(
                db::finished_sets(tx)?,
                &games,
                &before,
            ))
        })?;
        if complete {
            self.finished += 1;
            if !self.opts.quiet {
                eprintln!("referee: season: {}", self.set_line(set)?);
            }
        }
        Ok(())
    }

    /// "set 7 finished (alice v1, bob v2, carol v1): 6 games", with the
    /// season's count.
    fn set_line(&self, set: i64) -> anyhow::Result<String> {
        let sets = self.db.sets()?;
        let row = sets
            .iter()
            .find(|s| s.id == set)
            .context("a recorded set")?;
        let names: Vec<String> = (row.versions.iter())
            .map(|id| match self.versions.iter().find(|v| v.id == *id) {
                Some(v) => format!("{} v{}", v.name, v.number),
                None => format!("version {id}"),
            })
            .collect();
        let done = sets.iter().filter(|s| s.finished).count();
        Ok(format!(
            "set {set} finished ({}); {done} set(s) finished in all",
            crate::names::printable(&names.join(", "))
        ))
    }

    /// A set's table is done: complete, stopped, or failed.
    fn ended(
        &mut self,
        joined: Result<(i64, anyhow::Result<()>), tokio::task::JoinError>,
    ) -> anyhow::Result<()> {
        let (id, result) =
            joined.map_err(|e| anyhow::anyhow!("failed to run a set's table: {e}"))?;
        self.under_way.remove(&id);
        result.with_context(|| format!("failed to play set {id}"))?;
        let finished = self.db.sets()?.iter().any(|s| s.id == id && s.finished);
        if !finished && !self.stop.is_cancelled() {
            // A game lost (its transcript could not be written: a full
            // disk): stop rather than plan around a hole.
            anyhow::bail!("set {id} is missing a game (see above); the next `season run` plays it");
        }
        Ok(())
    }
}

/// The table that plays `games` of set `set`, its seats given `versions`
/// (the set's among them) on the tables' settings `spec`: a local table's
/// and a worker's alike (`worker/`), so both write the same transcripts.
pub(super) fn table_job(
    set: &SetRow,
    spec: &TableSpec,
    versions: &[Version],
    games: Vec<u32>,
) -> anyhow::Result<TableJob> {
    let matchup = Matchup {
        index: u32::try_from(set.id).context("set id out of range")?,
        round: 0,
        entrants: set.versions.map(|v| v as usize),
        sets: 1,
        seed: set.seed,
    };
    let mut spec = spec.clone();
    for (slot, seat) in spec.lineup.iter_mut().enumerate() {
        let id = set.versions[slot % 3];
        let v = (versions.iter().find(|v| v.id == id)).with_context(|| {
            format!(
                "set {} names version {id}, which is not in the season",
                set.id
            )
        })?;
        *seat = bot(v)?;
    }
    if !pool::fresh_per_game(&spec) {
        // Kept processes share a scratch folder per table: one per set.
        if let Some(base) = &spec.isolation.scratch {
            spec.isolation.scratch = Some(base.join(format!("set-{:06}", set.id)));
        }
    }
    Ok(TableJob {
        matchup,
        spec,
        games,
    })
}

/// What the tables report, on stderr: a bot that failed, a game lost.
pub(super) struct SeasonConsole;

impl Reporter for SeasonConsole {
    fn report(&self, event: &Event<'_>) {
        match event {
            Event::Table(e) => {
                if let Some(line) = crate::report::table_line(e) {
                    eprintln!("{line}");
                }
            }
            Event::GameLost { key, error } => eprintln!(
                "referee: season: set {} game {} lost: {}; it is not recorded (the next run plays it)",
                key.matchup,
                key.game,
                crate::names::printable_lines(&error.to_string())
            ),
            _ => {}
        }
    }
}
