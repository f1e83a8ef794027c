//! `referee connect`: the bot side of a remote seat. It proves its token on
//! a control connection, and for each seat the referee opens it starts the
//! bot command as `play` starts a bot (the same launch: its own working
//! directory, a clean environment, its own process group) and bridges the
//! bot's stdin and stdout to a connection of that seat, answering the
//! referee's heartbeats itself. A dropped connection is dialled again within
//! the referee's grace, and what either side missed is sent again.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
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
    /// Keep each bot's stderr in DIR/seat-ID.log (else it is discarded).
    #[arg(long, value_name = "DIR")]
    pub stderr_dir: Option<PathBuf>,
    /// How long to keep trying to reach the referee at the start.
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

    async fn prove(&self, role: &str, seat: &str, received: u64) -> Result<Session, Refused> {
        let stream = (self.dial().await).map_err(|e| Refused::Broken(e.to_string()))?;
        handshake::prove(stream, &self.token, role, seat, received).await
    }

    /// Proves the token until it works, the referee refuses it, or `within`.
    async fn prove_within(
        &self,
        role: &str,
        seat: &str,
        received: u64,
        within: Duration,
    ) -> Result<Session, Refused> {
        let give_up = Instant::now() + within;
        loop {
            match self.prove(role, seat, received).await {
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

/// `referee connect`.
pub fn main(args: &ConnectArgs) -> anyhow::Result<ExitCode> {
    let token = Token::read(&args.token_file)?;
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
    let retry = Duration::from_millis(args.retry_ms);
    runtime.block_on(async move {
        crate::bot::install_cleanup();
        serve(dialer, bot, stderr_dir, retry).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The control connection: seats opened as the referee asks, until `bye`.
async fn serve(
    dialer: Arc<Dialer>,
    bot: BotSpec,
    stderr_dir: Option<PathBuf>,
    retry: Duration,
) -> anyhow::Result<()> {
    let mut seats = tokio::task::JoinSet::new();
    let mut started = HashSet::new();
    let mut within = retry;
    loop {
        let (welcome, mut reader, mut writer) =
            match dialer.prove_within(CONTROL, "", 0, within).await {
                Ok(s) => s,
                Err(Refused::Token) => bail!(
                "the referee refused the token (a wrong or expired token, or one for another run)"
            ),
                Err(Refused::Broken(why)) => {
                    bail!("could not reach the referee at {}: {why}", dialer.addr)
                }
            };
        within = Duration::from_millis(welcome.grace_ms).max(Duration::from_secs(1));
        eprintln!(
            "referee connect: serving remote:{} at {}",
            dialer.token.name, dialer.addr
        );
        loop {
            match reader.next().await {
                Frame::Control(word, rest) if word == "open" => {
                    let seat = serde_json::from_str::<serde_json::Value>(&rest)
                        .ok()
                        .and_then(|v| v.get("seat")?.as_str().map(str::to_owned));
                    if let Some(seat) = seat.filter(|s| started.insert(s.clone())) {
                        let log = stderr_dir
                            .as_ref()
                            .map(|d| d.join(format!("seat-{seat}.log")));
                        let task = serve_seat(dialer.clone(), seat, bot.clone(), log, within);
                        seats.spawn(task);
                    }
                }
                Frame::Control(word, _) if word == "ping" => {
                    let _ = handshake::send(&mut writer, &control("pong", "0 0"), handshake::LIMIT)
                        .await;
                }
                Frame::Control(word, _) if word == "bye" => {
                    let _ = tokio::time::timeout(Duration::from_secs(10), async {
                        while seats.join_next().await.is_some() {}
                    })
                    .await;
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
    let Ok((welcome, mut reader, writer)) = dialer.prove_within(SEAT, &seat, 0, within).await
    else {
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
    loop {
        tokio::select! {
            got = player.next_line(None), if !bridge.eof => match got {
                Some(Incoming::Line { bytes, .. }) => {
                    let mut framed = Vec::with_capacity(bytes.len() + 2);
                    bot_line(&mut framed, &bytes);
                    bridge.push(framed).await;
                }
                Some(Incoming::Oversized { .. }) => bridge.push(control("oversized", "")).await,
                // Only once told of a stale reply, which a bridge never is.
                Some(Incoming::Stale { .. }) => {}
                _ => {
                    bridge.eof = true;
                    bridge.send(&control("eof", "")).await;
                }
            },
            frame = reader.next() => match frame {
                Frame::Line(line) => {
                    bridge.received += 1;
                    player.queue_line(&line);
                    let _ = player.flush(Some(Duration::from_secs(5))).await;
                }
                Frame::Control(word, rest) if word == "ping" => {
                    let got = rest.split(' ').nth(1).and_then(|w| w.parse().ok()).unwrap_or(0);
                    bridge.ack(got);
                    let n = rest.split(' ').next().unwrap_or("0").to_owned();
                    let pong = control("pong", &format!("{n} {}", bridge.received));
                    bridge.send(&pong).await;
                }
                Frame::Control(word, _) if word == "bye" => break,
                Frame::Eof | Frame::BadControl => {
                    match dialer.prove_within(SEAT, &seat, bridge.received, grace).await {
                        Ok((welcome, r, w)) => {
                            reader = r;
                            bridge.resume(&welcome, w).await;
                        }
                        Err(_) => break,
                    }
                }
                _ => {}
            },
        }
    }
    player.shutdown(Duration::from_secs(2)).await;
}
