//! The timing channel's switch (`--pace-ms`): a decision's consequences are
//! released no earlier than the pace after its request was written — read from
//! the timings sidecar, a lower bound no busy host can break — and the
//! transcript is the same byte for byte with or without it. How much a partner
//! can still read from reply delays is measured, not asserted
//! (`scripts/timing-channel.sh`, BENCHMARKS.md).

use crate::support::play;

const BOT: &str = "1=python3 tests/hostile/bot.py instant";

fn sidecar(done: &crate::support::Done) -> Vec<serde_json::Value> {
    std::fs::read_to_string(done.dir.join("timings/game-0001.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn paced_decisions_are_released_no_earlier_than_the_pace_and_the_transcript_is_unchanged() {
    let paced = play()
        .seed(21)
        .inproc_bystanders()
        .args(["--seat", BOT, "--pace-ms", "20"])
        .ok();
    let plain = play()
        .seed(21)
        .inproc_bystanders()
        .args(["--seat", BOT])
        .ok();
    // The header records the pace (how the game was played); nothing else
    // may differ.
    let paced_text = paced.text(1);
    assert!(
        paced_text.contains(r#""pace_ms":20"#),
        "the pace is recorded"
    );
    assert_eq!(
        paced_text.replacen(r#""pace_ms":20"#, r#""pace_ms":null"#, 1),
        plain.text(1),
        "pacing changes when, never what"
    );
    let lines = sidecar(&paced);
    let mut checked = 0;
    for t in &lines {
        // Only a bot process is paced: the in-process bots are the referee's.
        if t["seat"] == 1 {
            let released = t["released_micros"].as_u64().expect("a paced line");
            assert!(released >= 20_000, "released after {released} µs: {t}");
            checked += 1;
        } else {
            assert!(t.get("released_micros").is_none(), "{t}");
        }
    }
    assert!(checked > 10, "only {checked} decisions of seat 1 checked");
    assert!(
        sidecar(&plain)
            .iter()
            .all(|t| t.get("released_micros").is_none()),
        "without --pace-ms the sidecar is as before"
    );
}
