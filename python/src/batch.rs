//! `schmier.GameBatch`: many games held natively and stepped together from one
//! Python call (reinforcement learning over many tables, search over many
//! sampled worlds), with no Python object per game. It binds
//! `schmier_protocol::batch::GameBatch` (the stepping, all or nothing, is
//! there); this file reads Python's arguments and makes numpy arrays.

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use schmier_protocol::action_space::ACTION_COUNT;
use schmier_protocol::batch::{BatchError, Entry, GameBatch};
use schmier_protocol::observation::OBSERVATION_LEN;
use schmier_protocol::rules::{Game, RulesConfig};

use crate::action::PyAction;
use crate::game::PyGame;
use crate::play::{options, play_all, rows_array};

/// Many games, stepped together. Build one from seeds, from `Game`s
/// (`GameBatch.from_games`) or from a view (`sample_world_batch`).
#[pyclass(module = "schmier", name = "GameBatch")]
#[derive(Clone)]
pub struct PyGameBatch {
    pub batch: GameBatch,
}

impl PyGameBatch {
    pub fn of_games(games: impl IntoIterator<Item = Game>) -> PyGameBatch {
        PyGameBatch {
            batch: games.into_iter().collect(),
        }
    }

    fn index(&self, i: isize) -> PyResult<usize> {
        let n = self.batch.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if (0..n).contains(&j) {
            Ok(j as usize)
        } else {
            Err(PyIndexError::new_err(format!("game {i} of a batch of {n}")))
        }
    }
}

/// What `apply` was given: one index or one action for every game, or an
/// index per game (negative: leave that game as it is).
enum Steps {
    Each(Vec<i64>),
    All(i64),
    Action(PyAction),
}

fn read_steps(actions: &Bound<'_, PyAny>, n: usize) -> PyResult<Steps> {
    if let Ok(i) = actions.extract::<i64>() {
        return Ok(Steps::All(i));
    }
    if let Ok(a) = actions.cast::<PyAction>() {
        return Ok(Steps::Action(*a.get()));
    }
    let each: Vec<i64> = if let Ok(a) = actions.extract::<PyReadonlyArray1<'_, i64>>() {
        a.as_array().to_vec()
    } else if let Ok(a) = actions.extract::<PyReadonlyArray1<'_, i32>>() {
        a.as_array().iter().map(|&x| i64::from(x)).collect()
    } else {
        actions.extract().map_err(|_| {
            PyValueError::new_err(
                "apply takes an index, an Action, or one index per game (a sequence or an \
                 int32/int64 array)",
            )
        })?
    };
    if each.len() != n {
        return Err(PyValueError::new_err(format!(
            "apply: {} indices for a batch of {n} games",
            each.len()
        )));
    }
    Ok(Steps::Each(each))
}

#[pymethods]
impl PyGameBatch {
    /// One new game per seed, each dealt exactly as `Game(seed, ...)`.
    #[new]
    #[pyo3(signature = (seeds, *, stick_the_dealer = false, trump_anytime = false))]
    fn new(seeds: Vec<u64>, stick_the_dealer: bool, trump_anytime: bool) -> PyGameBatch {
        let rules = RulesConfig {
            stick_the_dealer,
            trump_anytime,
            ..RulesConfig::default()
        };
        PyGameBatch::of_games(seeds.into_iter().map(|s| Game::new(s, rules).0))
    }

    /// A batch of copies of `games` (their selections too).
    #[staticmethod]
    fn from_games(games: Vec<PyRef<'_, PyGame>>) -> PyGameBatch {
        PyGameBatch {
            batch: GameBatch {
                entries: games
                    .iter()
                    .map(|g| Entry {
                        game: g.game.clone(),
                        selection: g.selection,
                    })
                    .collect(),
            },
        }
    }

    fn __len__(&self) -> usize {
        self.batch.entries.len()
    }

    /// A copy of game `i` as a `Game`.
    fn __getitem__(&self, i: isize) -> PyResult<PyGame> {
        let e = &self.batch.entries[self.index(i)?];
        Ok(PyGame::with_selection(e.game.clone(), e.selection))
    }

    /// Every game as a `Game` (copies).
    fn games(&self) -> Vec<PyGame> {
        self.batch
            .entries
            .iter()
            .map(|e| PyGame::with_selection(e.game.clone(), e.selection))
            .collect()
    }

    /// An independent copy of the batch.
    fn clone(&self) -> PyGameBatch {
        Clone::clone(self)
    }

    fn __copy__(&self) -> PyGameBatch {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGameBatch {
        Clone::clone(self)
    }

    /// The seat to act in each game, -1 where it is over (int32).
    #[getter]
    fn to_act<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_iter(
            py,
            self.batch
                .entries
                .iter()
                .map(|e| e.game.to_act().map_or(-1, |s| s.index() as i32)),
        )
    }

    /// Whether each game is over (bool).
    #[getter]
    fn is_over<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_iter(py, self.batch.entries.iter().map(|e| e.game.is_over()))
    }

    /// Scores by team, one row per game (int32, shape (n, 3)).
    #[getter]
    fn scores<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i32>> {
        let flat: Vec<i32> = self
            .batch
            .entries
            .iter()
            .flat_map(|e| e.game.scores())
            .collect();
        PyArray1::from_vec(py, flat)
            .reshape([self.batch.entries.len(), 3])
            .expect("n x 3 elements")
    }

    /// The winning team of each game, -1 while it runs or for a capped game.
    #[getter]
    fn winners<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_iter(
            py,
            self.batch
                .entries
                .iter()
                .map(|e| e.game.winner().map_or(-1, |t| t.index() as i32)),
        )
    }

    /// The current deal's number in each game (int32).
    #[getter]
    fn deals<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_iter(py, self.batch.entries.iter().map(|e| e.game.deals() as i32))
    }

    /// The legal-action masks, one row of ACTION_COUNT per game (bool, shape
    /// (n, ACTION_COUNT); a game over has an all-false row); with `out` (a
    /// writable, contiguous bool array of that shape) filled in place.
    #[pyo3(signature = (out = None))]
    fn legal_masks<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyArray2<bool>>>,
    ) -> PyResult<Bound<'py, PyArray2<bool>>> {
        let shape = [self.batch.entries.len(), ACTION_COUNT];
        let out = match out {
            Some(o) => o,
            None => PyArray2::<bool>::zeros(py, shape, false),
        };
        if out.shape() != shape {
            return Err(PyValueError::new_err(format!(
                "legal_masks(out=): the array's shape is {:?}, not {shape:?}",
                out.shape()
            )));
        }
        crate::buffer::write_with(&out, shape[0] * shape[1], "legal_masks(out=)", |slice| {
            self.batch.masks_into(slice)
        })?;
        Ok(out)
    }

    /// Steps every game: `actions` is one action-space index per game (a
    /// sequence or an int array; a negative entry leaves that game as it is),
    /// or one index or one `Action` for all of them. All or nothing: if any
    /// game's step is illegal (a game over takes only a negative entry),
    /// ValueError names it and no game changes.
    fn apply(&mut self, py: Python<'_>, actions: &Bound<'_, PyAny>) -> PyResult<()> {
        let result = match read_steps(actions, self.batch.len())? {
            Steps::Action(a) => self.batch.apply_all(|decision| a.0.to_rule(decision)),
            Steps::All(i) => {
                let step = usize::try_from(i).map_err(|_| {
                    PyValueError::new_err(format!("action index {i} is outside 0..{ACTION_COUNT}"))
                })?;
                let steps = vec![Some(step); self.batch.len()];
                let batch = &mut self.batch;
                py.detach(|| batch.step(&steps))
            }
            Steps::Each(each) => {
                let steps: Vec<Option<usize>> =
                    each.iter().map(|&k| usize::try_from(k).ok()).collect();
                let batch = &mut self.batch;
                py.detach(|| batch.step(&steps))
            }
        };
        result.map_err(|e| match e {
            BatchError::Length { given, games } => PyValueError::new_err(format!(
                "apply: {given} indices for a batch of {games} games"
            )),
            other => PyValueError::new_err(other.to_string()),
        })
    }

    /// Replaces game `indices[k]` with a new game dealt from `seeds[k]`
    /// under the rules of the game it replaces (as `Game(seed, ...)`): for
    /// starting finished games again. `indices` and `seeds`: ints or
    /// sequences of the same length. All or nothing on a bad index.
    fn reset(&mut self, indices: &Bound<'_, PyAny>, seeds: &Bound<'_, PyAny>) -> PyResult<()> {
        let indices: Vec<isize> = match indices.extract::<isize>() {
            Ok(i) => vec![i],
            Err(_) => indices.extract()?,
        };
        let seeds: Vec<u64> = match seeds.extract::<u64>() {
            Ok(s) => vec![s],
            Err(_) => seeds.extract()?,
        };
        if indices.len() != seeds.len() {
            return Err(PyValueError::new_err(format!(
                "reset: {} indices and {} seeds",
                indices.len(),
                seeds.len()
            )));
        }
        let at: Vec<usize> = indices
            .iter()
            .map(|&i| self.index(i))
            .collect::<PyResult<_>>()?;
        for (&i, &seed) in at.iter().zip(&seeds) {
            self.batch.reset(i, seed);
        }
        Ok(())
    }

    /// Each game's acting seat's view encoded (`schmier.encode`), one row of
    /// OBSERVATION_LEN per game (float32; all zero for a game over); with
    /// `out` (a writable, contiguous float32 array of that shape) in place.
    #[pyo3(signature = (out = None))]
    fn observations<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyArray2<f32>>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let shape = [self.batch.entries.len(), OBSERVATION_LEN];
        let out = match out {
            Some(o) => o,
            None => PyArray2::<f32>::zeros(py, shape, false),
        };
        if out.shape() != shape {
            return Err(PyValueError::new_err(format!(
                "observations(out=): the array's shape is {:?}, not {shape:?}",
                out.shape()
            )));
        }
        crate::buffer::write_with(&out, shape[0] * shape[1], "observations(out=)", |slice| {
            self.batch.observations_into(slice)
        })?;
        Ok(out)
    }

    /// `schmier.playouts` of this batch's games (copies: the batch does not
    /// change): the same rows for the same games, policy and seed.
    #[pyo3(signature = (*, policy = "heuristic", threads = 1, seed = 0, until = "game"))]
    fn playouts<'py>(
        &self,
        py: Python<'py>,
        policy: &str,
        threads: usize,
        seed: u64,
        until: &str,
    ) -> PyResult<Bound<'py, PyArray2<i32>>> {
        let (policy, horizon) = options(policy, until, threads)?;
        let mut games: Vec<Game> = self.batch.entries.iter().map(|e| e.game.clone()).collect();
        let rows = py.detach(|| play_all(&mut games, policy, horizon, threads, seed));
        Ok(rows_array(py, &rows))
    }

    fn __repr__(&self) -> String {
        let over = self
            .batch
            .entries
            .iter()
            .filter(|e| e.game.is_over())
            .count();
        format!("GameBatch({} games, {over} over)", self.batch.entries.len())
    }
}
