//! A bot that picks uniformly among the legal actions. Its "randomness" is seeded
//! from the request itself (id, seat and hand), so the same game replays the same.

use schmier_protocol::rules::{Action, Call};
use schmier_protocol::shuffle::splitmix64;
use schmier_protocol::wire::{LegalWire, Request};

use crate::Strategy;

#[derive(Default)]
pub struct RandomBot;

impl Strategy for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn decide(&mut self, req: &Request) -> Action {
        let mut state =
            splitmix64(req.id ^ (req.view.hand.bits() << 3) ^ req.view.seat.index() as u64);
        let mut below = |n: usize| -> usize {
            state = splitmix64(state);
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
                Action::cards(req.decision, cards)
            }
            LegalWire::Play(cards) => Action::Play(
                cards
                    .nth(below(cards.len() as usize) as u32)
                    .expect("a card"),
            ),
        }
    }
}
