//! A fixed, numbered action space over every decision of the game, for search and
//! learning code that wants a mask and an index instead of a [`Legal`].
//!
//! [`ACTION_COUNT`] (63) indices:
//!
//! | index | meaning |
//! |---|---|
//! | 0 | pass (bid decision) |
//! | 1–4 | bid 3, 4, 5, 6 |
//! | 5–8 | name trump S, H, D, C |
//! | 9–61 | card `i - 9` (card index order: ♠2..♠A, ♥2.., ♦2.., ♣2.., joker): play it, or, in an exchange or the dealer's discard, add it to the cards being thrown away |
//! | 62 | done: throw away the cards chosen so far (exchange, dealer's discard) |
//!
//! A multi-card decision (a non-dealer's exchange, the dealer's discard) is taken
//! card by card: a [`Selection`] accumulates the chosen cards, a card index is
//! legal while it can still be part of some legal answer, and `done` is legal
//! exactly when the cards chosen are a legal answer. Every legal answer is
//! reachable this way, and every sequence of legal indices ends in one (a legal
//! choice never leads into a dead end): the set of reachable answers is exactly
//! the [`Legal::Cards`] set.
//!
//! The Python library (`python/`) binds this; it is pure logic so that a Rust bot
//! can use the same numbering.

use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::rules::{Action, Decision, Game, Legal};

/// Number of indices in the action space.
pub const ACTION_COUNT: usize = 63;
/// Index of "pass".
pub const PASS: usize = 0;
/// Index of the first bid (3); bid `n` is `BID_BASE + n - 3`.
pub const BID_BASE: usize = 1;
/// Index of the first trump suit (spades); suit `s` is `TRUMP_BASE + s.index()`.
pub const TRUMP_BASE: usize = 5;
/// Index of card 0; card `c` is `CARD_BASE + c.index()`.
pub const CARD_BASE: usize = 9;
/// Index of "done" (ends a card-by-card exchange or discard).
pub const DONE: usize = 62;

/// One index of the action space, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Pass,
    Bid(u8),
    Trump(Suit),
    /// Play this card, or add it to the selection.
    Card(Card),
    Done,
}

impl Step {
    /// The step numbered `index`; `None` past [`ACTION_COUNT`].
    pub fn from_index(index: usize) -> Option<Step> {
        Some(match index {
            PASS => Step::Pass,
            1..=4 => Step::Bid((index - BID_BASE) as u8 + 3),
            5..=8 => Step::Trump(Suit::from_index(index - TRUMP_BASE)),
            9..=61 => Step::Card(Card::from_index(index - CARD_BASE)),
            DONE => Step::Done,
            _ => return None,
        })
    }

    /// This step's index.
    pub fn index(self) -> usize {
        match self {
            Step::Pass => PASS,
            Step::Bid(n) => BID_BASE + usize::from(n.clamp(3, 6)) - 3,
            Step::Trump(s) => TRUMP_BASE + s.index(),
            Step::Card(c) => CARD_BASE + c.index(),
            Step::Done => DONE,
        }
    }
}

/// The index of a single-step action (pass, bid, trump, play); `None` for an
/// exchange or a discard, which take one index per card and then `done`.
pub fn index_of(action: Action) -> Option<usize> {
    Some(match action {
        Action::Pass => PASS,
        Action::Bid(n) if (3..=6).contains(&n) => Step::Bid(n).index(),
        Action::Trump(s) => Step::Trump(s).index(),
        Action::Play(c) => Step::Card(c).index(),
        _ => return None,
    })
}

/// The indices, in order, that take `action` from an empty selection: one index
/// for a single-step action, the cards in card order then `done` for an exchange
/// or a discard. `None` for a bid outside 3–6.
pub fn steps_of(action: Action) -> Option<Vec<usize>> {
    match action {
        Action::Exchange(cards) | Action::Discard(cards) => Some(
            cards
                .iter()
                .map(|c| Step::Card(c).index())
                .chain(std::iter::once(DONE))
                .collect(),
        ),
        _ => index_of(action).map(|i| vec![i]),
    }
}

/// The cards chosen so far in a card-by-card exchange or discard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection(pub CardSet);

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A whole action to apply to the game (the selection is cleared).
    Apply(Action),
    /// A card was added to the selection; the same seat acts again.
    Selected,
}

/// Why a step is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("action index {0} is outside 0..{ACTION_COUNT}")]
    OutOfRange(usize),
    #[error("the game is over")]
    GameOver,
    #[error("action index {index} is not legal now (decision: {decision})")]
    NotLegal {
        index: usize,
        decision: &'static str,
    },
}

impl Selection {
    /// Whether `index` is legal in `game` with this selection.
    pub fn allows(&self, game: &Game, index: usize) -> bool {
        let (Some(step), Some(legal)) = (Step::from_index(index), game.legal()) else {
            return false;
        };
        self.allows_step(&legal, step)
    }

    fn allows_step(&self, legal: &Legal, step: Step) -> bool {
        match (legal, step) {
            (&Legal::Bid { pass, .. }, Step::Pass) => pass,
            (&Legal::Bid { lowest, .. }, Step::Bid(n)) => n >= lowest,
            (Legal::Trump, Step::Trump(_)) => true,
            (&Legal::Play(cards), Step::Card(c)) => cards.contains(c),
            (
                &Legal::Cards {
                    must, from, max, ..
                },
                Step::Card(c),
            ) => {
                let chosen = self.0;
                !chosen.contains(c)
                    && (must.contains(c)
                        || (from.contains(c) && chosen.intersection(from).len() < u32::from(max)))
            }
            (Legal::Cards { .. }, Step::Done) => legal.allows_cards(self.0),
            _ => false,
        }
    }

    /// The legal-action mask for `game` with this selection (all false once the
    /// game is over).
    pub fn mask(&self, game: &Game) -> [bool; ACTION_COUNT] {
        let mut mask = [false; ACTION_COUNT];
        let Some(legal) = game.legal() else {
            return mask;
        };
        match legal {
            Legal::Play(cards) => {
                for c in cards.iter() {
                    mask[CARD_BASE + c.index()] = true;
                }
            }
            Legal::Cards { must, from, .. } => {
                for c in must.union(from).iter() {
                    mask[CARD_BASE + c.index()] = self.allows_step(&legal, Step::Card(c));
                }
                mask[DONE] = self.allows_step(&legal, Step::Done);
            }
            _ => {
                for (i, m) in mask.iter_mut().enumerate().take(CARD_BASE) {
                    *m = self.allows_step(&legal, Step::from_index(i).expect("in range"));
                }
            }
        }
        mask
    }

    /// Takes step `index`: returns the whole action to apply, or adds a card to
    /// the selection. Changes nothing on an error.
    pub fn step(&mut self, game: &Game, index: usize) -> Result<Outcome, StepError> {
        let step = Step::from_index(index).ok_or(StepError::OutOfRange(index))?;
        let legal = game.legal().ok_or(StepError::GameOver)?;
        let decision = game.decision().ok_or(StepError::GameOver)?;
        if !self.allows_step(&legal, step) {
            return Err(StepError::NotLegal {
                index,
                decision: decision.name(),
            });
        }
        Ok(match step {
            Step::Pass => Outcome::Apply(Action::Pass),
            Step::Bid(n) => Outcome::Apply(Action::Bid(n)),
            Step::Trump(s) => Outcome::Apply(Action::Trump(s)),
            Step::Card(c) if decision == Decision::Play => Outcome::Apply(Action::Play(c)),
            Step::Card(c) => {
                self.0.insert(c);
                Outcome::Selected
            }
            Step::Done => {
                let cards = std::mem::take(&mut self.0);
                Outcome::Apply(Action::cards(decision, cards))
            }
        })
    }
}

/// Every legal whole action of the decision due, in a fixed order: pass, then
/// bids upwards; suits S, H, D, C; plays in card order; card sets by size, then
/// in lexicographic card order. Empty once the game is over. A dealer's discard
/// can have many answers (up to C(23, 17) = 100,947 in the rarest deal; a few
/// dozen usually): the card-by-card steps avoid listing them.
pub fn all_legal(game: &Game) -> Vec<Action> {
    let Some(legal) = game.legal() else {
        return Vec::new();
    };
    match legal {
        Legal::Bid { pass, .. } => pass
            .then_some(Action::Pass)
            .into_iter()
            .chain(legal.bids().map(Action::Bid))
            .collect(),
        Legal::Trump => Suit::ALL.into_iter().map(Action::Trump).collect(),
        Legal::Play(cards) => cards.iter().map(Action::Play).collect(),
        Legal::Cards {
            must,
            from,
            min,
            max,
        } => {
            let decision = game.decision().expect("a decision is due");
            let pool: Vec<Card> = from.iter().collect();
            let mut out = Vec::new();
            for k in min..=max {
                each_subset(&pool, usize::from(k), &mut |set| {
                    out.push(Action::cards(decision, must.union(set)));
                });
            }
            out
        }
    }
}

/// Calls `f` with every `k`-card subset of `pool`, in lexicographic order.
fn each_subset(pool: &[Card], k: usize, f: &mut impl FnMut(CardSet)) {
    fn go(pool: &[Card], k: usize, chosen: CardSet, f: &mut impl FnMut(CardSet)) {
        if k == 0 {
            return f(chosen);
        }
        for i in 0..pool.len().saturating_sub(k - 1) {
            go(
                &pool[i + 1..],
                k - 1,
                chosen.union(CardSet::single(pool[i])),
                f,
            );
        }
    }
    go(pool, k, CardSet::EMPTY, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RulesConfig;
    use crate::shuffle::SeededRng;

    #[test]
    fn indices_round_trip() {
        for i in 0..ACTION_COUNT {
            assert_eq!(Step::from_index(i).unwrap().index(), i);
        }
        assert_eq!(Step::from_index(ACTION_COUNT), None);
        assert_eq!(index_of(Action::Bid(3)), Some(1));
        assert_eq!(index_of(Action::Bid(6)), Some(4));
        assert_eq!(index_of(Action::Bid(7)), None);
        assert_eq!(index_of(Action::Trump(Suit::Clubs)), Some(8));
        assert_eq!(index_of(Action::Play(Card::JOKER)), Some(61));
    }

    /// Random walks over the index space: every legal index is accepted, no
    /// mask is empty before the game ends (no dead end), every whole action the
    /// steps produce is one the engine accepts, and every card-by-card answer is
    /// one `Legal::allows_cards` allows.
    #[test]
    fn random_index_walks_never_dead_end() {
        for seed in 0..40 {
            let (mut game, _) = Game::new(seed, RulesConfig::default());
            let mut sel = Selection::default();
            let mut rng = SeededRng::new(seed, 7);
            let mut steps = 0;
            while !game.is_over() && steps < 100_000 {
                let mask = sel.mask(&game);
                let legal: Vec<usize> = (0..ACTION_COUNT).filter(|&i| mask[i]).collect();
                assert!(!legal.is_empty(), "seed {seed}: empty mask");
                for (i, &m) in mask.iter().enumerate() {
                    assert_eq!(sel.allows(&game, i), m);
                }
                let pick = legal[rng.below(legal.len() as u32) as usize];
                let before = game.legal().unwrap();
                match sel.step(&game, pick).unwrap() {
                    Outcome::Apply(action) => {
                        if let Action::Exchange(c) | Action::Discard(c) = action {
                            assert!(before.allows_cards(c));
                        }
                        game.apply(action).unwrap();
                    }
                    Outcome::Selected => {}
                }
                steps += 1;
            }
            assert!(game.is_over(), "seed {seed}");
        }
    }

    #[test]
    fn illegal_steps_change_nothing() {
        let (game, _) = Game::new(3, RulesConfig::default());
        let mut sel = Selection::default();
        let err = sel.step(&game, DONE).unwrap_err();
        assert!(matches!(err, StepError::NotLegal { .. }));
        assert_eq!(sel, Selection::default());
        assert_eq!(
            sel.step(&game, ACTION_COUNT),
            Err(StepError::OutOfRange(ACTION_COUNT))
        );
    }

    /// `all_legal` lists exactly the answers the engine accepts: each is
    /// accepted, none twice, and for card decisions the count is the sum of
    /// binomials the `Legal` describes.
    #[test]
    fn all_legal_lists_every_answer_once() {
        fn choose(n: u64, k: u64) -> u64 {
            (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
        }
        for seed in 0..10 {
            let (mut game, _) = Game::new(seed, RulesConfig::default());
            let mut rng = SeededRng::new(seed, 9);
            while !game.is_over() {
                let all = all_legal(&game);
                let set: std::collections::HashSet<String> =
                    all.iter().map(|a| format!("{a:?}")).collect();
                assert_eq!(set.len(), all.len());
                if let Some(Legal::Cards { from, min, max, .. }) = game.legal() {
                    let n = u64::from(from.len());
                    let want: u64 = (min..=max).map(|k| choose(n, u64::from(k))).sum();
                    assert_eq!(all.len() as u64, want);
                }
                for a in &all {
                    game.clone().apply(*a).unwrap();
                }
                let pick = all[rng.below(all.len() as u32) as usize];
                game.apply(pick).unwrap();
            }
        }
    }
}
