//! A season's remote version (issue 46; docs/organisers.md, "Remote
//! versions"): a real `season run --listen`, a real `referee connect`, a
//! real `season.db`. The version is submitted while the run runs, is not
//! planned until its connector connects, plays, is not planned while its
//! connector is away (the others play on), and is planned again when it
//! comes back; `verify` is ok. Every wait is for something the run or the
//! connector causes (a line on stderr, sets planned or finished), bounded
//! by ten minutes; never a time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

use crate::remote::{connect, organise, Organiser};
use crate::support::{referee, stdout, succeeds, wait_while_running, REFEREE};

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

fn standings(dir: &Path) -> Value {
    let out = succeeds(season(&["standings", "--json"]).arg(dir));
    serde_json::from_str(&stdout(&out)).expect("standings JSON")
}

/// The sets planned so far, in order: each its three version ids and
/// whether it finished.
fn planned(dir: &Path) -> Vec<(Vec<i64>, bool)> {
    (standings(dir)["set_list"].as_array().unwrap().iter())
        .map(|e| {
            let versions = (e["versions"].as_array().unwrap().iter())
                .map(|v| v.as_i64().unwrap())
                .collect();
            (versions, e["finished"].as_bool().unwrap_or(false))
        })
        .collect()
}

/// The version id of `entrant`'s current version.
fn version(dir: &Path, entrant: &str) -> i64 {
    (standings(dir)["entrants"].as_array().unwrap().iter())
        .find(|r| r["entrant"] == entrant)
        .and_then(|r| r["version"].as_i64())
        .unwrap_or_else(|| panic!("no {entrant} in the standings"))
}

/// How often the run said `what`.
fn said(log: &Mutex<String>, what: &str) -> usize {
    log.lock().unwrap().matches(what).count()
}

fn wait(org: &mut Organiser, what: &str, ready: impl FnMut() -> bool) {
    wait_while_running(&mut org.child, what, ready);
}

/// Waits until `n` sets more than `from` are planned; those sets.
fn planned_after(org: &mut Organiser, dir: &Path, from: usize, n: usize) -> Vec<Vec<i64>> {
    wait(org, "more sets planned", || planned(dir).len() >= from + n);
    (planned(dir).into_iter().skip(from))
        .map(|(v, _)| v)
        .collect()
}

/// How many finished sets version `r` played in.
fn finished_with(dir: &Path, r: i64) -> usize {
    (planned(dir).iter())
        .filter(|(t, done)| *done && t.contains(&r))
        .count()
}

/// A season `name` of three built-ins (and `extra`), seed `seed`, its
/// folder.
fn three_built_ins(name: &str, seed: &str, extra: &[&str]) -> PathBuf {
    let dir = crate::support::scratch("season_remote", name);
    let mut init = season(&["init"]);
    init.arg(&dir)
        .args(["--seed", seed, "--unchecked", "--pair-cap", "1000"])
        .args(["--min-sets", "2", "--startup-ms", "4000"])
        .args(["--entrant", "a=builtin:heuristic"])
        .args(["--entrant", "b=builtin:random"])
        .args(["--entrant", "c=builtin:random"])
        .args(extra);
    succeeds(&mut init);
    dir
}

#[test]
fn a_remote_version_plays_only_while_its_connector_is_connected_and_rejoins() {
    let dir = three_built_ins("rejoin", "4648", &[]);
    let dir_text = dir.display().to_string();
    let run = [
        "season",
        "run",
        dir_text.as_str(),
        "--jobs",
        "2",
        "--reconnect-grace-ms",
        "1000",
    ];
    // No remote version yet: the listener serves none, and waits for one.
    let mut org = organise(&run, "127.0.0.1:0", &dir);
    let log = org.stderr.clone();
    wait(&mut org, "two sets", || planned(&dir).len() >= 2);

    // Submitted while the run runs: served from the next read on.
    let said_submit = stdout(&succeeds(
        season(&["submit"]).arg(&dir).args(["r", "--", "remote"]),
    ));
    assert!(
        said_submit.contains("r v1: admitted (a remote seat: not checked here"),
        "{said_submit}"
    );
    let token = dir.join("tokens").join("r.token");
    assert!(
        said_submit.contains(&token.display().to_string()),
        "{said_submit}"
    );
    wait(&mut org, "remote:r served", || {
        said(&log, "remote:r plays while its owner runs") == 1
    });
    let r = version(&dir, "r");
    // Not connected: owed its minimum, yet not planned; the others play on.
    let from = planned(&dir).len();
    let away = planned_after(&mut org, &dir, from, 3);
    assert!(away.iter().all(|t| !t.contains(&r)), "{away:?}");

    let mut connector = connect(org.addr, &token, None, &[]);
    wait(&mut org, "remote:r connected", || {
        said(&log, "remote:r connected") == 1
    });
    wait(&mut org, "r's minimum finished", || {
        finished_with(&dir, r) >= 2
    });

    // It leaves: not planned again until it is back.
    connector.kill().unwrap(); // SIGKILL
    connector.wait().unwrap();
    wait(&mut org, "remote:r left", || {
        said(&log, "remote:r left") == 1
    });
    let from = planned(&dir).len();
    let gone = planned_after(&mut org, &dir, from, 3);
    assert!(gone.iter().all(|t| !t.contains(&r)), "{gone:?}");

    // It rejoins, and is planned again.
    let with_r = planned(&dir).iter().filter(|(t, _)| t.contains(&r)).count();
    let mut connector = connect(org.addr, &token, None, &[]);
    wait(&mut org, "remote:r back", || {
        said(&log, "remote:r connected") == 2
    });
    wait(&mut org, "r planned again and finished", || {
        finished_with(&dir, r) > with_r
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(org.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let (_, text) = org.finish();
    assert!(text.contains("set(s) finished in this run"), "{text}");
    let _ = connector.kill();
    let _ = connector.wait();
    let verified = Command::new(REFEREE)
        .arg("verify")
        .arg(&dir)
        .output()
        .unwrap();
    let out = stdout(&verified);
    assert!(verified.status.success(), "{out}");
    let row = (standings(&dir)["entrants"].as_array().unwrap().iter())
        .find(|e| e["entrant"] == "r")
        .cloned()
        .unwrap();
    assert!(row["sets"].as_u64().unwrap() >= 3, "{row}");
}

/// docs/organisers.md, "Remote versions", a resumed run: a set planned by a
/// run killed (SIGKILL) while the remote version played it waits, in the
/// next run, for its connector up to `--remote-wait` while the others
/// play, then is played with the absent version's seats failing to start;
/// every game of it is recorded once and `verify` is ok.
#[test]
fn a_resumed_set_of_an_absent_remote_version_waits_then_is_played_with_its_seats_failing() {
    let dir = three_built_ins("resumed", "4649", &["--entrant", "r=remote"]);
    let dir_text = dir.display().to_string();
    let mut org = organise(
        &["season", "run", dir_text.as_str(), "--jobs", "1"],
        "127.0.0.1:0",
        &dir,
    );
    // r thinks 600 ms on every 8th request, the file `mark` there meanwhile:
    // the run is killed while r plays a set.
    let mark = dir.with_extension("thinking");
    let bot: Vec<String> = [
        "python3",
        "tests/hostile/bot.py",
        "ponder",
        "EVERY=8",
        "MS=600",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("MARK={}", mark.display())])
    .collect();
    let bot: Vec<&str> = bot.iter().map(String::as_str).collect();
    let token = dir.join("tokens").join("r.token");
    let mut connector = crate::remote::connect_bot(org.addr, &token, None, &[], &bot);
    wait(&mut org, "r thinking in a set", || mark.exists());
    org.child.kill().unwrap(); // SIGKILL
    org.child.wait().unwrap();
    connector.kill().unwrap();
    connector.wait().unwrap();
    let r = version(&dir, "r");
    let sets = planned(&dir);
    let open = (sets.iter().position(|(t, done)| !done && t.contains(&r)))
        .expect("a set of r left unfinished")
        + 1;
    let target = sets.len() + 2;

    // Resumed, r's connector away: the set waits, others are played, then
    // it is played.
    let run = [
        "season",
        "run",
        dir_text.as_str(),
        "--jobs",
        "1",
        "--remote-wait",
        "3s",
        "--sets",
        &target.to_string(),
    ];
    let org = organise(&run, "127.0.0.1:0", &dir);
    let (code, text) = org.finish();
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains(&format!("set {open} waits for remote:r to connect")),
        "{text}"
    );
    let sets = planned(&dir);
    assert_eq!(sets.len(), target, "{sets:?}");
    assert!(sets.iter().all(|(_, done)| *done), "{sets:?}");
    let later = &sets[open..];
    assert!(later.iter().all(|(t, _)| !t.contains(&r)), "{later:?}");
    let mut seats_failed = 0;
    for g in 1..=6 {
        let file = dir
            .join("games")
            .join(format!("r00-m{open:04}-g{g:03}.jsonl"));
        let text = std::fs::read_to_string(&file).unwrap();
        seats_failed += text
            .lines()
            .filter(|l| l.contains(r#""fault":"start""#))
            .count();
    }
    assert!(seats_failed > 0, "r's seats failed to start in set {open}");
    let verified = Command::new(REFEREE)
        .arg("verify")
        .arg(&dir)
        .output()
        .unwrap();
    let out = stdout(&verified);
    assert!(verified.status.success(), "{out}");
    assert!(
        out.contains(&format!("({} games, each", 6 * target)),
        "{out}"
    );
}
