//! `schmier.playouts`: many games played on natively, with the GIL released,
//! on `threads` OS threads, each by a named built-in policy for every seat:
//! `random` or `heuristic` (the referee's `builtin:heuristic`).
//!
//! This only binds: the playout loop is `schmier_protocol::playout` and the
//! policies are the sample bots' (`schmier_sample_bots::playout_named`), the
//! engine Rust search bots use, so a playout from Python is the same playout.
//!
//! Results are an int32 array, one row per game: the three team scores, the
//! winning team (-1 for none yet or a capped game), and the deals played (the
//! game's deal counter: thrown-in deals included).

use numpy::{PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use schmier_protocol::playout::Horizon;
use schmier_protocol::rules::Game;
use schmier_protocol::shuffle::derive_seed;
use schmier_sample_bots::{playout_named, policy_by_name, POLICY_NAMES};

use crate::action::{Act, PyAction};
use crate::batch::PyGameBatch;
use crate::game::PyGame;

/// Columns of a playout result row.
pub const COLUMNS: usize = 5;

/// A policy name checked against the built-ins, so that the threads never
/// meet an unknown one.
pub fn policy_name(name: &str) -> PyResult<&str> {
    if POLICY_NAMES.contains(&name) {
        Ok(name)
    } else {
        Err(PyValueError::new_err(format!(
            "policy is \"random\" or \"heuristic\", got {name:?}"
        )))
    }
}

/// A playout call's options checked: the policy, how far to play, and at
/// least one thread.
pub fn options<'a>(policy: &'a str, until: &str, threads: usize) -> PyResult<(&'a str, Horizon)> {
    let checked = (policy_name(policy)?, horizon(until)?);
    if threads == 0 {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    Ok(checked)
}

fn horizon(until: &str) -> PyResult<Horizon> {
    match until {
        "game" => Ok(Horizon::Game),
        "hand" => Ok(Horizon::Deal),
        other => Err(PyValueError::new_err(format!(
            "until is \"game\" or \"hand\", got {other:?}"
        ))),
    }
}

fn row(game: &Game) -> [i32; COLUMNS] {
    let s = game.scores();
    let winner = game.winner().map_or(-1, |t| t.index() as i32);
    [s[0], s[1], s[2], winner, game.deals() as i32]
}

/// The result rows as an int32 array of shape (len(rows), COLUMNS).
pub fn rows_array<'py>(py: Python<'py>, rows: &[[i32; COLUMNS]]) -> Bound<'py, PyArray2<i32>> {
    let array = PyArray2::<i32>::zeros(py, [rows.len(), COLUMNS], false);
    {
        let mut rw = array.readwrite();
        let slice = rw.as_slice_mut().expect("a new array is contiguous");
        for (dst, src) in slice.chunks_exact_mut(COLUMNS).zip(rows) {
            dst.copy_from_slice(src);
        }
    }
    array
}

/// Plays every game of `games` on in place, game `i` by `policy` seeded
/// `derive_seed(seed, i)`, on `threads` threads (call it with the GIL
/// released), and returns their result rows.
pub fn play_all(
    games: &mut [Game],
    policy: &str,
    horizon: Horizon,
    threads: usize,
    seed: u64,
) -> Vec<[i32; COLUMNS]> {
    let play = |i: usize, game: &mut Game| {
        playout_named(game, policy, derive_seed(seed, i as u64), horizon)
            .expect("the policy name was checked");
    };
    if threads <= 1 {
        // On the calling thread: no thread to start, and its allocator arena
        // is already warm.
        games.iter_mut().enumerate().for_each(|(i, g)| play(i, g));
        return games.iter().map(row).collect();
    }
    let chunk = games.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (c, part) in games.chunks_mut(chunk).enumerate() {
            s.spawn(move || {
                for (k, game) in part.iter_mut().enumerate() {
                    play(c * chunk + k, game);
                }
            });
        }
    });
    games.iter().map(row).collect()
}

/// Plays every game of `games` (a sequence of `Game`s or a `GameBatch`;
/// copies: the inputs are not changed) on to the end of the
/// game (`until="game"`) or of its current hand (`until="hand"`), all seats by
/// `policy`, on `threads` threads with the GIL released. Game `i` draws from
/// its own random stream (seed, i): the results do not depend on `threads`.
/// Returns an int32 array of shape (len(games), 5): scores of teams 0, 1, 2,
/// winning team (-1: none), deals.
#[pyfunction]
#[pyo3(signature = (games, *, policy = "heuristic", threads = 1, seed = 0, until = "game"))]
pub fn playouts<'py>(
    py: Python<'py>,
    games: &Bound<'py, PyAny>,
    policy: &str,
    threads: usize,
    seed: u64,
    until: &str,
) -> PyResult<Bound<'py, PyArray2<i32>>> {
    let (policy, horizon) = options(policy, until, threads)?;
    let mut owned: Vec<Game> = match games.cast::<PyGameBatch>() {
        Ok(batch) => batch
            .borrow()
            .batch
            .entries
            .iter()
            .map(|e| e.game.clone())
            .collect(),
        Err(_) => games
            .extract::<Vec<PyRef<'py, PyGame>>>()?
            .iter()
            .map(|g| g.game.clone())
            .collect(),
    };
    let rows = py.detach(|| play_all(&mut owned, policy, horizon, threads, seed));
    Ok(rows_array(py, &rows))
}

/// The whole action the built-in `policy` ("random" or "heuristic") takes in
/// `game` for the seat to act (`random`: the first draw of the policy seeded
/// `seed`). None once the game is over. The heuristic decides from the seat's
/// view and the legal answers only, so it gives the same action in any world
/// sampled from that view.
#[pyfunction]
#[pyo3(signature = (game, policy = "heuristic", seed = 0))]
pub fn policy_action(
    game: PyRef<'_, PyGame>,
    policy: &str,
    seed: u64,
) -> PyResult<Option<PyAction>> {
    let mut policy = policy_by_name(policy_name(policy)?, seed).expect("the name was checked");
    if game.game.is_over() {
        return Ok(None);
    }
    Ok(Some(PyAction(Act::from_rule(policy.act(&game.game)))))
}
