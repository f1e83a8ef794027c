//! `referee show`: the terminal account of a real game, a seat's view that shows
//! nothing that seat was not told (checked against the transcript itself, not
//! against the show code), one deal alone, and colour only on a terminal.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use crate::support::{play, referee};

fn show(file: &Path, extra: &[&str]) -> Output {
    let out = referee()
        .arg("show")
        .arg(file)
        .args(extra)
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("the referee runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Wire notation ("TH", "JK") as `show` writes a card ("10♥", "joker").
pub fn shown(code: &str) -> String {
    if code == "JK" {
        return "joker".into();
    }
    let rank = match &code[..1] {
        "T" => "10",
        r => r,
    };
    let suit = match &code[1..] {
        "S" => "♠",
        "H" => "♥",
        "D" => "♦",
        _ => "♣",
    };
    format!("{rank}{suit}")
}

/// Every card named in `text`, in wire notation.
fn cards_in(text: &str) -> BTreeSet<String> {
    // A deal's points line names the points ("joker team 2"), not cards.
    let cards: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("points:"))
        .collect();
    let text = cards.join("\n");
    let text = text.as_str();
    let mut found = BTreeSet::new();
    for rank in [
        "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A",
    ] {
        for suit in ["S", "H", "D", "C"] {
            let code = format!("{rank}{suit}");
            // "10♥" contains "0♥" but no other rank's text; "1" is not a rank.
            if text.contains(&shown(&code)) {
                found.insert(code);
            }
        }
    }
    if text.contains("joker") {
        found.insert("JK".into());
    }
    found
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

/// For each deal of the transcript, what `seat` may know: its own dealt cards,
/// what it drew (the dealer: its pickup), and every card played face up.
fn known_per_deal(lines: &[serde_json::Value], seat: u64) -> Vec<BTreeSet<String>> {
    let mut deals: Vec<BTreeSet<String>> = Vec::new();
    for l in lines {
        let Some(k) = deals.last_mut().filter(|_| l["type"] != "deal") else {
            if l["type"] == "deal" {
                deals.push(strings(&l["hands"][seat as usize]).into_iter().collect());
            }
            continue;
        };
        match l["type"].as_str().unwrap() {
            "exchange" if l["seat"] == seat => k.extend(strings(&l["drawn"])),
            "dealer_discard" if l["seat"] == seat => k.extend(strings(&l["picked_up"])),
            "play" => {
                k.insert(l["card"].as_str().unwrap().to_owned());
            }
            _ => {}
        }
    }
    deals
}

/// The account split at each deal's heading (index 0: before the first deal).
fn sections(text: &str) -> Vec<&str> {
    text.split("── Deal ").collect()
}

#[test]
fn a_seat_sees_only_what_it_was_told() {
    let done = play().seed(31).ok();
    let lines = done.lines(1);
    let file = done.transcript(1);
    let full = String::from_utf8(show(&file, &[]).stdout).unwrap();
    let deals = lines.iter().filter(|l| l["type"] == "deal").count();
    assert_eq!(sections(&full).len(), deals + 1, "{full}");
    let mut checked = 0;
    for seat in 0..6u64 {
        let text = String::from_utf8(show(&file, &["--seat", &seat.to_string()]).stdout).unwrap();
        let known = known_per_deal(&lines, seat);
        let parts = sections(&text);
        assert_eq!(parts.len(), known.len() + 1, "{text}");
        for (k, (part, allowed)) in parts[1..].iter().zip(&known).enumerate() {
            let seen = cards_in(part);
            let leaked: Vec<_> = seen.difference(allowed).collect();
            assert!(
                leaked.is_empty(),
                "seat {seat}, deal {}: shows {leaked:?} it never saw:\n{part}",
                k + 1
            );
            // It does show the seat's own hand (so the check above reads cards).
            let dealt = lines.iter().filter(|l| l["type"] == "deal").nth(k).unwrap();
            for c in strings(&dealt["hands"][seat as usize]) {
                assert!(seen.contains(&c), "seat {seat} deal {}: {c} missing", k + 1);
            }
            checked += seen.len();
        }
        // The omniscient account of the same deals does show hidden cards: the
        // stock at least, which no seat sees whole.
        for (part, allowed) in sections(&full)[1..].iter().zip(&known) {
            assert!(!cards_in(part).is_subset(allowed), "{part}");
        }
    }
    assert!(checked > 6 * 6 * deals, "checked {checked} cards");
}

#[test]
fn the_account_follows_the_transcript() {
    let done = play().seed(32).ok();
    let lines = done.lines(1);
    let text = String::from_utf8(show(&done.transcript(1), &[]).stdout).unwrap();
    let mut at = 0;
    // Everything in order: each deal's hands, each bid, each trick and its
    // winner, each hand's scores.
    let mut expect = |needle: String| {
        let found = text[at..]
            .find(&needle)
            .unwrap_or_else(|| panic!("{needle:?} after byte {at}:\n{text}"));
        at += found + needle.len();
    };
    for l in &lines {
        match l["type"].as_str().unwrap() {
            "deal" => {
                expect(format!(
                    "── Deal {}, dealer seat {}",
                    l["deal"], l["dealer"]
                ));
                for s in 0..6 {
                    let hand: Vec<String> =
                        strings(&l["hands"][s]).iter().map(|c| shown(c)).collect();
                    expect(format!("seat {s}: {}", hand.join(" ")));
                }
            }
            "bid" if l["bid"] == "pass" => expect(format!("seat {} passes", l["seat"])),
            "bid" => expect(format!("seat {} bids {}", l["seat"], l["bid"])),
            "trick" => {
                let cards: Vec<String> = l["cards"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| format!("s{} {}", p["seat"], shown(p["card"].as_str().unwrap())))
                    .collect();
                expect(format!(
                    "trick {} (seat {} leads): {}",
                    l["number"],
                    l["leader"],
                    cards.join("  ")
                ));
                expect(format!("→ seat {} wins", l["winner"]));
            }
            "hand_end" => {
                let s = &l["scores"];
                expect(format!(
                    "scores: team 0: {}, team 1: {}, team 2: {}",
                    s[0], s[1], s[2]
                ));
            }
            _ => {}
        }
    }
    let result = lines.last().unwrap();
    expect(format!("winner: team {}", result["winner"]));
}

#[test]
fn one_deal_alone_and_a_missing_deal_is_named() {
    let done = play().seed(33).ok();
    let file = done.transcript(1);
    let text = String::from_utf8(show(&file, &["--deal", "2"]).stdout).unwrap();
    assert_eq!(sections(&text).len(), 2, "{text}");
    assert!(text.contains("── Deal 2,"), "{text}");
    let out = referee()
        .args(["show", "--deal", "999"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed to show deal 999: the game has deals 1 to"),
        "{err}"
    );
}

/// Runs `referee show` with stdout on a pseudo-terminal; returns what it printed.
fn show_on_a_terminal(file: &Path, no_color: bool) -> String {
    use std::io::Read;
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut cmd = referee();
    cmd.arg("show")
        .arg(file)
        .env("TERM", "xterm-256color")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("NO_COLOR")
        .stdout(std::process::Stdio::from(pty.slave));
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let mut child = cmd.spawn().expect("the referee runs");
    drop(cmd); // closes our copy of the terminal's slave side
    let mut master = std::fs::File::from(pty.master);
    let mut out = Vec::new();
    // Reading ends with EIO once the child has closed the slave side.
    let _ = master.read_to_end(&mut out);
    assert!(child.wait().unwrap().success());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn colour_on_a_terminal_only_and_never_with_no_color() {
    let done = play().seed(34).ok();
    let file = done.transcript(1);
    let piped = String::from_utf8(show(&file, &[]).stdout).unwrap();
    assert!(!piped.contains('\x1b'), "escape codes in a pipe");
    let tty = show_on_a_terminal(&file, false);
    assert!(tty.contains("\x1b["), "no colour on a terminal: {tty}");
    // The same account, only coloured (the terminal turns \n into \r\n).
    assert!(tty.contains("── Deal 1"), "{tty}");
    let plain_tty = show_on_a_terminal(&file, true);
    assert!(!plain_tty.contains('\x1b'), "NO_COLOR ignored: {plain_tty}");
    assert_eq!(plain_tty.replace("\r\n", "\n"), piped);
}

#[test]
fn faults_and_forfeits_are_shown_where_they_happened() {
    let done = play()
        .seed(35)
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py illegal")
        .ok();
    let lines = done.lines(1);
    let text = String::from_utf8(show(&done.transcript(1), &[]).stdout).unwrap();
    let faults: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "fault").collect();
    assert!(!faults.is_empty());
    let mut at = 0;
    for f in &faults {
        let needle = format!("fault seat {}: {}", f["seat"], f["fault"].as_str().unwrap());
        let found = text[at..]
            .find(&needle)
            .unwrap_or_else(|| panic!("{needle:?} after byte {at}:\n{text}"));
        at += found + needle.len();
    }
    // The same faults in seat 4's account: every seat is told of them.
    let seat4 = String::from_utf8(show(&done.transcript(1), &["--seat", "4"]).stdout).unwrap();
    assert_eq!(seat4.matches("fault seat 1: ").count(), faults.len());
    let result = lines.last().unwrap();
    for t in result["forfeited"].as_array().unwrap() {
        assert!(text.contains(&format!("forfeited: team {t}")), "{text}");
    }
}

#[test]
fn a_game_cut_short_shows_its_unfinished_trick() {
    let done = play().seed(36).ok();
    let text = done.text(1);
    let lines: Vec<&str> = text.lines().collect();
    let values = done.lines(1);
    // Cut after the third card of some trick.
    let third = (2..values.len())
        .find(|&i| {
            values[i]["type"] == "play"
                && values[i - 1]["type"] == "play"
                && values[i - 2]["type"] == "play"
                && values[i - 3]["type"] != "play"
        })
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, lines[..=third].join("\n") + "\n").unwrap();
    let shown = String::from_utf8(show(&cut, &[]).stdout).unwrap();
    let cards: Vec<String> = values[third - 2..=third]
        .iter()
        .map(|p| {
            format!(
                "s{} {}",
                p["seat"],
                crate::show::shown(p["card"].as_str().unwrap())
            )
        })
        .collect();
    let want = format!(
        "unfinished trick (seat {} leads): {}",
        values[third - 2]["seat"],
        cards.join("  ")
    );
    assert!(shown.trim_end().ends_with(&want), "{want:?} in\n{shown}");
}
