//! What a bot controls is kept in bounded form: a fault's reason quotes a cut
//! excerpt of the bot's line, and its `hello` name is cut to 64 characters, so
//! that a bot cannot grow a transcript with what it sends.

use crate::hostile::{hostile_game, NEVER_REACHED_MS};

/// The most bytes one fault line of a transcript takes: the referee's words, a
/// quote of at most 200 bytes of the bot's line and a parser's message cut the
/// same way, all within the 1024-byte cap on a reason.
const FAULT_LINE_MAX: usize = 1024 + 200;

#[test]
fn a_60_kb_action_and_a_152_kb_name_are_kept_in_bounded_form() {
    // Lenient, so every request draws the 60 KB malformed reply and none
    // replaces the seat; the line cap is raised so the 152 KB hello gets in.
    let args = ["--policy", "lenient", "--max-line-bytes", "400000"];
    let done = hostile_game("bloat", NEVER_REACHED_MS, &args);
    let text = done.text(1);
    let lines = done.lines(1);
    let faults: Vec<(&str, &serde_json::Value)> = text
        .lines()
        .zip(&lines)
        .filter(|(_, l)| l["type"] == "fault")
        .collect();
    assert!(
        faults.len() >= 20,
        "every request of seat 1 faults: {}",
        faults.len()
    );
    for (raw, fault) in &faults {
        assert_eq!(fault["fault"], "malformed", "{fault}");
        assert!(raw.len() <= FAULT_LINE_MAX, "{} bytes: {raw}", raw.len());
        let detail = fault["detail"].as_str().unwrap();
        // The quote says how long the action was, so a reader knows it was cut.
        assert!(detail.contains("(6000"), "{detail}");
    }
    let name = lines[0]["seats"][1]["name"].as_str().unwrap();
    assert_eq!(name.chars().count(), 64, "{name}");
    assert!(name.starts_with("bbbb") && name.ends_with('…'), "{name}");
    // Nothing else grows either: no line of the record is long, so the record is
    // bounded by its number of lines, faults included.
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest <= 4096, "a line of {longest} bytes");
    assert!(
        !text.contains(&"x".repeat(201)) && !text.contains(&"b".repeat(65)),
        "a run of the bot's bytes longer than a cap is recorded"
    );
    let out = String::from_utf8_lossy(&done.output.stdout);
    assert!(
        !out.contains(&"b".repeat(65)),
        "the console shows the whole name"
    );
}
