//! The organiser's listener and who is connected to it. The hub runs on a
//! thread of its own (its own runtime), so no table's work delays a
//! heartbeat and no connection touches a table's thread: a seat reaches its
//! table only through in-memory pipes.
//!
//! Every connection it holds is bounded, so that no one who can reach the
//! port, and no token's holder, can take the descriptors a local seat needs
//! ([`super::descriptors`]): a connection that has not proved itself holds
//! one of [`super::admission`]'s slots (per source and in all) for at most
//! [`handshake::LIMIT`]; a name that proved its token holds one control
//! connection and, for each of its seats that is
//! open, the connection serving it and one waiting to take over
//! ([`SEAT_WAITING`]). A proved connection over those bounds is told `busy`
//! and why, and closed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use anyhow::Context;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::admission::Admission;
use super::downtime::Downtime;
use super::frame::{control, Frame};
use super::handshake::{self, Auth, Reader, Verdict, Welcome, Writer, CONTROL, SEAT};
use super::heartbeat::{self, Latency};
use super::link::{self, Arrival, SeatPipes};
use super::tls::ServerTls;
use super::token::{random_hex, Tokens};
use super::{RemoteSpec, Stream};

/// Connections that may wait to take over a seat from the one serving it.
pub const SEAT_WAITING: usize = 1;
/// How long a control connection may stay silent (it answers a ping every
/// second) before the hub drops it, so that one its connector lost does not
/// keep the name's next one `busy` for long.
pub const CONTROL_SILENCE: Duration = Duration::from_secs(10);
/// How long the end of a run waits for the links' and controls' last words.
const CLOSE_LIMIT: Duration = Duration::from_secs(3);

pub struct Hub {
    pub run: String,
    pub addr: SocketAddr,
    /// The TLS certificate's SHA-256 (`None`: plain TCP on loopback).
    pub fingerprint: Option<String>,
    pub spec: RemoteSpec,
    pub tokens: Tokens,
    tls: Option<tokio_rustls::TlsAcceptor>,
    admission: Arc<Admission>,
    state: Mutex<State>,
    runtime: tokio::runtime::Handle,
    stop: CancellationToken,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hub({} run {})", self.addr, self.run)
    }
}

#[derive(Default)]
struct State {
    /// Each name's control connection, one at most: its outbox.
    controls: HashMap<String, mpsc::UnboundedSender<Vec<u8>>>,
    /// Open seats: their name, where their connections go, whether one
    /// came, and whether it is lost (a control connection that comes is told
    /// of those none came for, and of those whose connection is lost).
    seats: HashMap<String, OpenSeat>,
    next: u64,
    /// Control connections being served.
    live: usize,
}

impl Hub {
    /// Binds `spec.listen`, makes the run's tokens and (off loopback) its
    /// certificate, and starts serving on a thread of its own.
    pub fn start(spec: RemoteSpec) -> anyhow::Result<Arc<Hub>> {
        super::descriptors::raise();
        let std_listener = std::net::TcpListener::bind(spec.listen)
            .with_context(|| format!("--listen {}: failed to listen", spec.listen))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        // TLS off loopback always, and on loopback too when the organiser
        // gave a certificate (asked for TLS, they get it, not plain TCP).
        let cert_key = spec
            .cert_key
            .as_ref()
            .map(|(c, k)| (c.as_path(), k.as_path()));
        let tls = match addr.ip().is_loopback() && cert_key.is_none() {
            true => None,
            false => Some(ServerTls::new(cert_key)?),
        };
        let run = random_hex(8)?;
        let tokens = Tokens::make(&spec.names, &run, spec.tokens.as_deref(), spec.seats)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let hub = Arc::new(Hub {
            run,
            addr,
            fingerprint: tls.as_ref().map(|t| t.fingerprint.clone()),
            spec,
            tokens,
            tls: tls.map(|t| tokio_rustls::TlsAcceptor::from(t.config)),
            admission: Arc::default(),
            state: Mutex::new(State::default()),
            runtime: runtime.handle().clone(),
            stop: CancellationToken::new(),
        });
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let (serving, stop) = (hub.clone(), hub.stop.clone());
        std::thread::Builder::new()
            .name("remote-hub".into())
            .spawn(move || {
                runtime.spawn(serving.accept(listener));
                runtime.block_on(stop.cancelled());
            })?;
        Ok(hub)
    }

    /// Ends the run for every connector: once the seats' links have said
    /// `bye` (or after [`CLOSE_LIMIT`]), `bye` on each control connection;
    /// returns once those are written (or after the limit again), so the
    /// referee's exit does not cut them off.
    pub fn close(&self) {
        let settled = |done: &dyn Fn(&State) -> bool| {
            let start = std::time::Instant::now();
            while !done(&self.state.lock().expect("not poisoned")) && start.elapsed() < CLOSE_LIMIT
            {
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        settled(&|s| s.seats.is_empty());
        let controls: Vec<_> = (self.state.lock().expect("not poisoned").controls)
            .drain()
            .collect();
        for (_, outbox) in controls {
            let _ = outbox.send(control("bye", ""));
        }
        settled(&|s| s.live == 0);
        self.stop.cancel();
    }

    async fn accept(self: Arc<Self>, listener: TcpListener) {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let _ = tcp.set_nodelay(true);
            // Over the bounds: closed at once, before a byte is read.
            let Some(slot) = self.admission.enter(peer.ip()) else {
                continue;
            };
            let hub = self.clone();
            tokio::spawn(async move {
                // A proof the judge took completes the future in the same
                // poll, so eviction never drops a registered connection.
                let admitted = tokio::time::timeout(handshake::LIMIT, hub.admit(tcp));
                let proved = tokio::select! {
                    proved = admitted => proved.ok().flatten(),
                    _ = slot.evicted.cancelled() => None,
                };
                drop(slot);
                if let Some((auth, ticket, reader, writer)) = proved {
                    hub.serve(auth, ticket, reader, writer).await;
                }
            });
        }
    }

    async fn admit(&self, tcp: tokio::net::TcpStream) -> Option<(Auth, Ticket, Reader, Writer)> {
        let stream: Stream = match &self.tls {
            Some(acceptor) => Box::new(acceptor.accept(tcp).await.ok()?),
            None => Box::new(tcp),
        };
        handshake::challenge(stream, &self.run, |nonce, auth| self.judge(nonce, auth)).await
    }

    /// Whether `auth` proves its name's token for a role it may take (the
    /// control connection of its name, or a seat open for its name), and
    /// whether the name's bounds leave it room; what it is to serve. Taken
    /// in one go with the state, so two connections cannot both take the
    /// last room.
    fn judge(&self, nonce: &str, auth: &Auth) -> Verdict<Ticket> {
        let proved = (self.tokens).admits(
            &self.run, nonce, &auth.name, &auth.role, &auth.seat, &auth.mac,
        );
        let mut state = self.state.lock().expect("not poisoned");
        let name = &auth.name;
        match auth.role.as_str() {
            CONTROL if proved && auth.seat.is_empty() => {
                if state.controls.contains_key(name) {
                    return Verdict::Busy(format!(
                        "remote:{name} already has a control connection (one a name; is another \
                         `referee connect` with this token running?)"
                    ));
                }
                Verdict::Admit(Ticket::Control(state.control(name)))
            }
            SEAT if proved => {
                let Some(OpenSeat {
                    owner, door, came, ..
                }) = state.seats.get_mut(&auth.seat)
                else {
                    return Verdict::Refuse;
                };
                if owner != name {
                    return Verdict::Refuse;
                }
                match door.clone().try_reserve_owned() {
                    Ok(permit) => {
                        *came = true;
                        Verdict::Admit(Ticket::Seat(permit))
                    }
                    Err(mpsc::error::TrySendError::Full(_)) => Verdict::Busy(format!(
                        "seat {} of remote:{name} already has a connection waiting to take it over",
                        auth.seat
                    )),
                    Err(mpsc::error::TrySendError::Closed(_)) => Verdict::Refuse,
                }
            }
            _ => Verdict::Refuse,
        }
    }

    async fn serve(self: Arc<Self>, auth: Auth, ticket: Ticket, reader: Reader, writer: Writer) {
        match ticket {
            Ticket::Seat(permit) => {
                permit.send(Arrival {
                    received: auth.received,
                    fresh: auth.fresh,
                    reader,
                    writer,
                });
            }
            Ticket::Control((tx, outbox)) => {
                self.serve_control(auth.name, tx, outbox, reader, writer)
                    .await
            }
        }
    }

    /// A name's control connection: told each seat to open, kept alive by
    /// heartbeats, until it drops or the run ends.
    async fn serve_control(
        &self,
        name: String,
        tx: Outbox,
        mut outbox: mpsc::UnboundedReceiver<Vec<u8>>,
        mut reader: Reader,
        mut writer: Writer,
    ) {
        let welcome = Welcome {
            grace_ms: self.spec.grace.as_millis() as u64,
            ..Welcome::default()
        };
        let line = control(
            "welcome",
            &serde_json::to_string(&welcome).expect("serializes"),
        );
        let mut alive = handshake::send(&mut writer, &line, handshake::LIMIT).await;
        let mut beat = tokio::time::interval(heartbeat::PERIOD * 5);
        let mut heard = tokio::time::Instant::now();
        while alive {
            tokio::select! {
                msg = outbox.recv() => match msg {
                    Some(bytes) => {
                        let bye = bytes.starts_with(b"~bye");
                        alive = handshake::send(&mut writer, &bytes, handshake::LIMIT).await && !bye;
                    }
                    None => break,
                },
                frame = reader.next() => {
                    heard = tokio::time::Instant::now();
                    alive = !matches!(frame, Frame::Eof | Frame::BadControl);
                }
                _ = beat.tick() => {
                    alive = heard.elapsed() < CONTROL_SILENCE
                        && handshake::send(&mut writer, &control("ping", "0 0"), handshake::LIMIT).await;
                }
            }
        }
        let _ = writer.shutdown().await;
        let mut state = self.state.lock().expect("not poisoned");
        if state
            .controls
            .get(&name)
            .is_some_and(|c| c.same_channel(&tx))
        {
            state.controls.remove(&name);
        }
        state.live -= 1;
    }

    /// Whether remote name `name`'s `referee connect` is connected (it has a
    /// control connection).
    pub fn connected(&self, name: &str) -> bool {
        (self.state.lock().expect("not poisoned").controls).contains_key(name)
    }

    /// Why a seat of `name` opened now would fail to start at once: the run
    /// says so ([`RemoteSpec::absent_fails`]) and its connector is not
    /// connected. `None`: open it.
    pub fn absent(&self, name: &str) -> Option<String> {
        (self.spec.absent_fails && !self.connected(name)).then(|| {
            format!(
                "remote:{name}: its `referee connect` is not connected (its seats fail to start \
                 at once until it connects again)"
            )
        })
    }

    /// Opens a seat for remote bot `name`: its connector is told to start a
    /// bot for it, and the seat's link runs on the hub's thread.
    pub fn open_seat(self: &Arc<Self>, name: &str, max_line: usize) -> SeatPipes {
        let (door, arrivals) = mpsc::channel(SEAT_WAITING);
        let away = Arc::new(AtomicBool::new(false));
        let seat = {
            let mut state = self.state.lock().expect("not poisoned");
            state.next += 1;
            let seat = format!("s{}", state.next);
            let open = OpenSeat {
                owner: name.to_owned(),
                door,
                came: false,
                away: away.clone(),
            };
            state.seats.insert(seat.clone(), open);
            if let Some(c) = state.controls.get(name) {
                let _ = c.send(open_line(&seat));
            }
            seat
        };
        let latency = Arc::new(Latency::new(self.spec.latency_cap));
        let down = Arc::new(Downtime::new(self.spec.down_budget));
        let (pipes, ends) = link::pipes(latency, down);
        let params = link::Params {
            max_line,
            grace: self.spec.grace,
            away,
            on_lost: self.ask_again(name, &seat),
        };
        let hub = self.clone();
        self.runtime.spawn(async move {
            link::run(params, arrivals, ends).await;
            hub.state.lock().expect("not poisoned").seats.remove(&seat);
        });
        pipes
    }

    /// What a seat's link calls when its connection is lost: the name's
    /// control connection, if it has one, is asked for the seat again (its
    /// connector ignores a seat it serves already; a restarted one starts a
    /// bot for it).
    fn ask_again(self: &Arc<Self>, name: &str, seat: &str) -> Box<dyn Fn() + Send> {
        let (hub, name, seat): (Weak<Hub>, _, _) =
            (Arc::downgrade(self), name.to_owned(), seat.to_owned());
        Box::new(move || {
            let Some(hub) = hub.upgrade() else { return };
            let state = hub.state.lock().expect("not poisoned");
            if let Some(c) = state.controls.get(&name) {
                let _ = c.send(open_line(&seat));
            }
        })
    }
}

/// An open seat, in the hub's state.
struct OpenSeat {
    /// The remote name it belongs to.
    owner: String,
    /// Where its connections go.
    door: mpsc::Sender<Arrival>,
    /// A connection came for it.
    came: bool,
    /// Its connection is lost, for now.
    away: Arc<AtomicBool>,
}

type Outbox = mpsc::UnboundedSender<Vec<u8>>;

/// What a proved connection is to serve.
enum Ticket {
    /// Its name's control connection, registered: the outbox, told of the
    /// seats nobody serves yet.
    Control((Outbox, mpsc::UnboundedReceiver<Vec<u8>>)),
    /// Room in its seat's door.
    Seat(mpsc::OwnedPermit<Arrival>),
}

impl State {
    /// Registers `name`'s control connection.
    fn control(&mut self, name: &str) -> (Outbox, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, outbox) = mpsc::unbounded_channel();
        let mut unserved: Vec<&String> = (self.seats.iter())
            .filter(|(_, s)| s.owner == name && (!s.came || s.away.load(Ordering::SeqCst)))
            .map(|(seat, _)| seat)
            .collect();
        unserved.sort_by_key(|s| s[1..].parse::<u64>().unwrap_or(0));
        for seat in unserved {
            let _ = tx.send(open_line(seat));
        }
        self.controls.insert(name.to_owned(), tx.clone());
        self.live += 1;
        (tx, outbox)
    }
}

fn open_line(seat: &str) -> Vec<u8> {
    control("open", &serde_json::json!({ "seat": seat }).to_string())
}

#[cfg(test)]
mod tests {
    //! The hub on a real loopback socket, spoken to by hand.
    use super::*;
    use crate::remote::admission;
    use crate::remote::handshake::{prove, Challenge, Refused};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn hub(names: &[&str]) -> Arc<Hub> {
        Hub::start(RemoteSpec {
            listen: "127.0.0.1:0".parse().unwrap(),
            tokens: None,
            cert_key: None,
            latency_cap: Duration::from_millis(250),
            grace: Duration::from_secs(1),
            wait: Duration::from_secs(60),
            down_budget: Duration::from_secs(10),
            names: names.iter().map(|s| s.to_string()).collect(),
            seats: 2,
            absent_fails: false,
        })
        .unwrap()
    }

    async fn dial(hub: &Hub) -> Stream {
        Box::new(tokio::net::TcpStream::connect(hub.addr).await.unwrap())
    }

    #[tokio::test]
    async fn a_token_opens_only_its_own_names_seats() {
        let hub = hub(&["alice", "bob"]);
        let _pipes = hub.open_seat("alice", 1000);
        let (alice, bob) = (
            hub.tokens.get("alice").unwrap(),
            hub.tokens.get("bob").unwrap(),
        );
        let refused = prove(dial(&hub).await, bob, SEAT, "s1", 0).await;
        assert!(
            matches!(refused, Err(Refused::Token)),
            "bob's token, alice's seat"
        );
        let refused = prove(dial(&hub).await, alice, SEAT, "s9", 0).await;
        assert!(
            matches!(refused, Err(Refused::Token)),
            "a seat that is not open"
        );
        let welcome = prove(dial(&hub).await, alice, SEAT, "s1", 0).await;
        assert!(welcome.is_ok(), "alice's own seat");
        let control = prove(dial(&hub).await, bob, CONTROL, "", 0).await;
        assert!(control.is_ok(), "bob's control connection");
    }

    #[tokio::test]
    async fn a_name_holds_one_control_connection_and_one_waiting_a_seat() {
        let hub = hub(&["alice"]);
        let _pipes = hub.open_seat("alice", 1000);
        let token = hub.tokens.get("alice").unwrap();
        let first = prove(dial(&hub).await, token, CONTROL, "", 0).await;
        let (_, _reader, _writer) = first.expect("the first control connection");
        let busy = |r: Result<_, Refused>| match r {
            Err(Refused::Broken(why)) => why,
            Err(Refused::Token) => panic!("refused a good token"),
            Ok(_) => panic!("admitted over the bound"),
        };
        let why = busy(prove(dial(&hub).await, token, CONTROL, "", 0).await);
        assert!(why.contains("already has a control connection"), "{why}");
        // A seat's link takes its arrivals one at a time; while it is busy
        // (writing to a slow connection), one more may wait. A door nobody
        // reads holds the first; the next is turned away.
        let (door, mut arrivals) = mpsc::channel(SEAT_WAITING);
        let open = OpenSeat {
            owner: "alice".into(),
            door,
            came: false,
            away: Arc::default(),
        };
        (hub.state.lock().unwrap().seats).insert("s9".into(), open);
        let (waiting_hub, waiting_token) = (hub.clone(), token.clone());
        let waiting = tokio::spawn(async move {
            prove(dial(&waiting_hub).await, &waiting_token, SEAT, "s9", 0).await
        });
        let guard = tokio::time::Instant::now() + Duration::from_secs(60);
        while arrivals.len() < SEAT_WAITING && tokio::time::Instant::now() < guard {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let why = busy(prove(dial(&hub).await, token, SEAT, "s9", 0).await);
        assert!(why.contains("waiting to take it over"), "{why}");
        assert!(arrivals.try_recv().is_ok(), "the first one waited");
        waiting.abort();
    }

    /// Reads one `~word {json}` line off a raw socket.
    async fn read_line(s: &mut tokio::net::TcpStream) -> String {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while s.read(&mut byte).await.unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        String::from_utf8(line).unwrap()
    }

    #[tokio::test]
    async fn a_recorded_proof_is_refused_on_another_connection() {
        let hub = hub(&["alice"]);
        let token = hub.tokens.get("alice").unwrap().clone();
        let mut first = tokio::net::TcpStream::connect(hub.addr).await.unwrap();
        let challenge = read_line(&mut first).await;
        let challenge: Challenge =
            serde_json::from_str(challenge.strip_prefix("~challenge ").unwrap()).unwrap();
        let mac = token.prove(&challenge.run, &challenge.nonce, CONTROL, "");
        let auth = format!(
            "~auth {{\"name\":\"alice\",\"role\":\"control\",\"seat\":\"\",\"mac\":\"{mac}\"}}\n"
        );
        // The proof an eavesdropper saw, sent again on a connection of its own.
        let mut second = tokio::net::TcpStream::connect(hub.addr).await.unwrap();
        let _ = read_line(&mut second).await;
        second.write_all(auth.as_bytes()).await.unwrap();
        assert_eq!(read_line(&mut second).await, "~refused");
        first.write_all(auth.as_bytes()).await.unwrap();
        assert!(
            read_line(&mut first).await.starts_with("~welcome "),
            "its own connection"
        );
    }

    #[tokio::test]
    async fn a_connection_that_proves_nothing_is_dropped_and_the_pending_are_bounded() {
        let hub = hub(&["alice"]);
        let start = tokio::time::Instant::now();
        let mut silent = tokio::net::TcpStream::connect(hub.addr).await.unwrap();
        let _ = read_line(&mut silent).await;
        let mut rest = Vec::new();
        let guard = Duration::from_secs(60);
        let read = tokio::time::timeout(guard, silent.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "dropped, not left open");
        assert!(
            start.elapsed() >= handshake::LIMIT,
            "not before its time was up"
        );
        // More half-open connections from one address than its share: the
        // ones over it are closed at once, and a real connector still gets
        // in afterwards.
        let mut held = Vec::new();
        for _ in 0..admission::PER_SOURCE + 20 {
            held.push(tokio::net::TcpStream::connect(hub.addr).await.unwrap());
        }
        let mut closed = 0;
        for s in held.iter_mut().skip(admission::PER_SOURCE) {
            let mut buf = [0u8; 64];
            if let Ok(Ok(0)) = tokio::time::timeout(guard, s.read(&mut buf)).await {
                closed += 1;
            }
        }
        assert!(
            closed > 0,
            "some connections over the bound were closed unread"
        );
        drop(held);
        // The held ones end as their closing is seen; a connector (which
        // dials again when turned away) gets in then.
        let token = hub.tokens.get("alice").unwrap();
        let admitted = tokio::time::timeout(guard, async {
            loop {
                match prove(dial(&hub).await, token, CONTROL, "", 0).await {
                    Ok(_) => return,
                    Err(Refused::Token) => panic!("refused a good token"),
                    Err(Refused::Broken(_)) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        });
        assert!(admitted.await.is_ok());
    }
}
