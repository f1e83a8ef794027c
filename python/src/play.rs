//! The native half of a playout call, shared by `schmier.playouts` and
//! `GameBatch.playouts`: the options checked, every game played on by the
//! sample bots' named policy (`schmier_sample_bots::playout_named` over
//! `schmier_protocol::playout`) on `threads` threads, and the result rows as
//! an int32 array (three team scores, the winning team or -1, deals).

use numpy::{PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use schmier_protocol::playout::Horizon;
use schmier_protocol::rules::Game;
use schmier_protocol::shuffle::derive_seed;
use schmier_sample_bots::{playout_named, POLICY_NAMES};

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
