//! Playouts: a game (or a sampled world, see [`crate::worlds`]) played on from
//! its current state by a policy, to the end of the deal or of the game, for
//! Monte Carlo search and for evaluating policies.
//!
//! Pure and deterministic: the same state, policy and seed give the same
//! outcome. A policy's illegal choice is replaced by the referee's fallback
//! ([`first_legal`]), as a faulted seat's would be, and counted.
//!
//! Built in here: [`RandomPolicy`] (seeded uniform legal choices). The
//! heuristic bot lives in the sample bots crate
//! (`schmier_sample_bots::HeuristicPolicy`, and `schmier_sample_bots::playout_named`
//! for both by name), which depends on this crate.

use crate::rules::{first_legal, random_legal, Action, Event, Game, HandScore};
use crate::seat::Team;
use crate::shuffle::SeededRng;

/// Chooses the action for whichever seat is to act.
pub trait Policy {
    /// An action for the seat to act in `game` (not over). It should be legal;
    /// [`playout`] plays [`first_legal`] instead of an illegal one.
    fn act(&mut self, game: &Game) -> Action;
}

impl<F: FnMut(&Game) -> Action> Policy for F {
    fn act(&mut self, game: &Game) -> Action {
        self(game)
    }
}

/// Uniformly random legal actions ([`random_legal`]) from the ChaCha8 stream
/// `SeededRng::new(seed, RandomPolicy::STREAM)`.
pub struct RandomPolicy(SeededRng);

impl RandomPolicy {
    /// The stream the policy draws from (one that no deal uses).
    pub const STREAM: u64 = u64::MAX - 1;

    pub fn new(seed: u64) -> RandomPolicy {
        RandomPolicy(SeededRng::new(seed, RandomPolicy::STREAM))
    }
}

impl Policy for RandomPolicy {
    #[inline]
    fn act(&mut self, game: &Game) -> Action {
        random_legal(game, &mut self.0)
    }
}

/// How far a playout goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// To the end of the current deal: scored, or thrown in (or the game's end).
    Deal,
    /// To the end of the game.
    Game,
}

/// What a playout came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Scores by team when the playout stopped.
    pub scores: [i32; 3],
    /// Scores gained (or lost) by team during the playout.
    pub delta: [i32; 3],
    /// Whether the game is over.
    pub over: bool,
    /// The winning team, once the game is over (`None` for a capped game too).
    pub winner: Option<Team>,
    /// The last hand scored during the playout (with `Horizon::Deal`: the
    /// current deal's, unless it was thrown in).
    pub hand: Option<HandScore>,
    /// Decisions made.
    pub decisions: u32,
    /// Illegal choices of the policy replaced by [`first_legal`].
    pub fallbacks: u32,
}

/// Plays `game` on with `policy` to `horizon`; `game` is left where the
/// playout stopped. A game already over returns at once.
pub fn playout<P: Policy + ?Sized>(game: &mut Game, policy: &mut P, horizon: Horizon) -> Outcome {
    let start = game.scores();
    let deal = game.deals();
    let mut out = Vec::with_capacity(16);
    let mut outcome = Outcome {
        scores: start,
        delta: [0; 3],
        over: game.is_over(),
        winner: game.winner(),
        hand: None,
        decisions: 0,
        fallbacks: 0,
    };
    while !game.is_over() && (horizon == Horizon::Game || game.deals() == deal) {
        out.clear();
        let action = policy.act(game);
        if game.apply_into(action, &mut out).is_err() {
            outcome.fallbacks += 1;
            game.apply_into(first_legal(game), &mut out)
                .expect("the fallback is legal");
        }
        outcome.decisions += 1;
        for e in &out {
            if let Event::HandEnd(score) = e {
                outcome.hand = Some(*score);
            }
        }
    }
    outcome.scores = game.scores();
    outcome.delta = std::array::from_fn(|t| outcome.scores[t] - start[t]);
    outcome.over = game.is_over();
    outcome.winner = game.winner();
    outcome
}

/// [`playout`] with a [`RandomPolicy`] seeded `seed`.
pub fn playout_random(game: &mut Game, seed: u64, horizon: Horizon) -> Outcome {
    playout(game, &mut RandomPolicy::new(seed), horizon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RulesConfig;

    #[test]
    fn a_random_playout_finishes_and_is_deterministic() {
        for seed in 0..20 {
            let (game, _) = Game::new(seed, RulesConfig::default());
            let mut a = game.clone();
            let mut b = game.clone();
            let oa = playout_random(&mut a, seed, Horizon::Game);
            let ob = playout_random(&mut b, seed, Horizon::Game);
            assert_eq!(oa, ob);
            assert!(oa.over && a.is_over());
            assert_eq!(oa.scores, a.scores());
            assert_eq!(oa.winner, a.winner());
            // RULES.md §26: a winner has reached the target.
            if let Some(w) = oa.winner {
                assert!(oa.scores[w.index()] >= 21);
            }
            assert_eq!(oa.fallbacks, 0);
        }
    }

    #[test]
    fn a_deal_playout_stops_at_the_deal_end() {
        let (mut game, _) = Game::new(
            3,
            RulesConfig {
                stick_the_dealer: true,
                ..Default::default()
            },
        );
        let o = playout_random(&mut game, 1, Horizon::Deal);
        let hand = o.hand.expect("a stuck dealer's deal is always played");
        assert_eq!(o.delta, hand.delta);
        assert_eq!(o.scores, hand.scores);
        assert!(o.over || game.deals() == 2);
        // 6 calls at most, trump, 5 exchanges, the discard, 36 plays.
        assert!(
            (36 + 1 + 5 + 1 + 1..=36 + 6 + 7).contains(&o.decisions),
            "{}",
            o.decisions
        );
    }

    #[test]
    fn illegal_choices_fall_back_to_the_referees_choice() {
        let (mut game, _) = Game::new(4, RulesConfig::default());
        let mut bid_seven = |_: &Game| Action::Bid(7);
        let o = playout(&mut game, &mut bid_seven, Horizon::Deal);
        assert_eq!(o.fallbacks, o.decisions);
        let (mut same, _) = Game::new(4, RulesConfig::default());
        let mut fallback = |g: &Game| first_legal(g);
        assert_eq!(
            playout(&mut same, &mut fallback, Horizon::Deal).scores,
            o.scores
        );
    }
}
