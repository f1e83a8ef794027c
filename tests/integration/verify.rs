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

    // 6. Not JSON at all: not a transcript, a user error (exit 2) naming the
    //    file and the line.
    let path = dir.path().join("edited.jsonl");
    std::fs::write(&path, "hello\n").unwrap();
    let out = verify(&[&path]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "edited.jsonl:1: not a transcript: its first line is not JSON; a transcript is"
        ),
        "{err}"
    );
}

/// A transcript with faults: seat 1 plays illegal cards until, after its third
/// fault, the fallback plays for it (competition policy).
fn faulty_game() -> (crate::support::Done, String) {
    let done = crate::hostile::hostile_game("illegal", crate::hostile::NEVER_REACHED_MS, &[]);
    let text = done.text(1);
    (done, text)
}

#[test]
fn a_seed_not_derived_from_the_match_seed_is_rejected() {
    let done = play().seed(21).ok();
    let text = done.text(1);
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    // Another match seed (the deal itself untouched): the header lies about
    // where its seed came from.
    let mut h = header.clone();
    h["match_seed"] = (header["match_seed"].as_u64().unwrap() + 1).into();
    let edited_header = h.to_string();
    let mut edited = lines.clone();
    edited[0] = &edited_header;
    assert_rejected_at(&edited, 0, dir.path());
    let (_, msg) = check(&(edited.join("\n") + "\n"), dir.path());
    assert!(msg.contains("derived from match seed"), "{msg}");
    // Another game number.
    let mut h = header.clone();
    h["game"] = 2.into();
    let edited_header = h.to_string();
    edited[0] = &edited_header;
    assert_rejected_at(&edited, 0, dir.path());
}

#[test]
fn a_flipped_replaced_flag_is_rejected() {
    let (_done, text) = faulty_game();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    assert!(check(&text, dir.path()).0, "the real transcript verifies");
    let faults: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(r#""type":"fault""#))
        .collect();
    assert_eq!(faults.len(), 3, "three illegal plays, then replaced");
    // Flipping any one fault's flag is caught at that line.
    for &at in &faults {
        let mut v: serde_json::Value = serde_json::from_str(lines[at]).unwrap();
        let flag = v["replaced"].as_bool().unwrap();
        v["replaced"] = (!flag).into();
        let flipped = v.to_string();
        let mut edited = lines.clone();
        edited[at] = &flipped;
        assert_rejected_at(&edited, at, dir.path());
    }
}

#[test]
fn a_fallback_move_changed_to_another_legal_card_is_rejected() {
    use schmier_protocol::rules::{Action, Event, Game};
    let (_done, text) = faulty_game();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let (mut game, _) = Game::new(
        header["seed"].as_u64().unwrap(),
        serde_json::from_value(header["rules"].clone()).unwrap(),
    );
    // Walk the game; at every decision the fallback made for seat 1 with another
    // legal card available, swap in that card: each swap must be caught there.
    let mut fallback_next = false;
    let mut replaced = false;
    let mut tampered = 0;
    for (i, line) in lines.iter().enumerate().skip(1) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "fault" {
            fallback_next = true;
            replaced |= v["replaced"] == true;
            continue;
        }
        let Ok(event) = serde_json::from_value::<Event>(v.clone()) else {
            continue;
        };
        let Some((seat, action)) = event.decision() else {
            continue;
        };
        if seat.index() == 1 && (fallback_next || replaced) {
            if let Action::Play(card) = action {
                if let Some(other) = game.legal_plays().iter().find(|&c| c != card) {
                    let swapped = line.replace(&format!("\"{card}\""), &format!("\"{other}\""));
                    let mut edited = lines.clone();
                    edited[i] = &swapped;
                    assert_rejected_at(&edited, i, dir.path());
                    let (_, msg) = check(&(edited.join("\n") + "\n"), dir.path());
                    assert!(msg.contains("fallback"), "{msg}");
                    tampered += 1;
                }
            }
            fallback_next = false;
        }
        game.apply(action).unwrap();
    }
    eprintln!("{tampered} fallback plays tampered with, each caught");
    assert!(
        tampered >= 5,
        "only {tampered} fallback plays could be tampered with"
    );
}

/// `referee verify DIR | head`: a reader that is gone stops the output, not
/// the check (it panicked on the closed pipe). The pipe's read end is closed
/// before the referee starts, so its first line already meets a closed pipe.
#[test]
fn a_closed_stdout_stops_the_output_not_the_check() {
    let done = play().seed(22).ok();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = crate::support::referee()
        .arg("verify")
        .arg(done.transcript(1))
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
