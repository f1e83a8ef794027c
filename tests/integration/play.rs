//! Full games among real bot processes in every sample-bot language.

use crate::support::{play, verify};

/// Invariants every transcript must satisfy, checked from its lines alone.
fn check_game(lines: &[serde_json::Value]) {
    assert_eq!(lines[0]["type"], "header");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "result");
    let mut scores = [0i64; 3];
    let mut hands = 0;
    for l in lines {
        match l["type"].as_str().unwrap() {
            "hand_end" => {
                hands += 1;
                let awarded: usize = ["high", "low", "right", "left", "joker", "game"]
                    .iter()
                    .filter(|p| !l["points"][**p].is_null())
                    .count();
                assert!(awarded == 5 || awarded == 6, "{l}");
                for t in 0..3 {
                    scores[t] += l["delta"][t].as_i64().unwrap();
                    assert_eq!(scores[t], l["scores"][t].as_i64().unwrap());
                }
            }
            "trick" => assert_eq!(l["cards"].as_array().unwrap().len(), 6),
            _ => {}
        }
    }
    assert!(hands > 0);
    for t in 0..3 {
        assert_eq!(last["scores"][t].as_i64().unwrap(), scores[t]);
    }
    if let Some(w) = last["winner"].as_u64() {
        assert!(
            scores[w as usize] >= 21,
            "the winner reached 21: {scores:?}"
        );
    }
}

#[test]
fn default_lineup_plays_a_full_verified_game() {
    let done = play().seed(11).ok();
    let lines = done.lines(1);
    check_game(&lines);
    let seats = lines[0]["seats"].as_array().unwrap();
    assert_eq!(seats[0]["command"], "referee bot heuristic");
    assert_eq!(seats[1]["command"], "referee bot random");
    assert!(
        done.stdout().contains("game over after"),
        "{}",
        done.stdout()
    );
    let v = verify(&[&done.transcript(1)]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // Each bot's stderr has a file, and the timings sidecar has every decision.
    for i in 0..6 {
        assert!(done.dir.join(format!("stderr/player{i}.log")).exists());
    }
    let timings = std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl")).unwrap();
    let decisions = lines
        .iter()
        .filter(|l| {
            matches!(
                l["type"].as_str(),
                Some("bid" | "trump" | "exchange" | "dealer_discard" | "play")
            )
        })
        .count();
    assert_eq!(timings.lines().count(), decisions);
}

#[test]
fn same_seed_gives_byte_identical_transcripts() {
    let a = play().seed(7).ok();
    let b = play().seed(7).ok();
    assert_eq!(a.text(1), b.text(1));
    let c = play().seed(8).ok();
    assert_ne!(a.text(1), c.text(1));
}

#[test]
fn python_and_node_bots_play_a_game() {
    let done = play()
        .seed(3)
        .team("python3 sample-bots/python/bot.py")
        .team("node sample-bots/js/bot.js")
        .team("python3 sample-bots/python/bot.py simple")
        .ok();
    let lines = done.lines(1);
    check_game(&lines);
    let faults: Vec<_> = lines.iter().filter(|l| l["type"] == "fault").collect();
    assert!(faults.is_empty(), "sample bots never fault: {faults:?}");
    assert_eq!(
        lines[0]["seats"][1]["command"],
        "node sample-bots/js/bot.js"
    );
    assert!(verify(&[&done.transcript(1)]).status.success());
}

#[test]
fn a_match_reuses_processes_rotates_seats_and_verifies() {
    let done = play()
        .seed(5)
        .args(["--games", "3"])
        .team("builtin:random")
        .ok();
    for g in 1..=3 {
        let lines = done.lines(g);
        check_game(&lines);
        assert_eq!(lines[0]["game"], g);
        // Lineup slot 0 (random) moves one seat left per game.
        let seat = (g - 1) as usize;
        assert_eq!(lines[0]["seats"][seat]["command"], "referee bot random");
        assert!(verify(&[&done.transcript(g)]).status.success());
    }
    assert!(
        done.stdout().contains("match of 3 games"),
        "{}",
        done.stdout()
    );
}

#[test]
fn bad_flags_get_clear_errors() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--seat", "9=python3 x.py"],
            "the seat must be a number from 0 to 5",
        ),
        (&["--team", "builtin:nope"], "unknown built-in bot"),
        (&["--team", "\"unterminated"], "cannot split"),
        (&["--games", "0"], "--games must be at least 1"),
    ];
    for (args, want) in cases {
        let done = play().args(args.iter().copied()).run();
        assert_eq!(done.output.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&done.output.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn a_match_never_overwrites_the_games_of_an_earlier_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str| {
        crate::support::referee()
            .args(["play", "--seed", seed, "--transcript"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    assert!(run("1").status.success());
    let first = std::fs::read(dir.path().join("game-0001.jsonl")).unwrap();
    let again = run("2");
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("already holds the games of another run (game-0001.jsonl"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("game-0001.jsonl")).unwrap(),
        first
    );
}

/// A bot started by a plain virtual environment's `bin/python` (a link to
/// the base interpreter) runs in that environment (issue 45: the referee
/// resolved the link, so the bot ran on the base interpreter and lost the
/// environment's packages). The bot exits before `hello` unless
/// `sys.prefix` is the environment's.
#[test]
fn a_bot_run_by_a_virtual_environments_python_runs_in_that_environment() {
    let place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let venv = place.path().join("v");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", "--symlinks"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let python = venv.join("bin/python");
    assert!(std::fs::symlink_metadata(&python)
        .unwrap()
        .file_type()
        .is_symlink());
    let sample = crate::support::root().join("sample-bots/python/bot.py");
    let bot = place.path().join("in_venv.py");
    let script = format!(
        "import os, sys\nif sys.prefix != {venv:?}: sys.exit('not in the environment: ' + sys.prefix)\nos.execv(sys.executable, [sys.executable, {sample:?}])\n",
        venv = venv.canonicalize().unwrap().to_str().unwrap(),
        sample = sample.to_str().unwrap(),
    );
    std::fs::write(&bot, script).unwrap();
    let command = format!("{} {}", python.display(), bot.display());
    let done = play().seed(3).team(&command).ok();
    let lines = done.lines(1);
    check_game(&lines);
    let faults: Vec<_> = lines.iter().filter(|l| l["type"] == "fault").collect();
    assert!(faults.is_empty(), "{faults:?}");
}
