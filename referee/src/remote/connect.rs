//! `referee connect`: the bot side of a remote seat. It proves its token on
//! a control connection, and for each seat the referee opens it starts the
//! bot command as `play` starts a bot (the same launch: its own working
//! directory, a clean environment, its own process group) and bridges the
//! bot's stdin and stdout to a connection of that seat, answering the
//! referee's heartbeats itself. A dropped connection is dialled again within
//! the referee's grace, and what either side missed is sent again; a referee
//! that stays silent (on a seat, or the control connection), or does not
//! answer a proof, counts as dropped. Each seat's first connection says its
//! bot is fresh: a connector restarted mid-game is asked for the seats whose
//! connection was lost and takes them over (the referee sends a fresh bot
//! the seat's start, `remote/link.rs`).
//!
//! The referee on the other end is not trusted with the owner's machine: it
//! starts no more bots at once than its token names (`--max-seats`), and
//! nothing it sends names a file here — a bot's stderr log is named by its
//! number in this run (`bot-N.log`), never by the referee's seat id, and
//! an existing file is never opened.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use tokio::time::Instant;

use super::frame::{bot_line, control, Frame};
use super::handshake::{self, Reader, Refused, Welcome, Writer, CONTROL, SEAT};
use super::token::Token;
use super::{tls, Stream};
use crate::bot::{Incoming, ResourceLimits, Spawn};
use crate::config::{BotSpec, Isolation};
use crate::player::Player;

#[derive(Args, Debug)]
pub struct ConnectArgs {
    /// The referee's ADDR:PORT, as it printed it (a host name is resolved).
    pub addr: String,
    /// The seat token the organiser handed over (OUT/tokens/NAME.token).
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// The SHA-256 of the referee's TLS certificate, as it printed it: the
    /// connection is TLS and trusts that certificate only. Without it the
    /// connection is plain TCP, which only a loopback address is served.
    #[arg(long, value_name = "SHA256")]
    pub fingerprint: Option<String>,
    /// Keep each bot's stderr in DIR/bot-N.log, N counting the bots this
    /// connector started (a name already taken is skipped, never opened);
    /// else it is discarded.
    #[arg(long, value_name = "DIR")]
    pub stderr_dir: Option<PathBuf>,
    /// The most bots to run at once [default: the SEATS its token file
    /// names, else 6]. As many seats again may wait for one to end; the
    /// referee's further requests are ignored.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_seats: Option<u32>,
    /// How long to keep trying to reach the referee at the start, and to get
    /// a dropped control connection back (the referee's grace, if longer).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub retry_ms: u64,
    /// The bot command, after `--`: its argv, never run through a shell.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// How to reach the referee and prove the token.
struct Dialer {
    addr: String,
    tls: Option<tokio_rustls::TlsConnector>,
    token: Token,
}

impl Dialer {
    async fn dial(&self) -> std::io::Result<Stream> {
        let tcp = tokio::net::TcpStream::connect(&self.addr).await?;
        let _ = tcp.set_nodelay(true);
        if !tcp.peer_addr()?.ip().is_loopback() && self.tls.is_none() {
            return Err(std::io::Error::other(
                "the referee is not on this machine: give --fingerprint (the referee printed \
                 it) to connect over TLS",
            ));
        }
        Ok(match &self.tls {
            Some(c) => Box::new(c.connect(tls::server_name(), tcp).await?),
            None => Box::new(tcp),
        })
    }

    async fn prove(&self, role: &str, seat: &str, resume: Resume) -> Result<Session, Refused> {
        let stream = (self.dial().await).map_err(|e| Refused::Broken(e.to_string()))?;
        let (received, fresh) = match resume {
            Resume::Fresh => (0, true),
            Resume::From(n) => (n, false),
        };
        handshake::prove_as(stream, &self.token, role, seat, received, fresh).await
    }

    /// Proves the token until it works, the referee refuses it, or `within`.
    async fn prove_within(
        &self,
        role: &str,
        seat: &str,
        resume: Resume,
        within: Duration,
    ) -> Result<Session, Refused> {
        let give_up = Instant::now() + within;
        loop {
            match self.prove(role, seat, resume).await {
                Err(Refused::Broken(why)) if Instant::now() < give_up => {
                    tracing::debug!("{role} {seat}: {why}; trying again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                other => return other,
            }
        }
    }
}

type Session = (Welcome, Reader, Writer);

/// What a connection carries on from.
#[derive(Clone, Copy)]
enum Resume {
    /// A bot process just started for the seat: it has had nothing.
    Fresh,
    /// The connection's, having had this many of the referee's lines.
    From(u64),
}

/// How long the referee's side of a connection may stay silent (it pings a
/// seat every 200 ms, a control connection every second) before this side
/// takes it for dropped and dials again.
const SEAT_SILENCE: Duration = Duration::from_secs(3);
const CONTROL_SILENCE: Duration = Duration::from_secs(10);

/// Without `--fingerprint`, an address that names only other machines is
/// refused at once: every try would fail the same way (issue 45: it was
/// retried for 30 s, silently). A name that does not resolve yet is left
/// to the retries.
fn refuse_plain_to_another_machine(addr: &str) -> anyhow::Result<()> {
    use std::net::ToSocketAddrs;
    let Ok(found) = addr.to_socket_addrs() else {
        return Ok(());
    };
    let found: Vec<std::net::SocketAddr> = found.collect();
    if !found.is_empty() && found.iter().all(|a| !a.ip().is_loopback()) {
        bail!(
            "{addr} is not this machine, and without --fingerprint the connection would not be \
             encrypted: give --fingerprint (the referee printed it beside the token) to connect \
             over TLS"
        );
    }
    Ok(())
}

/// `referee connect`.
pub fn main(args: &ConnectArgs) -> anyhow::Result<ExitCode> {
    let token = Token::read(&args.token_file)?;
    if args.fingerprint.is_none() {
        refuse_plain_to_another_machine(&args.addr)?;
    }
    let tls = match &args.fingerprint {
        Some(fp) => Some(tokio_rustls::TlsConnector::from(tls::client_config(
            &tls::parse_fingerprint(fp)?,
        )?)),
        None => None,
    };
    let text = shlex::try_join(args.command.iter().map(String::as_str)).unwrap_or_default();
    let bot = BotSpec::Command {
        argv: args.command.clone(),
        text,
        dir: None,
        env: Vec::new(),
    };
    let dialer = Arc::new(Dialer {
        addr: args.addr.clone(),
        tls,
        token,
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stderr_dir = args.stderr_dir.clone();
    if let Some(dir) = &stderr_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
    }
    let most = args.max_seats.unwrap_or(dialer.token.seats()) as usize;
    let seats = Seats {
        bot,
        stderr_dir,
        most,
        running: Arc::new(tokio::sync::Semaphore::new(most)),
        tasks: tokio::task::JoinSet::new(),
        started: HashSet::new(),
        logs: Arc::default(),
        ignored: 0,
    };
    let retry = Duration::from_millis(args.retry_ms);
    runtime.block_on(async move {
        crate::bot::install_cleanup();
        serve(dialer, seats, retry).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The seats this connector serves, and the bound on them.
struct Seats {
    bot: BotSpec,
    stderr_dir: Option<PathBuf>,
    /// The most bots running at once; as many seats again may wait.
    most: usize,
    running: Arc<tokio::sync::Semaphore>,
    tasks: tokio::task::JoinSet<()>,
    /// The seat ids the referee opened, so each is served once.
    started: HashSet<String>,
    /// Logs named so far, which numbers the next (shared by the seats'
    /// tasks, so two bots never take one number).
    logs: Arc<std::sync::atomic::AtomicU64>,
    /// Requests ignored, for the warning.
    ignored: u64,
}

impl Seats {
    /// The referee asked for seat `seat` (its `open` line's JSON).
    fn open(&mut self, rest: &str, dialer: &Arc<Dialer>, within: Duration) {
        let seat = serde_json::from_str::<serde_json::Value>(rest)
            .ok()
            .and_then(|v| v.get("seat")?.as_str().map(str::to_owned));
        let Some(seat) = seat.filter(|s| seat_id(s)) else {
            let shown: String = rest.chars().take(80).collect();
            return self.ignore(&format!("a malformed request: {shown:?}"));
        };
        if self.started.contains(&seat) {
            return;
        }
        while self.tasks.try_join_next().is_some() {}
        if self.tasks.len() >= 2 * self.most {
            let (n, most) = (self.tasks.len(), self.most);
            return self.ignore(&format!(
                "seat {seat}: {n} seats are served or waiting, the most for --max-seats {most}"
            ));
        }
        self.started.insert(seat.clone());
        let (dialer, bot, running) = (dialer.clone(), self.bot.clone(), self.running.clone());
        let logs = (self.stderr_dir.clone()).map(|dir| (dir, self.logs.clone()));
        self.tasks.spawn(async move {
            // Waits for a bot of its own to end before dialling its seat.
            let Ok(_running) = running.acquire_owned().await else {
                return;
            };
            let log = logs.map(|(dir, n)| free_log(&dir, &n, &seat));
            serve_seat(dialer, seat, bot, log, within).await;
        });
    }

    fn ignore(&mut self, why: &str) {
        self.ignored += 1;
        // The first few: a referee sending thousands must not flood the terminal.
        if self.ignored <= 10 {
            eprintln!("referee connect: not started: {why}");
        }
    }
}

/// Whether `seat` is a seat id as the referee makes them (`s` and digits):
/// anything else is a referee this connector does not know.
fn seat_id(seat: &str) -> bool {
    let digits = seat.strip_prefix('s').unwrap_or("");
    (1..=19).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The next log of this connector's: `DIR/bot-N.log`, N counting from 1
/// and skipping the names that exist. Never a file that exists: the log is
/// created new (`safe_create::create_new`), and a name someone else took
/// in between is not written at all.
fn free_log(dir: &Path, next: &std::sync::atomic::AtomicU64, seat: &str) -> PathBuf {
    let path = loop {
        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let path = dir.join(format!("bot-{k}.log"));
        if std::fs::symlink_metadata(&path).is_err() {
            break path;
        }
    };
    eprintln!(
        "referee connect: seat {seat}: the bot's stderr goes to {}",
        path.display()
    );
    path
}

/// The control connection: seats opened as the referee asks, until `bye`.
async fn serve(dialer: Arc<Dialer>, mut seats: Seats, retry: Duration) -> anyhow::Result<()> {
    let mut within = retry;
    loop {
        let (welcome, mut reader, mut writer) = match dialer
            .prove_within(CONTROL, "", Resume::From(0), within)
            .await
        {
            Ok(s) => s,
            Err(Refused::Token) => bail!(
                "the referee refused the token (a wrong or expired token, or one for another run)"
            ),
            Err(Refused::Broken(why)) => {
                bail!("could not reach the referee at {}: {why}", dialer.addr)
            }
        };
        // A seat's reconnection has the referee's grace. The control
        // connection has as long as at the start, or the grace if longer:
        // the referee may still hold the lost one (and turn this one away
        // as `busy`) until it has been silent for 10 s.
        let grace = Duration::from_millis(welcome.grace_ms).max(Duration::from_secs(1));
        within = retry.max(grace);
        eprintln!(
            "referee connect: serving remote:{} at {}",
            dialer.token.name, dialer.addr
        );
        loop {
            let frame = tokio::time::timeout(CONTROL_SILENCE, reader.next()).await;
            let Ok(frame) = frame else {
                eprintln!(
                    "referee connect: the referee said nothing for {} s on the control connection",
                    CONTROL_SILENCE.as_secs()
                );
                break;
            };
            match frame {
                Frame::Control(word, rest) if word == "open" => seats.open(&rest, &dialer, grace),
                Frame::Control(word, _) if word == "ping" => {
                    let _ = handshake::send(&mut writer, &control("pong", "0 0"), handshake::LIMIT)
                        .await;
                }
                Frame::Control(word, _) if word == "bye" => {
                    let _ = tokio::time::timeout(Duration::from_secs(10), async {
                        while seats.tasks.join_next().await.is_some() {}
                    })
                    .await;
                    if seats.ignored > 0 {
                        eprintln!(
                            "referee connect: {} of the referee's requests were not started",
                            seats.ignored
                        );
                    }
                    eprintln!("referee connect: the run is over");
                    return Ok(());
                }
                Frame::Eof | Frame::BadControl => break,
                _ => {}
            }
        }
        eprintln!("referee connect: the control connection dropped; reconnecting");
    }
}

/// Starts the bot as `play` would (no sandbox: the owner's machine).
fn start_bot(bot: &BotSpec, max_line: usize, log: Option<PathBuf>) -> Result<Player, String> {
    let env = Isolation::env(&[]);
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let launch = (bot.launch(&cwd, Isolation::path_in(&env))).map_err(|e| e.to_string())?;
    Player::spawn(&Spawn {
        launch,
        env,
        sandbox: None,
        max_line,
        limits: ResourceLimits::default(),
        stderr_log: log,
        stderr_cap: 1 << 20,
        hold: false,
        before_any_game: false,
    })
    .map_err(|e| crate::session::spawn_failure(&bot.display(), &e))
}

/// One seat's bridge, with its own unacknowledged lines for a reconnect.
struct Bridge {
    out: VecDeque<Vec<u8>>,
    out_base: u64,
    received: u64,
    eof: bool,
    writer: Writer,
}

impl Bridge {
    async fn send(&mut self, bytes: &[u8]) {
        // A failed write shows as the connection's end on the reading side.
        let _ = handshake::send(&mut self.writer, bytes, super::link::WRITE_LIMIT).await;
    }

    async fn push(&mut self, bytes: Vec<u8>) {
        self.send(&bytes).await;
        self.out.push_back(bytes);
    }

    fn ack(&mut self, n: u64) {
        while self.out_base < n && self.out.pop_front().is_some() {
            self.out_base += 1;
        }
    }

    /// What the bot wrote (or that it closed its stdout), for the referee.
    async fn bot_said(&mut self, got: Option<Incoming>) {
        match got {
            Some(Incoming::Line { bytes, .. }) => {
                let mut framed = Vec::with_capacity(bytes.len() + 2);
                bot_line(&mut framed, &bytes);
                self.push(framed).await;
            }
            Some(Incoming::Oversized { .. }) => self.push(control("oversized", "")).await,
            // Only once told of a stale reply, which a bridge never is.
            Some(Incoming::Stale { .. }) => {}
            _ => {
                self.eof = true;
                self.send(&control("eof", "")).await;
            }
        }
    }

    /// The referee's heartbeat `rest`: acknowledged lines, answered at once.
    async fn ping(&mut self, rest: &str) {
        let got = rest
            .split(' ')
            .nth(1)
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        self.ack(got);
        let n = rest.split(' ').next().unwrap_or("0").to_owned();
        let pong = control("pong", &format!("{n} {}", self.received));
        self.send(&pong).await;
    }

    /// Dials the seat again (within `grace`) and carries on there; `false`
    /// if it could not.
    async fn reconnect(
        &mut self,
        dialer: &Dialer,
        seat: &str,
        reader: &mut Reader,
        grace: Duration,
    ) -> bool {
        let resume = Resume::From(self.received);
        match dialer.prove_within(SEAT, seat, resume, grace).await {
            Ok((welcome, r, w)) => {
                *reader = r;
                self.resume(&welcome, w).await;
                true
            }
            Err(_) => false,
        }
    }

    /// A new connection: what the referee missed, again.
    async fn resume(&mut self, welcome: &Welcome, writer: Writer) {
        self.writer = writer;
        self.ack(welcome.received);
        let mut bytes: Vec<u8> = self.out.iter().flatten().copied().collect();
        if self.eof {
            bytes.extend(control("eof", ""));
        }
        self.send(&bytes).await;
    }
}

/// Serves seat `seat`: dials it (for up to `within`: a listener with its
/// pending connections full turns a connection away), starts the bot,
/// bridges them until `bye`.
async fn serve_seat(
    dialer: Arc<Dialer>,
    seat: String,
    bot: BotSpec,
    log: Option<PathBuf>,
    within: Duration,
) {
    let first = dialer
        .prove_within(SEAT, &seat, Resume::Fresh, within)
        .await;
    let Ok((welcome, mut reader, writer)) = first else {
        return;
    };
    let grace = Duration::from_millis(welcome.grace_ms);
    let mut bridge = Bridge {
        out: VecDeque::new(),
        out_base: 0,
        received: 0,
        eof: false,
        writer,
    };
    let mut player = match start_bot(&bot, welcome.max_line, log) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("referee connect: seat {seat}: the bot failed to start: {why}");
            bridge.eof = true;
            bridge.send(&control("eof", "")).await;
            Player::failed(crate::fault::Fault::new(
                crate::fault::FaultKind::Start,
                why,
            ))
        }
    };
    let mut heard = Instant::now();
    loop {
        let go_on = tokio::select! {
            got = player.next_line(None), if !bridge.eof => {
                bridge.bot_said(got).await;
                true
            }
            // A silent referee: the connection is taken for dropped.
            () = tokio::time::sleep_until(heard + SEAT_SILENCE) => {
                heard = Instant::now();
                bridge.reconnect(&dialer, &seat, &mut reader, grace).await
            }
            frame = reader.next() => {
                heard = Instant::now();
                match frame {
                    Frame::Line(line) => {
                        bridge.received += 1;
                        player.queue_line(&line);
                        let _ = player.flush(Some(Duration::from_secs(5))).await;
                        true
                    }
                    Frame::Control(word, rest) if word == "ping" => {
                        bridge.ping(&rest).await;
                        true
                    }
                    Frame::Control(word, _) if word == "bye" => false,
                    Frame::Eof | Frame::BadControl => {
                        bridge.reconnect(&dialer, &seat, &mut reader, grace).await
                    }
                    _ => true,
                }
            }
        };
        if !go_on {
            break;
        }
    }
    player.shutdown(Duration::from_secs(2)).await;
}
