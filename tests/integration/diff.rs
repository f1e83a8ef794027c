//! `referee diff` on real games that part at a known place: seat 2 is a test bot
//! that plays the first legal answer, or deviates once and says on stderr where
//! (`tests/tools/deviant_bot.py`). That log line, not the diff code, is the oracle.

use std::path::Path;
use std::process::Output;

use crate::support::{play, referee, stdout, Done};

/// A game (or `games` games) with the deviant bot in seat 2.
fn with_deviant(args: &str, games: u32) -> Done {
    play()
        .seed(11)
        .args(["--games", &games.to_string()])
        .arg("--seat")
        .arg(format!("2=python3 tests/tools/deviant_bot.py {args}"))
        .ok()
}

fn diff(args: &[&Path], extra: &[&str]) -> Output {
    referee()
        .arg("diff")
        .args(extra)
        .args(args)
        .output()
        .expect("the referee runs")
}

/// The deviant's own account of where it deviated: (game, deal, trick, seat, first, chosen).
fn deviation(done: &Done) -> (u32, u32, u32, u32, String, String) {
    let log = std::fs::read_to_string(done.dir.join("stderr/player2.log")).unwrap();
    let line = log
        .lines()
        .find(|l| l.starts_with("DEVIATED"))
        .unwrap_or_else(|| panic!("the bot deviated; its log:\n{log}"));
    let field = |k: &str| {
        line.split(' ')
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap()
            .to_owned()
    };
    let n = |k: &str| field(k).parse::<u32>().unwrap();
    (
        n("game"),
        n("deal"),
        n("trick"),
        n("seat"),
        field("first"),
        field("chosen"),
    )
}

/// The result line's scores as `diff` prints them.
fn scores(done: &Done, game: u32) -> String {
    let result = done.lines(game).pop().unwrap();
    format!("scores {}", result["scores"]).replace(',', ", ")
}

#[test]
fn names_the_card_where_two_real_games_part_and_the_outcomes() {
    let a = with_deviant("", 1);
    let b = with_deviant("play 4", 1);
    let (_, deal, trick, seat, first, chosen) = deviation(&b);

    let out = diff(&[&a.transcript(1), &b.transcript(1)], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "first divergence: deal {deal}, trick {trick}: seat {seat} played {first} in A, {chosen} in B"
        )),
        "{text}"
    );
    let (sa, sb) = (scores(&a, 1), scores(&b, 1));
    if sa == sb {
        assert!(text.contains("outcome: the same: "), "{text}");
    } else {
        let outcome = text.lines().find(|l| l.contains("outcome:")).unwrap();
        let (in_a, in_b) = outcome.split_once("; B: ").unwrap();
        assert!(in_a.contains(&sa) && in_b.contains(&sb), "{outcome}");
    }

    // The other way round, A and B swap.
    let text = stdout(&diff(&[&b.transcript(1), &a.transcript(1)], &[]));
    assert!(
        text.contains(&format!("seat {seat} played {chosen} in A, {first} in B")),
        "{text}"
    );
}

#[test]
fn names_the_bid_where_two_real_games_part() {
    let a = with_deviant("", 1);
    let b = with_deviant("bid 1", 1);
    let (_, deal, _, seat, first, chosen) = deviation(&b);
    assert_eq!((first.as_str(), chosen.as_str()), ("pass", "6"));
    let out = diff(&[&a.transcript(1), &b.transcript(1)], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "first divergence: deal {deal}: seat {seat} passed in A, bid 6 in B"
        )),
        "{text}"
    );
}

#[test]
fn the_same_play_by_another_command_is_equivalent_with_a_note() {
    let a = with_deviant("", 1);
    // Never reaches its 99th bid with a choice: plays exactly like A.
    let b = with_deviant("bid 99", 1);
    let out = diff(&[&a.transcript(1), &b.transcript(1)], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("no divergence"), "{text}");
    assert!(text.contains("note: seat 2 is \"deviant\""), "{text}");
    assert!(text.contains("outcome: the same: "), "{text}");
    assert!(text.contains(&scores(&a, 1)), "{text}");
}

#[test]
fn folders_pair_by_game_and_update_accepts_b() {
    let a = with_deviant("", 2);
    let b = with_deviant("play 30", 2);
    let (game, ..) = deviation(&b);
    // JSON lines beside the games that are not transcripts (a timings folder, a
    // tournament's journal) are not compared.
    for d in [&a.dir, &b.dir] {
        std::fs::create_dir_all(d.join("timings")).unwrap();
        std::fs::write(d.join("timings/game-0001.jsonl"), "{\"request\":1}\n").unwrap();
    }
    std::fs::write(a.dir.join("journal.jsonl"), "{\"game\":1}\n").unwrap();
    let snap = tempfile::tempdir().unwrap();
    let snap = snap.path().join("snapshot");
    // The first --update creates the snapshot from A.
    let made = diff(&[&snap, &a.dir], &["--update"]);
    assert!(made.status.success(), "{}", stdout(&made));
    for g in [1, 2] {
        let name = format!("game-{g:04}.jsonl");
        assert_eq!(
            std::fs::read(snap.join(&name)).unwrap(),
            std::fs::read(a.transcript(g)).unwrap()
        );
    }
    assert!(!snap.join("timings").exists() && !snap.join("journal.jsonl").exists());

    let out = diff(&[&snap, &b.dir], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let other = 3 - game;
    assert!(
        text.contains(&format!("game-{game:04}.jsonl: DIFFERENT")),
        "{text}"
    );
    assert!(
        text.contains(&format!("game-{other:04}.jsonl: equivalent")),
        "{text}"
    );
    assert!(text.contains("1 of 2 transcript(s) differ"), "{text}");

    // A game missing on one side is a difference.
    std::fs::remove_file(snap.join(format!("game-{other:04}.jsonl"))).unwrap();
    let text = stdout(&diff(&[&snap, &b.dir], &[]));
    assert!(
        text.contains(&format!("game-{other:04}.jsonl: only in B")),
        "{text}"
    );

    // Accepting B makes the snapshot B's, byte for byte.
    let out = diff(&[&snap, &b.dir], &["--update"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("updated 2 of 2"), "{}", stdout(&out));
    for g in [1, 2] {
        assert_eq!(
            std::fs::read(snap.join(format!("game-{g:04}.jsonl"))).unwrap(),
            std::fs::read(b.transcript(g)).unwrap()
        );
    }
    assert!(diff(&[&snap, &b.dir], &[]).status.success());
}

#[test]
fn bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"header\"}\nnot json\n").unwrap();
    let out = diff(&[&bad, &bad], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:1"), "{err}");

    let missing = dir.path().join("nope.jsonl");
    let out = diff(&[&missing, &bad], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed to read") && err.contains("nope.jsonl"),
        "{err}"
    );
}

/// `--update` takes B as the snapshot only if each transcript it would take
/// verifies: a game cut short or one that breaks the rules is refused, with
/// its name and the reason, and A is left as it was (a first snapshot not
/// made at all).
#[test]
fn update_refuses_a_transcript_that_does_not_verify() {
    let a = with_deviant("", 1);
    let b = with_deviant("play 30", 1);
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snapshot");
    assert!(diff(&[&snap, &a.dir], &["--update"]).status.success());
    let before = std::fs::read(snap.join("game-0001.jsonl")).unwrap();
    let game = std::fs::read_to_string(b.transcript(1)).unwrap();
    let lines: Vec<&str> = game.lines().collect();
    // Cut in the middle; and whole but with the first card played changed
    // (to one not in that hand, or one played again later: either breaks it).
    let cut = lines[..lines.len() / 2].join("\n") + "\n";
    let play_line = (lines.iter())
        .position(|l| l.starts_with("{\"type\":\"play\""))
        .expect("a play line");
    let card = |l: &str| {
        let at = l.find("\"card\":\"").expect("a card") + 8;
        l[at..at + 2].to_owned()
    };
    let c = card(lines[play_line]);
    let other = if c == "AS" { "KS" } else { "AS" };
    let mut broken: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    broken[play_line] = broken[play_line].replacen(
        &format!("\"card\":\"{c}\""),
        &format!("\"card\":\"{other}\""),
        1,
    );
    for (label, text) in [("cut", cut), ("broken", broken.join("\n") + "\n")] {
        let new = dir.path().join(label);
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(new.join("game-0001.jsonl"), text).unwrap();
        let out = diff(&[&snap, &new], &["--update"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{label}: {err}");
        assert!(
            err.contains("does not verify") && err.contains("game-0001.jsonl"),
            "{label}: {err}"
        );
        assert_eq!(
            std::fs::read(snap.join("game-0001.jsonl")).unwrap(),
            before,
            "{label}"
        );
        let first = dir.path().join(format!("first-{label}"));
        let out = diff(&[&first, &new], &["--update"]);
        assert_eq!(out.status.code(), Some(2), "{label}");
        assert!(
            !first.exists(),
            "{label}: a snapshot of a bad game was made"
        );
    }
}
