//! One remote seat's link, on the referee's side: it joins the seat's
//! in-memory pipes (the table's [`crate::bot::Channel`] at the other end) to
//! whichever connection currently serves the seat. Every line the referee
//! sends is kept until the connector acknowledges it (heartbeats carry the
//! count), so a seat that reconnects within the grace is sent what it
//! missed; the connector does the same the other way. A connection of a
//! fresh bot process (a restarted `referee connect`) is sent the seat's
//! start instead: `hello`, the game's `game_start` and the request pending,
//! if any (a request carries the seat's whole view); its `hello` is the
//! link's, never the table's. Past the grace, or once the table ends the
//! seat, the link ends, and a dropped seat reads end of file at the table:
//! a `closed` fault, with the reason recorded. While the link is down (a
//! restarted bot: until its `hello`) the seat's pending decision's clock
//! stops, within the game's budget ([`super::downtime`]).
//!
//! Nothing here waits on the socket for long: writes give up after
//! [`WRITE_LIMIT`] (the connection counts as dropped), and the table's pipes
//! are drained into memory whatever the socket does, so no connection can
//! block a table.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;

use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::downtime::Downtime;
use super::frame::{bot_line, control, Frame, FrameReader};
use super::handshake::{self, Reader, Welcome, Writer};
use super::heartbeat::{self, Latency};

/// How long a write to a connection may take before it counts as dropped.
pub const WRITE_LIMIT: Duration = Duration::from_secs(2);
/// The most the referee keeps for a seat that is away.
const MAX_UNACKED: usize = 16 << 20;
/// How long a seat's connector has to finish after `bye`.
const BYE_LIMIT: Duration = Duration::from_secs(5);
const PIPE: usize = 64 * 1024;

/// A seat connection that proved itself, for this seat.
pub struct Arrival {
    /// How many of the referee's lines it has.
    pub received: u64,
    /// It serves a bot process that has had nothing of this seat yet.
    pub fresh: bool,
    pub reader: Reader,
    pub writer: Writer,
}

pub struct Params {
    pub max_line: usize,
    pub grace: Duration,
    /// Whether the seat's connection is lost (and may be taken up by a
    /// restarted connector), for the hub.
    pub away: Arc<AtomicBool>,
    /// Called when the connection is lost: the hub asks the name's
    /// connector (a restarted one starts a bot for the seat).
    pub on_lost: Box<dyn Fn() + Send>,
}

/// The table's ends of a remote seat.
pub struct SeatPipes {
    /// The bot's lines, for the channel to read.
    pub reader: DuplexStream,
    /// The referee's lines, written by the channel.
    pub writer: DuplexStream,
    pub latency: Arc<Latency>,
    /// The link-down time its pending decisions may have off their clock.
    pub down: Arc<Downtime>,
    /// Why the link ended, if it dropped the seat.
    pub why: Arc<Mutex<Option<String>>>,
}

/// The link's ends of the same pipes.
pub struct Ends {
    from_table: FrameReader<DuplexStream>,
    to_table: Option<DuplexStream>,
    latency: Arc<Latency>,
    down: Arc<Downtime>,
    why: Arc<Mutex<Option<String>>>,
}

pub fn pipes(latency: Arc<Latency>, down: Arc<Downtime>) -> (SeatPipes, Ends) {
    let (table_w, link_r) = tokio::io::duplex(PIPE);
    let (link_w, table_r) = tokio::io::duplex(PIPE);
    let why = Arc::new(Mutex::new(None));
    let pipes = SeatPipes {
        reader: table_r,
        writer: table_w,
        latency: latency.clone(),
        down: down.clone(),
        why: why.clone(),
    };
    let ends = Ends {
        // The referee's own lines: bounded by what it sends, never long.
        from_table: FrameReader::new(link_r, usize::MAX),
        to_table: Some(link_w),
        latency,
        down,
        why,
    };
    (pipes, ends)
}

struct Link {
    p: Params,
    ends: Ends,
    /// The referee's lines not yet acknowledged, framed; `out[0]` is line
    /// number `out_base` (from 0).
    out: VecDeque<Vec<u8>>,
    out_base: u64,
    /// Bot lines received.
    received: u64,
    conn: Option<(Reader, Writer)>,
    /// When the connection dropped (`None`: connected, or not yet once).
    lost: Option<Instant>,
    /// When the table ended the seat.
    bye: Option<Instant>,
    pings: VecDeque<(u64, Instant)>,
    next_ping: u64,
    heard: Instant,
    /// What a fresh bot process is sent to take the seat over.
    start: SeatStart,
    /// A bot line has reached the table: it has had the seat's `hello`.
    greeted: bool,
    /// The next bot line is a restarted bot's `hello`, for the link.
    hello_due: bool,
}

/// The referee's lines a bot needs to take a seat over mid-session, framed.
#[derive(Default)]
struct SeatStart {
    hello: Option<Vec<u8>>,
    game_start: Option<Vec<u8>>,
    /// The request not yet answered, and its id.
    request: Option<(u64, Vec<u8>)>,
}

impl SeatStart {
    fn lines(&self) -> VecDeque<Vec<u8>> {
        let request = self.request.as_ref().map(|(_, r)| r);
        (self.hello.iter().chain(&self.game_start).chain(request))
            .cloned()
            .collect()
    }
}

/// What the link reads of a protocol line: its type, and its id (a request's
/// or a reply's).
#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<u64>,
}

fn kind(line: &[u8]) -> Option<Kind> {
    serde_json::from_slice(line).ok()
}

/// Runs the link until the table ends the seat or the seat is lost.
pub async fn run(p: Params, mut arrivals: mpsc::Receiver<Arrival>, ends: Ends) {
    let mut link = Link {
        p,
        ends,
        out: VecDeque::new(),
        out_base: 0,
        received: 0,
        conn: None,
        lost: None,
        bye: None,
        pings: VecDeque::new(),
        next_ping: 0,
        heard: Instant::now(),
        start: SeatStart::default(),
        greeted: false,
        hello_due: false,
    };
    let mut beat = tokio::time::interval(heartbeat::PERIOD);
    loop {
        let go_on = tokio::select! {
            arrival = arrivals.recv() => match arrival {
                Some(a) => link.attach(a).await,
                None => false,
            },
            frame = link.ends.from_table.next(), if link.bye.is_none() => link.table_said(frame).await,
            frame = next_frame(&mut link.conn) => link.connector_said(frame).await,
            _ = beat.tick() => link.tick().await,
        };
        if !go_on {
            return;
        }
    }
}

async fn next_frame(conn: &mut Option<(Reader, Writer)>) -> Frame {
    match conn {
        Some((reader, _)) => reader.next().await,
        None => std::future::pending().await,
    }
}

impl Link {
    /// Writes to the connection; a write that fails drops it.
    async fn send(&mut self, bytes: &[u8]) {
        if let Some((_, w)) = self.conn.as_mut() {
            if !handshake::send(w, bytes, WRITE_LIMIT).await {
                self.drop_conn();
            }
        }
    }

    fn drop_conn(&mut self) {
        if self.conn.take().is_some() {
            self.lost = Some(Instant::now());
            self.ends.down.set_down(true);
            self.p.away.store(true, Ordering::SeqCst);
            (self.p.on_lost)();
        }
    }

    async fn attach(&mut self, a: Arrival) -> bool {
        if a.fresh {
            // A bot that has had nothing: the seat's start, from its line 0;
            // what the last one missed is no use to it.
            (self.out, self.out_base, self.received) = (self.start.lines(), 0, 0);
            self.hello_due = self.greeted;
        } else {
            self.ack(a.received);
        }
        // A restarted bot's link is down, for the clock, until its hello.
        self.ends.down.set_down(self.hello_due);
        self.p.away.store(false, Ordering::SeqCst);
        self.conn = Some((a.reader, a.writer));
        (self.lost, self.heard) = (None, Instant::now());
        self.pings.clear();
        let welcome = Welcome {
            received: self.received,
            max_line: self.p.max_line,
            grace_ms: self.p.grace.as_millis() as u64,
        };
        let mut bytes = control(
            "welcome",
            &serde_json::to_string(&welcome).expect("serializes"),
        );
        // What it missed, in order, in the same write.
        bytes.extend(self.out.iter().flatten());
        if self.bye.is_some() {
            bytes.extend(control("bye", ""));
        }
        self.send(&bytes).await;
        true
    }

    /// The connector has the referee's first `n` lines.
    fn ack(&mut self, n: u64) {
        while self.out_base < n && self.out.pop_front().is_some() {
            self.out_base += 1;
        }
    }

    async fn table_said(&mut self, frame: Frame) -> bool {
        match frame {
            Frame::Line(line) => {
                let mut bytes = Vec::with_capacity(line.len() + 2);
                bot_line(&mut bytes, &line);
                self.note_table_line(&line, &bytes);
                self.send(&bytes).await;
                self.out.push_back(bytes);
                if self.out.iter().map(Vec::len).sum::<usize>() > MAX_UNACKED {
                    return self.fail("the connector acknowledged nothing of 16 MiB sent");
                }
                true
            }
            // The table closed the seat: `bye`, then the connector's last words.
            _ => {
                self.bye = Some(Instant::now());
                self.send(&control("bye", "")).await;
                self.conn.is_some()
            }
        }
    }

    /// Keeps what a fresh bot would need of the referee's line `line`
    /// (`framed` for the wire).
    fn note_table_line(&mut self, line: &[u8], framed: &[u8]) {
        let Some(k) = kind(line) else { return };
        let start = &mut self.start;
        match k.kind.as_str() {
            "hello" => start.hello = Some(framed.to_vec()),
            "game_start" => {
                (start.game_start, start.request) = (Some(framed.to_vec()), None);
                self.ends.down.new_game();
            }
            "request" => {
                start.request = Some((k.id.unwrap_or(0), framed.to_vec()));
                self.ends.down.set_pending(true);
            }
            "game_end" => {
                (start.game_start, start.request) = (None, None);
                self.ends.down.set_pending(false);
            }
            // The seat is sent nothing while its request is pending: a line
            // after it means its decision is over (answered, or timed out),
            // and a cut from now on stops no clock. The request is kept for a
            // fresh bot until answered (one that timed out is only late).
            _ => self.ends.down.set_pending(false),
        }
    }

    /// A bot line: a restarted bot's hello is the link's; a reply to the
    /// pending request settles it; the table gets the rest.
    async fn bot_said(&mut self, line: Vec<u8>) -> bool {
        self.received += 1;
        if std::mem::take(&mut self.hello_due) {
            let hello = kind(&line).is_some_and(|k| k.kind == "hello");
            if !hello {
                return self.fail(
                    "the bot restarted for the seat did not open with its hello (a restarted \
                     connector's bot takes the seat over: docs/remote.md)",
                );
            }
            self.ends.down.set_down(false);
            return true;
        }
        let pending = self.start.request.as_ref().map(|(id, _)| *id);
        if pending.is_some() && kind(&line).is_some_and(|k| k.kind == "reply" && k.id == pending) {
            self.start.request = None;
            self.ends.down.set_pending(false);
        }
        let mut bytes = line;
        bytes.push(b'\n');
        self.pass_on(&bytes).await;
        true
    }

    async fn connector_said(&mut self, frame: Frame) -> bool {
        self.heard = Instant::now();
        match frame {
            Frame::Line(line) => return self.bot_said(line).await,
            Frame::Long => return self.oversized().await,
            Frame::Control(word, rest) => match word.as_str() {
                "oversized" => return self.oversized().await,
                "pong" => self.pong(&rest),
                "eof" => drop(self.ends.to_table.take()),
                _ => {}
            },
            Frame::BadControl | Frame::Eof => {
                self.drop_conn();
                return self.bye.is_none();
            }
        }
        true
    }

    /// A line longer than the limit: the channel is given one as long, and
    /// judges it as it would a local bot's.
    async fn oversized(&mut self) -> bool {
        if std::mem::take(&mut self.hello_due) {
            return self.fail("the bot restarted for the seat opened with an oversized line");
        }
        self.received += 1;
        let mut filler = vec![b'x'; self.p.max_line + 1];
        filler.push(b'\n');
        self.pass_on(&filler).await;
        true
    }

    async fn pass_on(&mut self, bytes: &[u8]) {
        self.greeted = true;
        if let Some(w) = self.ends.to_table.as_mut() {
            if w.write_all(bytes).await.is_err() {
                self.ends.to_table = None;
            }
        }
    }

    fn pong(&mut self, rest: &str) {
        let mut words = rest.split(' ').map(|w| w.parse::<u64>().ok());
        let (Some(Some(n)), Some(Some(got))) = (words.next(), words.next()) else {
            return;
        };
        self.ack(got);
        while let Some(&(k, at)) = self.pings.front() {
            if k > n {
                break;
            }
            self.pings.pop_front();
            if k == n {
                self.ends.latency.sample(at.elapsed());
            }
        }
    }

    async fn tick(&mut self) -> bool {
        if let Some(bye) = self.bye {
            return self.conn.is_some() && bye.elapsed() < BYE_LIMIT;
        }
        if let Some(lost) = self.lost {
            if lost.elapsed() > self.p.grace {
                let ms = self.p.grace.as_millis();
                return self.fail(&format!(
                    "disconnected: the link dropped and did not come back within {ms} ms \
                     (--reconnect-grace-ms)"
                ));
            }
            return true;
        }
        if self.conn.is_none() {
            return true;
        }
        if self.heard.elapsed() > heartbeat::PERIOD * heartbeat::SILENT_BEATS {
            self.drop_conn();
            return true;
        }
        let n = self.next_ping;
        self.next_ping += 1;
        self.pings.push_back((n, Instant::now()));
        if self.pings.len() > 64 {
            self.pings.pop_front();
        }
        let line = control("ping", &format!("{n} {}", self.received));
        self.send(&line).await;
        true
    }

    /// The seat is lost: the table reads end of file, and `why`.
    fn fail(&mut self, why: &str) -> bool {
        *self.ends.why.lock().expect("not poisoned") = Some(why.to_owned());
        self.ends.to_table = None;
        false
    }
}
