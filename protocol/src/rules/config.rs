//! The rules configuration: the variants RULES.md marks, recorded in every
//! transcript header. `Default` is the rules page's behaviour.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, default)]
pub struct RulesConfig {
    /// RULES.md §8 variant: the dealer may not pass when the five others passed,
    /// from the first deal on (not only after `redeal_limit` thrown-in deals).
    pub stick_the_dealer: bool,
    /// RULES.md §20 variant: a trump may be played even when the seat could follow
    /// a non-trump led suit.
    pub trump_anytime: bool,
    /// Consecutive thrown-in deals after which the dealer is stuck (RULES.md §8: 10).
    pub redeal_limit: u32,
    /// Score that ends the game (RULES.md §26: 21).
    pub target: i32,
    /// Deals (thrown-in ones included) after which the game ends without a winner
    /// (RULES.md §27: 200).
    pub hand_cap: u32,
}

impl Default for RulesConfig {
    fn default() -> Self {
        RulesConfig {
            stick_the_dealer: false,
            trump_anytime: false,
            redeal_limit: 10,
            target: 21,
            hand_cap: 200,
        }
    }
}
