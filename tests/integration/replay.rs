//! `referee replay FILE --seat N -- CMD`: a recorded seat replayed to a live bot.
//!
//! The bot in the recorded seat is `tests/tools/deviant_bot.py`, which plays the
//! first legal answer, or deviates once and says on stderr where (which request
//! of the game, its id, both answers). `replay` echoes the bot's stderr, so that
//! line — the bot's own account, not the replay code — is the oracle for where
//! the live bot must be found to differ.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{play, referee, root, succeeds, Done};

const DEVIANT: &str = "python3 tests/tools/deviant_bot.py";

/// Game 1 of seed 11 with the deviant (not deviating) in seat 2 and the
/// built-in bots in process around it.
fn recorded() -> Done {
    play()
        .seed(11)
        .arg("--seat")
        .arg(format!("2={DEVIANT}"))
        .inproc_bystanders()
        .ok()
}

fn replay(file: &Path, args: &[&str], bot: &str) -> Output {
    referee()
        .arg("replay")
        .arg(file)
        .args(args)
        .arg("--")
        .args(shlex::split(bot).unwrap())
        .output()
        .expect("the referee runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "--json prints one JSON object ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The deviant's own account in the replay's stderr: (request, id, first, chosen).
fn deviation(out: &Output) -> (u64, u64, String, String) {
    let err = stderr(out);
    let line = err
        .lines()
        .find(|l| l.starts_with("DEVIATED"))
        .unwrap_or_else(|| panic!("the live bot deviated and said so; stderr:\n{err}"));
    let field = |k: &str| {
        line.split(' ')
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k}= in {line}"))
            .to_owned()
    };
    (
        field("request").parse().unwrap(),
        field("id").parse().unwrap(),
        field("first"),
        field("chosen"),
    )
}

/// The decisions `seat` made in a transcript, counted from its lines.
fn decisions_of(lines: &[serde_json::Value], seat: u64) -> u64 {
    let kinds = ["bid", "trump", "exchange", "dealer_discard", "play"];
    lines
        .iter()
        .filter(|l| kinds.contains(&l["type"].as_str().unwrap_or("")) && l["seat"] == seat)
        .count() as u64
}

#[test]
fn the_same_bot_answers_every_request_as_recorded() {
    let done = recorded();
    let lines = done.lines(1);
    assert!(
        lines.iter().all(|l| l["type"] != "fault"),
        "a game without faults"
    );
    // Without faults, each of the seat's decisions was a request it answered.
    let want = decisions_of(&lines, 2);
    assert!(want > 20, "seat 2 decided {want} times");
    let out = replay(&done.transcript(1), &["--seat", "2", "--json"], DEVIANT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["requests"], want, "{r}");
    assert_eq!(r["compared"], want, "{r}");
    assert_eq!(r["differed"], serde_json::json!([]), "{r}");
    assert_eq!(r["shown"], serde_json::Value::Null, "{r}");
    // The text says the same.
    let out = replay(&done.transcript(1), &["--seat", "2"], DEVIANT);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains(&format!(
            "answered all {want} of {want} request(s) as recorded"
        )),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bot_changed_at_one_decision_is_found_at_exactly_that_decision() {
    let done = recorded();
    let deviant = format!("{DEVIANT} play 3");
    let out = replay(&done.transcript(1), &["--seat", "2", "--json"], &deviant);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (request, id, first, chosen) = deviation(&out);
    let r = json(&out);
    let shown = &r["shown"];
    assert_eq!(shown["number"], request, "{r}");
    assert_eq!(shown["id"], id, "{r}");
    assert_eq!(shown["recorded"]["action"], first.as_str(), "{r}");
    assert_eq!(shown["live"]["action"], chosen.as_str(), "{r}");
    assert_eq!(shown["same"], false);
    // Stopped there: nothing after it was compared.
    assert_eq!(r["differed"], serde_json::json!([request]), "{r}");
    assert_eq!(r["compared"], request, "{r}");
    // The legal actions and the seat's view at that request: both answers
    // among the legal cards, the live one still in the seat's hand.
    let legal = shown["legal"].as_array().unwrap();
    assert!(legal.contains(&first.as_str().into()) && legal.contains(&chosen.as_str().into()));
    assert_eq!(shown["view"]["seat"], 2);
    assert!(shown["view"]["hand"]
        .as_array()
        .unwrap()
        .contains(&chosen.as_str().into()));

    // As text: the request, the view, the legal actions and both answers.
    let out = replay(&done.transcript(1), &["--seat", "2"], &deviant);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("differs at request {request} of ")) && text.contains("your hand:"),
        "{text}"
    );
    assert!(
        text.contains(&format!("recorded: \"{first}\""))
            && text.contains(&format!("live:     \"{chosen}\"")),
        "{text}"
    );
}

#[test]
fn at_k_stops_at_request_k_and_lists_the_differences_before_it() {
    let done = recorded();
    let deviant = format!("{DEVIANT} play 1");
    // Where the deviant parts from the record, found by a default replay.
    let first = replay(&done.transcript(1), &["--seat", "2"], &deviant);
    let (k, _, _, _) = deviation(&first);
    // At K itself: the answers differ, exit 1.
    let at = k.to_string();
    let out = replay(
        &done.transcript(1),
        &["--seat", "2", "--at", &at, "--json"],
        &deviant,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["shown"]["number"], k);
    // Past K: the bot is told the recorded game and answers as recorded
    // again; the earlier difference is listed, and the answer at K + 2 agrees.
    let later = (k + 2).to_string();
    let out = replay(
        &done.transcript(1),
        &["--seat", "2", "--at", &later, "--json"],
        &deviant,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["shown"]["number"], k + 2, "{r}");
    assert_eq!(r["shown"]["same"], true, "{r}");
    assert_eq!(r["differed"], serde_json::json!([k]), "{r}");
    assert_eq!(r["compared"], k + 2, "{r}");
    let text = stdout(&replay(
        &done.transcript(1),
        &["--seat", "2", "--at", &later],
        &deviant,
    ));
    assert!(
        text.contains("the live bot answers as recorded")
            && text.contains(&format!("otherwise at request(s) {k};")),
        "{text}"
    );
}

#[test]
fn a_tournament_game_replays_and_its_changed_decision_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    succeeds(
        referee()
            .args([
                "tournament",
                "--sets",
                "1",
                "--seed",
                "4",
                "--seed-secret",
                crate::support::SECRET,
                "--quiet",
            ])
            .args(["--entrant", &format!("dev={DEVIANT}")])
            .args([
                "--entrant",
                "h=builtin:heuristic",
                "--entrant",
                "r=builtin:random",
            ])
            .arg("--out")
            .arg(&out),
    );
    let game: PathBuf = out.join("games/r00-m0000-g004.jsonl");
    let text = std::fs::read_to_string(&game).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let seat = (header["seats"].as_array().unwrap().iter())
        .find(|s| s["name"] == "deviant")
        .map(|s| s["seat"].to_string())
        .expect("the deviant sits at the table");
    // Each tournament game has processes of its own: ids from 1, game 1.
    assert_eq!(header["first_request"], 1);
    assert_eq!(header["announced"], 1);

    let same = replay(&game, &["--seat", &seat], DEVIANT);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        stdout(&same),
        stderr(&same)
    );

    let changed = replay(
        &game,
        &["--seat", &seat, "--json"],
        &format!("{DEVIANT} play 2"),
    );
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    let (request, id, first, chosen) = deviation(&changed);
    let r = json(&changed);
    assert_eq!(r["shown"]["number"], request, "{r}");
    assert_eq!(r["shown"]["id"], id, "{r}");
    assert_eq!(r["shown"]["recorded"]["action"], first.as_str(), "{r}");
    assert_eq!(r["shown"]["live"]["action"], chosen.as_str(), "{r}");
}

#[test]
fn an_older_transcript_replays_with_notes_on_what_it_does_not_record() {
    // A checked-in format-1 transcript (the snapshot-testing example's).
    let game = root().join("examples/snapshot-testing/plain/snapshots/seed-1/game-0002.jsonl");
    let out = replay(
        &game,
        &["--seat", "1"],
        "python3 examples/snapshot-testing/plain/my_bot.py",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("does not record request ids") && text.contains("as recorded"),
        "{text}"
    );
    // verify and show read it too.
    let verify = referee().arg("verify").arg(&game).output().unwrap();
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    let show = referee().arg("show").arg(&game).output().unwrap();
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
}

#[test]
fn a_format_2_header_without_its_first_request_does_not_verify() {
    let done = recorded();
    let text = done.text(1);
    assert!(text.contains("\"first_request\":1,"));
    let cut = done.dir.join("cut.jsonl");
    std::fs::write(&cut, text.replacen("\"first_request\":1,", "", 1)).unwrap();
    let out = referee().arg("verify").arg(&cut).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("first_request"), "{}", stdout(&out));
}

/// A bot that says hello and then answers every request with `answer` (a
/// Python expression of `msg`), or never, if `answer` is `None`.
fn scripted(answer: Option<&str>) -> String {
    let reply = match answer {
        Some(a) => format!("print({a}, flush=True)"),
        None => "pass".to_owned(),
    };
    let program = format!(
        "import json, sys\n\
         print(json.dumps({{'type': 'hello', 'name': 'x', 'protocol': 'schmier/1'}}), flush=True)\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n    if msg['type'] == 'request':\n        {reply}\n"
    );
    shlex::try_join(["python3", "-c", &program]).unwrap()
}

#[test]
fn a_bot_that_prints_garbage_or_says_nothing_differs_with_its_fault() {
    let done = recorded();
    let out = replay(
        &done.transcript(1),
        &["--seat", "2"],
        &scripted(Some("'garbage'")),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("differs at request 1 of") && text.contains("live:     malformed fault"),
        "{text}"
    );

    // Silence: held to the recorded limit, here made short by editing the
    // header's time control (which `verify` does not judge).
    let short = done.dir.join("short.jsonl");
    let text = done
        .text(1)
        .replacen("\"decision_ms\":10000", "\"decision_ms\":200", 1);
    assert!(text.contains("\"decision_ms\":200"));
    std::fs::write(&short, text).unwrap();
    let out = replay(&short, &["--seat", "2"], &scripted(None));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("live:     timeout fault — no reply within 200 ms"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bad_input_is_named_and_exits_2_without_a_panic() {
    let done = recorded();
    let file = done.transcript(1);
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (
            vec!["no-such.jsonl".into(), "--seat".into(), "2".into()],
            DEVIANT,
            "no-such.jsonl",
        ),
        (
            vec![file.display().to_string(), "--seat".into(), "6".into()],
            DEVIANT,
            "--seat",
        ),
        (
            vec![
                file.display().to_string(),
                "--seat".into(),
                "2".into(),
                "--at".into(),
                "100000".into(),
            ],
            DEVIANT,
            "request(s) in",
        ),
        (
            vec![file.display().to_string(), "--seat".into(), "2".into()],
            "./no-such-bot",
            "did not start (not found",
        ),
        (
            vec![file.display().to_string(), "--seat".into(), "2".into()],
            "inproc:random",
            "replay starts a bot process",
        ),
    ];
    for (args, bot, want) in cases {
        let out = referee()
            .arg("replay")
            .args(&args)
            .arg("--")
            .args(shlex::split(bot).unwrap())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?} {bot}: {err}");
        assert!(err.contains(want), "{args:?} {bot}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }

    // A transcript changed by hand: a card of seat 2's changed to another.
    let lines = done.lines(1);
    let (n, play) = (lines.iter().enumerate())
        .find(|(_, l)| l["type"] == "play" && l["seat"] == 2)
        .unwrap();
    let card = play["card"].as_str().unwrap();
    let other = if card == "2S" { "3S" } else { "2S" };
    let tampered = done.dir.join("tampered.jsonl");
    let text: Vec<String> = (done.text(1).lines().enumerate())
        .map(|(i, l)| {
            if i == n {
                l.replace(card, other)
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(&tampered, text.join("\n") + "\n").unwrap();
    let out = replay(&tampered, &["--seat", "2"], DEVIANT);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "failed to replay {}:{}",
            tampered.display(),
            n + 1
        )),
        "{err}"
    );
}

/// The requests `seat` was sent: its decisions up to the one a fault line
/// marked `replaced` ends (the fallback answers that one; none after it asks).
fn requests_of(lines: &[serde_json::Value], seat: u64) -> u64 {
    let kinds = ["bid", "trump", "exchange", "dealer_discard", "play"];
    let mut asked = 0;
    for l in lines {
        if l["type"] == "fault" && l["seat"] == seat && l["replaced"] == true {
            return asked + 1;
        }
        if kinds.contains(&l["type"].as_str().unwrap_or("")) && l["seat"] == seat {
            asked += 1;
        }
    }
    asked
}

#[test]
fn recorded_faults_replay_as_the_same_faults() {
    // Illegal cards until the fault limit replaces the seat; a second reply to
    // every request (a stale fault at the next one, the third ending it).
    for mode in ["illegal", "double"] {
        let done = play()
            .seed(5)
            .arg("--seat")
            .arg(format!("1=python3 tests/hostile/bot.py {mode}"))
            .inproc_bystanders()
            .ok();
        let lines = done.lines(1);
        let faults = lines.iter().filter(|l| l["type"] == "fault").count();
        assert_eq!(
            faults, 3,
            "{mode}: three faults, the last replacing the seat"
        );
        let want = requests_of(&lines, 1);
        let bot = format!("python3 tests/hostile/bot.py {mode}");
        let out = replay(&done.transcript(1), &["--seat", "1", "--json"], &bot);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stdout(&out));
        let r = json(&out);
        assert_eq!(r["requests"], want, "{mode}: {r}");
        assert_eq!(r["compared"], want, "{mode}: {r}");
    }
}

/// The lines a bot was sent, from its `echo` log (`IN ...` lines).
fn sent(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("IN "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_live_bot_is_sent_byte_for_byte_what_the_recorded_seat_was_sent() {
    // Game 2 of a match: its request ids continue from game 1's, and the bot
    // is told it is game 2. The bot copies every line it reads to stderr.
    let done = play()
        .seed(7)
        .args(["--games", "2", "--no-rotate", "--stderr-cap", "50000000"])
        .arg("--seat")
        .arg(format!("2={DEVIANT} echo"))
        .inproc_bystanders()
        .ok();
    let log = std::fs::read_to_string(done.dir.join("stderr/player2.log")).unwrap();
    let all = sent(&log);
    let starts: Vec<usize> = (0..all.len())
        .filter(|&i| all[i].contains("\"type\":\"game_start\""))
        .collect();
    assert_eq!(starts.len(), 2, "two games");
    // What seat 2 was sent for game 2: the hello, game 2's lines, the bye.
    let mut want = vec![all[0].clone()];
    want.extend(all[starts[1]..].iter().cloned());
    assert!(want.last().unwrap().contains("\"type\":\"bye\""));
    assert!(want.len() > 300, "{} lines", want.len());

    let out = replay(
        &done.transcript(2),
        &["--seat", "2"],
        &format!("{DEVIANT} echo"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let got = sent(&stderr(&out));
    assert_eq!(got.len(), want.len(), "as many lines");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "line {i} sent to the live bot");
    }
}

#[test]
fn a_bot_that_crashes_before_request_k_is_reported_where_it_left() {
    let done = recorded();
    // Plays the first legal answer, as the recorded bot did, and exits at its
    // 10th request (tests/hostile/bot.py).
    let crasher = "python3 tests/hostile/bot.py crash-mid-hand";
    let out = replay(&done.transcript(1), &["--seat", "2", "--at", "20"], crasher);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("left the game at request 10 of") && text.contains("before request 20"),
        "{text}"
    );
    // Without --at, request 10 is the first difference: a crash, recorded an action.
    let out = replay(&done.transcript(1), &["--seat", "2", "--json"], crasher);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["shown"]["number"], 10, "{r}");
    assert_eq!(r["shown"]["live"]["fault"], "crash", "{r}");
    assert_eq!(r["bot_left"], true, "{r}");
}
