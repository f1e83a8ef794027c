//! A lineup slot: who plays it (its bot spec and name) and the [`Player`] in
//! it now, owned by the session and lent to the table for one game at a time.

use crate::config::BotSpec;
use crate::player::Player;

/// One lineup position.
pub struct Slot {
    pub spec: BotSpec,
    pub name: String,
    pub player: Player,
    /// How many times its player was started.
    pub starts: u32,
}

impl Slot {
    pub fn new(spec: BotSpec, name: String) -> Slot {
        Slot {
            spec,
            name,
            player: Player::default(),
            starts: 0,
        }
    }
}
