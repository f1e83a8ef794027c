//! One game at one table: the dispatcher. It alone owns the game state and the
//! deadlines; it asks the seat to act, waits for the reply or the deadline, turns
//! misbehaviour into faults and fallback actions, and writes the transcript.
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
    /// One message serialised at a time, reused.
    scratch: Vec<u8>,
    /// When the pending request's last byte was written.
    asked_at: std::time::Instant,
    /// When the request of the decision being made was sent (`None`: the
    /// fallback decides, nobody was asked): what `--pace-ms` counts from.
    sent: Option<std::time::Instant>,
    /// The decision's timings line, written once its consequences are released.
    timing: Option<Timing>,
}

/// Plays the game `plan` describes and writes its transcript.
pub async fn play_game(
    cfg: &TableSpec,
    plan: &GamePlan,
    slots: &mut [Slot],
    next_id: &mut u64,
) -> anyhow::Result<GameRecord> {
    let seed = plan.seed;
    let path = plan.transcript.clone();
    let seat_slot = plan.seat_slot;
    let mut table = Table {
        cfg,
        transcript: JsonlWriter::create(&path)?,
        timings: {
            let timings = Output::timings(&path);
            if let Some(dir) = timings.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| anyhow::anyhow!("failed to create {}: {e}", dir.display()))?;
            }
            JsonlWriter::create(&timings)?
        },
        slots,
        seat_slot,
        faults: [0; 6],
        replaced: [false; 6],
        bank: TimeBank::new(&cfg.time),
        stats: TableStats::default(),
        scratch: Vec::with_capacity(1024),
        asked_at: std::time::Instant::now(),
        sent: None,
        timing: None,
    };
    let header = Header {
        format: FORMAT.into(),
        protocol: schmier_protocol::wire::PROTOCOL.into(),
        referee: REFEREE.into(),
        match_seed: plan.match_seed,
        game: plan.game,
        announced: plan.record_announced.then_some(plan.announced),
        first_request: Some(*next_id),
        seed,
        rules: cfg.rules,
        time_control: cfg.time.record(),
        fault_policy: cfg.policy,
        seats: Seat::all()
            .map(|s| {
                let slot = &table.slots[seat_slot[s.index()]];
                SeatInfo {
                    seat: s,
                    name: slot.name.clone(),
                    command: slot.spec.display(),
                }
            })
            .collect(),
    };
    table.transcript.write(&Line::Header(header))?;

    let players: Vec<String> = Seat::all().map(|s| table.slot(s).name.clone()).collect();
    for seat in Seat::all() {
        let msg = game_start(plan.announced, seat, &players, cfg.rules);
        table.queue(seat, &msg);
    }
    // Seats whose bot is already gone start the game replaced (announced after
    // game_start, so every bot hears of it within the game).
    for seat in Seat::all() {
        if let Some(f) = table.slot(seat).gone.clone() {
            table.record_fault(seat, None, f)?;
        }
    }

    let (mut game, events) = Game::new(seed, cfg.rules);
    table.publish(&events)?;
    let mut events = Vec::new();
    let mut hands = Vec::new();
    while let Some(seat) = game.to_act() {
        let start = std::time::Instant::now();
        let action = match table.ask(&game, seat, next_id).await? {
            Some(action) => action,
            None => first_legal(&game),
        };
        table.release().await?;
        events.clear();
        let applying = std::time::Instant::now();
        game.apply_into(action, &mut events)
            .expect("ask() returns only legal actions");
        table.stats.apply += applying.elapsed();
        table.publish(&events)?;
        table.stats.decisions += 1;
        table.stats.cycle_ns.push(nanos(start.elapsed()));
        hands.extend(events.iter().filter_map(|e| match e {
            Event::HandEnd(h) => Some(*h),
            _ => None,
        }));
    }
    for seat in Seat::all() {
        let by = Instant::now() + cfg.time.write;
        table.flush(seat, by).await;
    }

    let Some(Event::GameEnd {
        winner,
        scores,
        deals,
        reason,
    }) = events.last().cloned()
    else {
        unreachable!("a finished game ends with GameEnd");
    };
    let forfeited: Vec<Team> = if cfg.policy.forfeit {
        Team::all()
            .filter(|t| t.seats().iter().any(|s| table.faults[s.index()] > 0))
            .collect()
    } else {
        Vec::new()
    };
    let ranking = ranking(winner, scores, &forfeited);
    let result = ResultRecord {
        winner: credited_winner(winner, &forfeited, ranking),
        scores,
        deals,
        reason,
        faults: table.faults,
        forfeited,
        ranking,
    };
    table.transcript.write(&Line::Result(result.clone()))?;
    // The transcript is the record; timings are informative, so a game whose
    // timings could not be written is still kept.
    let transcript = match table.transcript.finish() {
        Ok(path) => path,
        Err(lost) => {
            table.timings.discard();
            return Err(lost.into());
        }
    };
    if let Err(e) = table.timings.finish() {
        eprintln!(
            "referee: warning: game {} kept without its timings: {e}",
            plan.game
        );
    }
    Ok(GameRecord {
        seed,
        transcript,
        result,
        hands,
        stats: table.stats,
    })
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

impl Table<'_> {
    fn slot(&mut self, seat: Seat) -> &mut Slot {
        &mut self.slots[self.seat_slot[seat.index()]]
    }

    fn listening(&mut self, seat: Seat) -> bool {
        let slot = self.slot(seat);
        slot.gone.is_none() && (slot.process.is_some() || slot.inline.is_some())
    }

    /// Whether the bot at `seat` is asked for its decisions (not replaced).
    fn playing(&mut self, seat: Seat) -> bool {
        !self.replaced[seat.index()] && self.listening(seat)
    }

    fn queue(&mut self, seat: Seat, msg: &ToBot) {
        if !self.listening(seat) {
            return;
        }
        // An in-process bot decides from its request alone; it is told nothing else.
        let mut line = std::mem::take(&mut self.scratch);
        if let Some(p) = self.slot(seat).process.as_mut() {
            line.clear();
            serde_json::to_writer(&mut line, msg).expect("messages serialize");
            p.queue(&line);
            self.stats.bytes_out += line.len() as u64 + 1;
        }
        self.scratch = line;
    }

    /// Live delivery: hands every seat what is queued for it, as far as its pipe
    /// takes it now. Never waits, and never records a fault: a seat whose pipe
    /// broke is found out when it is next asked, so the transcript does not
    /// depend on when the referee noticed.
    fn deliver(&mut self) {
        if self.cfg.events != Delivery::Live {
            return;
        }
        for seat in Seat::all() {
            if !self.listening(seat) {
                continue;
            }
            if let Some(p) = self.slot(seat).process.as_mut() {
                if !p.try_flush() {
                    tracing::debug!("{seat}: its stdin is closed; recorded when it is next asked");
                }
            }
        }
    }

    /// Writes what is queued for `seat`; a bot that does not take it is gone.
    async fn flush(&mut self, seat: Seat, by: Instant) -> Option<Fault> {
        let limit = self.cfg.time.write;
        let p = self.slot(seat).process.as_mut()?;
        match p.flush(Some(limit)).await {
            Ok(()) => None,
            Err(WriteError::Timeout) => Some(Fault::new(
                FaultKind::Closed,
                format!("stopped reading its stdin (a write blocked for {limit:?})"),
            )),
            Err(WriteError::Closed(_)) => Some(self.ended(seat, "closed its stdin", by).await),
        }
    }

    /// The fault for a bot whose pipe closed, decided by what the bot did: `crash`
    /// with its exit status if the process ends by `by` (its deadline), `closed`
    /// if it is still running then.
    async fn ended(&mut self, seat: Seat, what: &str, by: Instant) -> Fault {
        let p = self.slot(seat).process.as_mut().expect("a process");
        match p.exit_status_by(Some(by)).await {
            Some(status) => Fault::new(FaultKind::Crash, format!("{what} and exited: {status}")),
            None => Fault::new(FaultKind::Closed, format!("{what} but kept running")),
        }
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
            let slot = self.slot(seat);
            if slot.gone.is_none() {
                slot.gone = Some(fault.clone());
            }
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
            if let Some(p) = self.slot(seat).process.as_mut() {
                p.discard_queue();
            }
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
        if self.slot(seat).inline.is_some() {
            // The referee's own code (or a person) decides: no channel to pace.
            return self.ask_inline(game, seat, request);
        }
        let decision = request.decision;
        self.queue(seat, &ToBot::Request(request));
        let writing = std::time::Instant::now();
        self.stats.request += writing - building;
        let by = Instant::now() + allowed.map_or(time.write, |a| a + time.grace);
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
        let pid = self
            .slot(seat)
            .process
            .as_ref()
            .expect("a listening bot has a process")
            .pid();
        let clock = DecisionClock::start(&time, allowed, pid);
        match self.await_reply(game, seat, id, decision, &clock).await? {
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

    /// An in-process bot decides at once; an illegal choice is still a fault.
    fn ask_inline(
        &mut self,
        game: &Game,
        seat: Seat,
        request: Request,
    ) -> anyhow::Result<Option<Action>> {
        let (id, decision) = (request.id, request.decision);
        let bot = self.slot(seat).inline.as_mut().expect("an in-process bot");
        let start = Instant::now();
        let action = bot.decide(&request);
        let took = start.elapsed();
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

    /// Reads the bot's output until it answers request `id` or faults. Every
    /// outcome is written to the timings sidecar here; a fault that ends the
    /// request is returned for the caller to record.
    async fn await_reply(
        &mut self,
        game: &Game,
        seat: Seat,
        id: u64,
        decision: Decision,
        clock: &DecisionClock,
    ) -> anyhow::Result<Outcome> {
        let time = self.cfg.time;
        // Stale replies read while this request is pending. Only the first is a
        // fault: a bot spamming stale lines cannot make the transcript and every
        // seat's fault notices grow with its spam (how many of them the reader
        // kept would not be deterministic anyway).
        let mut stale = 0u64;
        loop {
            let wake = clock.wake();
            let p = self
                .slot(seat)
                .process
                .as_mut()
                .expect("a listening bot has a process");
            let next = p.next_line(wake).await;
            let (at, fault) = match next {
                None => {
                    let now = Instant::now();
                    if !clock.expired(now, clock.used(now)) {
                        continue; // a CPU-clock tick with time left
                    }
                    // The reply may still come: it will be discarded then.
                    self.slot(seat).timed_out.insert(id, decision);
                    (now, Fault::new(FaultKind::Timeout, clock.timeout_reason()))
                }
                Some(Incoming::Line { bytes, at }) => {
                    let reading = std::time::Instant::now();
                    let arrived = at.into_std();
                    self.stats.wait += arrived.saturating_duration_since(self.asked_at);
                    self.stats.handoff += reading.saturating_duration_since(arrived);
                    self.stats.bytes_in += bytes.len() as u64 + 1;
                    let reply = read_reply(&bytes, id, decision, game);
                    self.stats.reply += reading.elapsed();
                    match reply {
                        Reply::Action(action) => {
                            let took = clock.used(at);
                            if clock.over(took) {
                                (at, Fault::new(FaultKind::Timeout, clock.timeout_reason()))
                            } else {
                                self.bank.charge(seat.index(), took, &time);
                                self.time(id, seat, decision, Some(took), None)?;
                                return Ok(Outcome::Answer(action));
                            }
                        }
                        Reply::Other(other) => {
                            if let Some(late) = self.slot(seat).timed_out.remove(&other) {
                                // Its request already cost a timeout: one slow decision
                                // is one fault. Only the sidecar hears of it.
                                self.timings.write(&Timing {
                                    request: other,
                                    seat,
                                    decision: late,
                                    micros: 0,
                                    wall_micros: None,
                                    fault: None,
                                    late: true,
                                    released_micros: None,
                                })?;
                                continue;
                            }
                            stale += 1;
                            if stale > 1 {
                                tracing::debug!("{seat}: stale reply {stale} to {id} ignored");
                                continue;
                            }
                            let f = Fault::new(
                                FaultKind::Stale,
                                format!(
                                    "a reply to request {other} while {id} is pending; ignored"
                                ),
                            );
                            self.record_fault(seat, Some(id), f)?;
                            if self.playing(seat) {
                                continue; // still waiting for the right id
                            }
                            self.time(
                                id,
                                seat,
                                decision,
                                Some(clock.used(at)),
                                Some(FaultKind::Stale),
                            )?;
                            // Recorded already; the fallback plays this decision.
                            return Ok(Outcome::Recorded);
                        }
                        Reply::Fault(f) => (at, f),
                    }
                }
                Some(Incoming::Oversized { at, .. }) => (
                    at,
                    Fault::new(
                        FaultKind::Oversized,
                        format!("a line longer than {} bytes", time.max_line),
                    ),
                ),
                Some(Incoming::Eof { at }) => {
                    let by = clock.exit_by(time.write);
                    (at, self.ended(seat, "closed its stdout", by).await)
                }
                Some(Incoming::Error { message, at }) => {
                    let by = clock.exit_by(time.write);
                    let what = format!("could not be read ({message})");
                    (at, self.ended(seat, &what, by).await)
                }
            };
            self.time_on(clock, at, id, seat, decision, Some(fault.kind))?;
            return Ok(Outcome::Fault(fault));
        }
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
        self.write_timing(request, seat, decision, (micros, wall), fault)
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
        });
        Ok(())
    }
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
