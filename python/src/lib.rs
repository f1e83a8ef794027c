//! The extension module `schmier._schmier`: Python bindings of the Schmier
//! rules engine and the pure logic around it in `schmier-protocol` (the action
//! space, transcript replay). It only binds: every rule lives in `protocol/`.
//! The Python package `schmier` (python/schmier/) re-exports it and adds the
//! bot loop and the environments.

use pyo3::prelude::*;

mod action;
mod batch;
mod buffer;
mod encode;
mod fastcall;
mod game;
mod indices;
mod json;
mod play;
mod playout;
mod sampling;

/// The action-space size and the names of its indices.
fn action_names() -> Vec<String> {
    (0..schmier_protocol::action_space::ACTION_COUNT)
        .map(
            |i| match schmier_protocol::action_space::Step::from_index(i) {
                Some(schmier_protocol::action_space::Step::Pass) => "pass".to_owned(),
                Some(schmier_protocol::action_space::Step::Bid(n)) => format!("bid {n}"),
                Some(schmier_protocol::action_space::Step::Trump(s)) => {
                    format!("trump {}", s.letter())
                }
                Some(schmier_protocol::action_space::Step::Card(c)) => format!("card {c}"),
                _ => "done".to_owned(),
            },
        )
        .collect()
}

#[pymodule]
fn _schmier(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<game::PyGame>()?;
    fastcall::install(m.py())?;
    m.add_class::<action::PyAction>()?;
    m.add_class::<batch::PyGameBatch>()?;
    m.add_function(wrap_pyfunction!(sampling::sample_world_batch, m)?)?;
    m.add_function(wrap_pyfunction!(sampling::sample_worlds, m)?)?;
    m.add_function(wrap_pyfunction!(playout::playouts, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode_into, m)?)?;
    m.add(
        "OBSERVATION_LEN",
        schmier_protocol::observation::OBSERVATION_LEN,
    )?;
    m.add_function(wrap_pyfunction!(playout::policy_action, m)?)?;
    m.add("ACTION_COUNT", schmier_protocol::action_space::ACTION_COUNT)?;
    m.add("DONE", schmier_protocol::action_space::DONE)?;
    m.add("ACTION_NAMES", action_names())?;
    m.add("PROTOCOL", schmier_protocol::wire::PROTOCOL)?;
    Ok(())
}
