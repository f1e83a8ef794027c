//! Issue 46's end-to-end checks of a season, with real processes, a real
//! `season.db`, real HTTP on loopback and a real `referee connect`:
//!
//! - a season of six entrants — two built-ins, the Python sample bot, a bot
//!   that forfeits every game, one uploaded over HTTP by its owner, and one
//!   remote seat played through `referee connect`, which connects late
//!   (after the others' minimums), leaves (its connector killed) and
//!   rejoins — and a second version submitted mid-season, played for 150
//!   sets: every version had its minimum as docs/organisers.md states it
//!   (the remote one's counted from when it connected), the remote version
//!   was planned in no set while it was away, every pair of current entrants
//!   met, the forfeiter is last, the ratings are those of an independent
//!   Plackett–Luce fit of the database's games (`tests/season/pl_fit.py`),
//!   the site shows the remote version as a remote seat, and `verify` is ok;
//! - a season whose run is killed with SIGKILL twice while sets are in
//!   flight: no game lost or counted twice, the database's outcomes are the
//!   transcripts', and its sets are the bytes of an uninterrupted run's.
//!
//! Every wait is for something the run causes (sets or games recorded, a
//! line the run says), never for a time; each is bounded by ten minutes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::{referee, root, scratch, stdout, succeeds, wait_while_running, REFEREE};

/// `--min-sets` of both seasons (the default, 3, as documented).
const MIN_SETS: usize = 3;
/// `--jobs` of every run.
const JOBS: usize = 2;

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

fn python(script: &str, args: &str) -> String {
    format!("python3 {} {args}", root().join(script).display())
}

/// The bot that answers its first request with garbage: a forfeit of every
/// game it plays (the fallback plays its seats).
fn forfeiter() -> String {
    python("tests/hostile/bot.py", "garbage")
}

fn standings(dir: &Path) -> Value {
    let out = succeeds(season(&["standings", "--json"]).arg(dir));
    serde_json::from_str(&stdout(&out)).expect("standings JSON")
}

fn db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        dir.join("season.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap()
}

/// Games recorded in `season.db` so far.
fn games_recorded(dir: &Path) -> i64 {
    db(dir)
        .query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
        .unwrap()
}

/// The sets planned so far, in order: each its three version ids.
fn planned(s: &Value) -> Vec<Vec<i64>> {
    (s["set_list"].as_array().unwrap().iter())
        .map(|e| {
            (e["versions"].as_array().unwrap().iter())
                .map(|v| v.as_i64().unwrap())
                .collect()
        })
        .collect()
}

/// Every version of the standings, current and earlier: (entrant, number) →
/// its row.
fn versions(s: &Value) -> BTreeMap<(String, u64), Value> {
    let mut all = BTreeMap::new();
    for row in s["entrants"].as_array().unwrap() {
        let earlier = row["earlier"].as_array().into_iter().flatten();
        for v in std::iter::once(row).chain(earlier) {
            let key = (
                v["entrant"].as_str().unwrap().to_owned(),
                v["number"].as_u64().unwrap(),
            );
            all.insert(key, v.clone());
        }
    }
    all
}

/// A `season run` under way, killed if the test ends first; where its
/// stderr goes.
struct Running(Child, std::path::PathBuf);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_run(dir: &Path, sets: usize) -> Running {
    let log = dir.with_extension("stderr");
    let err = std::fs::File::create(&log).unwrap();
    let child = season(&["run", "-q"])
        .arg(dir)
        .args(["--jobs", &JOBS.to_string(), "--sets", &sets.to_string()])
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    Running(child, log)
}

/// Waits for `run` to end by itself; it must end well.
fn ends_well(mut run: Running) {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            let said = std::fs::read_to_string(&run.1).unwrap_or_default();
            assert!(status.success(), "season run: {status}: {said}");
            return;
        }
        assert!(start.elapsed().as_secs() < 600, "the run did not stop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `referee verify DIR` succeeds; what it printed.
fn verified(dir: &Path) -> String {
    stdout(&succeeds(Command::new(REFEREE).arg("verify").arg(dir)))
}

/// The Python sample bot's files as a .tar.gz, in memory.
fn sample_bot_archive() -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for name in ["bot.py", "schmier_kit.py"] {
        let path = root().join("sample-bots/python").join(name);
        tar.append_path_with_name(path, name).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// `season serve DIR` on a free loopback port, killed when dropped.
struct Site(Child, std::net::SocketAddr);

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> Site {
    use std::io::BufRead;
    let mut child = season(&["serve", "--addr", "127.0.0.1:0"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = (line.trim().strip_prefix("referee: season site at http://"))
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Site(child, addr)
}

/// The owner of `name` uploads `body` over HTTP with `token`: the status
/// and the answer.
fn upload(site: &Site, name: &str, token: &str, command: &str, body: &[u8]) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(site.1).unwrap();
    write!(
        s,
        "POST /api/entrants/{name}/versions?command={} HTTP/1.1\r\nHost: site\r\n\
         Connection: close\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/gzip\r\nContent-Length: {}\r\n\r\n",
        command.replace(' ', "%20"),
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |p| p.1);
    (status, serde_json::from_str(body).expect("a JSON answer"))
}

/// Six entrants: five from the command line (admitted without check-bot:
/// the forfeiter would fail it; `r` is a remote seat, its token in
/// `DIR/tokens/r.token`), `up` uploaded over HTTP by its owner with the
/// token `season token` gave (checked, as every upload). The site, kept.
fn six_entrants(dir: &Path) -> Site {
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "4646", "--unchecked"])
        // `up` is uploaded into this season without a sandbox.
        .arg("--allow-unsandboxed-uploads")
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"])
        .args([
            "--entrant",
            &format!("py={}", python("sample-bots/python/bot.py", "simple")),
        ])
        .args(["--entrant", &format!("forfeit={}", forfeiter())])
        .args(["--entrant", "r=remote"]);
    let said = stdout(&succeeds(&mut c));
    assert!(said.contains("r v1: its seat token is "), "{said}");
    let said = stdout(&succeeds(season(&["token"]).arg(dir).arg("up")));
    let token = (said.lines())
        .find_map(|l| {
            l.strip_prefix("entrant up")
                .map(|l| l.rsplit(": ").next().unwrap())
        })
        .unwrap_or_else(|| panic!("no token in {said}"))
        .to_owned();
    let site = serve(dir);
    let (status, answer) = upload(
        &site,
        "up",
        &token,
        "python3 bot.py simple",
        &sample_bot_archive(),
    );
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["admitted"], true, "{answer}");
    site
}

/// Sets a season of six plays in all.
const SETS: usize = 150;

/// A `season run --listen` on a free loopback port, saying what it does
/// (each remote version's coming and going) into its stderr file; the
/// address it serves.
fn start_listening_run(dir: &Path, sets: usize) -> (Running, std::net::SocketAddr) {
    let log = dir.with_extension("stderr");
    let err = std::fs::File::create(&log).unwrap();
    let child = season(&["run"])
        .arg(dir)
        .args(["--jobs", &JOBS.to_string(), "--sets", &sets.to_string()])
        .args(["--listen", "127.0.0.1:0", "--reconnect-grace-ms", "1000"])
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    let mut run = Running(child, log);
    let mut addr = None;
    wait_while_running(&mut run.0, "the listener's address", || {
        addr = said(&run.1)
            .split("serving remote seats on ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next()?.parse().ok());
        addr.is_some()
    });
    (run, addr.unwrap())
}

/// What a run has said so far.
fn said(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// `referee connect` for remote version `r`, playing the built-in
/// heuristic bot; killed if the test ends first.
fn connect_r(dir: &Path, addr: std::net::SocketAddr) -> Running {
    let log = dir.with_extension("connect.stderr");
    let err = std::fs::File::create(&log).unwrap();
    let child = referee()
        .arg("connect")
        .arg(addr.to_string())
        .arg("--token-file")
        .arg(dir.join("tokens").join("r.token"))
        .args(["--", REFEREE, "bot", "heuristic"])
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    Running(child, log)
}

/// Waits until the run has said `what` `n` times.
fn run_says(run: &mut Running, what: &str, n: usize) {
    let log = run.1.clone();
    wait_while_running(&mut run.0, what, || said(&log).matches(what).count() >= n);
}

/// Sets of version `v` planned, and finished.
fn sets_of(dir: &Path, v: i64) -> (usize, usize) {
    let s = standings(dir);
    let with: Vec<&Value> = (s["set_list"].as_array().unwrap().iter())
        .filter(|e| e["versions"].as_array().unwrap().contains(&Value::from(v)))
        .collect();
    let done = with.iter().filter(|e| e["finished"] == true).count();
    (with.len(), done)
}

/// The remote version `r`'s comings and goings: it connects once the five
/// others have had their minimums, leaves once it has finished its own and
/// more, and rejoins once the run has played on without it. What was
/// planned around each, for the checks.
struct RemoteStory {
    /// Sets planned before its connector started, and once it was seen.
    connected: (usize, usize),
    /// Sets planned after it was seen to leave, up to its return.
    away: std::ops::Range<usize>,
    /// Its connector since then (it ends with the run, told `bye`).
    _connector: Running,
}

fn remote_comes_goes_and_returns(
    dir: &Path,
    run: &mut Running,
    addr: std::net::SocketAddr,
) -> RemoteStory {
    wait_while_running(&mut run.0, "the first minimums planned", || {
        planned(&standings(dir)).len() >= 5 * MIN_SETS
    });
    let r = versions(&standings(dir))[&("r".to_owned(), 1)]["version"]
        .as_i64()
        .unwrap();
    let before = planned(&standings(dir)).len();
    let mut connector = connect_r(dir, addr);
    run_says(run, "remote:r connected", 1);
    let seen = planned(&standings(dir)).len();
    wait_while_running(&mut run.0, "r's minimum and two more finished", || {
        sets_of(dir, r).1 >= MIN_SETS + 2
    });
    connector.0.kill().unwrap(); // SIGKILL
    connector.0.wait().unwrap();
    run_says(run, "remote:r left", 1);
    let left = planned(&standings(dir)).len();
    wait_while_running(&mut run.0, "ten sets planned without r", || {
        planned(&standings(dir)).len() >= left + 10
    });
    let back = planned(&standings(dir)).len();
    let connector = connect_r(dir, addr);
    run_says(run, "remote:r connected", 2);
    RemoteStory {
        connected: (before, seen),
        away: left..back,
        _connector: connector,
    }
}

#[test]
fn a_season_of_six_plays_150_sets_as_documented_and_rates_as_plackett_luce() {
    let dir = scratch("season_e2e", "six");
    let site = six_entrants(&dir);
    let (mut run, addr) = start_listening_run(&dir, SETS);
    let story = remote_comes_goes_and_returns(&dir, &mut run, addr);
    wait_while_running(&mut run.0, "50 sets", || {
        standings(&dir)["sets"].as_u64() >= Some(50)
    });
    // A second version of `rand`, checked, submitted while the run runs.
    let planned_before = planned(&standings(&dir)).len();
    let said = stdout(&succeeds(season(&["submit"]).arg(&dir).args([
        "rand",
        "--",
        "builtin:heuristic",
    ])));
    assert!(
        said.contains("rand v2: admitted (passed check-bot)"),
        "{said}"
    );
    let during = planned(&standings(&dir)).len() - planned_before;
    ends_well(run);
    let s = standings(&dir);
    assert_eq!(s["sets"].as_u64(), Some(SETS as u64));
    assert_eq!(s["games"].as_u64(), Some(6 * SETS as u64));
    minimums_as_documented(&s, planned_before, during);
    remote_as_documented(&s, &story);
    every_pair_of_current_entrants_met(&s);
    let ranked: Vec<&str> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    assert_eq!(ranked.len(), 6, "{ranked:?}");
    assert_eq!(
        ranked.last(),
        Some(&"forfeit"),
        "the forfeiter is last: {ranked:?}"
    );
    ratings_are_an_independent_fit(&dir, &s);
    let page = get(&site, "/entrants/r");
    assert!(
        page.contains("remote seat (<code>remote:r</code>"),
        "{page}"
    );
    let text = verified(&dir);
    assert!(
        text.contains(&format!(
            "({} games, each as its transcript records it",
            6 * SETS
        )),
        "{text}"
    );
}

/// docs/organisers.md, "Remote versions": `r`, there from the start but
/// not connected, is in no set planned before its connector started nor
/// while it was away; once seen connected it anchors the next sets until
/// it has its minimum (none else is owed any then), so it has `MIN_SETS`
/// of those planned from its connector's start to `--jobs` +
/// `MIN_SETS` sets after it was seen; and it is planned again after it
/// rejoined.
fn remote_as_documented(s: &Value, story: &RemoteStory) {
    let r = versions(s)[&("r".to_owned(), 1)]["version"]
        .as_i64()
        .unwrap();
    let plan = planned(s);
    let (before, seen) = story.connected;
    assert!(plan[..before].iter().all(|t| !t.contains(&r)), "{plan:?}");
    let window = &plan[before..seen + JOBS + MIN_SETS];
    let n = window.iter().filter(|t| t.contains(&r)).count();
    assert!(n >= MIN_SETS, "r had {n} sets of {window:?}");
    let away = &plan[story.away.clone()];
    assert!(
        away.iter().all(|t| !t.contains(&r)),
        "planned while away: {away:?}"
    );
    let after = &plan[story.away.end..];
    assert!(
        after.iter().any(|t| t.contains(&r)),
        "never planned again: {after:?}"
    );
}

/// The body of `GET path` on the site.
fn get(site: &Site, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(site.1).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    text
}

/// docs/organisers.md, "How a season chooses its sets": the versions there
/// from the start and connected (all but the remote `r`) are owed `MIN_SETS`
/// each and anchor sets until they have them, so five have them within the
/// first 5 × `MIN_SETS` sets planned; a
/// version submitted while the run runs is left out of at most `--jobs` sets
/// planned after it is recorded (plus `during`, planned while `submit` ran),
/// then anchors the next `MIN_SETS` (none other is owed sets by then).
fn minimums_as_documented(s: &Value, planned_before: usize, during: usize) {
    let all = versions(s);
    let plan = planned(s);
    let id = |e: &str, n: u64| all[&(e.to_owned(), n)]["version"].as_i64().unwrap();
    let first = &plan[..5 * MIN_SETS];
    for e in ["heur", "rand", "py", "forfeit", "up"] {
        let v = id(e, 1);
        let n = first.iter().filter(|t| t.contains(&v)).count();
        assert!(n >= MIN_SETS, "{e} v1 had {n} of the first sets: {first:?}");
    }
    let v2 = id("rand", 2);
    let window = &plan[planned_before..planned_before + during + JOBS + MIN_SETS];
    let n = window.iter().filter(|t| t.contains(&v2)).count();
    assert!(n >= MIN_SETS, "rand v2 had {n} sets of {window:?}");
    for ((e, number), row) in &all {
        let sets = row["sets"].as_u64().unwrap() as usize;
        assert!(sets >= MIN_SETS, "{e} v{number} finished {sets} sets");
    }
}

/// Every two current versions finished a set together.
fn every_pair_of_current_entrants_met(s: &Value) {
    let current: Vec<i64> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["version"].as_i64().unwrap())
        .collect();
    let met: BTreeMap<(i64, i64), u64> = (s["pairs"].as_array().unwrap().iter())
        .map(|p| {
            let (a, b) = (p["a"].as_i64().unwrap(), p["b"].as_i64().unwrap());
            ((a.min(b), a.max(b)), p["sets"].as_u64().unwrap())
        })
        .collect();
    for (i, &a) in current.iter().enumerate() {
        for &b in &current[i + 1..] {
            let sets = met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0);
            assert!(sets >= 1, "versions {a} and {b} never met: {met:?}");
        }
    }
}

/// Every version's rating in `season standings --json` is within half a
/// point of `tests/season/pl_fit.py`'s fit of the games in `season.db`.
fn ratings_are_an_independent_fit(dir: &Path, s: &Value) {
    let out = succeeds(
        Command::new("python3")
            .arg(root().join("tests/season/pl_fit.py"))
            .arg(dir),
    );
    let fit: BTreeMap<String, f64> = serde_json::from_str(&stdout(&out)).unwrap();
    ratings_are(&fit, s);
}

/// Every version's rating in standings `s` (`season standings --json`) is
/// within half a point of `fit`'s, and the same versions are rated.
pub(crate) fn ratings_are(fit: &BTreeMap<String, f64>, s: &Value) {
    let rated: BTreeMap<String, f64> = (versions(s).values())
        .map(|v| (v["version"].to_string(), v["rating"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        fit.keys().collect::<Vec<_>>(),
        rated.keys().collect::<Vec<_>>(),
        "the same versions rated"
    );
    for (v, r) in &rated {
        assert!(
            (r - fit[v]).abs() <= 0.5,
            "version {v}: {r} rated, {} fitted",
            fit[v]
        );
    }
}

/// Sets the killed season plays.
const KILLED_SETS: usize = 16;

/// A season of built-ins and the forfeiter (no bot whose moves could depend
/// on the host's speed), seed fixed; the same folder copied to `twin` before
/// anything is played: the same seed, secret and submissions.
fn deterministic_season(dir: &Path, twin: &Path) {
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "4647", "--unchecked"])
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"])
        .args(["--entrant", "rand2=builtin:random"])
        .args(["--entrant", &format!("forfeit={}", forfeiter())]);
    succeeds(&mut c);
    succeeds(Command::new("cp").arg("-a").arg(dir).arg(twin));
}

/// The transcripts in `dir/games`, name → bytes.
fn transcripts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let games = dir.join("games");
    (std::fs::read_dir(&games).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .map(|n| {
            let bytes = std::fs::read(games.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// Starts a run, waits until `more` games more are recorded, and kills it
/// with SIGKILL; every transcript on disk then.
fn kill_during_sets(dir: &Path, more: i64) -> BTreeMap<String, Vec<u8>> {
    let before = games_recorded(dir);
    let mut run = start_run(dir, KILLED_SETS);
    wait_while_running(&mut run.0, "more games recorded", || {
        games_recorded(dir) >= before + more
    });
    run.0.kill().unwrap(); // SIGKILL
    run.0.wait().unwrap();
    transcripts(dir)
}

// It once failed 1 run in 10 (the resume after the second SIGKILL exited
// with an error whose stderr was not kept; it now prints it). The candidate
// cause found, a lock left held for a moment by a process the killed run had
// just forked, is waited for (`lock.rs`); 17 runs in a row passed under load
// after that, and 60 rounds of its scenario before.
#[test]
fn killed_twice_a_season_loses_no_game_and_its_record_is_its_transcripts() {
    let base = scratch("season_e2e", "killed");
    let (dir, twin) = (base.join("killed"), base.join("straight"));
    deterministic_season(&dir, &twin);
    let first = kill_during_sets(&dir, 15);
    let second = kill_during_sets(&dir, 20);
    assert!(
        (games_recorded(&dir) as usize) < 6 * KILLED_SETS,
        "killed before the end"
    );
    ends_well(start_run(&dir, KILLED_SETS));
    let after = transcripts(&dir);
    for (name, bytes) in first.iter().chain(&second) {
        // A game finished but not recorded at a kill is played again: the
        // same bytes.
        assert!(after.get(name) == Some(bytes), "{name} changed on resume");
    }
    each_game_once_as_its_transcript_says(&dir, &after);
    let text = verified(&dir);
    assert!(!text.contains("note "), "every transcript counted: {text}");
    ends_well(start_run(&twin, KILLED_SETS));
    same_sets_same_bytes(&dir, &twin);
}

/// Every finished set has games 1 to 6, each once; no other game is
/// recorded; each recorded outcome is what its transcript's result line
/// says, and every transcript on disk is a recorded game.
fn each_game_once_as_its_transcript_says(dir: &Path, files: &BTreeMap<String, Vec<u8>>) {
    let conn = db(dir);
    let finished: BTreeSet<i64> = (conn.prepare("SELECT id FROM sets WHERE finished IS NOT NULL"))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(finished.len(), KILLED_SETS);
    let mut stmt = conn
        .prepare("SELECT set_id, game, transcript, outcome FROM games ORDER BY set_id, game")
        .unwrap();
    let rows: Vec<(i64, i64, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut games: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (set, game, transcript, outcome) in &rows {
        games.entry(*set).or_default().push(*game);
        let name = transcript.strip_prefix("games/").unwrap();
        let text = String::from_utf8(files[name].clone()).unwrap();
        let result: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(
            result["type"], "result",
            "{transcript} ends with its result"
        );
        let outcome: Value = serde_json::from_str(outcome).unwrap();
        for key in ["scores", "ranking", "forfeited", "deals"] {
            assert_eq!(outcome[key], result[key], "set {set} game {game}: {key}");
        }
    }
    assert_eq!(games.keys().copied().collect::<BTreeSet<_>>(), finished);
    for (set, numbers) in &games {
        assert_eq!(numbers, &[1, 2, 3, 4, 5, 6], "set {set}'s games");
    }
    assert_eq!(files.len(), rows.len(), "a transcript per recorded game");
}

/// docs/organisers.md, "Nothing is lost": a game is dealt from its set's
/// recorded seed, so with deterministic bots a set of the same versions
/// plays the same bytes in both seasons. (Which versions a set seats
/// depends on the sets finished when it is planned, so under `--jobs 2`
/// the two seasons need not plan the same sets: the first `--jobs` are
/// planned before any finishes and are the same.)
fn same_sets_same_bytes(dir: &Path, twin: &Path) {
    let sets = |d: &Path| -> BTreeMap<i64, Value> {
        (standings(d)["set_list"].as_array().unwrap().iter())
            .map(|e| (e["set"].as_i64().unwrap(), e["versions"].clone()))
            .collect()
    };
    let (a, b) = (sets(dir), sets(twin));
    let (ta, tb) = (transcripts(dir), transcripts(twin));
    let mut same = 0;
    for (set, versions) in &a {
        if b.get(set) != Some(versions) {
            continue;
        }
        same += 1;
        for g in 1..=6 {
            let name = format!("r00-m{set:04}-g{g:03}.jsonl");
            assert!(ta[&name] == tb[&name], "{name} differs between the runs");
        }
    }
    assert!(same >= JOBS, "the first sets are the same: {a:?} {b:?}");
}
