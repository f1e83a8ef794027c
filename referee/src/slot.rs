//! A lineup slot: who plays it and its process, owned by the session and lent to
//! the table for one game at a time.

use std::collections::BTreeMap;

use schmier_protocol::rules::Decision;
use schmier_sample_bots::Strategy;

use crate::bot::BotProcess;
use crate::config::BotSpec;
use crate::fault::Fault;

/// One lineup position and its process.
pub struct Slot {
    pub spec: BotSpec,
    pub name: String,
    pub process: Option<BotProcess>,
    /// An `inproc:` bot: the strategy the referee runs itself instead of a process.
    pub inline: Option<Box<dyn Strategy + Send>>,
    /// Set once the bot can no longer play (failed startup, crash, closed pipe):
    /// the fallback plays for it from then on (until restarted, if the policy
    /// restarts bots).
    pub gone: Option<Fault>,
    /// How many times its process was started.
    pub starts: u32,
    /// Requests that timed out before the bot answered them. A late answer to one
    /// of these is discarded (noted in the timings sidecar), never a second fault,
    /// whenever it arrives — in this game or a later one.
    pub timed_out: BTreeMap<u64, Decision>,
}

impl Slot {
    pub fn new(spec: BotSpec, name: String) -> Slot {
        Slot {
            spec,
            name,
            process: None,
            inline: None,
            gone: None,
            starts: 0,
            timed_out: BTreeMap::new(),
        }
    }
}
