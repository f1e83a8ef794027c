//! `my-bot`: the bot under test in this example — a deliberately simple one
//! that always gives the first legal answer. Its behaviour is pinned by
//! `tests/snapshots.rs`; change a decision here and that test shows where the
//! games change.

use schmier_protocol::rules::{Action, Call, Decision};
use schmier_protocol::wire::{LegalWire, Request};
use schmier_sample_bots::Strategy;

struct FirstLegal;

impl Strategy for FirstLegal {
    fn name(&self) -> &str {
        "first-legal"
    }

    fn decide(&mut self, request: &Request) -> Action {
        match &request.legal {
            LegalWire::Bids(calls) => match calls[0] {
                Call::Pass => Action::Pass,
                Call::Bid(n) => Action::Bid(n),
            },
            LegalWire::Suits(suits) => Action::Trump(suits[0]),
            LegalWire::Cards {
                must, from, min, ..
            } => {
                let keep = from.iter().take(usize::from(*min));
                let cards = must.iter().chain(keep).collect();
                Action::cards(request.decision, cards)
            }
            LegalWire::Play(cards) => {
                debug_assert_eq!(request.decision, Decision::Play);
                Action::Play(cards.iter().next().expect("a card to play"))
            }
        }
    }
}

fn main() {
    if let Err(e) = schmier_sample_bots::run(&mut FirstLegal) {
        eprintln!("my-bot: failed to talk to the referee: {e}");
        std::process::exit(1);
    }
}
