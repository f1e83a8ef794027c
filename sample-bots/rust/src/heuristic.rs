//! Placeholder: the heuristic bot is being written; until then it plays randomly.

use schmier_protocol::rules::Action;
use schmier_protocol::wire::Request;

use crate::random::RandomBot;
use crate::Strategy;

#[derive(Default)]
pub struct Heuristic(RandomBot);

impl Strategy for Heuristic {
    fn name(&self) -> &str {
        "heuristic"
    }
    fn decide(&mut self, req: &Request) -> Action {
        self.0.decide(req)
    }
}
