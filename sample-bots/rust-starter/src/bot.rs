//! Your bot: one function from a request to an action. Everything your seat knows
//! is in `request.view` (hand, trump, bids, the trick so far, ...); every legal
//! answer is in `request.legal`. This starter plays the simplest legal game.

use schmier_protocol::rules::{Action, Call};
use schmier_protocol::wire::{LegalWire, Request};
use schmier_protocol::{CardSet, Suit};

pub fn choose(request: &Request) -> Action {
    let hand = request.view.hand;
    match &request.legal {
        // Pass if we may (a stuck dealer may not: then the lowest bid).
        LegalWire::Bids(calls) => match calls.first() {
            Some(Call::Pass) | None => Action::Pass,
            Some(Call::Bid(n)) => Action::Bid(*n),
        },
        // The suit we hold the most cards of (the joker belongs to no suit).
        LegalWire::Suits(suits) => {
            let count = |s: Suit| hand.intersection(CardSet::printed_suit(s)).len();
            let best = suits
                .iter()
                .copied()
                .max_by_key(|&s| (count(s), std::cmp::Reverse(s)));
            Action::Trump(best.unwrap_or(Suit::Spades))
        }
        // Everything we must discard, and as few others as allowed.
        LegalWire::Cards {
            must, from, min, ..
        } => {
            let few: CardSet = from.iter().take(usize::from(*min)).collect();
            Action::cards(request.decision, must.union(few))
        }
        // Any card of `legal`; here the first.
        LegalWire::Play(cards) => Action::Play(cards.first().expect("a legal card")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::{Game, RulesConfig};

    /// `choose` is legal at every decision of whole games, in both rule variants.
    #[test]
    fn every_choice_is_legal() {
        let mut decisions = 0;
        for seed in 0..20 {
            let rules = RulesConfig {
                stick_the_dealer: seed % 2 == 0,
                trump_anytime: seed % 3 == 0,
                ..RulesConfig::default()
            };
            let (mut game, _) = Game::new(seed, rules);
            while !game.is_over() {
                let request = Request::for_decision(&game, decisions, None).unwrap();
                let action = choose(&request);
                game.apply(action)
                    .unwrap_or_else(|e| panic!("{action:?}: {e}"));
                decisions += 1;
            }
        }
        assert!(decisions > 1000, "{decisions} decisions checked");
    }
}
