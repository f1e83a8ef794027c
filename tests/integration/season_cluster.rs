//! A season on many machines, as a cluster runs one: its state in a real
//! PostgreSQL, its server `season run --serve --workers --jobs 0` (which
//! plays nothing itself), and three workers, each in a network namespace of
//! its own, joined to the server's by a veth pair and reaching it only
//! through that pair, as separate hosts would:
//!
//! - worker `k` is SIGKILLed mid-set;
//! - worker `s` is cut off from the network mid-set (its pair's host end
//!   taken down: its packets go nowhere, as on a cut cable), goes on
//!   playing, finishes a game it cannot hand back, stays cut off past its
//!   lease while worker `g` is leased its set, and is then reconnected: its
//!   stale result is refused (409) and it drops the set;
//! - `g` and the reconnected `s` play on.
//!
//! Then, of the database: no set lost (the killed worker's and the cut-off
//! one's sets finished), none counted twice (each finished set six games,
//! one row each), the standings' ratings equal an independent Plackett–Luce
//! fit of the database's games (`tests/season/pl_fit.py`), no lease left
//! but those the stopped run's workers held, and `verify` ok.
//!
//! Network namespaces need root (CAP_NET_ADMIN) and `ip`; `scripts/test`
//! runs as root in CI and requires them there (`SCHMIER_REQUIRE_NETNS`).
//! Every wait is for something a process says, bounded, never a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::season_postgres::{runnable, season, Cluster, PASSWORD};
use crate::season_workers::Proc;
use crate::support::{root, scratch, stderr, stdout, succeeds};

/// `ip`, run as it is (root); its failure says what failed.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!("ip {}: {}", args.join(" "), stderr(&out).trim())),
    }
}

/// A network namespace joined to the host's by a veth pair: the host's end
/// `host` at `host_ip`, the namespace's at the next address of a /30.
/// Removed (with its pair) when dropped.
struct Netns {
    name: String,
    host: String,
    host_ip: String,
}

impl Netns {
    fn new(i: u32) -> Result<Netns, String> {
        let pid = std::process::id();
        // A /30 per namespace, in a /16 per test process.
        let net = format!("10.{}.{i}", 100 + pid % 100);
        let n = Netns {
            name: format!("schmier-{pid}-{i}"),
            host: format!("s47h{}{i}", pid % 100_000),
            host_ip: format!("{net}.1"),
        };
        let inner = format!("s47n{}{i}", pid % 100_000);
        let ns_ip = format!("{net}.2");
        ip(&["netns", "add", &n.name])?;
        ip(&[
            "link", "add", &n.host, "type", "veth", "peer", "name", &inner, "netns", &n.name,
        ])?;
        ip(&["addr", "add", &format!("{}/30", n.host_ip), "dev", &n.host])?;
        ip(&["link", "set", &n.host, "up"])?;
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &n.name, "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        inside(&["addr", "add", &format!("{ns_ip}/30"), "dev", &inner])?;
        inside(&["link", "set", &inner, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        Ok(n)
    }

    /// Its pair's host end down: whatever the namespace sends is lost.
    fn cut(&self) {
        ip(&["link", "set", &self.host, "down"]).unwrap();
    }

    fn mend(&self) {
        ip(&["link", "set", &self.host, "up"]).unwrap();
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
        let _ = ip(&["link", "del", &self.host]);
    }
}

/// Whether network namespaces can be made here; otherwise says loudly why
/// not, or fails where they are required.
fn netns_possible() -> bool {
    let why = if !nix::unistd::geteuid().is_root() {
        Some("network namespaces need root (CAP_NET_ADMIN)".to_owned())
    } else {
        let probe = format!("schmier-probe-{}", std::process::id());
        match ip(&["netns", "add", &probe]) {
            Ok(()) => {
                let _ = ip(&["netns", "del", &probe]);
                None
            }
            Err(e) => Some(format!("no network namespace could be made ({e})")),
        }
    };
    let Some(why) = why else { return true };
    if std::env::var_os("SCHMIER_REQUIRE_NETNS").is_some() {
        panic!("network namespaces are required here (SCHMIER_REQUIRE_NETNS) but {why}");
    }
    crate::support::skip(&format!("{why}; this test did not run"));
    false
}

/// A worker in namespace `ns`, reaching the server at `port` through it.
fn worker(ns: &Netns, port: u16, token: &Path, cache: &Path, tables: u32, what: &str) -> Proc {
    let mut c = Command::new("ip");
    // `ip netns exec` execs the program: the process is the worker itself.
    c.args(["netns", "exec", &ns.name])
        .arg(env!("CARGO_BIN_EXE_referee"))
        .args(["season", "worker", "--server"])
        .arg(format!("http://{}:{port}", ns.host_ip))
        .arg("--token-file")
        .arg(token)
        .arg("--cache")
        .arg(cache)
        .args(["--tables", &tables.to_string()]);
    Proc::start(c, what)
}

/// A folder bot of its own in `dir`, shipped to workers by hash.
fn folder_bot(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir.to_path_buf()
}

/// The season: two built-ins, a heuristic in a folder of its own, and a
/// forfeiter in a folder of its own (so the fit has a last place to find).
fn open_season(dir: &Path, url: &str) {
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--db", url])
        .args(["--seed", "4747", "--unchecked", "--min-sets", "1"])
        // Paced, so a set lasts seconds however fast the host and a worker
        // is caught mid-set; limits no busy host reaches, so no bot of the
        // built-ins faults on time.
        .args(["--pace-ms", "5", "--time-scale", "20"])
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"]);
    succeeds(c.stdout(Stdio::null()));
    let exe = env!("CARGO_BIN_EXE_referee");
    let heur = folder_bot(
        &dir.with_extension("c-bot"),
        &[("run.sh", &format!("exec {exe} bot heuristic\n"))],
    );
    let hostile = std::fs::read_to_string(root().join("tests/hostile/bot.py")).unwrap();
    let forfeit = folder_bot(&dir.with_extension("f-bot"), &[("bot.py", &hostile)]);
    for (name, folder, command) in [
        ("c", &heur, &["sh", "run.sh"][..]),
        ("f", &forfeit, &["python3", "bot.py", "garbage"][..]),
    ] {
        let mut s = season(&["submit"]);
        s.arg(dir)
            .args([name, "--unchecked", "--bot-dir"])
            .arg(folder)
            .arg("--")
            .args(command);
        succeeds(s.stdout(Stdio::null()));
    }
}

fn token(dir: &Path, name: &str) -> PathBuf {
    let out = stdout(&succeeds(season(&["worker-token"]).arg(dir).arg(name)));
    let file = dir.with_extension(format!("{name}.token"));
    std::fs::write(&file, out.trim()).unwrap();
    file
}

/// The set number in a worker's "set N: playing game(s) ..." line.
fn set_of(line: &str) -> i64 {
    let after = line.split("set ").nth(1).unwrap();
    after.split(':').next().unwrap().parse().unwrap()
}

#[test]
fn three_workers_in_namespaces_one_killed_one_cut_off_lose_no_set_and_count_none_twice() {
    let Some(bin) = runnable() else { return };
    if !netns_possible() {
        return;
    }
    let pg = Cluster::start(bin);
    let url = pg.database("cluster_season");
    let dir = scratch("season_cluster", "season");
    open_season(&dir, &url);
    let (tk, ts, tg) = (token(&dir, "k"), token(&dir, "s"), token(&dir, "g"));
    let nets: Vec<Netns> = (1..=3).map(|i| Netns::new(i).unwrap()).collect();
    // The server on every address of the host, as a cluster's would be; no
    // --sets: the test stops it once it has seen what it waits for.
    let mut c = season(&["run", "--serve", "0.0.0.0:0", "--workers", "--jobs", "0"]);
    c.arg(&dir).args(["--lease", "4"]);
    let mut run = Proc::start(c, "the season's run");
    let line = run.wait_for(|l| l.starts_with("referee: season site at http://"));
    let port: u16 = (line.trim().trim_end_matches('/').rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let k = worker(&nets[0], port, &tk, &dir.with_extension("k"), 1, "worker k");
    let s = worker(&nets[1], port, &ts, &dir.with_extension("s"), 1, "worker s");
    let killed_set = set_of(&k.wait_for(|l| l.contains(": playing game(s)")));
    let stale_set = set_of(&s.wait_for(|l| l.contains(": playing game(s)")));
    k.signal(Signal::SIGKILL);
    nets[1].cut();
    run.wait_for(|l| l.contains(&format!("set {killed_set}'s lease (worker k) ran out")));
    run.wait_for(|l| l.contains(&format!("set {stale_set}'s lease (worker s) ran out")));
    // Cut off, `s` played on: a game of its set is finished and waits.
    s.wait_for(|l| {
        l.contains(&format!("set {stale_set} game"))
            && l.contains("the server cannot be reached to hand it back")
    });
    let g = worker(&nets[2], port, &tg, &dir.with_extension("g"), 2, "worker g");
    run.wait_for(|l| l.contains(&format!("set {stale_set} leased to worker g")));
    nets[1].mend();
    let refused = run.wait_for(|l| {
        l.contains(&format!("set {stale_set} game")) && l.contains("from worker s refused")
    });
    let dropped = s.wait_for(|l| l.contains(&format!("set {stale_set} dropped")));
    assert!(dropped.contains("(409)"), "{dropped}\n{refused}");
    // No set lost: the killed worker's and the cut-off one's are finished
    // by the others.
    for set in [killed_set, stale_set] {
        run.wait_for(|l| l.contains(&format!("season: set {set} finished (")));
    }
    // Stopped as an organiser stops it: it says so, and what it finished.
    run.signal(Signal::SIGINT);
    assert!(!run.ends(), "a stopped run exits 130");
    run.wait_for(|l| l.contains("set(s) finished in this run") && l.contains("(stopped)"));
    drop((g, s, k));
    check_database(&pg, &dir);
}

/// None counted twice, the ratings an independent fit, `verify` ok.
fn check_database(pg: &Cluster, dir: &Path) {
    let db = "cluster_season";
    let rows = pg.query(
        db,
        "SELECT s.id, COUNT(g.game), COUNT(DISTINCT g.game), s.finished IS NOT NULL \
         FROM sets s LEFT JOIN games g ON g.set_id = s.id GROUP BY s.id ORDER BY s.id",
    );
    let mut finished = 0;
    for row in rows.lines() {
        let f: Vec<&str> = row.split('|').collect();
        assert_eq!(f[1], f[2], "set {}: a game counted twice ({row})", f[0]);
        match f[3] {
            "t" => {
                assert_eq!(f[1], "6", "finished set {} has {} games", f[0], f[1]);
                finished += 1;
            }
            _ => assert!(f[1].parse::<u32>().unwrap() < 6, "{row}"),
        }
    }
    assert!(finished >= 2, "{rows}");
    let transcripts = std::fs::read_dir(dir.join("games")).unwrap().count();
    let games: usize = pg
        .query(db, "SELECT COUNT(*) FROM games")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(transcripts, games, "a transcript for each game counted");
    let outcomes = pg.query(
        db,
        "SELECT g.outcome FROM games g JOIN sets s ON s.id = g.set_id \
         WHERE s.finished IS NOT NULL ORDER BY g.set_id, g.game",
    );
    let fit = fit_of(&outcomes);
    let standings: Value = serde_json::from_str(&stdout(&succeeds(
        season(&["standings", "--json"]).arg(dir),
    )))
    .unwrap();
    crate::season_e2e::ratings_are(&fit, &standings);
    let verified = Command::new(env!("CARGO_BIN_EXE_referee"))
        .arg("verify")
        .arg(dir)
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap();
    let text = stdout(&verified);
    assert!(
        verified.status.success() && !text.contains("INVALID"),
        "verify:\n{text}{}",
        stderr(&verified)
    );
}

/// `tests/season/pl_fit.py`'s ratings of `outcomes` (one JSON a line).
fn fit_of(outcomes: &str) -> BTreeMap<String, f64> {
    use std::io::Write;
    let mut py = Command::new("python3")
        .arg(root().join("tests/season/pl_fit.py"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    py.stdin
        .take()
        .unwrap()
        .write_all(outcomes.as_bytes())
        .unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(out.status.success(), "pl_fit.py: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}
