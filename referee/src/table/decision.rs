//! One decision at the table: the request built from the seat's view and
//! written, the reply awaited against the deadline (and any time bank), each
//! line read while it is pending judged — the answer, a stale reply, a fault —
//! and the decision's time recorded. The table (`table.rs`) calls [`Table::ask`]
//! and plays the fallback when it answers `None`.

use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::rules::{Action, Decision, Game};
use schmier_protocol::wire::{Request, ToBot};
use schmier_protocol::Seat;

use super::Table;
use crate::bot::Incoming;
use crate::clock::DecisionClock;
use crate::fault::{Fault, FaultKind};
use crate::reply::{read_reply, Reply};
use crate::transcript::Timing;

/// A request sent to a seat, waiting for its reply.
struct Pending<'c> {
    seat: Seat,
    id: u64,
    decision: Decision,
    clock: &'c DecisionClock,
    /// Stale replies read while it is pending. Only the first is a fault: a
    /// bot spamming stale lines cannot make the transcript and every seat's
    /// fault notices grow with its spam (how many of them the reader kept
    /// would not be deterministic anyway).
    stale: u64,
}

impl Table<'_> {
    /// Asks `seat` for its decision. `Some(action)`: a legal action from the bot.
    /// `None`: the fallback must play (the bot is replaced, or faulted — recorded).
    pub(super) async fn ask(
        &mut self,
        game: &Game,
        seat: Seat,
        next_id: &mut u64,
    ) -> anyhow::Result<Option<Action>> {
        if !self.playing(seat) {
            return Ok(None);
        }
        let id = *next_id;
        *next_id += 1;
        let building = std::time::Instant::now();
        let time = self.cfg.time;
        let allowed = self.bank.allowed(seat.index(), &time);
        let request = Request::for_decision(game, id, allowed.map(|d| d.as_millis() as u64))
            .expect("a decision is due");
        // The referee's own code (or a person) decides at once: no channel to pace.
        let start = Instant::now();
        if let Some(action) = self.player(seat).decide_now(&request) {
            return self.judge_now(game, seat, &request, action, start.elapsed());
        }
        let decision = request.decision;
        self.queue(seat, &ToBot::Request(request));
        let writing = std::time::Instant::now();
        self.stats.request += writing - building;
        let by = Instant::now() + allowed.map_or(time.write, |a| a + time.grace);
        // Written while the bot is still frozen, as far as its pipe takes it
        // now: thawed, it finds its request waiting, instead of waking to
        // wait for it and waking again when it comes (`--freeze-waiting`).
        // Its clock then starts before the thaw, so that none of its
        // thinking comes before its clock.
        self.player(seat).deliver_now();
        let early = (self.player(seat).frozen_and_written())
            .then(|| DecisionClock::start(&time, allowed, self.player(seat).cpu_clock()));
        self.player(seat).freeze(false);
        let flushed = self.flush(seat, by).await;
        self.asked_at = std::time::Instant::now();
        self.sent = Some(self.asked_at);
        self.stats.write += self.asked_at - writing;
        if let Some(fault) = flushed {
            let kind = fault.kind;
            self.record_fault(seat, Some(id), fault)?;
            self.time(id, seat, decision, None, Some(kind))?;
            return Ok(None);
        }
        // The clock starts now that the request's last byte is written.
        let clock = early
            .unwrap_or_else(|| DecisionClock::start(&time, allowed, self.player(seat).cpu_clock()))
            .with_credit(self.player(seat).latency_credit())
            .with_link_down(self.player(seat).link_down());
        let mut pending = Pending {
            seat,
            id,
            decision,
            clock: &clock,
            stale: 0,
        };
        let outcome = self.await_reply(game, &mut pending).await;
        self.player(seat).skip_stale(None);
        match outcome? {
            Outcome::Answer(action) => {
                self.stats.answered += 1;
                Ok(Some(action))
            }
            Outcome::Recorded => Ok(None),
            Outcome::Fault(fault) => {
                if fault.kind == FaultKind::Timeout {
                    self.bank.empty(seat.index());
                }
                self.record_fault(seat, Some(id), fault)?;
                Ok(None)
            }
        }
    }

    /// A decision made inside the referee, in `took`: an illegal one is still
    /// a fault.
    fn judge_now(
        &mut self,
        game: &Game,
        seat: Seat,
        request: &Request,
        action: Action,
        took: Duration,
    ) -> anyhow::Result<Option<Action>> {
        let (id, decision) = (request.id, request.decision);
        if game.clone().apply(action).is_err() {
            let f = Fault::new(
                FaultKind::Illegal,
                format!("the in-process bot chose {action:?}"),
            );
            self.record_fault(seat, Some(id), f)?;
            self.time(id, seat, decision, Some(took), Some(FaultKind::Illegal))?;
            return Ok(None);
        }
        self.time(id, seat, decision, Some(took), None)?;
        Ok(Some(action))
    }

    /// Reads the bot's output until it answers the pending request or faults.
    /// Every outcome is written to the timings sidecar here; a fault that ends
    /// the request is returned for the caller to record.
    async fn await_reply(&mut self, game: &Game, p: &mut Pending<'_>) -> anyhow::Result<Outcome> {
        let (time, clock) = (self.cfg.time, p.clock);
        loop {
            let next = self.player(p.seat).next_line(clock.wake()).await;
            let (at, fault) = match next {
                None => {
                    let now = Instant::now();
                    if !clock.expired(now, clock.used(now)) {
                        continue; // a CPU-clock tick with time left
                    }
                    // The reply may still come: it will be discarded then.
                    self.player(p.seat).timed_out(p.id, p.decision);
                    (now, Fault::new(FaultKind::Timeout, clock.timeout_reason()))
                }
                Some(Incoming::Line { bytes, at }) => match self.heard(game, p, &bytes, at)? {
                    Heard::Done(outcome) => return Ok(outcome),
                    Heard::Ignored => continue,
                    Heard::Fault(fault) => (at, fault),
                },
                Some(Incoming::Stale {
                    other,
                    during,
                    len,
                    at,
                }) => match self.heard_stale(p, other, during, len, at)? {
                    Heard::Done(outcome) => return Ok(outcome),
                    Heard::Ignored => continue,
                    Heard::Fault(fault) => (at, fault),
                },
                Some(Incoming::Oversized { at, .. }) => (
                    at,
                    Fault::new(
                        FaultKind::Oversized,
                        format!("a line longer than {} bytes", time.max_line),
                    ),
                ),
                Some(Incoming::Eof { at }) => {
                    let by = clock.exit_by(time.write);
                    (at, self.closed(p.seat, "closed its stdout", by).await)
                }
                Some(Incoming::Error { message, at }) => {
                    let by = clock.exit_by(time.write);
                    let what = format!("could not be read ({message})");
                    (at, self.closed(p.seat, &what, by).await)
                }
            };
            self.time_on(clock, at, p.id, p.seat, p.decision, Some(fault.kind))?;
            return Ok(Outcome::Fault(fault));
        }
    }

    /// A line that arrived at `at` while `p` is pending: the answer, a fault,
    /// or a reply to another request.
    fn heard(
        &mut self,
        game: &Game,
        p: &mut Pending<'_>,
        bytes: &[u8],
        at: Instant,
    ) -> anyhow::Result<Heard> {
        let reading = std::time::Instant::now();
        let arrived = at.into_std();
        self.stats.wait += arrived.saturating_duration_since(self.asked_at);
        self.stats.handoff += reading.saturating_duration_since(arrived);
        self.stats.bytes_in += bytes.len() as u64 + 1;
        let reply = read_reply(bytes, p.id, p.decision, game, p.stale > 0);
        self.stats.reply += reading.elapsed();
        match reply {
            Reply::Action(action) => {
                let took = p.clock.used(at);
                if p.clock.over(took) {
                    let reason = p.clock.timeout_reason();
                    return Ok(Heard::Fault(Fault::new(FaultKind::Timeout, reason)));
                }
                let time = self.cfg.time;
                self.bank.charge(p.seat.index(), took, &time);
                self.time(p.id, p.seat, p.decision, Some(took), None)?;
                if let Some(t) = self.timing.as_mut() {
                    t.credit_micros = p.clock.credit_micros();
                    t.link_down_micros = p.clock.stopped_micros(at);
                }
                Ok(Heard::Done(Outcome::Answer(action)))
            }
            Reply::Other(other) => self.other_reply(p, other, at),
            Reply::Unread => {
                p.stale += 1;
                Ok(Heard::Ignored)
            }
            Reply::Fault(f) => Ok(Heard::Fault(f)),
        }
    }

    /// A line of `len` bytes that opens as a reply to request `other`, read
    /// no further than its opening because request `during` had had its
    /// stale reply (the reader was told so by [`Table::other_reply`]). If
    /// `during` is the request pending now, that opening is all
    /// [`read_reply`] would have read of the line. If it is not (`during`
    /// timed out while such lines were on their way), the line is taken as
    /// it would have been had it been read in time, while `during` was
    /// pending: a late reply noted, or one more stale reply, ignored.
    fn heard_stale(
        &mut self,
        p: &mut Pending<'_>,
        other: u64,
        during: u64,
        len: usize,
        at: Instant,
    ) -> anyhow::Result<Heard> {
        let arrived = at.into_std();
        self.stats.wait += arrived.saturating_duration_since(self.asked_at);
        self.stats.handoff += std::time::Instant::now().saturating_duration_since(arrived);
        self.stats.bytes_in += len as u64 + 1;
        if during == p.id && p.stale > 0 {
            return self.other_reply(p, other, at);
        }
        self.late_reply(p.seat, other)?;
        Ok(Heard::Ignored)
    }

    /// Whether `other` is a request of `seat`'s that timed out already (its
    /// reply is late: only the sidecar hears of it).
    fn late_reply(&mut self, seat: Seat, other: u64) -> anyhow::Result<bool> {
        let Some(late) = self.player(seat).late(other) else {
            return Ok(false);
        };
        // Its request already cost a timeout: one slow decision is one fault.
        self.timings.write(&Timing {
            request: other,
            seat,
            decision: late,
            micros: 0,
            wall_micros: None,
            fault: None,
            late: true,
            released_micros: None,
            credit_micros: None,
            link_down_micros: None,
        })?;
        Ok(true)
    }

    /// A reply to request `other` while `p` is pending: late (its request
    /// timed out already: only the sidecar hears of it) or stale.
    fn other_reply(
        &mut self,
        p: &mut Pending<'_>,
        other: u64,
        at: Instant,
    ) -> anyhow::Result<Heard> {
        let (seat, id) = (p.seat, p.id);
        if self.late_reply(seat, other)? {
            return Ok(Heard::Ignored);
        }
        p.stale += 1;
        if p.stale > 1 {
            tracing::debug!("{seat}: stale reply {} to {id} ignored", p.stale);
            return Ok(Heard::Ignored);
        }
        let f = Fault::new(
            FaultKind::Stale,
            format!("a reply to request {other} while {id} is pending; ignored"),
        );
        self.record_fault(seat, Some(id), f)?;
        if self.playing(seat) {
            // Still waiting for the right id: further stale lines need not
            // be read past their opening (`Incoming::Stale`).
            self.player(seat).skip_stale(Some(id));
            return Ok(Heard::Ignored);
        }
        let used = Some(p.clock.used(at));
        self.time(id, seat, p.decision, used, Some(FaultKind::Stale))?;
        // Recorded already; the fallback plays this decision.
        Ok(Heard::Done(Outcome::Recorded))
    }

    /// The sidecar entry of a decision that was not timed by a [`DecisionClock`].
    fn time(
        &mut self,
        request: u64,
        seat: Seat,
        decision: Decision,
        took: Option<Duration>,
        fault: Option<FaultKind>,
    ) -> anyhow::Result<()> {
        let micros = took.map_or(0, |d| d.as_micros() as u64);
        self.write_timing(request, seat, decision, (micros, None), fault)
    }

    /// The sidecar entry of a decision timed by `clock`, up to `at`.
    fn time_on(
        &mut self,
        clock: &DecisionClock,
        at: Instant,
        request: u64,
        seat: Seat,
        decision: Decision,
        fault: Option<FaultKind>,
    ) -> anyhow::Result<()> {
        let micros = clock.used(at).as_micros() as u64;
        let wall = clock.wall_if_cpu(at).map(|d| d.as_micros() as u64);
        self.write_timing(request, seat, decision, (micros, wall), fault)?;
        if let Some(t) = self.timing.as_mut() {
            t.credit_micros = clock.credit_micros();
            t.link_down_micros = clock.stopped_micros(at);
        }
        Ok(())
    }

    fn write_timing(
        &mut self,
        request: u64,
        seat: Seat,
        decision: Decision,
        (micros, wall_micros): (u64, Option<u64>),
        fault: Option<FaultKind>,
    ) -> anyhow::Result<()> {
        // Written by `release`, once the decision's consequences are out.
        self.timing = Some(Timing {
            request,
            seat,
            decision,
            micros,
            wall_micros,
            fault,
            late: false,
            released_micros: None,
            credit_micros: None,
            link_down_micros: None,
        });
        Ok(())
    }
}

/// What a line read while a request is pending comes to.
enum Heard {
    /// The request is settled.
    Done(Outcome),
    /// Not for this request; waiting goes on.
    Ignored,
    /// A fault that ends the request, not yet recorded.
    Fault(Fault),
}

/// How waiting for a reply ended.
enum Outcome {
    Answer(Action),
    /// A fault that ends the request, not yet recorded.
    Fault(Fault),
    /// The seat was replaced by a fault already recorded (a `stale` reply over
    /// the limit); the fallback answers.
    Recorded,
}
