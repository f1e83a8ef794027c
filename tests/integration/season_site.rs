//! The season's live site (`referee season serve DIR`, `season run DIR
//! --serve ADDR`) over real HTTP on loopback, on a real season played by
//! `season run` with real bot processes: its JSON API is what `season
//! standings --json` prints; an entrant's logs are read with its token and
//! with no other; no URL reaches a file the database does not name;
//! `/events` says when a set lands; and in headless Chromium the standings
//! change without a reload, and an entrant's page draws its rating chart
//! and opens a replay.
//!
//! Every wait is for something the run or the server causes, bounded by
//! minutes, never a fixed time.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{referee, scratch, stdout, succeeds};

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(300);

/// What entrant `d`'s bot writes to its stderr.
const D_SAYS: &str = "d-writes-this-to-stderr";

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

/// A season of four built-in bots in `dir` (`d` also writes a line to its
/// stderr); each entrant's token.
fn init(dir: &Path) -> BTreeMap<String, String> {
    let exe = env!("CARGO_BIN_EXE_referee");
    let d = format!("d=sh -c 'echo {D_SAYS} >&2; exec {exe} bot random'");
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "46", "--unchecked", "--min-sets", "1"])
        .args([
            "--entrant",
            "a=builtin:heuristic",
            "--entrant",
            "b=builtin:random",
        ])
        .args(["--entrant", "c=builtin:heuristic", "--entrant", &d]);
    let out = stdout(&succeeds(&mut c));
    let tokens: BTreeMap<String, String> = (out.lines())
        .filter_map(|l| {
            let (head, token) = l.split_once("it is shown once): ")?;
            let name = head.strip_prefix("entrant ")?.split_once(' ')?.0;
            Some((name.to_owned(), token.trim().to_owned()))
        })
        .collect();
    assert_eq!(tokens.len(), 4, "{out}");
    tokens
}

/// Plays the season in `dir` up to `sets` finished sets.
fn play_to(dir: &Path, sets: u32) {
    succeeds(
        season(&["run", "--jobs", "2", "-q", "--sets", &sets.to_string()])
            .arg(dir)
            .stdout(Stdio::null()),
    );
}

/// A server process, killed when the test ends.
pub(crate) struct Server(Child, pub(crate) SocketAddr);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` (which serves the site on a free loopback port) and reads
/// the address it says it serves on; the rest of its stderr is drained.
pub(crate) fn start(mut cmd: Command) -> Server {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = (line.trim().strip_prefix("referee: season site at http://"))
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Server(child, addr)
}

fn serve(dir: &Path) -> Server {
    let mut c = season(&["serve", "--addr", "127.0.0.1:0"]);
    c.arg(dir);
    start(c)
}

/// One HTTP/1.1 request (`extra`: more header lines, and a body after a
/// blank line); the status and the body.
fn request(addr: SocketAddr, method: &str, path: &str, extra: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: site\r\nConnection: close\r\n{extra}"
    )
    .unwrap();
    if !extra.contains("\r\n\r\n") {
        write!(s, "\r\n").unwrap();
    }
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |p| p.1).to_owned();
    (status, body)
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, "GET", path, "")
}

fn with_token(addr: SocketAddr, path: &str, token: &str) -> (u16, String) {
    request(
        addr,
        "GET",
        path,
        &format!("Authorization: Bearer {token}\r\n"),
    )
}

fn form(addr: SocketAddr, path: &str, token: &str) -> (u16, String) {
    let body = format!("token={token}");
    let extra = format!(
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    request(addr, "POST", path, &extra)
}

#[test]
fn the_api_is_the_cli_and_logs_open_to_their_owner_alone() {
    let dir = scratch("season_site", "api");
    let tokens = init(&dir);
    play_to(&dir, 2);
    let site = serve(&dir);
    let cli = stdout(&succeeds(season(&["standings", "--json"]).arg(&dir)));
    let (status, api) = get(site.1, "/api/standings");
    assert_eq!(status, 200);
    let (cli, api): (Value, Value) = (
        serde_json::from_str(&cli).unwrap(),
        serde_json::from_str(&api).unwrap(),
    );
    assert_eq!(api, cli);
    assert_eq!(api["sets"], 2);
    let (status, page) = get(site.1, "/");
    assert_eq!(status, 200);
    assert!(
        page.contains("ranked by rating"),
        "the page states the order: {page}"
    );
    assert!(page.contains("href=\"/entrants/a\""), "{page}");

    let logs = "/api/entrants/d/logs";
    let (status, body) = get(site.1, logs);
    assert_eq!(status, 401, "{body}");
    for wrong in [
        "0123456789abcdef0123456789abcdef",
        &tokens["a"],
        &tokens["d"][..31],
    ] {
        let (status, body) = with_token(site.1, logs, wrong);
        assert_eq!(status, 403, "{body}");
        assert!(!body.contains(D_SAYS));
        let (status, body) = form(site.1, "/entrants/d/logs", wrong);
        assert_eq!(status, 403, "{body}");
        assert!(!body.contains(D_SAYS));
    }
    let (status, body) = with_token(site.1, logs, &tokens["d"]);
    assert_eq!(status, 200, "{body}");
    let read: Value = serde_json::from_str(&body).unwrap();
    assert!(read.as_array().is_some_and(|l| !l.is_empty()), "{body}");
    assert!(body.contains(D_SAYS), "{body}");
    let (status, body) = form(site.1, "/entrants/d/logs", &tokens["d"]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(D_SAYS), "{body}");
    // Another entrant's own logs are its own: a's token reads a's, not d's.
    let (status, body) = with_token(site.1, "/api/entrants/a/logs", &tokens["a"]);
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(D_SAYS), "{body}");

    // A submission is seen too (the standings are cached until the
    // database changes), and the API is still what the CLI prints.
    succeeds(
        season(&["submit", "--unchecked"])
            .arg(&dir)
            .args(["e", "--", "builtin:random"]),
    );
    let start = Instant::now();
    let api = loop {
        let (_, body) = get(site.1, "/api/standings");
        let api: Value = serde_json::from_str(&body).unwrap();
        if api["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["entrant"] == "e")
        {
            break api;
        }
        assert!(start.elapsed() < LIMIT, "the site never showed e: {body}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let cli = stdout(&succeeds(season(&["standings", "--json"]).arg(&dir)));
    assert_eq!(api, serde_json::from_str::<Value>(&cli).unwrap());
}

#[test]
fn no_url_reaches_a_file_the_database_does_not_name() {
    let dir = scratch("season_site", "paths");
    init(&dir);
    play_to(&dir, 1);
    let site = serve(&dir);
    let (status, replay) = get(site.1, "/games/1/1");
    assert_eq!(status, 200);
    assert!(replay.contains("set 1, game 1"), "{replay}");
    let secret = std::fs::read_to_string(dir.join("seed-secret")).unwrap();
    for path in [
        "/season.db",
        "/../season.db",
        "/games/1/../../season.db",
        "/games/..%2f..%2fseason.db/1",
        "/games/1/1%2f..%2f..%2fseed-secret",
        "/entrants/..%2F..%2Fseed-secret",
        "/entrants/..%2F..%2Fseed-secret/logs",
        "/api/entrants/%2e%2e/logs",
        "/games/1/99",
        "/games/-1/1",
        "/final",
        "/games/r00-m0001-g001.jsonl",
        "/stderr/r00-m0001-g001/player0.log",
    ] {
        let mut s = TcpStream::connect(site.1).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let status: u16 = text[9..12].parse().unwrap();
        assert!((400..500).contains(&status), "{path}: {text}");
        assert!(
            !text.contains("SQLite format") && !text.contains(secret.trim()),
            "{path}: {text}"
        );
        assert!(
            text.lines().last().is_some_and(|l| !l.trim().is_empty()),
            "{path}: no message: {text}"
        );
    }
    // A final bracket (an ordinary tournament folder in DIR/final, as
    // `season final` makes one) is published at /final once it exists.
    let mut t = referee();
    t.args(["tournament", "--jobs", "1", "--seed", "3", "-q"])
        .args([
            "--entrant",
            "x=inproc:random",
            "--entrant",
            "y=inproc:random",
        ])
        .args(["--entrant", "champion=inproc:heuristic", "--out"])
        .arg(dir.join("final"));
    succeeds(&mut t);
    let (status, body) = get(site.1, "/final");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("<td>champion</td>") && body.contains("ranked by rating"),
        "{body}"
    );
    assert!(get(site.1, "/").1.contains("href=\"/final\""));
}

/// Reads server-sent events from `s` until one says `sets` is `n`.
fn sse_until(s: &mut TcpStream, n: u64) {
    let want = format!("data: {{\"sets\":{n}}}");
    let start = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0; 4096];
    while !String::from_utf8_lossy(&seen).contains(&want) {
        assert!(
            start.elapsed() < LIMIT,
            "no event {want:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        let k = s.read(&mut buf).unwrap();
        assert!(
            k > 0,
            "the event stream ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..k]);
    }
}

#[test]
fn a_set_that_lands_reaches_the_events_and_the_open_page() {
    let dir = scratch("season_site", "live");
    init(&dir);
    play_to(&dir, 1);
    let site = serve(&dir);
    let mut events = TcpStream::connect(site.1).unwrap();
    write!(events, "GET /events HTTP/1.1\r\nHost: site\r\n\r\n").unwrap();
    sse_until(&mut events, 1);
    let browser = crate::browser::available();
    let mut page = browser.then(|| crate::cdp::Page::open(&format!("http://{}/", site.1)));
    if let Some(p) = &mut page {
        let shown = "document.getElementById('sets')?.textContent";
        p.wait_for(&format!("{shown} === '1'"), LIMIT, "the standings page");
        // Lost if the page reloads.
        p.eval("window.notReloaded = 46; true");
        // The script's EventSource is open before the set lands.
        p.wait_for(
            "typeof es === 'object' && es.readyState === 1",
            LIMIT,
            "the page's event source",
        );
    }
    let points = |addr| {
        let (status, body) = get(addr, "/api/entrants/a");
        assert_eq!(status, 200, "{body}");
        let e: Value = serde_json::from_str(&body).unwrap();
        e["versions"][0]["history"].as_array().unwrap().len()
    };
    assert_eq!(points(site.1), 1);
    play_to(&dir, 2);
    sse_until(&mut events, 2);
    // The entrant's data is read again once the set is announced.
    assert_eq!(points(site.1), 2);
    if let Some(p) = page {
        entrant_page_and_replay(p);
    }
    // SIGTERM stops the server, even with an event stream open.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(site.0.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut site = site;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = site.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < LIMIT,
            "season serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}

/// After the standings updated: the entrant page's chart, and a replay.
fn entrant_page_and_replay(mut p: crate::cdp::Page) {
    p.wait_for(
        "document.getElementById('sets').textContent === '2' && window.notReloaded === 46",
        LIMIT,
        "the standings after the second set, without a reload",
    );
    p.eval("document.querySelector('a[href=\"/entrants/a\"]').click(); true");
    p.wait_for(
        "location.pathname === '/entrants/a' && document.querySelectorAll('#rating-chart polyline.rating').length === 1",
        LIMIT,
        "a's page with its rating chart",
    );
    let points = p.eval("document.querySelector('#rating-chart polyline.rating').getAttribute('points').split(' ').length");
    assert_eq!(
        points, 2,
        "a rating after each finished set since a first played"
    );
    p.eval("document.querySelector('a.replay').click(); true");
    p.wait_for(
        "location.pathname.startsWith('/games/') && document.getElementById('title').textContent.startsWith('set ') && document.querySelectorAll('#deal option').length > 0",
        LIMIT,
        "a replay page, drawn by its script",
    );
}

#[test]
fn run_serve_serves_the_site_while_it_plays() {
    let dir = scratch("season_site", "run-serve");
    init(&dir);
    let mut c = season(&["run", "--jobs", "1", "-q", "--serve", "127.0.0.1:0"]);
    c.arg(&dir);
    let site = start(c);
    let start = Instant::now();
    loop {
        let (status, body) = get(site.1, "/api/standings");
        assert_eq!(status, 200, "{body}");
        let s: Value = serde_json::from_str(&body).unwrap();
        if s["sets"].as_u64().is_some_and(|n| n >= 1) {
            break;
        }
        assert!(start.elapsed() < LIMIT, "no set landed: {body}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
