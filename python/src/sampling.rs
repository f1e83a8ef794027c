//! `schmier.sample_worlds`: full games consistent with one seat's view, from
//! `schmier_protocol::worlds` (the sampler is there; this only binds it).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use schmier_protocol::batch::{Entry, GameBatch};
use schmier_protocol::rules::{Game, RulesConfig, SeatView};
use schmier_protocol::shuffle::SeededRng;
use schmier_protocol::worlds::{Context, WorldError, WorldSampler};

use crate::batch::PyGameBatch;
use crate::game::PyGame;
use crate::json;

/// A view dict (from `Game.view` or a request's `view`) as the engine's type.
pub fn read_view(view: &Bound<'_, PyAny>) -> PyResult<SeatView> {
    let v = json::from_py(view, "view")?;
    serde_json::from_value(v).map_err(|e| PyValueError::new_err(format!("not a seat view: {e}")))
}

/// Rules from a dict (a `game_start`'s `rules`, `Game.rules`), or the defaults
/// with the view's target.
pub fn read_rules(rules: Option<&Bound<'_, PyAny>>, view: &SeatView) -> PyResult<RulesConfig> {
    match rules {
        Some(r) if !r.is_none() => serde_json::from_value(json::from_py(r, "rules")?)
            .map_err(|e| PyValueError::new_err(format!("rules: {e}"))),
        _ => Ok(RulesConfig {
            target: view.target,
            ..RulesConfig::default()
        }),
    }
}

fn sampler(
    view: &Bound<'_, PyAny>,
    rules: Option<&Bound<'_, PyAny>>,
    streak: u32,
) -> PyResult<(SeatView, Context)> {
    let view = read_view(view)?;
    let context = Context {
        rules: read_rules(rules, &view)?,
        streak,
    };
    Ok((view, context))
}

/// `n` worlds made by `make` from the sampler's draws (the random stream
/// `SeededRng::new(seed, 0)`, as `sample_worlds_with`: the same worlds), with
/// the GIL released.
fn sample<T: Send>(
    py: Python<'_>,
    view: &SeatView,
    context: &Context,
    n: usize,
    seed: u64,
    make: impl Fn(Game) -> T + Send + Sync,
) -> PyResult<Vec<T>> {
    py.detach(|| {
        let sampler = WorldSampler::with_context(view, context)?;
        let mut rng = SeededRng::new(seed, 0);
        Ok((0..n).map(|_| make(sampler.sample(&mut rng))).collect())
    })
    .map_err(|e: WorldError| PyValueError::new_err(format!("no world fits the view: {e}")))
}

/// `n` games drawn uniformly from the deals consistent with `view` (see
/// docs/python.md), each with `view(seat) == view`. `rules`: the game's rules
/// (a `game_start`'s `rules`; default: the standard rules), `streak`: thrown-in
/// deals in a row before this one (not in a view; decides a stuck dealer).
#[pyfunction]
#[pyo3(signature = (view, n, seed, *, rules = None, streak = 0))]
pub fn sample_worlds(
    py: Python<'_>,
    view: &Bound<'_, PyAny>,
    n: usize,
    seed: u64,
    rules: Option<&Bound<'_, PyAny>>,
    streak: u32,
) -> PyResult<Vec<PyGame>> {
    let (view, context) = sampler(view, rules, streak)?;
    sample(py, &view, &context, n, seed, PyGame::wrap)
}

/// The same worlds as `sample_worlds` (same arguments, same games, same
/// order), held natively in a `GameBatch`: no Python object per world.
#[pyfunction]
#[pyo3(signature = (view, n, seed, *, rules = None, streak = 0))]
pub fn sample_world_batch(
    py: Python<'_>,
    view: &Bound<'_, PyAny>,
    n: usize,
    seed: u64,
    rules: Option<&Bound<'_, PyAny>>,
    streak: u32,
) -> PyResult<PyGameBatch> {
    let (view, context) = sampler(view, rules, streak)?;
    let entries = sample(py, &view, &context, n, seed, Entry::new)?;
    Ok(PyGameBatch {
        batch: GameBatch { entries },
    })
}
