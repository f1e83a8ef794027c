//! `schmier.Action`: one whole decision, as a bot replies it. Its wire form
//! (`to_wire`) is the reply's `action` JSON; `from_wire` reads it back. A list of
//! cards is one kind, `cards`, whether it answers an exchange or the dealer's
//! discard: the decision due says which, as on the wire.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use schmier_protocol::action_space;
use schmier_protocol::rules::{Action as Rule, Call, Decision};
use schmier_protocol::{Card, CardSet, Suit};

use crate::json;

/// A decision, decision-agnostic for card lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Act {
    Pass,
    Bid(u8),
    Trump(Suit),
    Cards(CardSet),
    Play(Card),
}

impl Act {
    pub fn from_rule(a: Rule) -> Act {
        match a {
            Rule::Pass => Act::Pass,
            Rule::Bid(n) => Act::Bid(n),
            Rule::Trump(s) => Act::Trump(s),
            Rule::Exchange(c) | Rule::Discard(c) => Act::Cards(c),
            Rule::Play(c) => Act::Play(c),
        }
    }

    /// The engine's action for the decision due (cards: exchange or discard).
    pub fn to_rule(self, decision: Option<Decision>) -> Rule {
        match self {
            Act::Pass => Rule::Pass,
            Act::Bid(n) => Rule::Bid(n),
            Act::Trump(s) => Rule::Trump(s),
            Act::Cards(c) => Rule::cards(decision.unwrap_or(Decision::Exchange), c),
            Act::Play(c) => Rule::Play(c),
        }
    }

    pub fn wire(self) -> serde_json::Value {
        schmier_protocol::wire::action_json(self.to_rule(None))
    }

    pub fn from_wire(v: &serde_json::Value) -> Result<Act, String> {
        let shape = || {
            format!(
                "an action is \"pass\", a bid 3-6, a suit letter, a card such as \"AS\" or a \
                 list of cards, got {v}"
            )
        };
        Ok(match v {
            serde_json::Value::Array(_) => Act::Cards(
                serde_json::from_value(v.clone()).map_err(|e| format!("{}: {e}", shape()))?,
            ),
            serde_json::Value::Number(_) => match serde_json::from_value::<Call>(v.clone()) {
                Ok(Call::Bid(n)) if (3..=6).contains(&n) => Act::Bid(n),
                _ => return Err(shape()),
            },
            serde_json::Value::String(s) if s == "pass" => Act::Pass,
            serde_json::Value::String(s) if s.len() == 1 => {
                Act::Trump(serde_json::from_value(v.clone()).map_err(|_| shape())?)
            }
            serde_json::Value::String(_) => {
                Act::Play(serde_json::from_value(v.clone()).map_err(|_| shape())?)
            }
            _ => return Err(shape()),
        })
    }
}

/// One whole decision: a pass, a bid, a trump suit, the cards thrown away
/// (exchange or dealer's discard), or a card played.
#[pyclass(module = "schmier", name = "Action", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyAction(pub Act);

#[pymethods]
impl PyAction {
    /// Reads a reply's `action` JSON ("pass", 4, "H", "AS", ["5C", "8C"]).
    #[staticmethod]
    fn from_wire(obj: &Bound<'_, PyAny>) -> PyResult<PyAction> {
        let v = json::from_py(obj, "Action.from_wire")?;
        Act::from_wire(&v)
            .map(PyAction)
            .map_err(PyValueError::new_err)
    }

    /// The reply's `action` JSON, as Python objects.
    #[allow(clippy::wrong_self_convention)] // the Python name; pyo3 takes &self
    fn to_wire<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.0.wire())
    }

    /// "pass", "bid", "trump", "cards" or "play".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.0 {
            Act::Pass => "pass",
            Act::Bid(_) => "bid",
            Act::Trump(_) => "trump",
            Act::Cards(_) => "cards",
            Act::Play(_) => "play",
        }
    }

    /// The bid (3-6), or None.
    #[getter]
    fn bid(&self) -> Option<u8> {
        match self.0 {
            Act::Bid(n) => Some(n),
            _ => None,
        }
    }

    /// The suit letter of a trump action, or None.
    #[getter]
    fn suit(&self) -> Option<String> {
        match self.0 {
            Act::Trump(s) => Some(s.letter().to_string()),
            _ => None,
        }
    }

    /// The card played, or None.
    #[getter]
    fn card(&self) -> Option<String> {
        match self.0 {
            Act::Play(c) => Some(c.to_string()),
            _ => None,
        }
    }

    /// The cards thrown away (in card order), or None.
    #[getter]
    fn cards<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        match self.0 {
            Act::Cards(c) => Ok(Some(PyList::new(py, c.iter().map(|c| c.to_string()))?)),
            _ => Ok(None),
        }
    }

    /// The action-space indices that take this action from an empty selection
    /// (one index; for cards, one per card in card order, then DONE).
    fn indices(&self) -> Vec<usize> {
        action_space::steps_of(self.0.to_rule(None)).unwrap_or_default()
    }

    /// The single action-space index of a pass, bid, trump or play; None for cards.
    #[getter]
    fn index(&self) -> Option<usize> {
        action_space::index_of(self.0.to_rule(None))
    }

    fn __repr__(&self) -> String {
        format!("Action({})", self.0.wire())
    }
}
