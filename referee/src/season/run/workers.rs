//! The coordinator's answers to workers (`lease.rs` says what they ask):
//! a set leased, a lease extended or given back, a transcript judged and
//! counted, a blob's reader checked. Each answer is one step of the
//! coordinator's loop, so the leases, the games and the ratings have one
//! writer, as the local tables' games do.

use std::collections::BTreeSet;

use serde_json::json;

use super::super::blob;
use super::super::db::lease::{now_ms, LeaseRow};
use super::super::db::{SetRow, Version};
use super::super::lease::{Answer, Ask, Asked, Granted, Offer, Request, Shipped, STDERR_TAIL};
use super::Coordinator;
use crate::tournament::schedule::SET;

/// How long a run that reached its `--sets` still answers its workers, so
/// that each one asking (at least every two seconds when idle) hears that
/// the run is done and stops, rather than finding the server gone.
const LINGER: std::time::Duration = std::time::Duration::from_secs(6);

impl Coordinator<'_> {
    /// Answers the workers for [`LINGER`] more (each is told `done`), or
    /// until Ctrl-C.
    pub(super) async fn linger(
        &mut self,
        inbox: &mut super::super::lease::Inbox,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> anyhow::Result<()> {
        let until = tokio::time::Instant::now() + LINGER;
        loop {
            tokio::select! {
                Some(r) = inbox.recv() => self.answer(r).await?,
                _ = tokio::time::sleep_until(until) => return Ok(()),
                _ = cancel.cancelled() => return Ok(()),
            }
        }
    }

    /// Answers one worker's request (a reply nobody waits for any more is
    /// dropped).
    pub(super) async fn answer(&mut self, r: Request) -> anyhow::Result<()> {
        self.reap()?;
        let stored = super::super::tokens::stored_form(r.token.trim());
        let answer = match self.db.worker_with(&stored)? {
            None => Answer::refused(401, "not a worker token of this season"),
            Some(worker) => self.asked(&worker, r.asked).await?,
        };
        let _ = r.reply.send(answer);
        Ok(())
    }

    async fn asked(&mut self, worker: &str, asked: Asked) -> anyhow::Result<Answer> {
        Ok(match asked {
            Asked::Lease(ask) => self.lease(worker, &ask).await?,
            Asked::Heartbeat { set, lease } => match self.holds(worker, set, &lease)? {
                Err(why) => Answer::refused(409, why),
                Ok(()) => {
                    self.db
                        .extend_lease(set, &lease, now_ms() + self.lease_ms())?;
                    Answer::ok(json!({ "lease_ms": self.lease_ms() }))
                }
            },
            Asked::Result {
                set,
                game,
                lease,
                transcript,
            } => self.result(worker, set, game, &lease, &transcript)?,
            Asked::Release { set, lease } => match self.holds(worker, set, &lease)? {
                Err(why) => Answer::refused(409, why),
                Ok(()) => {
                    self.db.drop_lease(set)?;
                    self.say(&format!(
                        "worker {} gave set {set} back; it goes back to the queue",
                        crate::names::printable(worker)
                    ));
                    Answer::ok(json!({ "released": set }))
                }
            },
            Asked::Stderr {
                set,
                lease,
                folder,
                file,
                bytes,
            } => match self.holds(worker, set, &lease)? {
                Err(why) => Answer::refused(409, why),
                Ok(()) => self.stderr(set, &folder, &file, &bytes),
            },
            Asked::Blob { hash } => {
                let path = crate::layout::season::blob(&self.dir, &hash);
                match blob::is_hash(&hash) && self.db.has_blob(&hash)? && path.is_file() {
                    true => Answer {
                        status: 200,
                        json: json!({}),
                        file: Some(path),
                    },
                    false => Answer::refused(404, format!("the season has no blob {hash:?}")),
                }
            }
        })
    }

    /// Keeps the end of a bot's stderr log from a worker as
    /// `DIR/stderr/FOLDER/FILE`, where a table of the server would have
    /// written it; the names are checked to be ones such a table writes
    /// for set `set`, so nothing is written anywhere else.
    fn stderr(&self, set: i64, folder: &str, file: &str, bytes: &[u8]) -> Answer {
        if !stderr_folder_of(set, folder) || !stderr_file(file) {
            return Answer::refused(
                400,
                format!(
                    "{:?}/{:?} is not a bot's log of set {set} (rNN-mSSSS-gGGG/playerN.log)",
                    crate::names::printable(folder),
                    crate::names::printable(file)
                ),
            );
        }
        let bytes = &bytes[bytes.len().saturating_sub(STDERR_TAIL)..];
        let dir = self
            .dir
            .join(crate::layout::tournament::STDERR)
            .join(folder);
        let written = std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                crate::safe_create::write_atomic(&dir.join(file), bytes).map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => Answer::ok(json!({ "kept": bytes.len() })),
            Err(e) => {
                eprintln!("referee: season: cannot keep a worker's log {folder}/{file}: {e}");
                Answer::refused(
                    500,
                    "the log could not be kept (the server's console says why)",
                )
            }
        }
    }

    pub(super) fn lease_ms(&self) -> i64 {
        self.opts.lease_ms.unwrap_or(super::super::lease::LEASE_MS) as i64
    }

    /// The sets under a lease.
    pub(super) fn leased(&self) -> anyhow::Result<BTreeSet<i64>> {
        Ok(self.db.leases()?.into_iter().map(|l| l.set).collect())
    }

    /// Ends the leases that ran out: their sets go back to the queue.
    pub(super) fn reap(&mut self) -> anyhow::Result<()> {
        let now = now_ms();
        for l in self.db.leases()? {
            if l.expires < now {
                self.db.drop_lease(l.set)?;
                self.say(&format!(
                    "set {}'s lease (worker {}) ran out; the set goes back to the queue",
                    l.set,
                    crate::names::printable(&l.worker)
                ));
            }
        }
        Ok(())
    }

    fn say(&self, what: &str) {
        if !self.opts.quiet {
            eprintln!("referee: season: {what}");
        }
    }

    /// Whether `worker` holds lease `lease` of set `set`, live; why not.
    fn holds(&self, worker: &str, set: i64, lease: &str) -> anyhow::Result<Result<(), String>> {
        let current = self.db.leases()?.into_iter().find(|l| l.set == set);
        Ok(match current {
            Some(l) if l.worker == worker && l.lease == lease && l.expires >= now_ms() => Ok(()),
            Some(l) if l.worker == worker && l.lease == lease => Err(format!(
                "your lease of set {set} ran out; the set went back to the queue"
            )),
            _ => Err(format!(
                "you hold no lease {lease:?} of set {set} (it ran out and the set went back to \
                 the queue, or it is finished); drop the set"
            )),
        })
    }

    /// A set for `worker`, leased, or why there is none.
    async fn lease(&mut self, worker: &str, ask: &Ask) -> anyhow::Result<Answer> {
        if ask.referee != crate::REFEREE {
            return Ok(Answer::refused(
                400,
                format!(
                    "this season's server runs {}; a worker must run the same referee \
                     (transcripts record it), not {}",
                    crate::REFEREE,
                    ask.referee
                ),
            ));
        }
        if self.settings.sandboxed() && !ask.sandbox {
            return Ok(Answer::refused(
                400,
                "this season's bots run in the sandbox, and this worker's sandbox self-check \
                 failed: it plays none of its sets",
            ));
        }
        let held = (self.db.leases()?.iter())
            .filter(|l| l.worker == worker && l.instance == ask.instance)
            .count();
        if held >= ask.tables.max(1) {
            return Ok(Answer::refused(
                429,
                format!("this worker process holds {held} lease(s), the tables it declared"),
            ));
        }
        self.refresh().await?;
        // Each set that cannot be shipped marks a version unshippable, so
        // this ends: the next set is one without it.
        loop {
            let Some(set) = self.next_for_worker()? else {
                // Done once the target is reached, not merely planned: a
                // lease that runs out later puts its set back, to be played.
                let done = self.target_reached()?;
                return Ok(Answer::ok(serde_json::to_value(Offer {
                    granted: None,
                    done,
                })?));
            };
            match self.shipped(&set)? {
                Some(shipped) => return self.grant(worker, &ask.instance, &set, shipped),
                None => continue,
            }
        }
    }

    /// The first open set no table here plays and no one leases, else a
    /// new one, as `fill` chooses them.
    fn next_for_worker(&mut self) -> anyhow::Result<Option<SetRow>> {
        let sets = self.db.sets()?;
        let leased = self.leased()?;
        let remote_seat = |id: i64| {
            let v = self.versions.iter().find(|v| v.id == id);
            v.is_some_and(|v| super::remote::name(v).is_some())
        };
        let open = sets.iter().find(|s| {
            !s.finished
                && !self.under_way.contains(&s.id)
                && !leased.contains(&s.id)
                && !s
                    .versions
                    .iter()
                    .any(|&v| remote_seat(v) || self.unshippable.contains(&v))
        });
        if let Some(s) = open {
            return Ok(Some(s.clone()));
        }
        // A set no table of this run can play (a version in it cannot be
        // shipped) does not count toward --sets: it waits for a run with
        // tables of its own, and this one plans others.
        let stuck = match self.opts.jobs {
            0 => (sets.iter())
                .filter(|s| !s.finished && s.versions.iter().any(|v| self.unshippable.contains(v)))
                .count(),
            _ => 0,
        };
        if (self.opts.sets).is_some_and(|n| (sets.len() - stuck) as u64 >= n) {
            return Ok(None);
        }
        self.plan(&sets, true)
    }

    /// Set `set`'s versions as a worker gets them, each packed by hash;
    /// `None` if one cannot be shipped (it is then marked, and said once).
    fn shipped(&mut self, set: &SetRow) -> anyhow::Result<Option<Vec<Shipped>>> {
        let mut shipped = Vec::new();
        for id in set.versions {
            let v = (self.versions.iter().find(|v| v.id == id)).cloned();
            let Some(v) = v else {
                anyhow::bail!("set {} names version {id}, not in the season", set.id);
            };
            let hash = match blob::of_version(&self.dir, &self.db, &v) {
                Ok(h) => h,
                Err(e) => {
                    self.mark_unshippable(&v, &e);
                    return Ok(None);
                }
            };
            shipped.push(Shipped {
                id: v.id,
                name: v.name.clone(),
                number: v.number,
                command: v.command.clone(),
                blob: hash,
            });
        }
        Ok(Some(shipped))
    }

    /// Packs each of `admitted` not packed yet, so that a version no worker
    /// can have is known before a set of it is planned for one.
    pub(super) fn pack_for_workers(&mut self, admitted: &[Version]) {
        for v in admitted {
            if self.unshippable.contains(&v.id) || super::remote::name(v).is_some() {
                continue;
            }
            if let Err(e) = blob::of_version(&self.dir, &self.db, v) {
                self.mark_unshippable(v, &e);
            }
        }
    }

    /// Marks version `v` as one no worker can play, and says why and what
    /// to do, once: without tables of its own, this run never plays it.
    fn mark_unshippable(&mut self, v: &Version, e: &anyhow::Error) {
        self.unshippable.insert(v.id);
        let tables = match self.opts.jobs {
            0 => "this run has no tables of its own (--jobs 0), so it is not planned and its \
                  sets already planned wait"
                .to_owned(),
            n => format!("only this run's own {n} table(s) play its sets"),
        };
        // Always said, --quiet or not: without it a run of workers alone
        // would wait with no word of why.
        eprintln!(
            "referee: season: {e:#}. No worker can play {} v{}: a worker gets a version's \
             folder (its --bot-dir, or the folder it was submitted from) packed, and a \
             folder with a link or a special file, or over the uploads' caps, cannot be. \
             Until the run is restarted, {tables}; submit it again with --bot-dir naming a \
             folder that holds only its files",
            crate::names::printable(&v.name),
            v.number
        );
    }

    /// Leases `set` to `worker`, its versions `shipped` by hash.
    fn grant(
        &mut self,
        worker: &str,
        instance: &str,
        set: &SetRow,
        shipped: Vec<Shipped>,
    ) -> anyhow::Result<Answer> {
        let recorded = self.db.recorded(set.id)?;
        let lease = LeaseRow {
            set: set.id,
            worker: worker.to_owned(),
            instance: instance.to_owned(),
            lease: super::super::tokens::issue()?.clear,
            expires: now_ms() + self.lease_ms(),
        };
        self.db.grant_lease(&lease)?;
        self.say(&format!(
            "set {} leased to worker {}",
            set.id,
            crate::names::printable(worker)
        ));
        let granted = Granted {
            set: set.id,
            lease: lease.lease,
            lease_ms: self.lease_ms() as u64,
            seed: set.seed,
            versions: shipped.try_into().expect("three versions"),
            games: (1..=SET).filter(|g| !recorded.contains(g)).collect(),
            settings: self.settings.clone(),
        };
        Ok(Answer::ok(serde_json::to_value(Offer {
            granted: Some(granted),
            done: false,
        })?))
    }

    /// A game handed back: counted if the lease is the worker's and the
    /// transcript checks out; refused, saying why, otherwise.
    fn result(
        &mut self,
        worker: &str,
        set: i64,
        game: u32,
        lease: &str,
        bytes: &[u8],
    ) -> anyhow::Result<Answer> {
        if let Err(why) = self.holds(worker, set, lease)? {
            self.say(&format!(
                "set {set} game {game} from worker {} refused: {why}",
                crate::names::printable(worker)
            ));
            return Ok(Answer::refused(409, why));
        }
        let row = (self.db.sets()?.into_iter().find(|s| s.id == set))
            .ok_or_else(|| anyhow::anyhow!("a leased set {set} is not in the season"))?;
        let name = crate::tournament::pool::transcript_name(crate::tournament::schedule::GameKey {
            round: 0,
            matchup: u32::try_from(set)?,
            game,
        });
        if self.db.recorded(set)?.contains(&game)
            && std::fs::read(self.dir.join(&name)).is_ok_and(|b| b == bytes)
        {
            // The same bytes again (its first answer was lost on the way).
            return Ok(Answer::ok(json!({ "counted": game, "again": true })));
        }
        if !(1..=SET).contains(&game) || self.db.recorded(set)?.contains(&game) {
            return Ok(Answer::refused(
                400,
                format!("set {set} has no game {game} to play (1 to {SET}, not yet counted)"),
            ));
        }
        let incoming = crate::layout::season::incoming(&self.dir);
        let judged = super::super::lease::judge(
            &incoming,
            bytes,
            &row,
            game,
            &self.versions,
            &self.settings,
        )?;
        let outcome = match judged {
            Ok(o) => o,
            Err(why) => {
                self.db.drop_lease(set)?;
                self.say(&format!(
                    "set {set} game {game} from worker {} refused: {why}; the set goes back to \
                     the queue",
                    crate::names::printable(worker)
                ));
                return Ok(Answer::refused(
                    422,
                    format!("set {set} game {game} refused: {why}; drop the set"),
                ));
            }
        };
        let path = self.dir.join(&outcome.transcript);
        crate::safe_create::write_atomic(&path, bytes)
            .map_err(|e| anyhow::anyhow!("failed to write {}: {e}", path.display()))?;
        self.record(outcome)?;
        let finished = self.db.recorded(set)?.len() == SET as usize;
        if finished {
            self.db.drop_lease(set)?;
        }
        Ok(Answer::ok(
            json!({ "counted": game, "set_finished": finished }),
        ))
    }
}

/// Whether `folder` names a table's log folder of set `set`, as a table
/// names it: `r00-mSSSS-gGGG`, or `r00-mSSSS-from-gGGG` (a resumed one).
fn stderr_folder_of(set: i64, folder: &str) -> bool {
    let Some(rest) = folder.strip_prefix(&format!("r00-m{set:04}-")) else {
        return false;
    };
    let game = rest.strip_prefix("from-").unwrap_or(rest);
    let digits = game.strip_prefix('g').unwrap_or_default();
    digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `file` is a bot's log as a table names it: `playerN.log` or
/// `playerN.restartK.log`.
fn stderr_file(file: &str) -> bool {
    let number = |t: &str| !t.is_empty() && t.len() <= 4 && t.bytes().all(|b| b.is_ascii_digit());
    let Some(stem) = file
        .strip_prefix("player")
        .and_then(|f| f.strip_suffix(".log"))
    else {
        return false;
    };
    match stem.split_once(".restart") {
        Some((slot, start)) => number(slot) && number(start),
        None => number(stem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_a_table_writes_for_the_set_are_kept() {
        assert!(stderr_folder_of(7, "r00-m0007-g003"));
        assert!(stderr_folder_of(7, "r00-m0007-from-g004"));
        assert!(stderr_folder_of(12345, "r00-m12345-g001"));
        for bad in [
            "r00-m0008-g003",
            "r00-m0007-g03",
            "r00-m0007-g003/..",
            "..",
            "r00-m0007-gabc",
            "",
        ] {
            assert!(!stderr_folder_of(7, bad), "{bad}");
        }
        assert!(stderr_file("player0.log") && stderr_file("player5.restart2.log"));
        for bad in [
            "player.log",
            "player0.txt",
            "../player0.log",
            "player0.restart.log",
            "player0.log/x",
            "x.log",
        ] {
            assert!(!stderr_file(bad), "{bad}");
        }
    }
}
