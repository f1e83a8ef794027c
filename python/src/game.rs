//! `schmier.Game`: the full state of one game, the referee's own rules engine
//! (`schmier_protocol::rules::Game`) plus the cards chosen so far when a
//! multi-card decision is taken card by card (`schmier_protocol::action_space`).

use numpy::PyArray1;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use schmier_protocol::action_space::{self, Outcome, Selection};
use schmier_protocol::rules::{Event, Game, RulesConfig};
use schmier_protocol::{CardSet, Seat};

use crate::action::{Act, PyAction};
use crate::json;

/// One game of Schmier, every card visible.
#[pyclass(module = "schmier", name = "Game")]
#[derive(Clone)]
pub struct PyGame {
    pub game: Game,
    pub selection: Selection,
    /// The engine's events of the last step, kept to reuse its allocation.
    events: Vec<Event>,
}

pub fn seat_arg(seat: usize) -> PyResult<Seat> {
    Seat::try_new(seat as u64)
        .ok_or_else(|| PyValueError::new_err(format!("a seat is 0-5, got {seat}")))
}

fn cards_list<'py>(py: Python<'py>, cards: CardSet) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, cards.iter().map(|c| c.to_string()))
}

impl PyGame {
    pub fn wrap(game: Game) -> PyGame {
        PyGame::with_selection(game, Selection::default())
    }

    /// A game part-way through a card-by-card exchange or discard.
    pub fn with_selection(game: Game, selection: Selection) -> PyGame {
        PyGame {
            game,
            selection,
            events: Vec::new(),
        }
    }

    fn apply_action(&mut self, act: Act) -> PyResult<()> {
        let rule = act.to_rule(self.game.decision());
        self.events.clear();
        self.game
            .apply_into(rule, &mut self.events)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", act.wire())))?;
        self.selection = Selection::default();
        Ok(())
    }

    fn apply_index(&mut self, index: usize) -> PyResult<()> {
        match self
            .selection
            .step(&self.game, index)
            .map_err(|e| PyValueError::new_err(e.to_string()))?
        {
            Outcome::Apply(a) => {
                self.events.clear();
                self.game
                    .apply_into(a, &mut self.events)
                    .map_err(|e| PyValueError::new_err(e.to_string()))
            }
            Outcome::Selected => Ok(()),
        }
    }
}

#[pymethods]
impl PyGame {
    /// A new game dealt from `seed` exactly as the referee deals a game with that
    /// seed (a transcript header's `seed`).
    #[new]
    #[pyo3(signature = (seed, *, stick_the_dealer = false, trump_anytime = false))]
    fn new(seed: u64, stick_the_dealer: bool, trump_anytime: bool) -> PyGame {
        let rules = RulesConfig {
            stick_the_dealer,
            trump_anytime,
            ..RulesConfig::default()
        };
        PyGame::wrap(Game::new(seed, rules).0)
    }

    /// The game at the end of a referee transcript (formats schmier-transcript/1
    /// to /3; a `.partial` game in progress too): every decision replayed
    /// through the engine, every derived event checked.
    #[staticmethod]
    fn from_transcript(path: std::path::PathBuf) -> PyResult<PyGame> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let r = schmier_protocol::replay::replay(&text)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(PyGame::wrap(r.game))
    }

    /// The seat whose decision is due, or None once the game is over.
    #[getter]
    fn to_act(&self) -> Option<usize> {
        self.game.to_act().map(Seat::index)
    }

    /// "bid", "trump", "exchange", "discard", "play", or "over".
    #[getter]
    fn phase(&self) -> &'static str {
        self.game.decision().map_or("over", |d| d.name())
    }

    #[getter]
    fn is_over(&self) -> bool {
        self.game.is_over()
    }

    /// Scores by team [team 0, team 1, team 2].
    #[getter]
    fn scores(&self) -> [i32; 3] {
        self.game.scores()
    }

    /// The winning team (0-2) once the game is over; None while it runs or for
    /// a game stopped by the hand cap.
    #[getter]
    fn winner(&self) -> Option<usize> {
        self.game.winner().map(|t| t.index())
    }

    #[getter]
    fn dealer(&self) -> usize {
        self.game.dealer().index()
    }

    /// The current deal's number (1-based, thrown-in deals included).
    #[getter]
    fn deal(&self) -> u32 {
        self.game.deals()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.game.seed()
    }

    /// Trump's letter once named for this deal, else None.
    #[getter]
    fn trump(&self) -> Option<String> {
        self.game.trump().map(|s| s.letter().to_string())
    }

    /// The rules in force, as a transcript header's `rules`.
    #[getter]
    fn rules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(
            py,
            &serde_json::to_value(self.game.config()).expect("rules serialise"),
        )
    }

    /// The cards of `seat` (card order).
    fn hand<'py>(&self, py: Python<'py>, seat: usize) -> PyResult<Bound<'py, PyList>> {
        cards_list(py, self.game.hand(seat_arg(seat)?))
    }

    /// The cards chosen so far in a card-by-card exchange or discard.
    #[getter]
    fn selection<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        cards_list(py, self.selection.0)
    }

    /// Every legal whole action (see `schmier_protocol::action_space::all_legal`
    /// for the order).
    fn legal(&self) -> Vec<PyAction> {
        action_space::all_legal(&self.game)
            .into_iter()
            .map(|a| PyAction(Act::from_rule(a)))
            .collect()
    }

    /// The request's `legal` JSON for the decision due (None once over).
    fn legal_wire<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let legal = self
            .game
            .legal()
            .map(|l| schmier_protocol::wire::LegalWire::from(&l));
        json::to_py(py, &serde_json::to_value(legal).expect("legal serialises"))
    }

    /// The legal action-space indices as a numpy bool array of ACTION_COUNT;
    /// with `out` (a writable, contiguous bool array of that length) filled in
    /// place and returned, without allocating.
    #[pyo3(signature = (out = None))]
    pub(crate) fn legal_mask<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyArray1<bool>>>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let mask = self.selection.mask(&self.game);
        match out {
            None => Ok(PyArray1::from_slice(py, &mask)),
            Some(out) => {
                crate::buffer::fill(&out, &mask, "legal_mask(out=)")?;
                Ok(out)
            }
        }
    }

    /// The legal action-space indices, increasing.
    fn legal_indices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mask = self.selection.mask(&self.game);
        PyList::new(py, crate::indices::Indices(crate::indices::bits(&mask)))
    }

    /// Applies an `Action` (a whole decision), or one action-space index. An
    /// illegal one raises ValueError and changes nothing.
    pub(crate) fn apply(&mut self, action: &Bound<'_, PyAny>) -> PyResult<()> {
        // An index first: the hot loop of search and learning code.
        if let Ok(i) = action.extract::<usize>() {
            return self.apply_index(i);
        }
        match action.cast::<PyAction>() {
            Ok(a) => self.apply_action(a.get().0),
            Err(_) => Err(PyValueError::new_err(
                "apply takes a schmier.Action or an action index (0-62)",
            )),
        }
    }

    /// An independent copy (the state is a few hundred bytes).
    fn clone(&self) -> PyGame {
        Clone::clone(self)
    }

    fn __copy__(&self) -> PyGame {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyDict>) -> PyGame {
        Clone::clone(self)
    }

    /// What `seat` knows now: the same JSON object as a request's `view`.
    fn view<'py>(&self, py: Python<'py>, seat: usize) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.game.view(seat_arg(seat)?)).expect("a view serialises");
        json::to_py(py, &v)
    }

    /// The request the referee would send for the decision due (None once over),
    /// with this `id` and `time_ms`.
    #[pyo3(signature = (id = 1, time_ms = None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        id: u64,
        time_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let req = schmier_protocol::wire::Request::for_decision(&self.game, id, time_ms)
            .map(schmier_protocol::wire::ToBot::Request);
        json::to_py(
            py,
            &serde_json::to_value(req).expect("a request serialises"),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Game(seed={}, deal={}, phase={}, to_act={}, scores={:?})",
            self.game.seed(),
            self.game.deals(),
            self.phase(),
            self.to_act().map_or("None".to_owned(), |s| s.to_string()),
            self.game.scores()
        )
    }
}
