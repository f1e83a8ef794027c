//! A bot that picks uniformly among the legal actions. Its "randomness" is seeded
//! from the request itself (id, seat and hand), so the same game replays the same.

use schmier_protocol::cardset::CardSet;
use schmier_protocol::rules::{Action, Call, Decision};
use schmier_protocol::wire::{LegalWire, Request};

use crate::Strategy;

#[derive(Default)]
pub struct RandomBot;

/// SplitMix64 step: a tiny, well-mixed generator, enough for choosing moves.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Strategy for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn decide(&mut self, req: &Request) -> Action {
        let mut state = mix(req.id ^ (req.view.hand.bits() << 3) ^ req.view.seat.index() as u64);
        let mut below = |n: usize| -> usize {
            state = mix(state);
            (state % n as u64) as usize
        };
        match &req.legal {
            LegalWire::Bids(calls) => match calls[below(calls.len())] {
                Call::Pass => Action::Pass,
                Call::Bid(n) => Action::Bid(n),
            },
            LegalWire::Suits(suits) => Action::Trump(suits[below(suits.len())]),
            LegalWire::Cards {
                must,
                from,
                min,
                max,
            } => {
                let n = usize::from(*min) + below(usize::from(max - min) + 1);
                let mut pool = *from;
                let mut cards = *must;
                for _ in 0..n {
                    let c = pool
                        .nth(below(pool.len() as usize) as u32)
                        .expect("enough cards");
                    pool.remove(c);
                    cards.insert(c);
                }
                cards_action(req.decision, cards)
            }
            LegalWire::Play(cards) => Action::Play(
                cards
                    .nth(below(cards.len() as usize) as u32)
                    .expect("a card"),
            ),
        }
    }
}

/// The action for an exchange or a dealer's discard of `cards`.
pub(crate) fn cards_action(decision: Decision, cards: CardSet) -> Action {
    if decision == Decision::Discard {
        Action::Discard(cards)
    } else {
        Action::Exchange(cards)
    }
}
