//! `referee season` end to end, with real bot processes and a real
//! `season.db`: four entrants (two built-ins, the Python sample bot, and a
//! bot that answers its first request with garbage, so forfeits every game);
//! a new version submitted while `season run` runs; the run killed with
//! SIGKILL in the middle of its sets and run again; `referee verify DIR`.
//!
//! Every wait is for an event the run causes (a set finished, a version's
//! sets), never for a time: the bound on each is ten minutes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::{referee, refused, root, scratch, stdout, succeeds, wait_while_running};

/// Sets a new version plays first (`--min-sets`).
const MIN_SETS: u64 = 2;

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

fn python(script: &str, args: &str) -> String {
    format!("python3 {} {args}", root().join(script).display())
}

/// A season of four in `dir`, every entrant admitted without check-bot (the
/// forfeiter would fail it; the submission below is checked).
fn init(dir: &Path) {
    let py = python("sample-bots/python/bot.py", "simple");
    let forfeit = python("tests/hostile/bot.py", "garbage");
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "46", "--unchecked", "--min-sets", "2"])
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"])
        .args(["--entrant", &format!("py={py}")])
        .args(["--entrant", &format!("forfeit={forfeit}")]);
    let out = stdout(&succeeds(&mut c));
    assert!(out.contains("forfeit v1: admitted (not checked"), "{out}");
}

fn standings(dir: &Path) -> Value {
    let out = succeeds(season(&["standings", "--json"]).arg(dir));
    serde_json::from_str(&stdout(&out)).expect("standings JSON")
}

/// Finished sets of the version `entrant` v`number`, if it has a row.
fn sets_of(s: &Value, entrant: &str, number: u64) -> Option<u64> {
    let rows = s["entrants"].as_array()?;
    let row = rows.iter().find(|r| r["entrant"] == entrant)?;
    let all = std::iter::once(row).chain(row["earlier"].as_array().into_iter().flatten());
    let v = all.into_iter().find(|r| r["number"] == number)?;
    v["sets"].as_u64()
}

/// Whether every two current versions have played a finished set together.
fn every_pair_met(s: &Value) -> bool {
    let current: Vec<i64> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["version"].as_i64().unwrap())
        .collect();
    let met: BTreeSet<(i64, i64)> = (s["pairs"].as_array().unwrap().iter())
        .map(|p| (p["a"].as_i64().unwrap(), p["b"].as_i64().unwrap()))
        .collect();
    current.iter().enumerate().all(|(i, &a)| {
        current[i + 1..]
            .iter()
            .all(|&b| met.contains(&(a.min(b), a.max(b))))
    })
}

/// A `season run` under way, killed if the test ends first (a failed
/// assertion must not leave it playing).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_run(dir: &Path, extra: &[&str]) -> Running {
    Running(
        season(&["run", "--jobs", "2", "-q"])
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Waits for `run` to end by itself (ten minutes at most); its status.
fn ended(mut run: Running) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed().as_secs() < 600,
            "the run did not stop at --sets"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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

#[test]
fn a_season_takes_a_new_version_survives_a_kill_and_verifies() {
    let dir = scratch("season", "four");
    init(&dir);
    let mut run = start_run(&dir, &[]);
    // Every entrant past its minimum: the new version is then the only one
    // owed sets.
    wait_while_running(&mut run.0, "every entrant's minimum", || {
        let s = standings(&dir);
        ["heur", "rand", "py", "forfeit"]
            .iter()
            .all(|e| sets_of(&s, e, 1) >= Some(MIN_SETS))
    });
    let planned_before = planned(&standings(&dir)).len();
    // A new version of `rand`, checked, while the run runs.
    let mut submit = season(&["submit"]);
    submit.arg(&dir).args(["rand", "--", "builtin:heuristic"]);
    let said = stdout(&succeeds(&mut submit));
    assert!(
        said.contains("rand v2: admitted (passed check-bot)"),
        "{said}"
    );
    let during = planned(&standings(&dir)).len() - planned_before;
    wait_while_running(
        &mut run.0,
        "the new version's minimum and every pair",
        || {
            let s = standings(&dir);
            sets_of(&s, "rand", 2) >= Some(MIN_SETS) && every_pair_met(&s)
        },
    );
    newcomer_first(&standings(&dir), planned_before, during);
    // Killed in the middle of its sets: two tables are always busy.
    run.0.kill().unwrap(); // SIGKILL
    run.0.wait().unwrap();
    let before = transcripts(&dir);
    let finished = standings(&dir)["sets"].as_u64().unwrap();
    // Nothing counted is wrong after the kill (games in flight are not counted).
    let v = Command::new(crate::support::REFEREE)
        .arg("verify")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    let target = finished + 2;
    let status = ended(start_run(&dir, &["--sets", &target.to_string()]));
    assert!(status.success(), "the resumed run: {status}");
    let s = standings(&dir);
    assert_eq!(
        s["sets"].as_u64(),
        Some(target),
        "the resumed run stops at --sets"
    );
    let after = transcripts(&dir);
    assert_eq!(
        s["games"].as_u64(),
        Some(6 * target),
        "no game lost or counted twice"
    );
    assert_eq!(
        after.len() as u64,
        6 * target,
        "a transcript per counted game"
    );
    for (name, bytes) in &before {
        // A game finished but not yet recorded at the kill is played again:
        // the same bytes.
        assert!(after.get(name) == Some(bytes), "{name} changed on resume");
    }
    let ranked: Vec<&str> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    assert_eq!(ranked.last(), Some(&"forfeit"), "{ranked:?}");
    assert!(sets_of(&s, "rand", 1).unwrap() >= 1, "v1 kept its record");
    let verified = succeeds(
        Command::new(crate::support::REFEREE)
            .arg("verify")
            .arg(&dir),
    );
    let text = stdout(&verified);
    assert!(!text.contains("note "), "every transcript counted: {text}");
    // Teams are named as the season names them: entrant and version.
    assert!(text.contains("heur v1 (heuristic)"), "{text}");
    assert!(text.contains("rand v2 (heuristic)"), "{text}");
    assert!(
        text.contains(&format!(
            "({} games, each as its transcript records it",
            6 * target
        )),
        "{text}"
    );
    tampered_transcript_fails(&dir, after.keys().next().unwrap());
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

/// The new version of `rand` is seated in one of the first two sets planned
/// after its submission was recorded (`--jobs 2`: a run filling its tables
/// as it is recorded plans at most that many without it; `during` sets were
/// planned while `season submit` ran, before or after that moment), and the
/// [`MIN_SETS`] sets from that one all seat it as their anchor: a newcomer's
/// minimum comes first (docs/organisers.md, "How a season chooses its sets").
fn newcomer_first(s: &Value, planned_before: usize, during: usize) {
    let rows = s["entrants"].as_array().unwrap();
    let rand = rows.iter().find(|r| r["entrant"] == "rand").unwrap();
    assert_eq!(rand["number"], 2);
    let v2 = rand["version"].as_i64().unwrap();
    let after: Vec<Vec<i64>> = planned(s).split_off(planned_before);
    let first = after.iter().position(|t| t.contains(&v2)).unwrap();
    assert!(
        first < during + 2,
        "taken within --jobs sets of its submission: {after:?}"
    );
    let next = &after[first..first + MIN_SETS as usize];
    assert!(
        next.iter().all(|t| t[0] == v2),
        "the newcomer anchors its first sets: {after:?}"
    );
}

/// A transcript edited after the fact: `verify DIR` fails, naming the file.
fn tampered_transcript_fails(dir: &Path, name: &str) {
    let path: PathBuf = dir.join("games").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    // The result line's scores, one point more for the first team.
    let at = text.rfind("{\"type\":\"result\"").expect("a result line");
    let (head, result) = text.split_at(at);
    let edited = format!(
        "{head}{}",
        result.replacen("\"scores\":[", "\"scores\":[1", 1)
    );
    assert_ne!(edited, text, "the result line has scores");
    std::fs::write(&path, edited).unwrap();
    let out = Command::new(crate::support::REFEREE)
        .arg("verify")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("INVALID {}", path.display())),
        "{said}"
    );
    assert!(
        said.contains("season.db: set"),
        "the record of it too: {said}"
    );
    // The summary counts the season's games and sets, not journal lines.
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains("problem(s) in the season's record (")
            && summary.contains("finished set(s) checked against their transcripts")
            && !summary.contains("journal line"),
        "{summary}"
    );
}

#[test]
fn a_submission_that_fails_check_bot_is_refused_in_words() {
    let dir = scratch("season", "refused");
    let mut c = season(&["init"]);
    c.arg(&dir)
        .args(["--seed", "1", "--unchecked"])
        .args(["--entrant", "a=builtin:random"]);
    succeeds(&mut c);
    let bad = python("tests/hostile/bot.py", "garbage");
    let out = season(&["submit"])
        .arg(&dir)
        .args(["bad", "--", &bad])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("[FAIL]"), "{said}");
    assert!(
        said.contains("bad v1: not admitted: it failed check-bot"),
        "{said}"
    );
    let s = standings(&dir);
    let names: Vec<&str> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"], "a refused version never plays");
    // A command that cannot be found is not admitted either, and says so.
    let out = season(&["submit"])
        .arg(&dir)
        .args(["a", "--", "./no-such-bot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("a v2: not admitted: it"), "{said}");
    assert!(said.contains("no-such-bot"), "{said}");
    // A closed season plays nothing more.
    let closed = stdout(&succeeds(season(&["close"]).arg(&dir)));
    assert!(closed.contains("its seed secret: "), "{closed}");
    let err = refused(season(&["run", "--sets", "1"]).arg(&dir));
    assert!(err.contains("is closed"), "{err}");
    // A folder that is no season is named as such.
    let err = refused(season(&["run", "--sets", "1"]).arg(dir.join("elsewhere")));
    assert!(err.contains("holds no season"), "{err}");
}

#[test]
fn ctrl_c_stops_a_run_and_leaves_only_counted_games() {
    let dir = scratch("season", "interrupted");
    let mut c = season(&["init"]);
    c.arg(&dir)
        .args(["--seed", "2", "--unchecked"])
        .args(["--entrant", "a=builtin:random"])
        .args(["--entrant", "b=builtin:heuristic"])
        .args(["--entrant", "c=builtin:random"]);
    succeeds(&mut c);
    let child = season(&["run", "--jobs", "2"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = crate::support::interrupt_when(child, "a set finished", || {
        standings(&dir)["sets"].as_u64() >= Some(1)
    });
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("(stopped)"), "{said}");
    // The games under way were abandoned, not left half-counted.
    let s = standings(&dir);
    let counted = (s["set_list"].as_array().unwrap().iter())
        .filter(|e| e["finished"] == true)
        .count() as u64;
    assert!(counted >= 1);
    let verified = succeeds(
        Command::new(crate::support::REFEREE)
            .arg("verify")
            .arg(&dir),
    );
    let text = stdout(&verified);
    assert!(!text.contains("note "), "{text}");
    let left: Vec<String> = (std::fs::read_dir(dir.join("games")).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Every transcript is a game the database counts (those of the set left
    // unfinished too: the next run plays only its missing games).
    let n = transcripts(&dir).len();
    assert!(n as u64 >= 6 * counted);
    assert!(
        text.contains(&format!("({n} games, each as its transcript records it")),
        "{text}"
    );
}

/// A sandboxed season of the referee's own bots plays from cargo's
/// `target/debug`, as `tournament --sandbox` does: each built-in bot is shown
/// the referee's executable and its libraries, not the referee's folder
/// (which is too large to image). The open database (its WAL index,
/// `season.db-shm`, is mapped by the run) once made the referee take its
/// bots for strangers.
#[test]
fn a_sandboxed_season_of_built_in_bots_plays() {
    let dir = scratch("season", "sandboxed");
    let mut c = season(&["init"]);
    c.arg(&dir)
        .args(["--seed", "3", "--sandbox", "--startup-ms", "60000"])
        .args(["--entrant", "a=builtin:random"])
        .args(["--entrant", "b=builtin:heuristic"])
        .args(["--entrant", "c=builtin:random"]);
    succeeds(&mut c);
    let out = succeeds(season(&["run", "--jobs", "1", "--sets", "1"]).arg(&dir));
    let said = crate::support::stderr(&out);
    assert!(said.contains("1 in all"), "{said}");
    assert_eq!(standings(&dir)["games"].as_u64(), Some(6));
    let verified = stdout(&succeeds(
        Command::new(crate::support::REFEREE)
            .arg("verify")
            .arg(&dir),
    ));
    assert!(verified.contains("sandboxed by bubblewrap"), "{verified}");
}
