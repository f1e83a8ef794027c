//! Many games stepped together over the action space ([`crate::action_space`]):
//! for learning code that plays hundreds of tables at once and for search over
//! many sampled worlds. The Python library's `GameBatch` binds this.
//!
//! Each game carries its own card-by-card [`Selection`], exactly as one game
//! stepped by indices would. Stepping is all or nothing: [`GameBatch::step`]
//! checks every game's index before it changes any, so an illegal entry
//! returns a [`BatchError`] naming the game and leaves the batch as it was.

use crate::action_space::{Outcome, Selection, StepError, ACTION_COUNT};
use crate::observation::{encode_into, OBSERVATION_LEN};
use crate::rules::{Action, Event, Game, RuleError};

/// One game of a batch and the cards chosen so far in it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub game: Game,
    pub selection: Selection,
}

impl Entry {
    /// A game with nothing chosen yet.
    pub fn new(game: Game) -> Entry {
        Entry {
            game,
            selection: Selection::default(),
        }
    }
}

/// Why a batch step was refused (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error("{given} steps for a batch of {games} games")]
    Length { given: usize, games: usize },
    #[error("game {game}: {error}")]
    Step { game: usize, error: StepError },
    #[error("game {game}: {error}")]
    Rule { game: usize, error: RuleError },
}

/// Many games, stepped together.
#[derive(Clone, Debug, Default)]
pub struct GameBatch {
    pub entries: Vec<Entry>,
}

impl FromIterator<Game> for GameBatch {
    fn from_iter<I: IntoIterator<Item = Game>>(games: I) -> GameBatch {
        GameBatch {
            entries: games.into_iter().map(Entry::new).collect(),
        }
    }
}

impl GameBatch {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes each game's legal mask ([`Selection::mask`]) as one row of
    /// [`ACTION_COUNT`] into `out` (all false for a game over). Panics unless
    /// `out` has `len() * ACTION_COUNT` elements.
    pub fn masks_into(&self, out: &mut [bool]) {
        assert_eq!(out.len(), self.len() * ACTION_COUNT);
        for (row, e) in out.chunks_exact_mut(ACTION_COUNT).zip(&self.entries) {
            row.copy_from_slice(&e.selection.mask(&e.game));
        }
    }

    /// Writes each game's acting seat's view, encoded ([`encode_into`]), as one
    /// row of [`OBSERVATION_LEN`] into `out` (zeros for a game over). Panics
    /// unless `out` has `len() * OBSERVATION_LEN` elements.
    pub fn observations_into(&self, out: &mut [f32]) {
        assert_eq!(out.len(), self.len() * OBSERVATION_LEN);
        for (row, e) in out.chunks_exact_mut(OBSERVATION_LEN).zip(&self.entries) {
            match e.game.to_act() {
                Some(seat) => encode_into(&e.game.view(seat), row),
                None => row.fill(0.0),
            }
        }
    }

    /// Takes step `steps[i]` (an action-space index) in game `i`; a `None`
    /// leaves that game as it is. All or nothing: every step is checked first.
    pub fn step(&mut self, steps: &[Option<usize>]) -> Result<(), BatchError> {
        if steps.len() != self.len() {
            return Err(BatchError::Length {
                given: steps.len(),
                games: self.len(),
            });
        }
        for (game, (e, step)) in self.entries.iter().zip(steps).enumerate() {
            if let Some(index) = *step {
                // A trial step on a copy of the selection: its error, if any.
                let mut trial = e.selection;
                trial
                    .step(&e.game, index)
                    .map_err(|error| BatchError::Step { game, error })?;
            }
        }
        let mut events: Vec<Event> = Vec::with_capacity(16);
        for (e, step) in self.entries.iter_mut().zip(steps) {
            if let Some(index) = *step {
                if let Outcome::Apply(a) = e.selection.step(&e.game, index).expect("checked") {
                    events.clear();
                    e.game
                        .apply_into(a, &mut events)
                        .expect("a legal step applies");
                }
            }
        }
        Ok(())
    }

    /// Applies the whole action `make(decision due)` in every game (a search
    /// trying one candidate in every world); each selection is cleared. All or
    /// nothing: an illegal action in any game changes no game.
    pub fn apply_all(
        &mut self,
        make: impl Fn(Option<crate::rules::Decision>) -> Action,
    ) -> Result<(), BatchError> {
        let mut next = self.entries.clone();
        let mut events = Vec::with_capacity(16);
        for (game, e) in next.iter_mut().enumerate() {
            events.clear();
            e.game
                .apply_into(make(e.game.decision()), &mut events)
                .map_err(|error| BatchError::Rule { game, error })?;
            e.selection = Selection::default();
        }
        self.entries = next;
        Ok(())
    }

    /// Replaces game `i` with a new game dealt from `seed` under the rules of
    /// the game it replaces.
    pub fn reset(&mut self, i: usize, seed: u64) {
        let rules = *self.entries[i].game.config();
        self.entries[i] = Entry::new(Game::new(seed, rules).0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RulesConfig;
    use crate::shuffle::SeededRng;

    fn random_steps(batch: &GameBatch, rng: &mut SeededRng) -> Vec<Option<usize>> {
        let mut masks = vec![false; batch.len() * ACTION_COUNT];
        batch.masks_into(&mut masks);
        masks
            .chunks_exact(ACTION_COUNT)
            .map(|row| {
                let legal: Vec<usize> = (0..ACTION_COUNT).filter(|&i| row[i]).collect();
                (!legal.is_empty()).then(|| legal[rng.below(legal.len() as u32) as usize])
            })
            .collect()
    }

    /// A batch steps each game exactly as the same indices step it alone.
    #[test]
    fn a_batch_steps_as_its_games_do_alone() {
        let rules = RulesConfig::default();
        let mut batch: GameBatch = (0..8).map(|s| Game::new(s, rules).0).collect();
        let mut alone: Vec<(Game, Selection)> = (0..8)
            .map(|s| (Game::new(s, rules).0, Selection::default()))
            .collect();
        let mut rng = SeededRng::new(3, 0);
        for _ in 0..600 {
            let steps = random_steps(&batch, &mut rng);
            batch.step(&steps).unwrap();
            for ((game, sel), step) in alone.iter_mut().zip(&steps) {
                if let Some(i) = *step {
                    if let Outcome::Apply(a) = sel.step(game, i).unwrap() {
                        game.apply(a).unwrap();
                    }
                }
            }
        }
        for (e, (game, sel)) in batch.entries.iter().zip(&alone) {
            assert_eq!(
                e.game.view(crate::Seat::new(0)),
                game.view(crate::Seat::new(0))
            );
            assert_eq!(e.selection, *sel);
            assert_eq!(e.game.scores(), game.scores());
        }
    }

    /// An illegal step anywhere changes no game.
    #[test]
    fn an_illegal_step_changes_nothing() {
        let rules = RulesConfig::default();
        let mut batch: GameBatch = (0..4).map(|s| Game::new(s, rules).0).collect();
        let mut rng = SeededRng::new(5, 0);
        let mut steps = random_steps(&batch, &mut rng);
        let before: Vec<_> = batch.entries.iter().map(|e| format!("{e:?}")).collect();
        steps[3] = Some(crate::action_space::DONE); // never legal in an auction
        assert!(matches!(
            batch.step(&steps),
            Err(BatchError::Step { game: 3, .. })
        ));
        assert!(matches!(
            batch.step(&steps[..2]),
            Err(BatchError::Length { given: 2, games: 4 })
        ));
        assert!(batch.apply_all(|_| Action::Bid(9)).is_err());
        let after: Vec<_> = batch.entries.iter().map(|e| format!("{e:?}")).collect();
        assert_eq!(before, after);
    }
}
