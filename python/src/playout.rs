//! `schmier.playouts`: many games played on natively, with the GIL released,
//! on `threads` OS threads, each by a named built-in policy for every seat:
//! `random` (the engine's seeded uniform choice, `rules::random_legal`) or
//! `heuristic` (the referee's `builtin:heuristic`, the Rust sample bot).
//!
//! Results are an int32 array, one row per game: the three team scores, the
//! winning team (-1 for none yet or a capped game), and the deals played (the
//! game's deal counter: thrown-in deals included).

use numpy::{PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use schmier_protocol::rules::{first_legal, random_legal, Event, Game};
use schmier_protocol::shuffle::SeededRng;
use schmier_protocol::wire::Request;
use schmier_sample_bots::Heuristic;

use crate::action::{Act, PyAction};
use crate::game::PyGame;

/// Columns of a playout result row.
pub const COLUMNS: usize = 5;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Policy {
    Random,
    Heuristic,
}

impl Policy {
    fn named(name: &str) -> PyResult<Policy> {
        match name {
            "random" => Ok(Policy::Random),
            "heuristic" => Ok(Policy::Heuristic),
            other => Err(PyValueError::new_err(format!(
                "policy is \"random\" or \"heuristic\", got {other:?}"
            ))),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    Game,
    Hand,
}

fn decide(policy: Policy, game: &Game, rng: &mut SeededRng) -> schmier_protocol::rules::Action {
    match policy {
        Policy::Random => random_legal(game, rng),
        Policy::Heuristic => Request::for_decision(game, 0, None)
            .and_then(|req| Heuristic.choose(&req))
            .unwrap_or_else(|| first_legal(game)),
    }
}

/// Plays `game` on to the end of the game or of the current hand.
fn play_on(game: &mut Game, policy: Policy, until: Until, rng: &mut SeededRng) {
    let deal = game.deals();
    let mut events: Vec<Event> = Vec::with_capacity(16);
    let done = |g: &Game| g.is_over() || (until == Until::Hand && g.deals() != deal);
    while !done(game) {
        let action = decide(policy, game, rng);
        events.clear();
        game.apply_into(action, &mut events)
            .expect("a policy's choice is legal");
    }
}

fn row(game: &Game) -> [i32; COLUMNS] {
    let s = game.scores();
    let winner = game.winner().map_or(-1, |t| t.index() as i32);
    [s[0], s[1], s[2], winner, game.deals() as i32]
}

/// Plays every game (copies: the inputs are not changed) on to the end of the
/// game (`until="game"`) or of its current hand (`until="hand"`), all seats by
/// `policy`, on `threads` threads with the GIL released. Game `i` draws from
/// its own random stream (seed, i): the results do not depend on `threads`.
/// Returns an int32 array of shape (len(games), 5): scores of teams 0, 1, 2,
/// winning team (-1: none), deals.
#[pyfunction]
#[pyo3(signature = (games, *, policy = "heuristic", threads = 1, seed = 0, until = "game"))]
pub fn playouts<'py>(
    py: Python<'py>,
    games: Vec<PyRef<'py, PyGame>>,
    policy: &str,
    threads: usize,
    seed: u64,
    until: &str,
) -> PyResult<Bound<'py, PyArray2<i32>>> {
    let policy = Policy::named(policy)?;
    let until = match until {
        "game" => Until::Game,
        "hand" => Until::Hand,
        other => {
            return Err(PyValueError::new_err(format!(
                "until is \"game\" or \"hand\", got {other:?}"
            )))
        }
    };
    if threads == 0 {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let mut owned: Vec<Game> = games.iter().map(|g| g.game.clone()).collect();
    drop(games);
    let rows = py.detach(|| run(&mut owned, policy, until, threads, seed));
    let array = PyArray2::<i32>::zeros(py, [rows.len(), COLUMNS], false);
    {
        let mut rw = array.readwrite();
        let slice = rw.as_slice_mut().expect("a new array is contiguous");
        for (dst, src) in slice.chunks_exact_mut(COLUMNS).zip(&rows) {
            dst.copy_from_slice(src);
        }
    }
    Ok(array)
}

fn run(
    games: &mut [Game],
    policy: Policy,
    until: Until,
    threads: usize,
    seed: u64,
) -> Vec<[i32; COLUMNS]> {
    let chunk = games.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (c, part) in games.chunks_mut(chunk).enumerate() {
            s.spawn(move || {
                for (k, game) in part.iter_mut().enumerate() {
                    let mut rng = SeededRng::new(seed, (c * chunk + k) as u64);
                    play_on(game, policy, until, &mut rng);
                }
            });
        }
    });
    games.iter().map(row).collect()
}

/// The whole action the built-in `policy` ("random" or "heuristic") takes in
/// `game` for the seat to act (`random` draws from stream (seed, 0)). None once
/// the game is over. The heuristic decides from the seat's view and the legal
/// answers only, so it gives the same action in any world sampled from that view.
#[pyfunction]
#[pyo3(signature = (game, policy = "heuristic", seed = 0))]
pub fn policy_action(
    game: PyRef<'_, PyGame>,
    policy: &str,
    seed: u64,
) -> PyResult<Option<PyAction>> {
    let policy = Policy::named(policy)?;
    if game.game.is_over() {
        return Ok(None);
    }
    let mut rng = SeededRng::new(seed, 0);
    Ok(Some(PyAction(Act::from_rule(decide(
        policy, &game.game, &mut rng,
    )))))
}
