//! The messages one seat was sent in a recorded game, rebuilt from the
//! transcript: `game_start`, every event as that seat saw it, its requests and
//! the fault notices, in the order the table sent them.
//!
//! Nothing here decides what the seat sees: the transcript is replayed through
//! the one replay loop ([`crate::verify::replay`], with all its checks), each
//! event goes through `Event::seen_by`, each request is `Request::for_decision`
//! on the game as it stood, `game_start` and fault notices come from the
//! table's own builders. What this file adds is the order of a table's
//! messages and the numbering of its requests:
//!
//! - a decision's request goes out before the fault lines of that decision
//!   (they are the asked seat's answer going wrong), so it is placed at the
//!   decision's first line, fault or event;
//! - request ids rise by one for every request sent to any seat, from the
//!   header's `first_request`; a seat the fallback plays (a fault line said
//!   `replaced`) is not asked and takes no id. A fault line naming another id
//!   than the one this gives is a transcript that was changed by hand;
//! - a seat whose bot is gone (a `crash`, `closed` or `start` fault of its own)
//!   is sent nothing more, as the table discards what it had queued.

use schmier_protocol::rules::{first_legal, Action, Event, Game};
use schmier_protocol::wire::{Request, ToBot};
use schmier_protocol::{FaultKind, Seat};

use crate::load::Transcript;
use crate::transcript::{FaultRecord, Header, Line};

/// One seat's side of a recorded game.
pub struct Script {
    pub header: Header,
    pub seat: Seat,
    pub steps: Vec<Step>,
    /// What an older transcript does not record, and what was assumed instead.
    pub notes: Vec<String>,
}

impl Script {
    /// The requests the seat was sent.
    pub fn requests(&self) -> u32 {
        let asks = self.steps.iter().filter(|s| matches!(s, Step::Ask(_)));
        asks.count() as u32
    }
}

pub enum Step {
    /// A message the seat was sent, as the line it was sent (no newline).
    Tell(Vec<u8>),
    /// A request the seat was sent, and what it answered.
    Ask(Box<Ask>),
}

/// One request to the seat.
pub struct Ask {
    /// The seat's K-th request in this game, from 1 (what `--at K` names).
    pub number: u32,
    /// The transcript line of the decision it led to.
    pub line: usize,
    pub deal: u32,
    pub request: Request,
    /// The game when the request was sent: the judge of a live answer.
    pub game: Game,
    /// What the recorded bot answered.
    pub recorded: Answer,
    /// The action the table applied (the fallback's after a fault).
    pub played: Option<Action>,
    /// The recorded bot sent a reply naming another request meanwhile (a
    /// `stale` fault that did not end the request).
    pub stale: bool,
    /// A `stale` fault here reaches the policy's fault limit: it ends the
    /// request, and the fallback answers it.
    pub stale_ends: bool,
}

/// A bot's answer to one request: a legal action, or the fault that ended it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Action(Action),
    Fault { kind: FaultKind, detail: String },
}

impl Answer {
    /// Two answers are the same decision: the same action, or the same kind of
    /// fault (its wording may quote output that differs in bytes only).
    pub fn same_as(&self, other: &Answer) -> bool {
        match (self, other) {
            (Answer::Action(a), Answer::Action(b)) => a == b,
            (Answer::Fault { kind: a, .. }, Answer::Fault { kind: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// Rebuilds what `seat` was sent in the game `t` records.
pub fn build(t: &Transcript, seat: Seat) -> anyhow::Result<Script> {
    let mut b = Builder::new(seat);
    let replayed = crate::verify::replay(t, |n, line, game| b.line(n, line, game));
    let failed = |line: usize, message: &str| {
        anyhow::anyhow!(
            "failed to replay {}:{line}: {message} (`referee verify` checks the whole file)",
            t.path.display()
        )
    };
    if let Some((line, message)) = b.error.take() {
        return Err(failed(line, &message));
    }
    let replayed = replayed.map_err(|e| failed(e.line, &e.message))?;
    // A game cut short (a `.partial`) may end while the seat was thinking:
    // that request has no recorded answer to compare with.
    if let Some(i) = b.pending {
        b.steps.truncate(i);
    }
    Ok(Script {
        header: replayed.header,
        seat,
        steps: b.steps,
        notes: b.notes,
    })
}

/// The decision being made: the seat due, and its request id if it was asked.
struct Open {
    seat: Seat,
    id: Option<u64>,
}

struct Builder {
    seat: Seat,
    steps: Vec<Step>,
    notes: Vec<String>,
    error: Option<(usize, String)>,
    time_ms: Option<u64>,
    max_faults: Option<u32>,
    /// The seat's faults so far in this game.
    faults: u32,
    next_id: u64,
    /// The game after the previous line: the state a decision is asked in.
    before: Option<Game>,
    deal: u32,
    replaced: [bool; 6],
    /// The seat's bot is gone: it is sent nothing more.
    gone: bool,
    open: Option<Open>,
    /// The seat's request awaiting its decision line (an index into `steps`).
    pending: Option<usize>,
    asked: u32,
}

impl Builder {
    fn new(seat: Seat) -> Builder {
        Builder {
            seat,
            steps: Vec::new(),
            notes: Vec::new(),
            error: None,
            time_ms: None,
            max_faults: None,
            faults: 0,
            next_id: 1,
            before: None,
            deal: 0,
            replaced: [false; 6],
            gone: false,
            open: None,
            pending: None,
            asked: 0,
        }
    }

    fn line(&mut self, n: usize, line: &Line, game: &Game) {
        if self.error.is_some() {
            return;
        }
        let done = match line {
            Line::Header(h) => {
                self.header(h);
                Ok(())
            }
            Line::Fault(f) => self.fault(f),
            Line::Event(e) => self.event(n, e),
            Line::Result(_) => Ok(()),
        };
        if let Err(message) = done {
            self.error = Some((n, message));
        }
        self.before = Some(game.clone());
    }

    fn tell(&mut self, msg: ToBot) {
        if !self.gone {
            let line = serde_json::to_vec(&msg).expect("messages serialize");
            self.steps.push(Step::Tell(line));
        }
    }

    fn header(&mut self, h: &Header) {
        let tc = &h.time_control;
        // What a request's `time_ms` was depends on the time bank the bot had
        // left, which depends on the wall clock: the full bank is assumed.
        self.time_ms = tc.decision_ms.map(|d| d + tc.time_bank_ms);
        self.max_faults = h.fault_policy.max_faults;
        self.next_id = h.first_request.unwrap_or_else(|| {
            self.notes.push(format!(
                "{} does not record request ids: they are numbered from 1",
                h.format
            ));
            1
        });
        let announced = h.announced.unwrap_or_else(|| {
            self.notes.push(format!(
                "the header does not record the game number the bots were told \
                 ({}): game_start says {}",
                match h.first_request {
                    None => "an older format",
                    Some(_) => "processes kept across a tournament matchup",
                },
                h.game
            ));
            h.game
        });
        let players: Vec<String> = h.seats.iter().map(|s| s.name.clone()).collect();
        let start = crate::table::game_start(announced, self.seat, &players, h.rules);
        self.tell(start);
    }

    fn fault(&mut self, f: &FaultRecord) -> Result<(), String> {
        if let Some(id) = f.request {
            let open = self.open_decision()?;
            if open.seat != f.seat || open.id != Some(id) {
                return Err(format!(
                    "a fault of {} for request {id}, but the request due is {}'s {} \
                     (was the transcript edited?)",
                    f.seat,
                    open.seat,
                    open.id
                        .map_or("(none: it is not asked)".into(), |i| i.to_string())
                ));
            }
        }
        // Every fault but `stale` ends its request, and `stale` does too once
        // the seat is replaced: the recorded bot's answer is that fault.
        let ends = f.request.is_some() && (f.fault != FaultKind::Stale || f.replaced);
        if f.seat == self.seat {
            self.faults += 1;
        }
        if let (true, Some(i)) = (f.seat == self.seat, self.pending) {
            if let Step::Ask(ask) = &mut self.steps[i] {
                ask.stale |= f.fault == FaultKind::Stale && !ends;
                if ends && matches!(ask.recorded, Answer::Action(_)) {
                    ask.recorded = Answer::Fault {
                        kind: f.fault,
                        detail: f.detail.clone(),
                    };
                }
            }
        }
        self.replaced[f.seat.index()] = f.replaced;
        if f.seat == self.seat && f.fault.is_fatal() {
            if f.request.is_none() {
                // Never joined: the table sent this seat nothing, not even
                // game_start.
                self.steps.clear();
                self.notes.push(format!(
                    "{}'s bot did not start in this game ({}): it was sent nothing",
                    f.seat,
                    crate::names::printable(&f.detail)
                ));
            }
            self.gone = true;
        }
        self.tell(ToBot::Fault(f.notice()));
        Ok(())
    }

    fn event(&mut self, n: usize, e: &Event) -> Result<(), String> {
        if let Event::Deal { deal, .. } = e {
            self.deal = *deal;
        }
        if let Some((_, action)) = e.decision() {
            self.open_decision()?;
            if let Some(i) = self.pending.take() {
                if let Step::Ask(ask) = &mut self.steps[i] {
                    ask.line = n;
                    ask.played = Some(action);
                    if matches!(ask.recorded, Answer::Action(_)) {
                        ask.recorded = Answer::Action(action);
                    }
                }
            }
            self.open = None;
        }
        self.tell(ToBot::Event(e.seen_by(self.seat)));
        Ok(())
    }

    /// The decision due now, opened at its first line: the request goes out
    /// (an id taken) unless the fallback plays the seat.
    fn open_decision(&mut self) -> Result<&Open, String> {
        if self.open.is_none() {
            let game = self.before.as_ref().ok_or("a line before the header")?;
            let Some(due) = game.to_act() else {
                return Err("a fault for a request after the game ended".into());
            };
            let id = (!self.replaced[due.index()]).then(|| {
                self.next_id += 1;
                self.next_id - 1
            });
            if let (Some(id), true, false) = (id, due == self.seat, self.gone) {
                self.asked += 1;
                let request = Request::for_decision(game, id, self.time_ms)
                    .ok_or("a decision is due but the rules have none")?;
                self.pending = Some(self.steps.len());
                self.steps.push(Step::Ask(Box::new(Ask {
                    number: self.asked,
                    line: 0,
                    deal: self.deal,
                    request,
                    game: game.clone(),
                    // A stand-in: a fault line or the decision line says what
                    // it was (`build` drops a request the file ends before).
                    recorded: Answer::Action(first_legal(game)),
                    played: None,
                    stale: false,
                    stale_ends: self.max_faults.is_some_and(|m| self.faults + 1 >= m),
                })));
            }
            self.open = Some(Open { seat: due, id });
        }
        Ok(self.open.as_ref().expect("opened above"))
    }
}
