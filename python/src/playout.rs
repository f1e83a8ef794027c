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

use numpy::PyArray2;
use pyo3::prelude::*;
use schmier_protocol::rules::Game;
use schmier_sample_bots::policy_by_name;

use crate::action::{Act, PyAction};
use crate::batch::PyGameBatch;
use crate::game::PyGame;
use crate::play::{options, play_all, policy_name, rows_array};

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
