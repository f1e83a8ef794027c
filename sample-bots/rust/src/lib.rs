//! Sample Schmier bots in Rust, and the stdin/stdout loop they share.
//!
//! - `stdio.rs`: speaks protocol `schmier/1` on stdin/stdout for any [`Strategy`].
//! - `random.rs`: picks uniformly among the legal actions (deterministically).
//! - `heuristic.rs`: bids on trump strength, keeps trumps, plays to win points.
//! - `policy.rs`: both bots as playout policies over a `Game` (search bots).
//!
//! A strategy sees only the request (its legal actions and the seat's view), so it
//! keeps no state between decisions.

mod heuristic;
mod policy;
mod random;
mod stdio;

pub use heuristic::Heuristic;
pub use policy::{playout_named, policy_by_name, HeuristicPolicy, POLICY_NAMES};
pub use random::RandomBot;
pub use stdio::{respond, run, Step};

use schmier_protocol::rules::Action;
use schmier_protocol::wire::Request;

/// A bot's decision-making: one legal action per request.
pub trait Strategy {
    /// The name sent in `hello`.
    fn name(&self) -> &str;
    /// Chooses an action for `request`; it must be one of `request.legal`.
    fn decide(&mut self, request: &Request) -> Action;
}

/// The strategies built in, by the name used on the command line.
pub fn by_name(name: &str) -> Option<Box<dyn Strategy + Send>> {
    match name {
        "random" => Some(Box::new(RandomBot)),
        "heuristic" => Some(Box::new(Heuristic)),
        _ => None,
    }
}

/// Names accepted by [`by_name`].
pub const NAMES: [&str; 2] = ["random", "heuristic"];
