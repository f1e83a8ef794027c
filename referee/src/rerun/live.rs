//! The live bot's side: started as a `play` seat's bot is started
//! ([`crate::session::start_alone`]), sent the script's messages, and timed and
//! judged at each request as the table judges a reply ([`read_reply`],
//! [`DecisionClock`]).
//!
//! The wait for an answer is a small copy of the table's (`Table::await_reply`)
//! rather than a call to it: the table's records a live game (faults into the
//! transcript, the time bank, the timings sidecar, fault notices to five other
//! seats), and here there is no game to record, only an answer to compare.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::wire::ToBot;

use crate::bot::Incoming;
use crate::clock::DecisionClock;
use crate::config::TableSpec;
use crate::fault::FaultKind;
use crate::player::Player;
use crate::reply::{read_reply, Reply};

use super::script::{Answer, Ask, Script, Step};

/// One request, both answers.
pub struct Compared<'a> {
    pub ask: &'a Ask,
    pub live: Answer,
    /// Replies naming another request id read before the answer (at a table
    /// the first is a `stale` fault that does not end the request).
    pub stale: u32,
}

impl Compared<'_> {
    /// The same answer, and a stale reply before it in both games or neither
    /// (one is a fault line in the transcript).
    pub fn same(&self) -> bool {
        self.ask.recorded.same_as(&self.live) && self.ask.stale == (self.stale > 0)
    }
}

/// How far the replay went.
pub struct Run<'a> {
    /// Every request compared, in order; the last is where it stopped.
    pub compared: Vec<Compared<'a>>,
    /// The seat's requests in the recorded game.
    pub requests: u32,
}

/// Starts the bot and replays `script` to it: to the first request whose live
/// answer differs, or to request `at` (`Some`), or to the end. `Err` when the
/// bot does not start.
pub async fn replay<'a>(
    cfg: &TableSpec,
    stderr_dir: &Path,
    script: &'a Script,
    at: Option<u32>,
) -> anyhow::Result<Run<'a>> {
    let seat = script.seat.index();
    let slot = crate::session::start_alone(cfg, stderr_dir, seat, &crate::report::Troubles).await?;
    let mut p = slot.player;
    if let Some(f) = p.gone().cloned() {
        p.shutdown(Duration::ZERO).await;
        anyhow::bail!(
            "nothing was replayed: the bot did not start ({})",
            crate::names::printable(&f.detail)
        );
    }
    let mut talk = Talk {
        cfg,
        timed_out: BTreeSet::new(),
    };
    let mut compared = Vec::new();
    for step in &script.steps {
        match step {
            Step::Tell(line) => p.queue_line(line),
            Step::Ask(ask) => {
                let (live, stale) = talk.ask(&mut p, ask).await;
                let c = Compared { ask, live, stale };
                let gone = matches!(&c.live, Answer::Fault { kind, .. } if kind.is_fatal());
                let stop = match at {
                    Some(k) => ask.number >= k,
                    None => !c.same(),
                };
                compared.push(c);
                if stop || gone {
                    break;
                }
            }
        }
    }
    p.queue(&ToBot::Bye {
        reason: "session over".into(),
    });
    p.shutdown(cfg.time.shutdown).await;
    Ok(Run {
        compared,
        requests: script.requests(),
    })
}

struct Talk<'a> {
    cfg: &'a TableSpec,
    /// Requests that timed out: a late answer to one is discarded, as the
    /// table discards it.
    timed_out: BTreeSet<u64>,
}

impl Talk<'_> {
    /// Sends the request and waits for the answer (or the fault that ends it).
    async fn ask(&mut self, p: &mut Player, ask: &Ask) -> (Answer, u32) {
        let time = self.cfg.time;
        let (id, decision) = (ask.request.id, ask.request.decision);
        p.queue(&ToBot::Request(ask.request.clone()));
        let allowed = time.decision.map(|d| d + time.bank);
        let by = Instant::now() + allowed.map_or(time.write, |a| a + time.grace);
        if p.flush(Some(time.write)).await.is_err() {
            return (ended(p, "closed its stdin", by).await, 0);
        }
        let clock = DecisionClock::start(&time, allowed, p.cpu_clock());
        let mut stale = 0;
        loop {
            let fault = |kind, detail: String| Answer::Fault { kind, detail };
            match p.next_line(clock.wake()).await {
                None => {
                    let now = Instant::now();
                    if !clock.expired(now, clock.used(now)) {
                        continue; // a CPU-clock tick with time left
                    }
                    self.timed_out.insert(id);
                    return (fault(FaultKind::Timeout, clock.timeout_reason()), stale);
                }
                Some(Incoming::Line { bytes, at }) => {
                    match read_reply(&bytes, id, decision, &ask.game, stale > 0) {
                        Reply::Action(_) if clock.over(clock.used(at)) => {
                            self.timed_out.insert(id);
                            return (fault(FaultKind::Timeout, clock.timeout_reason()), stale);
                        }
                        Reply::Action(action) => return (Answer::Action(action), stale),
                        Reply::Other(other) => {
                            if self.timed_out.remove(&other) {
                                continue; // a late answer: discarded
                            }
                            stale += 1;
                            // The table's rule: the first stale reply is a
                            // fault, which may reach the seat's fault limit.
                            if stale == 1 && ask.stale_ends {
                                let detail = format!(
                                    "a reply to request {other} while {id} is pending; ignored"
                                );
                                // The stale reply is the answer here, not a
                                // fault on the way to one.
                                return (fault(FaultKind::Stale, detail), 0);
                            }
                        }
                        Reply::Unread => stale += 1,
                        Reply::Fault(f) => return (fault(f.kind, f.detail), stale),
                    }
                }
                // Only once told of a stale reply, which a replay never does.
                Some(Incoming::Stale { .. }) => stale += 1,
                Some(Incoming::Oversized { .. }) => {
                    let detail = format!("a line longer than {} bytes", time.max_line);
                    return (fault(FaultKind::Oversized, detail), stale);
                }
                Some(Incoming::Eof { .. }) => {
                    let by = clock.exit_by(time.write);
                    return (ended(p, "closed its stdout", by).await, stale);
                }
                Some(Incoming::Error { message, .. }) => {
                    let by = clock.exit_by(time.write);
                    let what = format!("could not be read ({message})");
                    return (ended(p, &what, by).await, stale);
                }
            }
        }
    }
}

/// A bot whose pipe closed: as the player tells it, the table's rule
/// (`Table::closed`).
async fn ended(p: &mut Player, what: &str, by: Instant) -> Answer {
    let fault = p.why_closed(Some(by)).await.fault(what);
    Answer::Fault {
        kind: fault.kind,
        detail: fault.detail,
    }
}
