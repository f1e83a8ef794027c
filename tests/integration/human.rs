//! `--seat N=human` with piped input: the prompts show the hand and the numbered
//! legal actions, bad input is refused and asked again, and each choice is
//! played exactly as chosen — checked against a bot that makes the same choices.

use std::io::Write;
use std::process::Stdio;

use crate::support::{play, referee};

/// In-process bystanders: no clock runs for them, so the 1 ms limit below
/// (which shows that the human seat has no clock either) touches nobody.
const BYSTANDERS: [&str; 6] = [
    "--team",
    "inproc:heuristic",
    "--team",
    "inproc:random",
    "--team",
    "inproc:random",
];

#[test]
fn a_human_seat_plays_what_is_typed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut child = referee()
        .args([
            "play",
            "--seed",
            "4",
            "--decision-ms",
            "1",
            "--seat",
            "0=human",
        ])
        .args(BYSTANDERS)
        .arg("--transcript")
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two bad answers, then Enter (the first option, or the fewest cards to
    // discard) at every prompt.
    let mut input = String::from("x\n99\n");
    input.push_str(&"\n".repeat(3000));
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // The referee may finish before reading all of it.
        let _ = stdin.write_all(input.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains("\"x\" is not a choice: type a number from 1 to 5"),
        "{err}"
    );
    assert!(err.contains("\"99\" is not a choice"), "{err}");
    assert!(err.contains("your hand: "), "{err}");
    assert!(err.contains("Your bid: 1) pass   2) 3"), "{err}");
    assert!(err.contains("Your play: 1) "), "{err}");

    // The same game with a bot that always takes the first legal answer (the
    // minimum discard for card choices): the same transcript but for the name.
    let bot = play()
        .seed(4)
        .args(BYSTANDERS)
        .args(["--decision-ms", "20000"])
        .arg("--seat")
        .arg("0=python3 tests/hostile/bot.py instant")
        .ok();
    let human = std::fs::read_to_string(out.join("game-0001.jsonl")).unwrap();
    let (h_header, h_rest) = human.split_once('\n').unwrap();
    let text = bot.text(1);
    let (b_header, b_rest) = text.split_once('\n').unwrap();
    assert_eq!(h_rest, b_rest, "the human's choices were played as typed");
    // 1 ms decisions, yet no timeout: a human seat has no clock.
    assert!(!human.contains("\"type\":\"fault\""), "{human}");
    assert!(h_header.contains(r#"{"seat":0,"name":"human","command":"human"}"#));
    assert!(b_header.contains("tests/hostile/bot.py instant"));
    assert!(h_rest.lines().count() > 100);
}
