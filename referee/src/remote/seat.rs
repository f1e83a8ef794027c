//! A remote seat for a session: the hub opens it (its connector is told to
//! start a bot for it) and the table gets a player over its pipes, like any
//! bot's — `hello` is queued at once and answered when the bot is up, by
//! the startup deadline, or the seat fails to start (`start`).

use std::sync::Arc;

use crate::bot::Channel;
use crate::player::{Player, RemoteNotes};

use super::Hub;

/// A player for one seat of remote bot `name`, reading lines of at most
/// `max_line` bytes.
pub fn open(hub: &Arc<Hub>, name: &str, max_line: usize) -> Player {
    let pipes = hub.open_seat(name, max_line);
    let channel = Channel::new(pipes.reader, pipes.writer, max_line);
    Player::over_network(
        channel,
        RemoteNotes {
            latency: pipes.latency,
            down: pipes.down,
            why: pipes.why,
        },
    )
}
