//! `referee season final` end to end: a season of four (two built-ins, a
//! gated Python bot and a bot that forfeits every game) plays four sets; its
//! final among the top three freezes submissions, is killed with SIGKILL in
//! the middle (while the gated bot holds a game), and run again finishes
//! with the transcripts of a final played without a stop, from a copy of the
//! season made before it; `referee verify DIR` checks the final too.
//!
//! Every wait is for an event the run causes (the gated bot waiting), never
//! for a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{copy_dir, referee, refused, root, scratch, stdout, succeeds};

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

/// A season of four in `dir` whose `g` waits behind `gate`
/// (`tests/season/gate_bot.py`), four sets played.
fn four_sets(dir: &Path, gate: &Path) {
    let g = format!(
        "python3 {} {} random",
        root().join("tests/season/gate_bot.py").display(),
        gate.display()
    );
    let forfeit = format!(
        "python3 {} garbage",
        root().join("tests/hostile/bot.py").display()
    );
    // A long start-up limit: the gated bot's start is held until the kill.
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "46", "--unchecked", "--min-sets", "1"])
        .args(["--startup-ms", "120000"])
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"])
        .args(["--entrant", &format!("g={g}")])
        .args(["--entrant", &format!("forfeit={forfeit}")]);
    succeeds(&mut c);
    succeeds(season(&["run", "--jobs", "2", "--sets", "4", "-q"]).arg(dir));
}

fn standings(dir: &Path) -> Value {
    let out = succeeds(season(&["standings", "--json"]).arg(dir));
    serde_json::from_str(&stdout(&out)).expect("standings JSON")
}

/// The final's transcripts, name → bytes.
fn transcripts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let games = dir.join("final/games");
    (std::fs::read_dir(&games).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .map(|n| {
            let bytes = std::fs::read(games.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

fn journal_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("final/journal.jsonl"))
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

#[test]
fn a_final_freezes_the_season_takes_its_top_and_survives_a_kill() {
    let dir = scratch("season_final", "season");
    let gate: PathBuf = dir.with_extension("gate");
    four_sets(&dir, &gate);
    let s = standings(&dir);
    let ranked: Vec<String> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| r["entrant"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ranked.len(), 4, "{s}");
    assert_eq!(ranked[3], "forfeit", "{ranked:?}");
    // Too many or too few finalists, refused before anything is frozen.
    let err = refused(season(&["final", "--top", "5"]).arg(&dir));
    assert!(err.contains("only 4 entrant(s) have a rating"), "{err}");
    let err = refused(season(&["final", "--top", "2"]).arg(&dir));
    assert!(err.contains("at least three"), "{err}");
    succeeds(
        season(&["submit"])
            .arg(&dir)
            .args(["late", "--unchecked", "--", "builtin:random"]),
    );
    // The late entrant has no rating: the top three are unchanged.
    let twin = scratch("season_final", "twin");
    copy_dir(&dir, &twin);
    let final_args = ["final", "--top", "3", "--sets", "2", "--jobs", "1", "-q"];
    std::fs::write(&gate, dir.join("final/journal.jsonl").to_str().unwrap()).unwrap();
    let waiting = PathBuf::from(format!("{}.waiting", gate.display()));
    let mut first = season(&final_args)
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_while_running(&mut first, "the gated bot waited", || waiting.exists());
    // Frozen while the final runs: a submission is refused in words.
    let err = refused(
        season(&["submit"])
            .arg(&dir)
            .args(["late", "--", "builtin:heuristic"]),
    );
    assert!(err.contains("the season's final was called"), "{err}");
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    std::fs::remove_file(&gate).unwrap();
    let journaled = journal_lines(&dir);
    assert!(
        (1..12).contains(&journaled),
        "killed mid-final: {journaled}"
    );
    let err = refused(season(&["run", "--sets", "99"]).arg(&dir));
    assert!(err.contains("the season's final was called"), "{err}");
    // Nor is the season closed (its secret revealed) before its final ends.
    let err = refused(season(&["close"]).arg(&dir));
    assert!(err.contains("plays it to its end"), "{err}");
    // Run again: it resumes the final as called (no flags needed).
    let said = stdout(&succeeds(season(&["final", "-q"]).arg(&dir)));
    assert!(said.contains("the final is over and the season"), "{said}");
    succeeds(season(&final_args).arg(&twin));
    let resumed = transcripts(&dir);
    assert_eq!(resumed.len(), 12, "two sets of one table");
    assert!(
        resumed == transcripts(&twin),
        "resumed differs from uninterrupted"
    );
    finalists_are_the_top_three(&dir, &ranked);
    verified(&dir);
}

/// The final's entrants are the standings' first three, in their order.
fn finalists_are_the_top_three(dir: &Path, ranked: &[String]) {
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join("final/tournament.json")).unwrap()).unwrap();
    let names: Vec<&str> = (m["entrants"].as_array().unwrap().iter())
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ranked[..3], "{m}");
    assert_eq!(m["sets"], 2);
}

/// `verify DIR` checks the season and its final; `verify DIR/final` reads
/// the final as any tournament; an edited final fails the season's check.
fn verified(dir: &Path) {
    let out = succeeds(Command::new(crate::support::REFEREE).arg("verify").arg(dir));
    let text = stdout(&out);
    let fin = dir.join("final");
    assert!(
        text.contains(&format!("ok {}: the season's final", fin.display())),
        "{text}"
    );
    assert!(
        text.contains("(12 games, each as its transcript records it)"),
        "{text}"
    );
    succeeds(
        Command::new(crate::support::REFEREE)
            .arg("verify")
            .arg(&fin),
    );
    let closed = stdout(&succeeds(season(&["standings"]).arg(dir)));
    assert!(closed.contains("rank"), "{closed}");
    // The manifest made to name another seed: the season's check says so.
    let path = fin.join("tournament.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut m: Value = serde_json::from_str(&text).unwrap();
    m["seed"] = Value::from(m["seed"].as_u64().unwrap() ^ 1);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let out = Command::new(crate::support::REFEREE)
        .arg("verify")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("are not those the season called"), "{said}");
}
