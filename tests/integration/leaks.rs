//! No information leaks: every byte sent to each seat over many seeded games is
//! captured (the bot command is `sh -c "tee FILE | referee bot ..."`) and checked
//! against the transcript: no card of another seat's hidden hand, of the stock or
//! of a discard may appear in a message before it is played face up.
//!
//! The check derives what a seat may know from the transcript alone, not from the
//! referee's view code: its dealt hand, its own draws, the dealer's pickup, and
//! the cards played so far.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{exclusive, play, REFEREE};

const GAMES: u32 = 12;

/// Every card string anywhere in a JSON value.
fn cards_in(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::String(s) if s.parse::<schmier_protocol::Card>().is_ok() => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| cards_in(x, out)),
        Value::Object(o) => o.values().for_each(|x| cards_in(x, out)),
        _ => {}
    }
}

fn strings(v: &Value) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    cards_in(v, &mut s);
    s
}

#[test]
fn no_seat_ever_sees_a_hidden_card() {
    let _alone = exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let mut run = play().seed(99).args(["--games", &GAMES.to_string()]);
    for slot in 0..6 {
        let bot = if slot % 3 == 0 { "heuristic" } else { "random" };
        let capture = tmp.path().join(format!("slot{slot}.in"));
        run = run.arg("--seat").arg(format!(
            "{slot}=sh -c 'tee {} | {REFEREE} bot {bot}'",
            capture.display()
        ));
    }
    let done = run.ok();
    let transcripts: Vec<Vec<Value>> = (1..=GAMES).map(|g| done.lines(g)).collect();

    let mut checked_messages = 0;
    for slot in 0..6 {
        let received = std::fs::read_to_string(tmp.path().join(format!("slot{slot}.in"))).unwrap();
        let mut game: Option<&Vec<Value>> = None;
        let mut seat = 0u64;
        let mut next_event = 0; // index into the transcript's lines
        let mut known: BTreeSet<String> = BTreeSet::new();
        let mut games_seen = 0;
        for line in received.lines() {
            let msg: Value = serde_json::from_str(line).unwrap();
            let kind = msg["type"].as_str().unwrap().to_owned();
            let seen = strings(&msg);
            checked_messages += 1;
            match kind.as_str() {
                "hello" | "bye" => assert!(seen.is_empty()),
                "game_start" => {
                    game = Some(&transcripts[games_seen]);
                    games_seen += 1;
                    seat = msg["seat"].as_u64().unwrap();
                    next_event = 1;
                    known.clear();
                    assert!(seen.is_empty());
                }
                "request" | "fault" => {
                    let mut allowed = known.clone();
                    if msg["decision"] == "discard" {
                        // The dealer holds the stock now: the next dealer_discard
                        // line of the transcript names the pickup.
                        let t = game.unwrap();
                        let dd = t[next_event..]
                            .iter()
                            .find(|l| l["type"] == "dealer_discard")
                            .unwrap();
                        allowed.extend(strings(&dd["picked_up"]));
                    }
                    let leaked: Vec<_> = seen.difference(&allowed).collect();
                    assert!(
                        leaked.is_empty(),
                        "slot {slot} (seat {seat}) saw {leaked:?} in {line}"
                    );
                }
                event => {
                    let t = game.unwrap();
                    while t[next_event]["type"] == "fault" {
                        next_event += 1;
                    }
                    let truth = &t[next_event];
                    next_event += 1;
                    assert_eq!(
                        truth["type"], event,
                        "slot {slot}: events arrive in transcript order"
                    );
                    // What this event makes known to this seat, per the transcript.
                    match event {
                        "deal" => {
                            known.clear();
                            known.extend(strings(&truth["hands"][seat as usize]));
                        }
                        "exchange" if truth["seat"] == seat => {
                            known.extend(strings(&truth["drawn"]))
                        }
                        "dealer_discard" if truth["seat"] == seat => {
                            known.extend(strings(&truth["picked_up"]))
                        }
                        "play" => known.extend(strings(&truth["card"])),
                        _ => {}
                    }
                    let leaked: Vec<_> = seen.difference(&known).collect();
                    assert!(
                        leaked.is_empty(),
                        "slot {slot} (seat {seat}) saw {leaked:?} in {line}"
                    );
                }
            }
        }
        assert_eq!(games_seen, GAMES as usize, "slot {slot} saw every game");
    }
    assert!(
        checked_messages > 10_000,
        "{checked_messages} messages checked"
    );
}
