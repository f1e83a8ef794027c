//! A season played by workers (`referee season worker`) for a server
//! (`season run --serve ADDR --workers`), all real processes over real HTTP
//! on loopback: the workers' transcripts are the bytes the server's own
//! tables write for the same season; a worker killed mid-set, and one
//! stopped past its lease and then continued, lose their sets to another
//! worker with no game lost or counted twice, and the stale one is refused
//! and drops its set; a wrong token reads nothing; a tampered transcript is
//! refused and its set goes back to the queue.
//!
//! Every wait is for something a process says, bounded by minutes, never
//! a fixed time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{copy_dir, referee, scratch, stdout, succeeds};

/// The bound on every wait.
pub(crate) const LIMIT: Duration = Duration::from_secs(300);

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

/// A season of three entrants in `dir`; `c` is a folder of its own (a
/// script that runs the built-in heuristic), shipped to workers by hash.
fn init(dir: &Path, extra: &[&str]) {
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "47", "--unchecked", "--min-sets", "1"])
        .args(["--entrant", "a=builtin:heuristic"])
        .args(["--entrant", "b=builtin:random"])
        .args(extra);
    succeeds(c.stdout(Stdio::null()));
    let bot = dir.with_extension("c-bot");
    std::fs::create_dir_all(&bot).unwrap();
    let exe = env!("CARGO_BIN_EXE_referee");
    std::fs::write(
        bot.join("run.sh"),
        format!("echo c says hello on stderr >&2\nexec {exe} bot heuristic\n"),
    )
    .unwrap();
    let mut s = season(&["submit"]);
    s.arg(dir)
        .args(["c", "--unchecked", "--bot-dir"])
        .arg(&bot)
        .args(["--", "sh", "run.sh"]);
    succeeds(s.stdout(Stdio::null()));
}

/// A worker token for `name`, in a file beside the season; its path.
fn token(dir: &Path, name: &str) -> PathBuf {
    let out = stdout(&succeeds(season(&["worker-token"]).arg(dir).arg(name)));
    // The token alone on stdout: `> FILE` makes the --token-file.
    let token = out.trim().to_owned();
    assert_eq!(token.len(), 32, "{out}");
    let file = dir.with_extension(format!("{name}.token"));
    std::fs::write(&file, token).unwrap();
    file
}

/// A process whose stderr lines are kept as they come; killed when dropped.
pub(crate) struct Proc {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    what: String,
}

impl Proc {
    pub(crate) fn start(mut cmd: Command, what: &str) -> Proc {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let keep = lines.clone();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        Proc {
            child,
            lines,
            what: what.to_owned(),
        }
    }

    /// The first line that `pred` holds for, once one has come.
    pub(crate) fn wait_for(&self, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(l) = self.lines.lock().unwrap().iter().find(|l| pred(l)) {
                return l.clone();
            }
            assert!(
                start.elapsed() < LIMIT,
                "{} never said what was awaited; it said:\n{}",
                self.what,
                self.said()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn said(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    pub(crate) fn signal(&self, s: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, s).unwrap();
    }

    /// Waits for it to end; whether it succeeded.
    pub(crate) fn ends(&mut self) -> bool {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(
                start.elapsed() < LIMIT,
                "{} never ended:\n{}",
                self.what,
                self.said()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `season run DIR --serve` on a free loopback port with workers; it and
/// its address.
fn server(dir: &Path, args: &[&str]) -> (Proc, SocketAddr) {
    server_at(dir, "127.0.0.1:0", args)
}

/// [`server`] on `addr`.
fn server_at(dir: &Path, addr: &str, args: &[&str]) -> (Proc, SocketAddr) {
    let mut c = season(&["run", "--serve", addr, "--workers"]);
    c.arg(dir).args(args);
    let p = Proc::start(c, "the season's run");
    let line = p.wait_for(|l| l.starts_with("referee: season site at http://"));
    let addr = (line.trim().strip_prefix("referee: season site at http://"))
        .and_then(|a| a.strip_suffix('/'))
        .unwrap()
        .parse()
        .unwrap();
    (p, addr)
}

fn worker(addr: SocketAddr, token: &Path, cache: &Path, tables: u32, what: &str) -> Proc {
    let mut c = season(&["worker", "--server", &format!("http://{addr}")]);
    c.arg("--token-file")
        .arg(token)
        .arg("--cache")
        .arg(cache)
        .args(["--tables", &tables.to_string()]);
    Proc::start(c, what)
}

/// The season's games, (set, game) by transcript, as the database counts them.
fn counted(dir: &Path) -> Vec<(i64, u32)> {
    let c = rusqlite::Connection::open(dir.join("season.db")).unwrap();
    let mut st = c
        .prepare("SELECT set_id, game FROM games ORDER BY set_id, game")
        .unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

fn verify_ok(dir: &Path) {
    let out = referee().arg("verify").arg(dir).output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "verify failed:\n{text}");
    assert!(
        text.contains("season.db (") && !text.contains("INVALID"),
        "{text}"
    );
}

/// Every (set, game) of `sets` sets, each once.
pub(crate) fn whole(sets: i64) -> Vec<(i64, u32)> {
    (1..=sets)
        .flat_map(|s| (1..=6).map(move |g| (s, g)))
        .collect()
}

#[test]
fn workers_play_a_season_in_the_bytes_the_servers_own_tables_write() {
    let dir = scratch("season_workers", "by-workers");
    init(&dir, &[]);
    // The same season (secret, seed, versions) played by local tables.
    let local = scratch("season_workers", "local");
    copy_dir(&dir, &local);
    succeeds(season(&["run", "--jobs", "1", "-q", "--sets", "3"]).arg(&local));
    let (t1, t2) = (token(&dir, "w1"), token(&dir, "w2"));
    let (mut run, addr) = server(&dir, &["--jobs", "0", "--sets", "3"]);
    let _w1 = worker(addr, &t1, &dir.with_extension("cache1"), 1, "worker w1");
    let _w2 = worker(addr, &t2, &dir.with_extension("cache2"), 2, "worker w2");
    assert!(run.ends(), "the run failed:\n{}", run.said());
    assert_eq!(counted(&dir), whole(3));
    for (set, game) in whole(3) {
        let name = format!("games/r00-m{set:04}-g{game:03}.jsonl");
        let ours = std::fs::read(dir.join(&name)).unwrap();
        let theirs = std::fs::read(local.join(&name)).unwrap();
        assert!(ours == theirs, "{name} differs from the local table's");
    }
    verify_ok(&dir);
    // `c`'s folder went to the workers by hash, and ran from their caches.
    let blobs: Vec<_> = std::fs::read_dir(dir.join("blobs")).unwrap().collect();
    assert_eq!(blobs.len(), 1);
    let hash = blobs[0].as_ref().unwrap().file_name();
    let unpacked = dir.with_extension("cache1").join("bots").join(&hash);
    let unpacked2 = dir.with_extension("cache2").join("bots").join(&hash);
    assert!(
        unpacked.join("run.sh").is_file() || unpacked2.join("run.sh").is_file(),
        "no worker unpacked blob {hash:?}"
    );
    let said = run.said();
    assert!(
        said.contains("leased to worker w1") && said.contains("leased to worker w2"),
        "{said}"
    );
    // `c`'s stderr came back from the workers, to where the server's own
    // tables keep it (its logs page reads it there), as the local run's.
    let logs_of_c = |season: &Path| -> Vec<String> {
        let stderr = season.join("stderr");
        let mut found = Vec::new();
        for folder in std::fs::read_dir(&stderr).unwrap().flatten() {
            for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
                let text = std::fs::read_to_string(file.path()).unwrap();
                if text.contains("c says hello on stderr") {
                    let name = file.file_name().to_string_lossy().into_owned();
                    found.push(format!("{}/{name}", folder.file_name().to_string_lossy()));
                }
            }
        }
        found.sort();
        found
    };
    let from_workers = logs_of_c(&dir);
    assert!(!from_workers.is_empty(), "no log of c came back");
    assert_eq!(
        from_workers,
        logs_of_c(&local),
        "c's logs where local tables keep them"
    );
}

#[test]
fn a_killed_worker_and_a_stopped_one_lose_their_sets_and_no_game_counts_twice() {
    use nix::sys::signal::Signal;
    let dir = scratch("season_workers", "killed");
    // Paced: a set lasts seconds however fast the host, so a worker is
    // caught mid-set.
    init(&dir, &["--pace-ms", "5"]);
    let (tk, ts, tg) = (token(&dir, "k"), token(&dir, "s"), token(&dir, "g"));
    let (mut run, addr) = server(&dir, &["--jobs", "0", "--sets", "3", "--lease", "2"]);
    let killed = worker(addr, &tk, &dir.with_extension("k"), 1, "worker k");
    let stopped = worker(addr, &ts, &dir.with_extension("s"), 1, "worker s");
    killed.wait_for(|l| l.contains(": playing game(s)"));
    let line = stopped.wait_for(|l| l.contains(": playing game(s)"));
    let stale_set = line
        .split(' ')
        .nth(3)
        .unwrap()
        .trim_end_matches(':')
        .to_owned();
    killed.signal(Signal::SIGKILL);
    stopped.signal(Signal::SIGSTOP);
    run.wait_for(|l| l.contains("lease (worker k) ran out"));
    run.wait_for(|l| l.contains(&format!("set {stale_set}'s lease (worker s) ran out")));
    let good = worker(addr, &tg, &dir.with_extension("g"), 2, "worker g");
    run.wait_for(|l| l.contains(&format!("set {stale_set} leased to worker g")));
    stopped.signal(Signal::SIGCONT);
    let dropped = stopped.wait_for(|l| l.contains(&format!("set {stale_set} dropped")));
    assert!(dropped.contains("(409)"), "{dropped}");
    assert!(run.ends(), "the run failed:\n{}", run.said());
    assert_eq!(counted(&dir), whole(3), "a game lost or counted twice");
    verify_ok(&dir);
    drop(good);
}

/// The server SIGKILLed while its worker plays two sets, and started again
/// on its address (as Kubernetes restarts a pod): the worker keeps the games
/// it could not hand back meanwhile, hands them back under the leases the
/// database kept, and every game counts once, none played again.
#[test]
fn a_server_killed_and_restarted_loses_no_game_its_worker_held() {
    use nix::sys::signal::Signal;
    let dir = scratch("season_workers", "server-killed");
    init(&dir, &["--pace-ms", "5"]);
    let tw = token(&dir, "w");
    let (first, addr) = server(&dir, &["--jobs", "0", "--sets", "2"]);
    let w = worker(addr, &tw, &dir.with_extension("cache"), 2, "worker w");
    w.wait_for(|l| l.contains("set 2: playing game(s)"));
    first.signal(Signal::SIGKILL);
    // A game ended with no server to take it: the worker keeps it.
    w.wait_for(|l| l.contains("the server cannot be reached to hand it back"));
    drop(first);
    let (mut again, _) = server_at(&dir, &addr.to_string(), &["--jobs", "0", "--sets", "2"]);
    assert!(again.ends(), "the restarted run failed:\n{}", again.said());
    assert_eq!(counted(&dir), whole(2), "a game lost or counted twice");
    for set in [1, 2] {
        w.wait_for(|l| l.contains(&format!("set {set}: 6 game(s) handed back")));
    }
    assert!(
        !w.said().contains("dropped") && !again.said().contains("ran out"),
        "a lease was lost across the restart:\n{}\n{}",
        w.said(),
        again.said()
    );
    verify_ok(&dir);
}

/// One HTTP/1.1 request with `token` (none if empty) and `body`; the status
/// and the body.
fn request(addr: SocketAddr, method: &str, path: &str, token: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let auth = match token {
        "" => String::new(),
        t => format!("Authorization: Bearer {t}\r\n"),
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: s\r\nConnection: close\r\n{auth}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status = std::str::from_utf8(&raw[9..12]).unwrap().parse().unwrap();
    (status, raw[split + 4..].to_vec())
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(body)))
}

/// What a worker asks with, running the referee that wrote `transcript`.
fn ask_of(transcript: &[u8]) -> Vec<u8> {
    let header: Value =
        serde_json::from_slice(transcript.split(|&b| b == b'\n').next().unwrap()).unwrap();
    serde_json::json!({"referee": header["referee"], "tables": 1, "sandbox": false})
        .to_string()
        .into_bytes()
}

#[test]
fn a_wrong_token_reads_nothing_and_a_tampered_transcript_is_refused() {
    let dir = scratch("season_workers", "tampered");
    init(&dir, &[]);
    let local = scratch("season_workers", "tampered-local");
    copy_dir(&dir, &local);
    succeeds(season(&["run", "--jobs", "1", "-q", "--sets", "1"]).arg(&local));
    let real = std::fs::read(local.join("games/r00-m0001-g001.jsonl")).unwrap();
    let tw = std::fs::read_to_string(token(&dir, "w")).unwrap();
    let tv = std::fs::read_to_string(token(&dir, "v")).unwrap();
    let (run, addr) = server(&dir, &["--jobs", "0"]);
    let ask = || ask_of(&real);
    // No token, a made-up one, an entrant's: refused, nothing leased.
    for t in ["", "0123456789abcdef0123456789abcdef"] {
        let (status, body) = request(addr, "POST", "/api/worker/lease", t, &ask());
        assert_eq!(status, 401, "{}", String::from_utf8_lossy(&body));
        assert!(json(&body).get("granted").is_none());
    }
    let (status, body) = request(addr, "POST", "/api/worker/lease", &tw, &ask());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let offer = json(&body);
    let g = &offer["granted"];
    assert_eq!(g["set"], 1, "{offer}");
    let lease = g["lease"].as_str().unwrap().to_owned();
    let hash = (g["versions"].as_array().unwrap().iter())
        .find_map(|v| v["blob"].as_str())
        .unwrap()
        .to_owned();
    let blob = format!("/api/worker/blobs/{hash}");
    let (status, body) = request(addr, "GET", &blob, "0123456789abcdef0123456789abcdef", &[]);
    assert_eq!(status, 401);
    assert!(
        !body.starts_with(&[0x1f, 0x8b]),
        "a wrong token read a blob"
    );
    let (status, body) = request(addr, "GET", &blob, &tw, &[]);
    assert_eq!(status, 200);
    assert!(body.starts_with(&[0x1f, 0x8b]), "a blob is a .tar.gz");
    // Another worker's result for w's lease: refused, the lease w's.
    let game1 = format!("/api/worker/sets/1/games/1?lease={lease}");
    let (status, body) = request(addr, "POST", &game1, &tv, &real);
    assert_eq!((status, json(&body)["lease"].as_str()), (409, Some("lost")));
    // A transcript with one score changed: refused, the set back in the queue.
    let tampered = tamper(&real);
    let (status, body) = request(addr, "POST", &game1, &tw, &tampered);
    let refusal = json(&body);
    assert_eq!(status, 422, "{refusal}");
    assert!(
        refusal["error"]
            .as_str()
            .unwrap()
            .contains("does not check out"),
        "{refusal}"
    );
    let heartbeat = format!("/api/worker/sets/1/heartbeat?lease={lease}");
    let (status, _) = request(addr, "POST", &heartbeat, &tw, &[]);
    assert_eq!(status, 409, "a refused set's lease lives on");
    assert!(counted(&dir).is_empty());
    // A game that replays, but whose header claims a longer think time than
    // the season's: refused too.
    let (_, body) = request(addr, "POST", "/api/worker/lease", &tw, &ask());
    let lease = json(&body)["granted"]["lease"].as_str().unwrap().to_owned();
    let game1 = format!("/api/worker/sets/1/games/1?lease={lease}");
    let (status, body) = request(addr, "POST", &game1, &tw, &slower(&real));
    let refusal = json(&body);
    assert_eq!(status, 422, "{refusal}");
    assert!(
        refusal["error"].as_str().unwrap().contains("time control"),
        "{refusal}"
    );
    assert!(counted(&dir).is_empty());
    // The untampered transcript, under a new lease of the same set, counts.
    let (_, body) = request(addr, "POST", "/api/worker/lease", &tv, &ask());
    let again = json(&body);
    assert_eq!(again["granted"]["set"], 1, "{again}");
    let lease = again["granted"]["lease"].as_str().unwrap();
    let game1 = format!("/api/worker/sets/1/games/1?lease={lease}");
    let (status, body) = request(addr, "POST", &game1, &tv, &real);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(counted(&dir), vec![(1, 1)]);
    assert_eq!(
        std::fs::read(dir.join("games/r00-m0001-g001.jsonl")).unwrap(),
        real
    );
    assert!(run.said().contains("refused"), "{}", run.said());
    // A bot's log is kept only under the lease, and only under a name a
    // table of that set writes.
    let log = |folder: &str, file: &str, lease: &str, token: &str| {
        let path = format!("/api/worker/sets/1/stderr/{folder}/{file}?lease={lease}");
        request(addr, "POST", &path, token, b"a bot's stderr\n").0
    };
    assert_eq!(log("r00-m0001-g002", "player1.log", "stale", &tv), 409);
    assert_eq!(log("r00-m0002-g001", "player1.log", lease, &tv), 400);
    assert_eq!(log("..", "player1.log", lease, &tv), 400);
    assert_eq!(log("r00-m0001-g002", "seed-secret", lease, &tv), 400);
    assert_eq!(log("r00-m0001-g002", "player1.log", lease, &tw), 409);
    assert!(!dir.join("stderr/r00-m0002-g001").exists());
    assert_eq!(log("r00-m0001-g002", "player1.log", lease, &tv), 200);
    assert_eq!(
        std::fs::read(dir.join("stderr/r00-m0001-g002/player1.log")).unwrap(),
        b"a bot's stderr\n"
    );
}

/// `t` with its result line's first score one more.
fn tamper(t: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(t.to_vec()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.last_mut().unwrap();
    let mut v: Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["type"], "result");
    v["scores"][0] = (v["scores"][0].as_i64().unwrap() + 1).into();
    *last = v.to_string();
    (lines.join("\n") + "\n").into_bytes()
}

#[test]
fn a_sandboxed_seasons_sets_go_only_to_a_worker_that_can_sandbox_and_play_sandboxed_there() {
    let dir = scratch("season_workers", "sandboxed");
    let mut c = season(&["init"]);
    c.arg(&dir)
        .args([
            "--seed",
            "47",
            "--unchecked",
            "--sandbox",
            "--startup-ms",
            "60000",
        ])
        .args(["--entrant", "a=builtin:heuristic"])
        .args(["--entrant", "b=builtin:random"])
        .args(["--entrant", "c=builtin:heuristic"]);
    succeeds(c.stdout(Stdio::null()));
    let tw = token(&dir, "w");
    let (mut run, addr) = server(&dir, &["--jobs", "0", "--sets", "1"]);
    // A worker that says it cannot sandbox is told why, and leases nothing.
    let version = stdout(&succeeds(referee().arg("--version")));
    let referee_is = format!(
        "schmier-referee {}",
        version.split_whitespace().last().unwrap()
    );
    let ask = serde_json::json!({"referee": referee_is, "tables": 1, "sandbox": false});
    let token = std::fs::read_to_string(&tw).unwrap();
    let (status, body) = request(
        addr,
        "POST",
        "/api/worker/lease",
        &token,
        ask.to_string().as_bytes(),
    );
    let refusal = json(&body);
    assert_eq!(status, 400, "{refusal}");
    assert!(
        refusal["error"].as_str().unwrap().contains("sandbox"),
        "{refusal}"
    );
    assert!(refusal.get("granted").is_none());
    let _w = worker(addr, &tw, &dir.with_extension("cache"), 1, "worker w");
    assert!(run.ends(), "the run failed:\n{}", run.said());
    assert_eq!(counted(&dir), whole(1));
    let verified = stdout(&succeeds(referee().arg("verify").arg(&dir)));
    assert!(verified.contains("sandboxed by bubblewrap"), "{verified}");
    verify_ok(&dir);
}

/// `t` with its header's decision time doubled.
fn slower(t: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(t.to_vec()).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut h: Value = serde_json::from_str(first).unwrap();
    let ms = h["time_control"]["decision_ms"].as_u64().unwrap();
    h["time_control"]["decision_ms"] = (ms * 2).into();
    format!("{h}\n{rest}").into_bytes()
}

/// A version whose folder cannot be packed (it holds a link) is said once,
/// with what to do, and no worker is offered it; with no tables of its own
/// (`--jobs 0`) the run plans the others for its workers and finishes. A
/// version whose folder is empty ships, and is played.
#[test]
fn an_unshippable_folder_is_said_once_and_left_to_no_worker_and_an_empty_one_ships() {
    let dir = scratch("season_workers", "unshippable");
    init(&dir, &[]);
    let bot = dir.with_extension("d-bot");
    std::fs::create_dir_all(&bot).unwrap();
    let exe = env!("CARGO_BIN_EXE_referee");
    std::fs::write(bot.join("run.sh"), format!("exec {exe} bot random\n")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", bot.join("a-link")).unwrap();
    let mut s = season(&["submit"]);
    s.arg(&dir)
        .args(["d", "--unchecked", "--bot-dir"])
        .arg(&bot)
        .args(["--", "sh", "run.sh"]);
    // Said at once, when it is submitted: admitted, but not for workers.
    let said = stdout(&succeeds(&mut s));
    assert!(
        said.contains("d v1: admitted") && said.contains("d v1: note: its folder"),
        "{said}"
    );
    assert!(
        said.contains("a-link") && said.contains("no season worker"),
        "{said}"
    );
    // A command submitted from an empty folder: that folder ships, empty.
    let empty = dir.with_extension("e-bot");
    std::fs::create_dir_all(&empty).unwrap();
    let mut s = season(&["submit"]);
    s.arg(&dir)
        .args(["e", "--unchecked", "--bot-dir"])
        .arg(&empty)
        .args(["--", exe, "bot", "random"]);
    let said = stdout(&succeeds(&mut s));
    assert!(!said.contains("note:"), "an empty folder ships: {said}");
    let tw = token(&dir, "w");
    let (mut run, addr) = server(&dir, &["--jobs", "0", "--sets", "3"]);
    let _w = worker(addr, &tw, &dir.with_extension("cache"), 2, "worker w");
    assert!(run.ends(), "the run failed:\n{}", run.said());
    assert_eq!(counted(&dir), whole(3));
    let said = run.said();
    let told: Vec<&str> = (said.lines())
        .filter(|l| l.contains("No worker can play d v1"))
        .collect();
    assert_eq!(told.len(), 1, "said once:\n{said}");
    assert!(
        told[0].contains("a-link") && told[0].contains("--bot-dir"),
        "{}",
        told[0]
    );
    let finished_sets_of = |name: &str| -> i64 {
        let c = rusqlite::Connection::open(dir.join("season.db")).unwrap();
        c.query_row(
            "SELECT COUNT(*) FROM sets s JOIN versions v ON v.id IN (s.a, s.b, s.c) \
             JOIN entrants e ON e.id = v.entrant WHERE e.name = ?1 AND s.finished IS NOT NULL",
            [name],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(
        finished_sets_of("d"),
        0,
        "a set of d was played, by no table that could"
    );
    let with_e = finished_sets_of("e");
    assert!(with_e >= 1, "e, whose folder is empty, played no set");
    verify_ok(&dir);
}
