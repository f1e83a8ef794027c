//! A new user's first hour, following only the README and its guide (docs/):
//! each defect found that way, pinned (issue 9, "first-hour defects").

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{play, referee, root, stderr, verify};

/// What `DIR/*.jsonl` expands to in a shell.
fn glob_jsonl(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    found.sort();
    found
}

#[test]
fn the_readme_verify_glob_and_a_folder_both_check_exactly_the_transcripts() {
    let done = play().seed(7).args(["--games", "2"]).ok();
    let globbed = glob_jsonl(&done.dir);
    let names: Vec<_> = globbed
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["game-0001.jsonl", "game-0002.jsonl"]);
    // The timings sidecars exist, in their own folder.
    for g in 1..=2 {
        let t = done.dir.join(format!("timings/game-000{g}.jsonl"));
        assert!(std::fs::metadata(&t).unwrap().len() > 0, "{}", t.display());
    }
    let refs: Vec<&Path> = globbed.iter().map(PathBuf::as_path).collect();
    let by_glob = verify(&refs);
    assert!(by_glob.status.success(), "{}", stderr(&by_glob));
    let by_dir = verify(&[&done.dir]);
    assert!(by_dir.status.success(), "{}", stderr(&by_dir));
    let out = String::from_utf8_lossy(&by_dir.stdout);
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok ")).count(),
        2,
        "{out}"
    );
    // A folder without transcripts is an error, not a vacuous success.
    let empty = tempfile::tempdir().unwrap();
    let none = verify(&[empty.path()]);
    assert!(!none.status.success());
    assert!(
        stderr(&none).contains("holds no *.jsonl file"),
        "{}",
        stderr(&none)
    );
}

#[test]
fn a_bot_that_cannot_start_is_reported_with_its_reason_and_play_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let not_executable = tmp.path().join("my-bot");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let not_executable = format!("2={}", not_executable.display());
    let cases: [(&[&str], &str); 5] = [
        (
            &["--team", "no-such-bot-for-a-test"],
            "seat 0 (no-such-bot-for-a-test) failed to start: not found",
        ),
        (
            &["--seat", &not_executable],
            "failed to start: permission denied",
        ),
        (
            &["--seat", "1=python3 tests/hostile/bot.py exit-at-start"],
            "seat 1 (python3 tests/hostile/bot.py exit-at-start) failed to start: exited before hello: exit status: 3",
        ),
        (
            &["--seat", "4=python3 tests/hostile/bot.py wrong-protocol"],
            "failed to start: protocol mismatch: the bot speaks \"schmier/0\"",
        ),
        (
            // Reads its stdin to the end, never answering. The other seats are
            // in-process, so no bystander can miss the short limit on a busy host.
            &[
                "--team",
                "inproc:heuristic",
                "--team",
                "inproc:random",
                "--team",
                "inproc:random",
                "--startup-ms",
                "300",
                "--seat",
                "5=python3 -c 'import sys; sys.stdin.read()'",
            ],
            "failed to start: no hello within 300 ms",
        ),
    ];
    for (args, want) in cases {
        let done = play().seed(1).args(args.iter().copied()).run();
        let err = stderr(&done.output);
        assert!(!done.output.status.success(), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(err.contains("--keep-going"), "{args:?}: {err}");
        assert!(!done.transcript(1).exists(), "{args:?}: no game is played");
    }
}

#[test]
fn keep_going_plays_on_and_the_result_credits_the_winner_after_forfeits() {
    // Seat 3 (team 0) answers one request with a wrong id: a fault, so team 0
    // forfeits under the competition policy although it wins on the scores.
    let done = play()
        .seed(1)
        .arg("--seat")
        .arg("3=python3 tests/hostile/bot.py wrong-id")
        .ok();
    let lines = done.lines(1);
    let end = lines.iter().find(|l| l["type"] == "game_end").unwrap();
    assert_eq!(end["winner"], 0, "precondition: team 0 won on the scores");
    let result = lines.last().unwrap();
    assert_eq!(result["forfeited"], serde_json::json!([0]));
    assert_eq!(result["winner"], result["ranking"][0]);
    assert_ne!(result["winner"], 0, "{result}");
    // The console names teams by their entrants and says who forfeited.
    let out = done.stdout();
    let winner = ["", "random #1", "random #2"][result["winner"].as_u64().unwrap() as usize];
    assert!(out.contains(&format!(": {winner} wins — ")), "{out}");
    assert!(
        out.contains("(heuristic & hostile-wrong-id forfeited: faults)"),
        "{out}"
    );
    // `verify` says the same in the same words, and no Rust debug syntax.
    let v = verify(&[&done.transcript(1)]);
    let said = String::from_utf8_lossy(&v.stdout);
    assert!(v.status.success(), "{said}");
    assert!(
        said.contains(&format!("{winner} wins")) && !said.contains("Some("),
        "{said}"
    );

    // A result line crediting the forfeited team is rejected.
    let text = done.text(1);
    let forged = text.replace(
        &format!("{{\"type\":\"result\",\"winner\":{}", result["winner"]),
        "{\"type\":\"result\",\"winner\":0",
    );
    assert_ne!(forged, text);
    let path = done.dir.join("forged.jsonl");
    std::fs::write(&path, forged).unwrap();
    let v = verify(&[&path]);
    let said = String::from_utf8_lossy(&v.stdout);
    assert!(!v.status.success() && said.contains("credits"), "{said}");

    // A bot that cannot start plays no part with --keep-going: the fallback does.
    let done = play()
        .seed(1)
        .args(["--team", "no-such-bot-for-a-test", "--keep-going"])
        .ok();
    let lines = done.lines(1);
    let faults: Vec<_> = lines.iter().filter(|l| l["type"] == "fault").collect();
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(faults
        .iter()
        .all(|f| f["request"].is_null() && f["replaced"] == true));
    assert!(stderr(&done.output).contains("seat 3 (no-such-bot-for-a-test) failed to start"));
}

#[test]
fn the_bare_referee_takes_play_flags_and_a_bad_seed_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let run = |args: &[&str]| referee().args(args).current_dir(root()).output().unwrap();
    let bare = run(&["--seed", "5", "-q", "--transcript", out.to_str().unwrap()]);
    assert!(bare.status.success(), "{}", stderr(&bare));
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(out.join("game-0001.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["match_seed"], 5);
    for bad in ["-1", "five", "18446744073709551616"] {
        let e = run(&["play", "--seed", bad]);
        assert_eq!(e.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&e).contains("the seed must be a whole number from 0 to"),
            "{bad}: {}",
            stderr(&e)
        );
    }
}

#[test]
fn a_second_run_into_a_folder_with_games_is_refused_unless_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let run = |args: &[&str]| {
        referee()
            .args(["play", "-q", "--transcript", out.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["--seed", "1", "--games", "3"]).status.success());
    let first = std::fs::read(out.join("game-0003.jsonl")).unwrap();
    // A shorter second run would leave game 3 of the first one behind.
    let again = run(&["--seed", "2", "--games", "2"]);
    assert!(!again.status.success());
    let err = stderr(&again);
    assert!(
        err.contains("already holds") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("game-0003.jsonl")).unwrap(), first);
    // Opting in replaces the old run entirely.
    let replaced = run(&["--seed", "2", "--games", "2", "--overwrite"]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
    assert_eq!(glob_jsonl(&out).len(), 2);
    assert!(!out.join("timings/game-0003.jsonl").exists());
    assert!(verify(&[&out]).status.success());
}

#[test]
fn an_interrupted_match_prints_the_tally_of_its_finished_games() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let child = referee()
        .args([
            "play",
            "--seed",
            "3",
            "--games",
            "3",
            "--policy",
            "lenient",
            "--decision-ms",
            "60000",
            "--seat",
            "1=python3 tests/hostile/bot.py silent-from-game-2",
            "--transcript",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Game 2 has begun (so game 1 is tallied) and waits on the silent bot.
    let started = out.join("game-0002.jsonl.partial");
    let t0 = Instant::now();
    while !started.exists() && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.exists(), "game 2 never started");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let err = stderr(&output);
    assert!(err.contains("1 of the match's games finished:"), "{err}");
    // "  NAME: N win(s)" per team, and "  no winner: N" if any.
    let count = |l: &str| -> u32 {
        let l = l.trim();
        let n = l
            .strip_suffix(" win(s)")
            .map(|l| l.rsplit(' ').next().unwrap())
            .or(l.strip_prefix("no winner: "));
        n.map_or(0, |n| n.parse().unwrap())
    };
    let wins: u32 = err
        .lines()
        .filter(|l| l.ends_with(" win(s)"))
        .map(count)
        .sum();
    let no_winner: u32 = err
        .lines()
        .filter(|l| l.contains("no winner: "))
        .map(count)
        .sum();
    assert_eq!(wins + no_winner, 1, "one game tallied: {err}");
}

#[test]
fn log_output_into_a_pipe_has_no_colour_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let output = referee()
        .args(["play", "--seed", "2", "--seat"])
        .arg("1=python3 tests/hostile/bot.py garbage")
        .arg("--transcript")
        .arg(tmp.path().join("out"))
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(
        err.contains("malformed fault"),
        "the fault is logged: {err}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn a_seat_is_told_which_of_its_requests_timed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let capture = tmp.path().join("seat1.in");
    // Seat 1 answers its first request twice as late as allowed.
    let done = play()
        .seed(17)
        .inproc_bystanders()
        .args(["--decision-ms", "300", "--policy", "lenient", "--seat"])
        .arg(format!(
            "1=sh -c 'tee {} | python3 {}/tests/hostile/bot.py late'",
            capture.display(),
            root().display()
        ))
        .ok();
    let received: Vec<serde_json::Value> = std::fs::read_to_string(&capture)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first_request = received.iter().find(|m| m["type"] == "request").unwrap();
    let notice = received
        .iter()
        .find(|m| m["type"] == "fault" && m["seat"] == 1)
        .expect("seat 1 hears of its fault");
    assert_eq!(notice["fault"], "timeout", "{notice}");
    assert_eq!(notice["request"], first_request["id"], "{notice}");
    // The transcript's fault line names the same request.
    let fault = done
        .lines(1)
        .into_iter()
        .find(|l| l["type"] == "fault")
        .unwrap();
    assert_eq!(fault["request"], first_request["id"]);
}
