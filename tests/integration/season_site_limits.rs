//! The season site's limits (`referee/src/season/site/serve.rs`), with real
//! sockets on loopback against `season serve`: idle and slow clients are
//! closed by the header timeout and cannot keep a real request from its
//! page; the connection cap holds new connections until one closes; event
//! streams give back their connection's place and have a cap of their own;
//! a slow body is cut by the request timeout and a large one refused.
//!
//! Waits are bounded by [`BOUND`], far above the timeouts set (1 s and 2 s),
//! so a busy host cannot make them fail; the one wait for something *not*
//! to happen (a connection beyond the cap is not answered) can only pass
//! wrongly on a host too slow to answer in a second, never fail.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{referee, scratch, succeeds};

/// The longest any wait of these tests may take.
const BOUND: Duration = Duration::from_secs(60);

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

/// A season of three built-ins, nothing played.
fn init(dir: &Path) {
    let mut c = season(&["init"]);
    c.arg(dir).args(["--seed", "5", "--unchecked"]);
    for e in [
        "a=builtin:random",
        "b=builtin:random",
        "c=builtin:heuristic",
    ] {
        c.args(["--entrant", e]);
    }
    succeeds(c.stdout(Stdio::null()));
}

/// `season serve` with `flags`, killed when dropped.
use crate::season_site::Server;

fn serve(dir: &Path, flags: &[&str]) -> Server {
    let mut c = season(&["serve", "--addr", "127.0.0.1:0"]);
    c.args(flags).arg(dir);
    crate::season_site::start(c)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(BOUND)).unwrap();
    s
}

/// Sends `head` (and `body`) on `s` and reads the answer to its end: the
/// status and the body.
fn exchange(s: &mut TcpStream, head: &str, body: &[u8]) -> (u16, String) {
    write!(s, "{head}Host: site\r\nConnection: close\r\n\r\n").unwrap();
    s.write_all(body).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text)
        .expect("an answer within the bound");
    let status = text.get(9..12).and_then(|c| c.parse().ok());
    let status = status.unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |p| p.1).to_owned();
    (status, body)
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    exchange(&mut connect(addr), &format!("GET {path} HTTP/1.1\r\n"), b"")
}

/// Waits until the server closes `s` (end of stream or reset); what it sent
/// before. Fails if it is still open after [`BOUND`].
fn closed_by_server(mut s: TcpStream) -> String {
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server kept the connection open ({e}) for {BOUND:?}"),
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// A slowloris client: a request head sent a byte every 200 ms, never
/// finished; it ends when the server closes the connection (a write
/// fails) or after [`BOUND`].
fn slow_client(addr: SocketAddr) -> std::thread::JoinHandle<bool> {
    let s = connect(addr);
    std::thread::spawn(move || {
        let mut s = s;
        let head = b"GET / HTTP/1.1\r\nHost: site\r\nX-Slow: ";
        let start = Instant::now();
        for &b in head.iter().chain(std::iter::repeat(&b'a')) {
            if s.write_all(&[b]).is_err() {
                return true;
            }
            if start.elapsed() > BOUND {
                return false;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        unreachable!()
    })
}

#[test]
fn idle_and_slow_clients_are_closed_and_a_real_request_still_gets_its_page() {
    let dir = scratch("season_site_limits", "slowloris").join("season");
    init(&dir);
    let site = serve(
        &dir,
        &["--site-connections", "4", "--site-header-timeout", "1"],
    );
    let addr = site.1;
    // Twice the cap: four connections that send nothing, four that send a
    // byte every 200 ms; then the real request, behind them all.
    let idle: Vec<TcpStream> = (0..4).map(|_| connect(addr)).collect();
    let slow: Vec<_> = (0..4).map(|_| slow_client(addr)).collect();
    let asked = Instant::now();
    let (status, body) = get(addr, "/api/standings");
    let took = asked.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"entrants\""), "{body}");
    assert!(took < BOUND, "the page took {took:?}");
    // Each was closed by the header timeout (hyper answers 408 first).
    for s in idle {
        let said = closed_by_server(s);
        assert!(
            said.is_empty() || said.starts_with("HTTP/1.1 408"),
            "{said}"
        );
    }
    for client in slow {
        assert!(
            client.join().unwrap(),
            "a slow client was kept for {BOUND:?}"
        );
    }
    // The site is still up, and keeps answering.
    assert_eq!(get(addr, "/").0, 200);
}

/// Opens the event stream on a connection of its own; the status line and
/// the stream (its first event read, when the status is 200).
fn open_events(addr: SocketAddr) -> (u16, BufReader<TcpStream>) {
    let mut s = connect(addr);
    write!(s, "GET /events HTTP/1.1\r\nHost: site\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line[9..12].parse().unwrap();
    if status == 200 {
        while !line.starts_with("data:") {
            line.clear();
            assert!(r.read_line(&mut line).unwrap() > 0, "the stream ended");
        }
    }
    (status, r)
}

/// Whether the server has closed `s`: a read that ends or fails, where an
/// open stream with nothing to say times out.
fn still_open(s: &mut BufReader<TcpStream>) -> bool {
    s.get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue, // a keep-alive comment
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return true
            }
            Err(_) => return false,
        }
    }
}

#[test]
fn the_cap_holds_new_connections_and_event_streams_have_their_own() {
    let dir = scratch("season_site_limits", "caps").join("season");
    init(&dir);
    let site = serve(
        &dir,
        &[
            "--site-connections",
            "2",
            "--site-event-streams",
            "2",
            "--site-header-timeout",
            "3",
            "--site-request-timeout",
            "2",
        ],
    );
    let addr = site.1;
    // Two event streams: they give back their connections' places, so the
    // cap of two still answers pages; a third stream is refused (503).
    let (status, mut first) = open_events(addr);
    assert_eq!(status, 200);
    let (status, mut second) = open_events(addr);
    assert_eq!(status, 200);
    assert_eq!(get(addr, "/api/standings").0, 200);
    let (status, mut third) = open_events(addr);
    assert_eq!(status, 503);
    let mut said = String::new();
    let _ = third.read_to_string(&mut said);
    assert!(said.contains("--site-event-streams"), "{said}");
    // Two idle connections fill the cap: a third is not answered while they
    // are open, and is once one of them closes.
    let idle = [connect(addr), connect(addr)];
    let mut waiting = connect(addr);
    write!(
        waiting,
        "GET /api/standings HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    waiting
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut byte = [0u8; 1];
    let early = waiting.read(&mut byte);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "answered beyond the cap: {early:?}"
    );
    drop(idle);
    waiting.set_read_timeout(Some(BOUND)).unwrap();
    let mut text = String::new();
    waiting.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    // Event streams outlive the header timeout (3 s): still open after it.
    std::thread::sleep(Duration::from_secs(4));
    assert!(still_open(&mut first) && still_open(&mut second));
    // A body that stops coming: 408 from the request timeout (2 s).
    let mut s = connect(addr);
    let (status, body) = exchange(
        &mut s,
        "POST /entrants/a/logs HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 100\r\n",
        b"token=0123",
    );
    assert_eq!(status, 408, "{body}");
    // A body over the site's 4 KiB: 413.
    let big = vec![b'a'; 5000];
    let head = format!(
        "POST /entrants/a/logs HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\n",
        big.len()
    );
    assert_eq!(exchange(&mut connect(addr), &head, &big).0, 413);
}
