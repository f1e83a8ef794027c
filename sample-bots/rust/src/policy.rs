//! The built-in bots as [`Policy`]s over a [`Game`], for playouts
//! (`schmier_protocol::playout`): search bots play sampled worlds on with them.
//!
//! [`HeuristicPolicy`] asks [`Heuristic`] exactly what the referee would (the
//! acting seat's request, built by `Request::for_decision`), so a playout's
//! heuristic seats play as `builtin:heuristic` does in a real game.

use schmier_protocol::playout::{playout, Horizon, Outcome, Policy, RandomPolicy};
use schmier_protocol::rules::{Action, Game};
use schmier_protocol::wire::Request;

use crate::heuristic::Heuristic;
use crate::Strategy;

/// The heuristic bot as a policy. It uses no randomness: the same state gives
/// the same action.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeuristicPolicy;

impl Policy for HeuristicPolicy {
    fn act(&mut self, game: &Game) -> Action {
        let request = Request::for_decision(game, 0, None).expect("the game is not over");
        Heuristic.decide(&request)
    }
}

/// Names accepted by [`policy_by_name`] and [`playout_named`].
pub const POLICY_NAMES: [&str; 2] = ["random", "heuristic"];

/// A built-in policy by name: `"random"` ([`RandomPolicy`] seeded `seed`) or
/// `"heuristic"` ([`HeuristicPolicy`], which ignores the seed).
pub fn policy_by_name(name: &str, seed: u64) -> Option<Box<dyn Policy + Send>> {
    match name {
        "random" => Some(Box::new(RandomPolicy::new(seed))),
        "heuristic" => Some(Box::new(HeuristicPolicy)),
        _ => None,
    }
}

/// Plays `game` on to `horizon` with every seat played by the built-in
/// policy `name` (see [`policy_by_name`]); `None` for an unknown name. Pure
/// and deterministic: the same state, name and seed give the same outcome.
pub fn playout_named(game: &mut Game, name: &str, seed: u64, horizon: Horizon) -> Option<Outcome> {
    match name {
        // Static dispatch for the two built-ins (no box, inlined `act`).
        "random" => Some(playout(game, &mut RandomPolicy::new(seed), horizon)),
        "heuristic" => Some(playout(game, &mut HeuristicPolicy, horizon)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::RulesConfig;

    #[test]
    fn heuristic_playouts_are_legal_and_deterministic() {
        for seed in 0..5 {
            let (game, _) = Game::new(seed, RulesConfig::default());
            let mut a = game.clone();
            let mut b = game.clone();
            let oa = playout_named(&mut a, "heuristic", 1, Horizon::Game).unwrap();
            let ob = playout_named(&mut b, "heuristic", 2, Horizon::Game).unwrap();
            assert_eq!(oa, ob, "the heuristic ignores the seed");
            assert!(oa.over);
            assert_eq!(oa.fallbacks, 0, "the heuristic chooses legally");
        }
        assert!(playout_named(
            &mut Game::new(0, RulesConfig::default()).0,
            "nope",
            0,
            Horizon::Deal
        )
        .is_none());
    }

    /// The heuristic beats random play (its reason to exist), here through
    /// the policy entry point: team 0 heuristic, teams 1 and 2 random.
    #[test]
    fn the_heuristic_policy_beats_random_play() {
        struct Mixed(HeuristicPolicy, RandomPolicy);
        impl Policy for Mixed {
            fn act(&mut self, game: &Game) -> Action {
                if game.to_act().unwrap().team().index() == 0 {
                    self.0.act(game)
                } else {
                    self.1.act(game)
                }
            }
        }
        let mut wins = 0;
        for seed in 0..30 {
            let (mut game, _) = Game::new(seed, RulesConfig::default());
            let o = playout(
                &mut game,
                &mut Mixed(HeuristicPolicy, RandomPolicy::new(seed)),
                Horizon::Game,
            );
            wins += u32::from(o.winner.map(|t| t.index()) == Some(0));
        }
        // Random play would win about a third (10 of 30).
        assert!(wins >= 20, "the heuristic team won {wins} of 30");
    }
}
