//! Knockout and Swiss end to end with in-process bots (no bot processes): fields
//! that do not divide by three finish with standings, a finished run resumed
//! changes nothing, a Swiss reports its repeat meetings and a knockout lists its
//! champion first.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{referee, succeeds};

fn scratch(name: &str) -> PathBuf {
    crate::support::scratch("brackets", name)
}

/// `n` entrants e1…en, random and heuristic in turn (as in the reports).
fn tournament(n: usize, out: &Path, args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("tournament");
    for i in 1..=n {
        let bot = if i % 2 == 0 { "heuristic" } else { "random" };
        c.arg("--entrant").arg(format!("e{i}=inproc:{bot}"));
    }
    c.args(args).args(["--jobs", "2", "-q", "--out"]).arg(out);
    c
}

fn standings(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("standings.json")).unwrap()).unwrap()
}

/// The three reports of issue 15 (a panic after round 3 or later, no standings).
#[test]
fn a_swiss_with_byes_finishes_with_standings_and_resumes_to_the_same() {
    for (n, rounds, sets) in [(5, "3", "1"), (7, "3", "1"), (10, "4", "2")] {
        let dir = scratch(&format!("swiss-{n}"));
        let args = [
            "--format",
            "swiss",
            "--rounds",
            rounds,
            "--sets",
            sets,
            "--seed",
            "5",
            "--seed-secret",
            crate::support::SECRET,
        ];
        let out = succeeds(&mut tournament(n, &dir, &args));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains(&format!("round {rounds}:")), "{text}");
        assert!(
            text.contains("bye: "),
            "{n} entrants: someone sits out\n{text}"
        );
        assert!(text.contains("repeat meetings: "), "{text}");
        let first = standings(&dir);
        assert_eq!(first["entrants"].as_array().unwrap().len(), n, "{first}");
        assert!(first["repeat_meetings"].is_u64(), "{first}");
        let bytes = std::fs::read(dir.join("standings.json")).unwrap();
        // Every game is journaled: --resume plays nothing and ends the same.
        let mut again = tournament(n, &dir, &args);
        again.arg("--resume");
        succeeds(&mut again);
        assert!(
            std::fs::read(dir.join("standings.json")).unwrap() == bytes,
            "{n} entrants: the resumed standings differ"
        );
        // The standings page says it too.
        let page = dir.with_extension("html");
        let mut show = referee();
        show.arg("show").arg(&dir).arg("--html").arg(&page);
        succeeds(&mut show);
        let html = std::fs::read_to_string(&page).unwrap();
        let want = format!("Repeat meetings: {}.", first["repeat_meetings"]);
        assert!(
            html.contains(&want),
            "{n} entrants: no {want:?} on the page"
        );
    }
}

#[test]
fn a_knockout_lists_its_champion_first() {
    let dir = scratch("knockout");
    let out = succeeds(&mut tournament(
        7,
        &dir,
        &[
            "--format",
            "knockout",
            "--seed",
            "2",
            "--seed-secret",
            crate::support::SECRET,
        ],
    ));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let champion = text
        .lines()
        .find_map(|l| l.strip_prefix("champion: "))
        .expect("a champion line");
    let s = standings(&dir);
    assert_eq!(s["entrants"][0]["name"], champion, "{text}\n{s}");
    assert!(s.get("repeat_meetings").is_none(), "{s}");
}
