//! Two built-in ways of choosing an action: the referee's documented fallback for
//! a faulted seat, and a seeded uniform-random legal choice (tests, benchmarks).

use crate::card::Suit;
use crate::cardset::CardSet;
use crate::shuffle::Draw;

use super::action::{Action, Legal};
use super::game::Game;

/// The deterministic fallback the referee plays for a seat that faulted:
/// - bid: pass, or the lowest legal bid when the dealer is stuck;
/// - trump: the suit of which the seat holds the most cards (ties: S, H, D, C);
/// - exchange: discard nothing;
/// - dealer's discard: the required cards plus the first legal ones in card order;
/// - play: the first legal card in card order (2S..AS, 2H.., 2D.., 2C.., JK).
///
/// Panics if the game is over.
pub fn first_legal(game: &Game) -> Action {
    match game.legal().expect("the game is not over") {
        Legal::Bid { pass: true, .. } => Action::Pass,
        Legal::Bid { lowest, .. } => Action::Bid(lowest),
        Legal::Trump => {
            let hand = game.hand(game.to_act().expect("a seat to act"));
            let best = Suit::ALL
                .into_iter()
                .max_by_key(|&s| {
                    (
                        hand.intersection(CardSet::printed_suit(s)).len(),
                        std::cmp::Reverse(s),
                    )
                })
                .expect("four suits");
            Action::Trump(best)
        }
        Legal::Cards {
            must, from, min, ..
        } => {
            let chosen: CardSet = from.iter().take(usize::from(min)).collect();
            let cards = must.union(chosen);
            Action::cards(game.decision().expect("a decision is due"), cards)
        }
        Legal::Play(cards) => Action::Play(cards.first().expect("a legal card")),
    }
}

/// A uniformly random legal action (uniform over each decision's choices as the
/// engine lists them; card subsets are drawn by size first, then cards), drawn
/// from `rng`: a [`crate::shuffle::SeededRng`] (ChaCha8), a
/// any other [`Draw`] (the benchmark uses `fastrand`). The same draws give the
/// same action whatever their source. Panics if the game is over.
#[inline]
pub fn random_legal<R: Draw + ?Sized>(game: &Game, rng: &mut R) -> Action {
    if game.decision() == Some(super::Decision::Play) {
        // The common case, without building a `Legal`: same draw as below.
        let cards = game.legal_plays();
        return Action::Play(cards.pick(|n| rng.below(n)).expect("a legal card"));
    }
    random_other(game, rng)
}

/// [`random_legal`] for every decision but a play, out of line.
#[inline(never)]
fn random_other<R: Draw + ?Sized>(game: &Game, rng: &mut R) -> Action {
    match game.legal().expect("the game is not over") {
        Legal::Bid { pass, lowest } => {
            let bids = 7u8.saturating_sub(lowest);
            let choices = u32::from(bids) + u32::from(pass);
            let k = rng.below(choices) as u8;
            if pass && k == bids {
                Action::Pass
            } else {
                Action::Bid(lowest + k)
            }
        }
        Legal::Trump => Action::Trump(Suit::from_index(rng.below(4) as usize)),
        Legal::Cards {
            must,
            from,
            min,
            max,
        } => {
            let n = u32::from(min) + rng.below(u32::from(max - min) + 1);
            let cards = must.union(from.pick_many(n, |len| rng.below(len)));
            Action::cards(game.decision().expect("a decision is due"), cards)
        }
        Legal::Play(cards) => Action::Play(cards.pick(|n| rng.below(n)).expect("a legal card")),
    }
}
