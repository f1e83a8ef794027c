//! What sits in a seat: a [`Player`]. The table talks to a player — queue a
//! message, deliver it, flush, the next line by a deadline, why its channel
//! closed, the source of its CPU clock — and never asks what kind it is.
//!
//! An enum inside one type rather than a trait object: the kinds are the
//! referee's own (a bot over a line channel, with the process behind it when
//! the referee started one; a strategy the referee runs itself, which is
//! `inproc:*` and the human seat), not a plug-in point; most of the
//! operations are async, which a trait object could offer only through boxed
//! futures; and every `match` on the kind is in this file. A bot over another
//! transport (a socket) needs no new kind: its transport makes a [`Channel`],
//! and [`Player::over`] seats it.

use std::collections::BTreeMap;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::rules::{Action, Decision};
use schmier_protocol::wire::{Request, ToBot};
use schmier_sample_bots::Strategy;

use crate::bot::{BotProcess, Channel, CpuSource, Incoming, Spawn, WriteError};
use crate::fault::{Fault, FaultKind};

/// One seat's bot, however it is connected, and what the referee remembers of it.
#[derive(Default)]
pub struct Player {
    link: Link,
    /// Why it can no longer play (failed start, crash, closed pipe): the
    /// fallback plays for it from then on (until it is restarted, if the policy
    /// restarts bots).
    gone: Option<Fault>,
    /// Requests that timed out before it answered them. A late answer to one
    /// of these is discarded (noted in the timings sidecar), never a second
    /// fault, whenever it arrives — in this game or a later one.
    timed_out: BTreeMap<u64, Decision>,
    /// When it was asked to start (spawned, or a held one given the word):
    /// for the debug log's start-to-hello time (`said_hello`).
    asked: Option<Instant>,
}

#[derive(Default)]
enum Link {
    /// Nothing: not started, or it failed to start.
    #[default]
    None,
    /// A bot at the other end of a line channel.
    Piped(Box<Piped>),
    /// A strategy the referee runs itself. It decides from its request alone
    /// and is told nothing else: no channel, no clock, never late.
    InProcess(Box<dyn Strategy + Send>),
}

struct Piped {
    channel: Channel,
    /// The process behind the channel (its stdin and stdout), if the referee
    /// started one: its exit status tells a crash from a closed channel, its
    /// process tree is the CPU clock, and it is ended with the player.
    process: Option<BotProcess>,
    /// Frozen by [`Player::freeze`] (its process has a freezer).
    frozen: bool,
    /// A bot over a network link (`remote/`): its clock's credit, and why
    /// the link dropped it.
    remote: Option<RemoteNotes>,
}

/// What a bot over a network link tells the table beyond its channel.
pub struct RemoteNotes {
    /// The measured round trip, credited to each decision.
    pub latency: Arc<crate::remote::heartbeat::Latency>,
    /// The time its link is down while a decision is pending, taken off
    /// that decision's clock (within a per-game budget).
    pub down: Arc<crate::remote::downtime::Downtime>,
    /// Why the link dropped the seat, once it has.
    pub why: Arc<std::sync::Mutex<Option<String>>>,
}

impl Piped {
    fn freeze(&mut self, frozen: bool) {
        if let Some(process) = &self.process {
            if frozen != self.frozen {
                process.freeze(frozen);
                self.frozen = frozen;
            }
        }
    }
}

/// Why a player's channel closed, as the player tells it: what it did, not
/// how long the referee looked.
#[derive(Debug)]
pub enum Closed {
    /// Its process ended by the deadline it was given: a crash.
    Exited(ExitStatus),
    /// It closed its end of the channel but is still there.
    StillThere,
    /// Its network link dropped it, for this reason (`remote/link.rs`).
    Dropped(String),
}

impl Closed {
    /// The fault of a player whose channel closed as `what` says.
    pub fn fault(self, what: &str) -> Fault {
        match self {
            Closed::Exited(status) => {
                Fault::new(FaultKind::Crash, format!("{what} and exited: {status}"))
            }
            Closed::StillThere => Fault::new(FaultKind::Closed, format!("{what} but kept running")),
            Closed::Dropped(why) => Fault::new(FaultKind::Closed, why),
        }
    }
}

impl Player {
    /// Starts a bot process.
    pub fn spawn(spec: &Spawn) -> std::io::Result<Player> {
        let asked = Instant::now();
        let (process, channel) = BotProcess::spawn(spec)?;
        Ok(Player::piped(channel, Some(process)).asked_at(asked))
    }

    /// [`Player::spawn`] without blocking the thread (see
    /// [`BotProcess::spawn_async`]).
    pub async fn spawn_async(spec: &Spawn) -> std::io::Result<Player> {
        let asked = Instant::now();
        let (process, channel) = BotProcess::spawn_async(spec).await?;
        Ok(Player::piped(channel, Some(process)).asked_at(asked))
    }

    fn asked_at(mut self, at: Instant) -> Player {
        self.asked = Some(at);
        self
    }

    /// Its hello arrived `at`: logs (debug) how long after it was asked to
    /// start (`scripts/hello_times.py` reads these lines).
    pub fn said_hello(&self, at: Instant) {
        if let Link::Piped(p) = &self.link {
            if let Some(process) = &p.process {
                process.started();
            }
        }
        if let (Some(asked), Link::Piped(p)) = (self.asked, &self.link) {
            let pid = p.process.as_ref().map_or(0, BotProcess::pid);
            tracing::debug!(
                "bot {pid} said hello {} us after its start",
                at.saturating_duration_since(asked).as_micros()
            );
        }
    }

    /// A bot at the other end of `channel` with no process of the referee's
    /// behind it (a socket's, in-memory pipes in tests): a closed channel is
    /// `closed`, never a crash, and the wall clock times it.
    pub fn over(channel: Channel) -> Player {
        Player::piped(channel, None)
    }

    fn piped(channel: Channel, process: Option<BotProcess>) -> Player {
        Player::with(Link::Piped(Box::new(Piped {
            channel,
            process,
            frozen: false,
            remote: None,
        })))
    }

    /// A bot over a network link: [`Player::over`] its channel, with what the
    /// link measures and knows.
    pub fn over_network(channel: Channel, notes: RemoteNotes) -> Player {
        let mut player = Player::over(channel);
        if let Link::Piped(p) = &mut player.link {
            p.remote = Some(notes);
        }
        player
    }

    /// How much of each decision's time is not the bot's: a network link's
    /// measured round trip, capped (`None`: no link, nothing to credit).
    pub fn latency_credit(&self) -> Option<Duration> {
        match &self.link {
            Link::Piped(p) => (p.remote.as_ref()).map(|r| r.latency.credit()),
            _ => None,
        }
    }

    /// Its link's down time, which stops a pending decision's clock (`None`:
    /// no link).
    pub fn link_down(&self) -> Option<Arc<crate::remote::downtime::Downtime>> {
        match &self.link {
            Link::Piped(p) => (p.remote.as_ref()).map(|r| r.down.clone()),
            _ => None,
        }
    }

    /// Whether it plays over a network link.
    pub fn is_remote(&self) -> bool {
        matches!(&self.link, Link::Piped(p) if p.remote.is_some())
    }

    /// A strategy the referee runs itself (`inproc:*`, the human seat).
    pub fn in_process(strategy: Box<dyn Strategy + Send>) -> Player {
        Player::with(Link::InProcess(strategy))
    }

    /// A bot that could not be started, for `fault`'s reason.
    pub fn failed(fault: Fault) -> Player {
        Player {
            gone: Some(fault),
            ..Player::default()
        }
    }

    fn with(link: Link) -> Player {
        Player {
            link,
            ..Player::default()
        }
    }

    /// Why it can no longer play, if it cannot.
    pub fn gone(&self) -> Option<&Fault> {
        self.gone.as_ref()
    }

    /// It can no longer play, for `fault`'s reason (the first reason stays).
    pub fn retire(&mut self, fault: Fault) {
        self.gone.get_or_insert(fault);
    }

    /// Whether it is there to be told and asked things.
    pub fn listening(&self) -> bool {
        self.gone.is_none() && !matches!(self.link, Link::None)
    }

    /// Queues `msg` for the next write; returns the bytes queued (none for a
    /// player that is not listening, or is told nothing but its requests).
    pub fn queue(&mut self, msg: &ToBot) -> usize {
        match &mut self.link {
            Link::Piped(p) if self.gone.is_none() => p.channel.queue_json(msg),
            _ => 0,
        }
    }

    /// Queues one line as it is (a message already serialised).
    pub fn queue_line(&mut self, line: &[u8]) {
        if let Link::Piped(p) = &mut self.link {
            if self.gone.is_none() {
                p.channel.queue(line);
            }
        }
    }

    /// Drops what is queued (nobody listens to it any more).
    pub fn discard_queue(&mut self) {
        if let Link::Piped(p) = &mut self.link {
            p.channel.discard_queue();
        }
    }

    /// Whether its frozen process was handed everything queued for it
    /// ([`Player::deliver_now`]): it then finds it all there when thawed.
    pub fn frozen_and_written(&self) -> bool {
        matches!(&self.link, Link::Piped(p) if p.frozen && p.channel.written())
    }

    /// Hands over what is queued as far as the channel takes it now, never
    /// waiting; `false` if the channel is closed (found out for good by the
    /// next [`Player::flush`]).
    pub fn deliver_now(&mut self) -> bool {
        match &mut self.link {
            Link::Piped(p) if self.gone.is_none() => p.channel.try_flush(),
            _ => true,
        }
    }

    /// Writes everything queued, giving up after `limit`. A frozen bot runs
    /// while the write waits (a full pipe is emptied only by a reader that
    /// runs), then is frozen again.
    pub async fn flush(&mut self, limit: Option<Duration>) -> Result<(), WriteError> {
        match &mut self.link {
            Link::Piped(p) if !p.frozen => p.channel.flush(limit).await,
            Link::Piped(p) => {
                p.freeze(false);
                let written = p.channel.flush(limit).await;
                p.freeze(true);
                written
            }
            _ => Ok(()),
        }
    }

    /// Freezes it (`true`) until it is thawed (`false`), if it is a process
    /// of the referee's started with a freezer (`--freeze-waiting`): while
    /// frozen, none of its tasks runs, and what it is sent waits in its pipe.
    pub fn freeze(&mut self, frozen: bool) {
        if let Link::Piped(p) = &mut self.link {
            p.freeze(frozen);
        }
    }

    /// Lets a held sandbox (built at the lowest priority) run its bot at the
    /// usual one, pinned to its CPUs: see [`BotProcess::release`]. Then
    /// queue the word to run it; where the pinning failed, close its stdin
    /// instead, so that the bot never runs (its start fails).
    pub fn release(&mut self) {
        self.asked = Some(Instant::now());
        if let Link::Piped(p) = &mut self.link {
            if let Some(process) = &p.process {
                if !process.release() {
                    // Without its word the bot never runs: its start fails.
                    p.channel.close_writer();
                    return;
                }
            }
            p.channel.queue(b"");
        }
    }

    /// Request `during` has had its stale reply (`None`: it is over): see
    /// [`Channel::skip_stale`].
    pub fn skip_stale(&mut self, during: Option<u64>) {
        if let Link::Piped(p) = &self.link {
            p.channel.skip_stale(during);
        }
    }

    /// The next thing it sent, or `None` at `deadline`. A player without a
    /// channel has nothing to send: end of file.
    pub async fn next_line(&mut self, deadline: Option<Instant>) -> Option<Incoming> {
        match &mut self.link {
            Link::Piped(p) => p.channel.next_line(deadline).await,
            _ => Some(Incoming::Eof { at: Instant::now() }),
        }
    }

    /// Why its channel closed: a process that ends by `by` (`None`: however
    /// long that takes) exited, one still running by then only closed it.
    /// A frozen one runs while the referee waits (a process that is exiting
    /// must be able to finish).
    pub async fn why_closed(&mut self, by: Option<Instant>) -> Closed {
        let Link::Piped(p) = &mut self.link else {
            return Closed::StillThere;
        };
        let frozen = p.frozen;
        p.freeze(false);
        let closed = match p.process.as_mut() {
            Some(process) => match process.exit_status_by(by).await {
                Some(status) => Closed::Exited(status),
                None => Closed::StillThere,
            },
            None => match p.remote.as_ref().and_then(|r| r.why.lock().ok()?.clone()) {
                Some(why) => Closed::Dropped(why),
                None => Closed::StillThere,
            },
        };
        p.freeze(frozen);
        closed
    }

    /// Where its CPU time is read for `--clock cpu` (`None`: the wall clock
    /// times it).
    pub fn cpu_clock(&self) -> Option<CpuSource> {
        match &self.link {
            Link::Piped(p) => (p.process.as_ref()).map(BotProcess::cpu_source),
            _ => None,
        }
    }

    /// A player that decides inside the referee answers `request` now;
    /// `None`: the request goes over its channel and the answer comes later.
    pub fn decide_now(&mut self, request: &Request) -> Option<Action> {
        match &mut self.link {
            Link::InProcess(strategy) => Some(strategy.decide(request)),
            _ => None,
        }
    }

    /// Request `id` (a `decision`) timed out before it answered.
    pub fn timed_out(&mut self, id: u64, decision: Decision) {
        self.timed_out.insert(id, decision);
    }

    /// The decision of request `id` if it had timed out: a reply to it is late,
    /// not stale (and only the first one counts).
    pub fn late(&mut self, id: u64) -> Option<Decision> {
        self.timed_out.remove(&id)
    }

    /// Queues `bye` if it is still listening, else drops what is queued.
    pub fn say_bye(&mut self, bye: &[u8]) {
        match self.gone {
            None => self.queue_line(bye),
            Some(_) => self.discard_queue(),
        }
    }

    /// Ends it: writes what is queued (within `grace`), closes its channel,
    /// and gives its process (if it has one) `grace` to exit before it is
    /// killed with its whole tree.
    pub async fn shutdown(self, grace: Duration) {
        if let Link::Piped(mut p) = self.link {
            p.freeze(false);
            let Piped {
                mut channel,
                process,
                ..
            } = *p;
            let _ = channel.flush(Some(grace)).await;
            channel.close_writer();
            if let Some(process) = process {
                process.shutdown(grace).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::{Game, RulesConfig};

    /// A strategy the referee runs itself is asked directly, is told nothing
    /// else, never sends a line and has no CPU clock of its own.
    #[tokio::test]
    async fn an_in_process_player_decides_at_once_and_has_no_channel() {
        let strategy = schmier_sample_bots::by_name("random").expect("a built-in bot");
        let mut player = Player::in_process(strategy);
        assert!(player.listening());
        let (game, _) = Game::new(5, RulesConfig::default());
        let request = Request::for_decision(&game, 1, None).expect("a decision is due");
        let action = player.decide_now(&request).expect("decided at once");
        assert!(game.clone().apply(action).is_ok(), "{action:?}");
        assert_eq!(player.queue(&ToBot::Request(request)), 0);
        assert!(player.cpu_clock().is_none());
        assert!(matches!(
            player.next_line(None).await,
            Some(Incoming::Eof { .. })
        ));
        assert!(player.flush(None).await.is_ok());
    }

    #[tokio::test]
    async fn a_player_that_failed_to_start_is_gone_with_its_first_reason() {
        let mut player = Player::failed(Fault::new(FaultKind::Start, "not found"));
        assert!(!player.listening());
        player.retire(Fault::new(FaultKind::Crash, "later"));
        assert_eq!(player.gone().map(|f| f.kind), Some(FaultKind::Start));
        assert!(player
            .decide_now(&{
                let (game, _) = Game::new(5, RulesConfig::default());
                Request::for_decision(&game, 1, None).unwrap()
            })
            .is_none());
        assert!(matches!(player.why_closed(None).await, Closed::StillThere));
    }
}
