//! The situations `check-bot` puts a bot in, found by playing seeded random games
//! until one arises. The search is deterministic (seeds 0, 1, 2, ...), so every
//! run checks the same situations.

use schmier_protocol::rules::{random_legal, Action, Decision, Game, Legal, RulesConfig};
use schmier_protocol::shuffle::SeededRng;
use schmier_protocol::{Card, CardSet, Seat};

/// A situation to check: the game up to the moment, and whose decision it is.
pub struct Scenario {
    pub name: &'static str,
    pub seed: u64,
    pub rules: RulesConfig,
    /// The actions that lead from the deal to the situation.
    pub path: Vec<Action>,
    pub seat: Seat,
}

/// What makes a game state one of the situations; `Some(seat)` when it is.
type Predicate = fn(&Game) -> bool;

/// Every situation, in the order the checklist prints them.
pub fn all() -> Vec<Scenario> {
    let plain = RulesConfig::default();
    let anytime = RulesConfig {
        trump_anytime: true,
        ..plain
    };
    let stuck = RulesConfig {
        stick_the_dealer: true,
        ..plain
    };
    let cases: [(&'static str, RulesConfig, Predicate); 10] = [
        ("bid, first to speak", plain, |g| {
            g.decision() == Some(Decision::Bid) && g.view(g.to_act().unwrap()).bids.is_empty()
        }),
        ("bid as the stuck dealer (no pass allowed)", stuck, |g| {
            matches!(g.legal(), Some(Legal::Bid { pass: false, .. }))
        }),
        ("trump", plain, |g| g.decision() == Some(Decision::Trump)),
        ("exchange", plain, |g| {
            matches!(g.legal(), Some(Legal::Cards { max: 3, .. }))
                && g.decision() == Some(Decision::Exchange)
        }),
        (
            "exchange with fewer than three non-trumps (max < 3)",
            plain,
            |g| {
                matches!(g.legal(), Some(Legal::Cards { max: 1 | 2, .. }))
                    && g.decision() == Some(Decision::Exchange)
            },
        ),
        (
            "dealer's discard with more than six trumps (protected trumps)",
            plain,
            |g| {
                let seat = g.to_act().unwrap();
                matches!(g.legal(), Some(Legal::Cards { must, .. }) if !must.is_empty())
                    && g.decision() == Some(Decision::Discard)
                    && g.trump().is_some_and(|t| {
                        !g.hand(seat).intersection(CardSet::protected(t)).is_empty()
                    })
            },
        ),
        ("play: void in the led suit", plain, |g| {
            led(g).is_some_and(|(led, trump)| {
                let hand = g.hand(g.to_act().unwrap());
                hand.intersection(CardSet::effective_suit(led, trump))
                    .is_empty()
                    && hand.len() >= 2
            })
        }),
        ("play: the joker led", plain, |g| {
            first_card(g) == Some(Card::JOKER) && can_follow_trump(g)
        }),
        ("play: the left bower led", plain, |g| {
            g.trump()
                .is_some_and(|t| first_card(g) == Some(Card::left_bower(t)))
                && can_follow_trump(g)
        }),
        (
            "play: trump anytime (trump allowed while following suit)",
            anytime,
            |g| {
                led(g).is_some_and(|(led, trump)| {
                    let hand = g.hand(g.to_act().unwrap());
                    led != trump
                        && !hand
                            .intersection(CardSet::effective_suit(led, trump))
                            .is_empty()
                        && !hand.intersection(CardSet::trumps(trump)).is_empty()
                })
            },
        ),
    ];
    cases
        .into_iter()
        .map(|(name, rules, pred)| find(name, rules, pred))
        .collect()
}

/// The led suit (effective) and trump, when a trick is under way and the seat
/// to act is not its leader.
fn led(g: &Game) -> Option<(schmier_protocol::Suit, schmier_protocol::Suit)> {
    let trump = g.trump()?;
    let first = first_card(g)?;
    Some((first.effective_suit(trump), trump))
}

fn first_card(g: &Game) -> Option<Card> {
    if g.decision() != Some(Decision::Play) {
        return None;
    }
    let view = g.view(g.to_act()?);
    view.trick?.cards.first().map(|p| p.card)
}

/// The seat to act holds a trump and another card (so following is a choice).
fn can_follow_trump(g: &Game) -> bool {
    let seat = g.to_act().unwrap();
    let hand = g.hand(seat);
    g.trump()
        .is_some_and(|t| !hand.intersection(CardSet::trumps(t)).is_empty() && hand.len() >= 2)
}

/// Plays seeded random games until `pred` holds; panics if none of many seeds
/// gets there (a bug in the predicate, caught by the unit test below).
fn find(name: &'static str, rules: RulesConfig, pred: Predicate) -> Scenario {
    for seed in 0..10_000u64 {
        let (mut game, _) = Game::new(seed, rules);
        let mut rng = SeededRng::new(seed, 7);
        let mut path = Vec::new();
        while let Some(seat) = game.to_act() {
            if pred(&game) {
                return Scenario {
                    name,
                    seed,
                    rules,
                    path,
                    seat,
                };
            }
            let action = random_legal(&game, &mut rng);
            game.apply(action).expect("random_legal is legal");
            path.push(action);
        }
    }
    panic!("no seed up to 10000 reaches the situation {name:?}")
}

impl Scenario {
    /// The game at the situation, and every event so far.
    pub fn replay(&self) -> (Game, Vec<schmier_protocol::rules::Event>) {
        let (mut game, mut events) = Game::new(self.seed, self.rules);
        for &a in &self.path {
            events.extend(game.apply(a).expect("the path is legal"));
        }
        (game, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_situation_is_reached_and_is_what_it_says() {
        let all = all();
        assert_eq!(all.len(), 10);
        for s in &all {
            let (game, _) = s.replay();
            assert_eq!(game.to_act(), Some(s.seat), "{}", s.name);
        }
        // Spot checks against the rules, independently of the predicates.
        let (g, _) = all[1].replay();
        assert_eq!(g.dealer(), all[1].seat, "the stuck dealer bids");
        let (g, _) = all[5].replay();
        let trump = g.trump().unwrap();
        let hand = g.hand(all[5].seat);
        assert!(hand.intersection(CardSet::trumps(trump)).len() > 6);
        let (g, _) = all[9].replay();
        let Some(Legal::Play(legal)) = g.legal() else {
            panic!("a play")
        };
        let trumps = legal.intersection(CardSet::trumps(g.trump().unwrap()));
        assert!(
            !trumps.is_empty() && trumps != legal,
            "trumps and suit cards both legal"
        );
    }
}
