//! `referee check-bot -- CMD ...`: a conformance run for one bot, printed as a
//! checklist. The bot plays every seat of real games (the rules engine plays the
//! other five seats, in-process), and is put in every situation a bot author
//! tends to get wrong; each reply is judged as it arrives.
//!
//! - `conversation.rs`: the bot process and the judging of every line.
//! - `scenario.rs`: the situations, found by seeded search.

mod conversation;
mod scenario;

use std::time::Duration;

use schmier_protocol::rules::{Game, RulesConfig};
use schmier_protocol::shuffle::derive_seed;
use schmier_protocol::wire::{Request, ToBot};
use schmier_protocol::Seat;
use schmier_sample_bots::Strategy;

use conversation::Conversation;
pub use conversation::{CheckLimits, Confinement, Failure};

/// One line of the checklist.
#[derive(Debug)]
pub struct Item {
    pub name: String,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub enum Outcome {
    Passed(String),
    Failed(Failure),
    /// Not run, and why (the bot never started).
    Skipped(String),
}

#[derive(Debug)]
pub struct Report {
    pub command: String,
    pub items: Vec<Item>,
    /// Every answered request's time.
    pub times: Vec<Duration>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.items
            .iter()
            .all(|i| matches!(i.outcome, Outcome::Passed(_)))
    }
}

/// Seed of the full games; any fixed number does.
const GAMES_SEED: u64 = 9;

pub async fn run(argv: Vec<String>, limits: CheckLimits) -> Report {
    run_confined(argv, limits, Confinement::default()).await
}

/// [`run`], the bot started as `confinement` says (a season's submission:
/// in its folder and, if the season's tables are sandboxed, their sandbox).
pub async fn run_confined(
    argv: Vec<String>,
    limits: CheckLimits,
    confinement: Confinement,
) -> Report {
    let command = shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_default();
    let mut conv = Conversation::new(argv, limits, confinement);
    let mut items = Vec::new();
    let mut item = |name: &str, outcome: Outcome| {
        items.push(Item {
            name: name.to_owned(),
            outcome,
        })
    };

    let handshake = conv.start().await;
    if let Err(f) = handshake {
        item("handshake", Outcome::Failed(f));
        for name in names() {
            item(name, Outcome::Skipped("the bot did not start".into()));
        }
        return finish(conv, command, items);
    }
    item("handshake", Outcome::Passed(handshake.unwrap_or_default()));

    // Each situation, then the rest of that game.
    for s in scenario::all() {
        let outcome = match situation(&mut conv, &s).await {
            Ok(note) => Outcome::Passed(note),
            Err(f) => Outcome::Failed(f),
        };
        item(s.name, outcome);
    }

    item(NAMES[0], unknowns(&mut conv).await);
    for (name, outcome) in every_seat(&mut conv).await {
        item(name, outcome);
    }
    conv.bye().await;
    finish(conv, command, items)
}

/// The report, the bots' stderr logs kept where a failure names one.
fn finish(mut conv: Conversation, command: String, items: Vec<Item>) -> Report {
    let named = |i: &Item| matches!(&i.outcome, Outcome::Failed(f) if f.stderr.is_some());
    if items.iter().any(named) {
        conv.keep_logs();
    }
    Report {
        command,
        items,
        times: std::mem::take(&mut conv.times),
    }
}

/// Unknown message types and fields, in a whole game.
async fn unknowns(conv: &mut Conversation) -> Outcome {
    conv.add_unknowns = true;
    let seed = derive_seed(GAMES_SEED, 100);
    let outcome = match whole_game(conv, seed, Seat::new(2), RulesConfig::default()).await {
        Ok(n) => Outcome::Passed(format!(
            "a game of {n} decisions with an extra field in every message and a message of an unknown type before each game_start"
        )),
        Err(f) => Outcome::Failed(f),
    };
    conv.add_unknowns = false;
    outcome
}

/// Whole games in every seat on one process, a new seat each game: an item
/// per seat, then whether the bot took a new seat after a game in another.
async fn every_seat(conv: &mut Conversation) -> Vec<(&'static str, Outcome)> {
    let mut items = Vec::new();
    let mut same_process = 0;
    let mut moved: Option<Failure> = None;
    for seat in Seat::all() {
        let fresh = !conv.is_running();
        let seed = derive_seed(GAMES_SEED, seat.index() as u64);
        let outcome = match whole_game(conv, seed, seat, RulesConfig::default()).await {
            Ok(n) => {
                if !fresh {
                    same_process += 1;
                }
                Outcome::Passed(format!("{n} decisions"))
            }
            Err(f) => {
                if !fresh && moved.is_none() {
                    moved = Some(f.clone());
                }
                Outcome::Failed(f)
            }
        };
        items.push((WHOLE_GAME[seat.index()], outcome));
    }
    let outcome = match (moved, same_process) {
        (Some(f), _) => Outcome::Failed(f),
        (None, 0) => Outcome::Skipped("no two games in a row ran on one process".into()),
        (None, n) => Outcome::Passed(format!(
            "{n} game(s) in a new seat after a game in another, on the same process"
        )),
    };
    items.push((NAMES[1], outcome));
    items
}

/// Names of the items that are not situations, for a bot that never started.
const NAMES: [&str; 2] = [
    "unknown message types and unknown fields are ignored",
    "a game_start for another seat in the next game",
];

fn names() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = scenario::all().iter().map(|s| s.name).collect();
    all.push(NAMES[0]);
    all.extend(Seat::all().map(|s| WHOLE_GAME[s.index()]));
    all.push(NAMES[1]);
    all
}

const WHOLE_GAME: [&str; 6] = [
    "a whole game in seat 0",
    "a whole game in seat 1",
    "a whole game in seat 2",
    "a whole game in seat 3",
    "a whole game in seat 4",
    "a whole game in seat 5",
];

/// Restarts the bot if an earlier failure stopped it.
async fn ensure_running(conv: &mut Conversation) -> Result<(), Failure> {
    if conv.is_running() {
        return Ok(());
    }
    conv.start().await.map(drop)
}

/// Game `seed` with the bot at `seat`, to the end. Returns the decisions asked.
async fn whole_game(
    conv: &mut Conversation,
    seed: u64,
    seat: Seat,
    rules: RulesConfig,
) -> Result<usize, Failure> {
    ensure_running(conv).await?;
    let (game, events) = Game::new(seed, rules);
    conv.game_start(seat, rules);
    play_on(conv, game, seat, &events).await
}

/// Puts the bot in situation `s`: the game up to it (the bot's own seat played
/// by the checker until then, as after a fault), its request, then the rest of
/// the game with the bot playing its seat.
async fn situation(conv: &mut Conversation, s: &scenario::Scenario) -> Result<String, Failure> {
    ensure_running(conv).await?;
    let (game, events) = s.replay();
    conv.game_start(s.seat, s.rules);
    let n = play_on(conv, game, s.seat, &events).await?;
    Ok(format!(
        "seat {}, then the rest of that game ({n} decisions)",
        s.seat.index()
    ))
}

/// Sends `events` as `seat` sees them, then plays to the end: the bot decides
/// for `seat`, seeded random play for the other five.
async fn play_on(
    conv: &mut Conversation,
    mut game: Game,
    seat: Seat,
    events: &[schmier_protocol::rules::Event],
) -> Result<usize, Failure> {
    // The other five seats play the built-in heuristic: games among strong
    // players end in fewer deals than random ones, so the check stays quick.
    let mut others = schmier_sample_bots::Heuristic;
    for e in events {
        conv.queue(&ToBot::Event(e.seen_by(seat)));
    }
    let mut asked = 0;
    while let Some(actor) = game.to_act() {
        let action = if actor == seat {
            asked += 1;
            conv.ask(&game).await?.1
        } else {
            let request = Request::for_decision(&game, 0, None).expect("a decision is due");
            others.decide(&request)
        };
        for e in game.apply(action).expect("judged legal") {
            conv.queue(&ToBot::Event(e.seen_by(seat)));
        }
    }
    conv.flush().await?;
    conv.no_stray_line().await?;
    Ok(asked)
}

/// The checklist as printed: one line per item, the failures in detail, the
/// decision times, and a verdict. Notes and problems may quote what the bot
/// sent, so they pass through [`crate::names::printable`].
pub fn render(report: &Report) -> String {
    use crate::names::printable;
    let mut out = format!("check-bot: {}\n", report.command);
    for item in &report.items {
        match &item.outcome {
            Outcome::Passed(note) => {
                out += &format!("  [ok]   {} — {}\n", item.name, printable(note))
            }
            Outcome::Skipped(why) => out += &format!("  [skip] {} — {why}\n", item.name),
            Outcome::Failed(f) => {
                out += &format!("  [FAIL] {} — {}\n", item.name, printable(&f.problem));
                if let Some(line) = &f.line {
                    out += &format!("           the bot sent: {}\n", printable(line));
                }
                out += &format!("           expected:     {}\n", f.expected);
                if let Some(err) = &f.stderr {
                    out += &format!(
                        "           its stderr ended with (all of it: {}):\n",
                        err.log.display()
                    );
                    for line in err.tail.lines() {
                        out += &format!("             | {}\n", printable(line));
                    }
                }
            }
        }
    }
    let mut t = report.times.clone();
    t.sort();
    if !t.is_empty() {
        let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
        out += &format!(
            "decision time over {} replies: p50 {}, p90 {}, p99 {}, max {}\n",
            t.len(),
            ms(at(0.5)),
            ms(at(0.9)),
            ms(at(0.99)),
            ms(at(1.0))
        );
    }
    let failed = report
        .items
        .iter()
        .filter(|i| !matches!(i.outcome, Outcome::Passed(_)))
        .count();
    if failed == 0 {
        out += &format!("all {} checks passed\n", report.items.len());
    } else {
        out += &format!(
            "{failed} of {} checks failed or were not run\n",
            report.items.len()
        );
    }
    out
}
