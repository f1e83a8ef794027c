//! A lineup slot: who plays it and its process, owned by the session and lent to
//! the table for one game at a time.

use crate::bot::BotProcess;
use crate::config::BotSpec;
use crate::fault::Fault;

/// One lineup position and its process.
pub struct Slot {
    pub spec: BotSpec,
    pub name: String,
    pub process: Option<BotProcess>,
    /// Set once the bot can no longer play (failed startup, crash, closed pipe):
    /// the fallback plays for it from then on (until restarted, if the policy
    /// restarts bots).
    pub gone: Option<Fault>,
    /// How many times its process was started.
    pub starts: u32,
}
