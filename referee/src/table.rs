//! One game at one table: the dispatcher. It alone owns the game state and the
//! deadlines; it asks the seat to act, waits for the reply or the deadline, turns
//! misbehaviour into faults and fallback actions, and writes the transcript.
//! It talks to each seat's [`Player`], never to a process: how a bot is
//! connected, and why its channel closed, is the player's to say.
//!
//! Every message to a bot is built from the engine's per-seat view
//! (`Game::view`, `Event::seen_by`), never from the full state.

use std::path::PathBuf;
use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::rules::{first_legal, Action, Decision, Event, Game, HandScore, SeatEvent};
use schmier_protocol::wire::{Request, ToBot};
use schmier_protocol::{Seat, Team};

use crate::bot::{Incoming, WriteError};
use crate::clock::{DecisionClock, TimeBank};
use crate::config::{Delivery, Output, TableSpec};
use crate::fault::{Fault, FaultKind};
use crate::player::Player;
use crate::reply::{read_reply, Reply};
use crate::slot::Slot;
use crate::stats::{nanos, TableStats};
use crate::transcript::{
    credited_winner, ranking, FaultRecord, Header, JsonlWriter, Line, ResultRecord, SeatInfo,
    Timing, FORMAT,
};
use crate::REFEREE;

/// Which game a table plays next: its seed, where each lineup slot sits, where the
/// transcript goes. Made by whoever schedules games (a match, a tournament).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GamePlan {
    /// The seed of the match (or tournament matchup) recorded in the header.
    pub match_seed: u64,
    /// The game's number within its match, from 1 (recorded in the header; in a
    /// tournament, the duplicate set).
    pub game: u32,
    /// The game's number as its bots are told in `game_start`: its place among
    /// the games their processes have played, from 1. Not `game`, which in a
    /// tournament is the set and would let a bot tie the games of a set together.
    pub announced: u32,
    /// Whether the header records `announced`: not where it depends on where a
    /// resumed table started (processes kept across a tournament matchup), as
    /// the transcript must be the same either way.
    pub record_announced: bool,
    /// The game's own seed: it decides every deal.
    pub seed: u64,
    /// The lineup slot at each seat.
    pub seat_slot: [usize; 6],
    pub transcript: PathBuf,
}

pub struct GameRecord {
    pub seed: u64,
    pub transcript: PathBuf,
    pub result: ResultRecord,
    pub hands: Vec<HandScore>,
    /// Where the table's time went (for `referee bench`).
    pub stats: TableStats,
    /// Why the game's timings could not be written, if they could not: the
    /// game is kept without them (the session reports it).
    pub timings_lost: Option<String>,
}

struct Table<'a> {
    cfg: &'a TableSpec,
    slots: &'a mut [Slot],
    /// Lineup slot at each seat this game.
    seat_slot: [usize; 6],
    transcript: JsonlWriter,
    timings: JsonlWriter,
    faults: [u32; 6],
    /// Seats the fallback plays for, for the rest of this game.
    replaced: [bool; 6],
    bank: TimeBank,
    stats: TableStats,
    /// The steps timed inside decisions so far: what was timed between two
    /// decisions is dropped (see [`TableStats::set_steps`]).
    in_cycles: crate::stats::Steps,
    /// When the pending request's last byte was written.
    asked_at: std::time::Instant,
    /// When the request of the decision being made was sent (`None`: the
    /// fallback decides, nobody was asked): what `--pace-ms` counts from.
    sent: Option<std::time::Instant>,
    /// The decision's timings line, written once its consequences are released.
    timing: Option<Timing>,
}

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

/// Plays the game `plan` describes and writes its transcript.
pub async fn play_game(
    cfg: &TableSpec,
    plan: &GamePlan,
    slots: &mut [Slot],
    next_id: &mut u64,
) -> anyhow::Result<GameRecord> {
    let mut table = Table::open(cfg, plan, slots, *next_id)?;
    // With --freeze-waiting only the seat on move runs (see `Table::turn`).
    for seat in Seat::all() {
        table.player(seat).freeze(true);
    }
    table.announce(plan.announced)?;
    let (mut game, events) = Game::new(plan.seed, cfg.rules);
    table.publish(&events)?;
    let mut events = Vec::new();
    let mut hands = Vec::new();
    while let Some(seat) = game.to_act() {
        table.turn(&mut game, seat, next_id, &mut events).await?;
        hands.extend(events.iter().filter_map(|e| match e {
            Event::HandEnd(h) => Some(*h),
            _ => None,
        }));
    }
    for seat in Seat::all() {
        let by = Instant::now() + cfg.time.write;
        table.flush(seat, by).await;
    }
    let result = table.result(events.last());
    table.close(plan, result, hands)
}

/// The `game_start` a seat is sent: game number `announced`, the players' names
/// by seat. `referee replay` sends a recorded seat the same.
pub(crate) fn game_start(
    announced: u32,
    seat: Seat,
    players: &[String],
    rules: schmier_protocol::rules::RulesConfig,
) -> ToBot {
    ToBot::GameStart {
        game: announced,
        seat,
        team: seat.team(),
        partner: seat.partner(),
        players: players.to_vec(),
        rules,
    }
}

impl<'a> Table<'a> {
    /// A table for `plan`'s game, its transcript begun with the header
    /// (`first_request`: the id its first request will have).
    fn open(
        cfg: &'a TableSpec,
        plan: &GamePlan,
        slots: &'a mut [Slot],
        first_request: u64,
    ) -> anyhow::Result<Self> {
        let mut table = Table {
            cfg,
            transcript: JsonlWriter::create(&plan.transcript)?,
            timings: {
                let timings = Output::timings(&plan.transcript);
                if let Some(dir) = timings.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| anyhow::anyhow!("failed to create {}: {e}", dir.display()))?;
                }
                JsonlWriter::create(&timings)?
            },
            slots,
            seat_slot: plan.seat_slot,
            faults: [0; 6],
            replaced: [false; 6],
            bank: TimeBank::new(&cfg.time),
            stats: TableStats::default(),
            in_cycles: Default::default(),
            asked_at: std::time::Instant::now(),
            sent: None,
            timing: None,
        };
        let header = table.header(plan, first_request);
        table.transcript.write(&Line::Header(header))?;
        Ok(table)
    }
}

impl Table<'_> {
    fn header(&mut self, plan: &GamePlan, first_request: u64) -> Header {
        let cfg = self.cfg;
        Header {
            format: FORMAT.into(),
            protocol: schmier_protocol::wire::PROTOCOL.into(),
            referee: REFEREE.into(),
            match_seed: plan.match_seed,
            game: plan.game,
            announced: plan.record_announced.then_some(plan.announced),
            first_request: Some(first_request),
            seed: plan.seed,
            rules: cfg.rules,
            time_control: cfg.time.record(),
            fault_policy: cfg.policy,
            isolation: Some(Box::new(cfg.isolation_record())),
            seats: Seat::all()
                .map(|s| {
                    let slot = self.slot(s);
                    SeatInfo {
                        seat: s,
                        name: slot.name.clone(),
                        command: slot.spec.display(),
                    }
                })
                .collect(),
        }
    }

    /// Tells every seat the game starts (its bot's game number `announced`);
    /// seats whose bot is already gone start it replaced (announced after
    /// game_start, so every bot hears of it within the game).
    fn announce(&mut self, announced: u32) -> anyhow::Result<()> {
        let players: Vec<String> = Seat::all().map(|s| self.slot(s).name.clone()).collect();
        for seat in Seat::all() {
            let msg = game_start(announced, seat, &players, self.cfg.rules);
            self.queue(seat, &msg);
        }
        for seat in Seat::all() {
            if let Some(f) = self.player(seat).gone().cloned() {
                self.record_fault(seat, None, f)?;
            }
        }
        Ok(())
    }

    /// One decision of `seat`: asked (or the fallback's), released, applied,
    /// published; `events` holds what it caused.
    async fn turn(
        &mut self,
        game: &mut Game,
        seat: Seat,
        next_id: &mut u64,
        events: &mut Vec<Event>,
    ) -> anyhow::Result<()> {
        self.stats.set_steps(self.in_cycles);
        let start = std::time::Instant::now();
        // Thawed by `ask` once its request is queued; frozen again as soon as
        // the decision is over (answered, faulted or timed out), so that a
        // seat waiting for its turn takes no CPU from the one on move.
        let asked = self.ask(game, seat, next_id).await;
        self.player(seat).freeze(true);
        let action = match asked? {
            Some(action) => action,
            None => first_legal(game),
        };
        self.release().await?;
        events.clear();
        let applying = std::time::Instant::now();
        game.apply_into(action, events)
            .expect("ask() returns only legal actions");
        self.stats.apply += applying.elapsed();
        self.publish(events)?;
        self.stats.decisions += 1;
        self.stats.cycle_ns.push(nanos(start.elapsed()));
        self.in_cycles = self.stats.steps();
        Ok(())
    }

    /// The game's result from its last event, forfeits applied.
    fn result(&self, last: Option<&Event>) -> ResultRecord {
        let Some(Event::GameEnd {
            winner,
            scores,
            deals,
            reason,
        }) = last.cloned()
        else {
            unreachable!("a finished game ends with GameEnd");
        };
        let forfeited: Vec<Team> = if self.cfg.policy.forfeit {
            Team::all()
                .filter(|t| t.seats().iter().any(|s| self.faults[s.index()] > 0))
                .collect()
        } else {
            Vec::new()
        };
        let ranking = ranking(winner, scores, &forfeited);
        ResultRecord {
            winner: credited_winner(winner, &forfeited, ranking),
            scores,
            deals,
            reason,
            faults: self.faults,
            forfeited,
            ranking,
        }
    }

    /// Ends the transcript with `result` and makes it and the timings final.
    fn close(
        mut self,
        plan: &GamePlan,
        result: ResultRecord,
        hands: Vec<HandScore>,
    ) -> anyhow::Result<GameRecord> {
        self.transcript.write(&Line::Result(result.clone()))?;
        // The transcript is the record; timings are informative, so a game whose
        // timings could not be written is still kept.
        let transcript = match self.transcript.finish() {
            Ok(path) => path,
            Err(lost) => {
                self.timings.discard();
                return Err(lost.into());
            }
        };
        let timings_lost = self.timings.finish().err().map(|e| e.to_string());
        self.stats.set_steps(self.in_cycles);
        Ok(GameRecord {
            seed: plan.seed,
            transcript,
            result,
            hands,
            stats: self.stats,
            timings_lost,
        })
    }

    fn slot(&mut self, seat: Seat) -> &mut Slot {
        &mut self.slots[self.seat_slot[seat.index()]]
    }

    fn player(&mut self, seat: Seat) -> &mut Player {
        &mut self.slot(seat).player
    }

    fn listening(&mut self, seat: Seat) -> bool {
        self.player(seat).listening()
    }

    /// Whether the bot at `seat` is asked for its decisions (not replaced).
    fn playing(&mut self, seat: Seat) -> bool {
        !self.replaced[seat.index()] && self.listening(seat)
    }

    fn queue(&mut self, seat: Seat, msg: &ToBot) {
        let bytes = self.player(seat).queue(msg);
        self.stats.bytes_out += bytes as u64;
    }

    /// Live delivery: hands every seat what is queued for it, as far as its
    /// channel takes it now. Never waits, and never records a fault: a seat
    /// whose pipe broke is found out when it is next asked, so the transcript
    /// does not depend on when the referee noticed.
    fn deliver(&mut self) {
        if self.cfg.events != Delivery::Live {
            return;
        }
        for seat in Seat::all() {
            if !self.player(seat).deliver_now() {
                tracing::debug!("{seat}: its stdin is closed; recorded when it is next asked");
            }
        }
    }

    /// Writes what is queued for `seat`; a bot that does not take it is gone.
    async fn flush(&mut self, seat: Seat, by: Instant) -> Option<Fault> {
        let limit = self.cfg.time.write;
        match self.player(seat).flush(Some(limit)).await {
            Ok(()) => None,
            Err(WriteError::Timeout) => Some(Fault::new(
                FaultKind::Closed,
                format!("stopped reading its stdin (a write blocked for {limit:?})"),
            )),
            Err(WriteError::Closed(_)) => Some(self.closed(seat, "closed its stdin", by).await),
        }
    }

    /// The fault for a bot whose channel closed, as the player tells it:
    /// `crash` if it ended by `by` (its deadline), `closed` if it is still
    /// there then.
    async fn closed(&mut self, seat: Seat, what: &str, by: Instant) -> Fault {
        self.player(seat).why_closed(Some(by)).await.fault(what)
    }

    /// Records engine events and tells every seat what it may see of them.
    fn publish(&mut self, events: &[Event]) -> anyhow::Result<()> {
        for e in events {
            // `Line::Event` is untagged: an event is written exactly as itself.
            let writing = std::time::Instant::now();
            self.transcript.write(e)?;
            let telling = std::time::Instant::now();
            self.stats.transcript += telling - writing;
            for seat in Seat::all() {
                let seen: SeatEvent = e.seen_by(seat);
                self.queue(seat, &ToBot::Event(seen));
            }
            self.stats.fanout += telling.elapsed();
        }
        let writing = std::time::Instant::now();
        self.deliver();
        self.stats.write += writing.elapsed();
        Ok(())
    }

    /// Records a fault, tells the table, and applies the policy: after a crash or
    /// closed pipe, or `max_faults` faults in this game, the fallback plays for
    /// the seat for the rest of the game.
    fn record_fault(
        &mut self,
        seat: Seat,
        request: Option<u64>,
        fault: Fault,
    ) -> anyhow::Result<()> {
        tracing::info!(
            "{seat}: {} fault: {}",
            fault.kind,
            crate::names::printable(&fault.detail)
        );
        let i = seat.index();
        self.faults[i] += 1;
        if fault.kind.is_fatal() {
            self.player(seat).retire(fault.clone());
        }
        let over_limit = self
            .cfg
            .policy
            .max_faults
            .is_some_and(|m| self.faults[i] >= m);
        let replaced = self.replaced[i] || over_limit || !self.listening(seat);
        self.replaced[i] = replaced;
        let record = FaultRecord {
            seat,
            request,
            fault: fault.kind,
            detail: fault.detail,
            replaced,
        };
        let notice = ToBot::Fault(record.notice());
        self.transcript.write(&Line::Fault(record))?;
        for s in Seat::all() {
            self.queue(s, &notice);
        }
        if !self.listening(seat) {
            self.player(seat).discard_queue();
        }
        // Paced, a notice waits for the decision's release: one sent the
        // moment a stale line arrived would time that line for everyone.
        if self.cfg.pace.is_none() {
            self.deliver();
        }
        Ok(())
    }

    /// The timing channel's switch (`--pace-ms P`): the consequences of the
    /// decision just made — its events, and any fault notice queued while it
    /// was pending — go out to the seats no earlier than P after its request was
    /// written. A reply faster than P then looks the same to every other seat
    /// as a reply at P: its delay carries nothing to a partner below P. Only
    /// the wall clock moves; the transcript is the same byte for byte, and the
    /// timings sidecar notes when each decision was released.
    async fn release(&mut self) -> anyhow::Result<()> {
        let sent = self.sent.take();
        if let (Some(pace), Some(sent)) = (self.cfg.pace, sent) {
            tokio::time::sleep_until(Instant::from_std(sent + pace)).await;
            if let Some(t) = self.timing.as_mut() {
                t.released_micros = Some(sent.elapsed().as_micros() as u64);
            }
        }
        if let Some(t) = self.timing.take() {
            let writing = std::time::Instant::now();
            self.timings.write(&t)?;
            self.stats.transcript += writing.elapsed();
        }
        Ok(())
    }

    /// Asks `seat` for its decision. `Some(action)`: a legal action from the bot.
    /// `None`: the fallback must play (the bot is replaced, or faulted — recorded).
    async fn ask(
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
        let clock = DecisionClock::start(&time, allowed, self.player(seat).cpu_clock())
            .with_credit(self.player(seat).latency_credit());
        let mut pending = Pending {
            seat,
            id,
            decision,
            clock: &clock,
            stale: 0,
        };
        match self.await_reply(game, &mut pending).await? {
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

    /// A reply to request `other` while `p` is pending: late (its request
    /// timed out already: only the sidecar hears of it) or stale.
    fn other_reply(
        &mut self,
        p: &mut Pending<'_>,
        other: u64,
        at: Instant,
    ) -> anyhow::Result<Heard> {
        let (seat, id) = (p.seat, p.id);
        if let Some(late) = self.player(seat).late(other) {
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
            })?;
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
            return Ok(Heard::Ignored); // still waiting for the right id
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::task::JoinHandle;

    use super::*;
    use crate::bot::Channel;
    use crate::cli::{Cli, Command};
    use crate::config::BotSpec;

    /// A sample strategy at the other end of in-memory pipes, speaking the
    /// wire protocol through the sample bots' own loop. Its task ends at end
    /// of input and returns how many bytes it heard.
    fn piped(name: &str) -> (Player, JoinHandle<usize>) {
        let (to_bot, bot_in) = tokio::io::duplex(64 * 1024);
        let (mut bot_out, from_bot) = tokio::io::duplex(64 * 1024);
        let mut strategy = schmier_sample_bots::by_name(name).expect("a built-in bot");
        let bot = tokio::spawn(async move {
            let (mut input, mut line, mut out) = (BufReader::new(bot_in), Vec::new(), Vec::new());
            let mut heard = 0;
            loop {
                line.clear();
                match input.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return heard,
                    Ok(n) => heard += n,
                }
                out.clear();
                schmier_sample_bots::respond(strategy.as_mut(), &line, &mut out);
                if bot_out.write_all(&out).await.is_err() {
                    return heard;
                }
            }
        });
        (Player::over(Channel::new(from_bot, to_bot, 1 << 16)), bot)
    }

    fn spec() -> TableSpec {
        let args = [
            "referee",
            "play",
            "--seed",
            "5",
            "--no-timeouts",
            "--team",
            "inproc:heuristic",
            "--team",
            "inproc:random",
            "--team",
            "inproc:heuristic",
        ];
        match Cli::try_parse_from(args).expect("flags parse").command() {
            Command::Play(play) => play.validate().expect("a valid configuration").table,
            _ => unreachable!("a play command"),
        }
    }

    async fn play(cfg: &TableSpec, slots: &mut [Slot], transcript: &Path) -> GameRecord {
        let plan = GamePlan {
            match_seed: 5,
            game: 1,
            announced: 1,
            record_announced: true,
            seed: 77,
            seat_slot: [0, 1, 2, 3, 4, 5],
            transcript: transcript.to_path_buf(),
        };
        let mut next_id = 1;
        play_game(cfg, &plan, slots, &mut next_id)
            .await
            .expect("the game is played")
    }

    /// The seam a socket transport needs: the table plays a whole game with
    /// bots at the other end of in-memory pipes, no process anywhere, and
    /// every decision crosses the wire — to the same transcript, byte for
    /// byte, as the same strategies asked inside the referee.
    #[tokio::test]
    async fn a_game_over_in_memory_channels_is_the_game_of_the_same_bots_in_process() {
        let cfg = spec();
        let dir = tempfile::tempdir().expect("a temporary folder");
        let names = |s: &BotSpec| match s {
            BotSpec::InProcess(name) => name.clone(),
            other => panic!("not an in-process bot: {other:?}"),
        };
        let slot = |s: &BotSpec, player| Slot {
            player,
            ..Slot::new(s.clone(), names(s))
        };

        let mut direct: Vec<Slot> = (cfg.lineup.iter())
            .map(|s| {
                let strategy = schmier_sample_bots::by_name(&names(s)).expect("a built-in bot");
                slot(s, Player::in_process(strategy))
            })
            .collect();
        let inside = play(&cfg, &mut direct, &dir.path().join("inside.jsonl")).await;

        let (players, bots): (Vec<_>, Vec<_>) = cfg.lineup.iter().map(|s| piped(&names(s))).unzip();
        let mut over: Vec<Slot> = (cfg.lineup.iter().zip(players))
            .map(|(s, p)| slot(s, p))
            .collect();
        let wired = play(&cfg, &mut over, &dir.path().join("wired.jsonl")).await;
        for slot in over {
            slot.player.shutdown(Duration::from_secs(60)).await;
        }
        for bot in bots {
            assert!(
                bot.await.expect("the bot task ends") > 0,
                "a bot heard nothing"
            );
        }

        assert!(wired.stats.decisions > 0);
        assert_eq!(
            wired.stats.answered, wired.stats.decisions,
            "a decision was not answered over the wire"
        );
        assert_eq!(
            inside.stats.answered, 0,
            "in-process decisions are not wire answers"
        );
        assert_eq!(wired.result.faults, [0; 6]);
        let read = |p: &Path| std::fs::read(p).expect("a transcript");
        assert_eq!(
            String::from_utf8(read(&wired.transcript)).unwrap(),
            String::from_utf8(read(&inside.transcript)).unwrap()
        );
    }
}
