//! Plays sample bots against each other in-process (no referee, no processes) and
//! prints how often each one's team wins.
//!
//! ```text
//! cargo run --release -p schmier-sample-bots --example arena -- [GAMES [A B C]]
//! ```
//!
//! `A`, `B` and `C` name a strategy each (default: `heuristic random random`); each
//! plays one team (both partners). Game `g` uses seed `g`, and the line-up cycles
//! through the six ways of seating the three strategies, so that every strategy
//! plays every team, before and after each of the others, equally often.

use std::time::{Duration, Instant};

use schmier_protocol::rules::{Game, RulesConfig};
use schmier_protocol::wire::Request;
use schmier_sample_bots::{by_name, Strategy, NAMES};

/// `LINEUPS[i][team]`: which of the three strategies plays `team`.
const LINEUPS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [1, 2, 0],
    [2, 0, 1],
    [0, 2, 1],
    [2, 1, 0],
    [1, 0, 2],
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let games: u64 = match args.first().map(|s| s.parse()) {
        None => 1000,
        Some(Ok(n)) => n,
        Some(Err(_)) => usage(),
    };
    let names: Vec<String> = match args.len() {
        0 | 1 => ["heuristic", "random", "random"].map(String::from).to_vec(),
        4 => args[1..].to_vec(),
        _ => usage(),
    };
    if names.iter().any(|n| by_name(n).is_none()) {
        usage();
    }

    let mut wins = [0u64; 3];
    let mut score_sum = [0i64; 3];
    let mut no_winner = 0u64;
    let mut deals = 0u64;
    let mut decisions = [0u64; 3];
    let mut time = [Duration::ZERO; 3];
    let mut slowest = [Duration::ZERO; 3];
    for seed in 0..games {
        let lineup = LINEUPS[(seed % 6) as usize];
        let mut bots: Vec<Box<dyn Strategy + Send>> = lineup
            .iter()
            .map(|&i| by_name(&names[i]).expect("checked above"))
            .collect();
        let (mut game, _) = Game::new(seed, RulesConfig::default());
        let mut id = 0;
        while let Some(seat) = game.to_act() {
            id += 1;
            let request = Request::for_decision(&game, id, None).expect("a decision is due");
            let team = seat.team().index();
            let started = Instant::now();
            let action = bots[team].decide(&request);
            let took = started.elapsed();
            let who = lineup[team];
            decisions[who] += 1;
            time[who] += took;
            slowest[who] = slowest[who].max(took);
            if let Err(e) = game.apply(action) {
                panic!(
                    "seed {seed}: {} at {seat} played the illegal {action:?}: {e}",
                    names[who]
                );
            }
        }
        deals += u64::from(game.deals());
        for (team, &who) in lineup.iter().enumerate() {
            score_sum[who] += i64::from(game.scores()[team]);
        }
        match game.winner() {
            Some(team) => wins[lineup[team.index()]] += 1,
            None => no_winner += 1,
        }
    }

    let per_game = |x: f64| x / games.max(1) as f64;
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name:<10} won {:>6} of {games} games ({:>5.1}%), mean final score {:>6.1}, \
             {:.1} µs per decision (slowest {:.0} µs)",
            wins[i],
            100.0 * per_game(wins[i] as f64),
            per_game(score_sum[i] as f64),
            time[i].as_secs_f64() * 1e6 / decisions[i].max(1) as f64,
            slowest[i].as_secs_f64() * 1e6,
        );
    }
    println!(
        "no winner: {no_winner}; {:.1} deals per game",
        per_game(deals as f64)
    );
}

fn usage() -> ! {
    eprintln!("usage: arena [GAMES [A B C]]   (strategies: {NAMES:?})");
    std::process::exit(2);
}
