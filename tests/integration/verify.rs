//! `referee verify` accepts real transcripts and rejects tampered ones, naming the line.

use std::path::Path;

use crate::support::{play, verify};

fn check(text: &str, dir: &Path) -> (bool, String) {
    let path = dir.join("edited.jsonl");
    std::fs::write(&path, text).unwrap();
    let out = verify(&[&path]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `lines` (a whole transcript, edited) is rejected, naming 0-based line `at`.
fn assert_rejected_at(lines: &[&str], at: usize, dir: &Path) {
    let (ok, msg) = check(&(lines.join("\n") + "\n"), dir);
    assert!(!ok, "{msg}");
    assert!(msg.contains(&format!(":{}:", at + 1)), "{msg}");
}

fn line_index(lines: &[&str], pred: impl Fn(&serde_json::Value) -> bool) -> usize {
    lines
        .iter()
        .position(|l| pred(&serde_json::from_str(l).unwrap()))
        .expect("such a line")
}

#[test]
fn tampered_transcripts_are_rejected_at_the_right_line() {
    let done = play().seed(21).ok();
    let text = done.text(1);
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    assert!(check(&text, dir.path()).0);

    // 1. A card swapped between two hands of the first deal.
    let mut edited = lines.clone();
    let deal = line_index(&lines, |v| v["type"] == "deal");
    let v: serde_json::Value = serde_json::from_str(lines[deal]).unwrap();
    let (a, b) = (
        v["hands"][0][0].as_str().unwrap(),
        v["hands"][1][0].as_str().unwrap(),
    );
    let swapped = lines[deal]
        .replacen(&format!("\"{a}\""), "\"XX\"", 1)
        .replacen(&format!("\"{b}\""), &format!("\"{a}\""), 1)
        .replacen("\"XX\"", &format!("\"{b}\""), 1);
    edited[deal] = &swapped;
    assert_rejected_at(&edited, deal, dir.path());

    // 2. A changed score in a hand_end line.
    let mut edited = lines.clone();
    let end = line_index(&lines, |v| v["type"] == "hand_end");
    let mut v: serde_json::Value = serde_json::from_str(lines[end]).unwrap();
    v["scores"][0] = (v["scores"][0].as_i64().unwrap() + 1).into();
    let changed = v.to_string();
    edited[end] = &changed;
    assert_rejected_at(&edited, end, dir.path());

    // 3. A removed play line: the next line no longer fits.
    let mut edited = lines.clone();
    let play_at = line_index(&lines, |v| v["type"] == "play");
    edited.remove(play_at);
    assert_rejected_at(&edited, play_at, dir.path());

    // 4. A played card replaced by another card of the same hand (illegal or
    //    inconsistent with the trick that follows).
    let mut edited = lines.clone();
    let last_play = lines
        .iter()
        .rposition(|l| l.contains("\"type\":\"play\""))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(lines[last_play]).unwrap();
    let other = if v["card"] == "2C" { "3C" } else { "2C" };
    let replaced = lines[last_play].replace(v["card"].as_str().unwrap(), other);
    edited[last_play] = &replaced;
    assert_rejected_at(&edited, last_play, dir.path());

    // 5. A truncated file (no result line).
    let (ok, msg) = check(&(lines[..lines.len() - 1].join("\n") + "\n"), dir.path());
    assert!(!ok);
    assert!(msg.contains("without a result line"), "{msg}");

    // 6. Not JSON at all.
    let (ok, msg) = check("hello\n", dir.path());
    assert!(!ok);
    assert!(msg.contains(":1: not a transcript line"), "{msg}");
}
