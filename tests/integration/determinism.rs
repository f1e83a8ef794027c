//! Same seed, same bot behaviour ⇒ the same bytes, faults included. Each
//! misbehaving bot plays the same seeded game twice — both runs at once, so they
//! also compete for the CPU — and the two transcripts must be byte-identical:
//! no wall-clock figure, byte count or "how long the referee waited" may leak
//! into a fault line.

use crate::hostile::{hostile_game, NEVER_REACHED_MS};

/// (mode, decision limit, extra flags). Bots that never answer get short limits so
/// the test stays quick; all others (the late bot's prompt answers included) a
/// limit no busy host reaches, so only the misbehaviour decides what is recorded.
const CASES: &[(&str, &str, &[&str])] = &[
    ("silent", "300", &[]),
    ("late", "3000", &[]),
    ("deaf", "50", &["--policy", "lenient"]),
    ("close-stdout", "300", &[]),
    ("crash-mid-hand", NEVER_REACHED_MS, &[]),
    ("signal", NEVER_REACHED_MS, &[]),
    ("exit-at-start", NEVER_REACHED_MS, &["--keep-going"]),
    ("wrong-protocol", NEVER_REACHED_MS, &["--keep-going"]),
    ("garbage", NEVER_REACHED_MS, &[]),
    ("bad-utf8", NEVER_REACHED_MS, &[]),
    ("huge-line", NEVER_REACHED_MS, &[]),
    ("illegal", NEVER_REACHED_MS, &["--policy", "lenient"]),
    ("double", NEVER_REACHED_MS, &["--policy", "lenient"]),
    ("preempt", NEVER_REACHED_MS, &[]),
    ("wrong-id", NEVER_REACHED_MS, &[]),
];

/// The transcript without the test harness's per-run tag (`hostile-PID-N-`, on
/// the bot's command line to find its processes in the leftover check, and its
/// name when it never says hello): it is not bot behaviour.
fn untagged(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("hostile-") {
        out.push_str(&rest[..at + "hostile-".len()]);
        rest = &rest[at + "hostile-".len()..];
        // Skip "PID-N-" if it is there.
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (p, tail) = rest.split_at(digits(rest));
        if !p.is_empty() && tail.starts_with('-') {
            let (n, tail2) = tail[1..].split_at(digits(&tail[1..]));
            if !n.is_empty() && tail2.starts_with('-') {
                out.push_str("TAG-");
                rest = &tail2[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn every_hostile_bot_gives_byte_identical_transcripts() {
    let mut checked = 0;
    for &(mode, limit, extra) in CASES {
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| hostile_game(mode, limit, extra));
            let b = s.spawn(|| hostile_game(mode, limit, extra));
            (a.join().unwrap(), b.join().unwrap())
        });
        let (ta, tb) = (untagged(&a.text(1)), untagged(&b.text(1)));
        // Not vacuous: each case really records a fault of the hostile seat.
        assert!(
            ta.lines().any(|l| l.contains(r#""type":"fault","seat":1"#)),
            "{mode}: no fault recorded"
        );
        if ta != tb {
            let line = ta.lines().zip(tb.lines()).position(|(x, y)| x != y).map_or(
                "(one is a prefix of the other)".into(),
                |i| {
                    format!(
                        "line {}:\n  {}\n  {}",
                        i + 1,
                        ta.lines().nth(i).unwrap(),
                        tb.lines().nth(i).unwrap()
                    )
                },
            );
            panic!("{mode}: two runs differ at {line}");
        }
        checked += 1;
    }
    assert_eq!(checked, CASES.len());
}
