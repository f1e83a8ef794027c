//! The handshake: the `hello` a bot of a table is sent first, and the `hello`
//! it must answer with by the startup deadline. A session's start and the
//! tournament's start check run it the same way, with the same words for a
//! bot that fails it.

use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::excerpt::bounded_name;
use schmier_protocol::wire::{FromBot, Limits, ToBot, PROTOCOL};

use crate::bot::Incoming;
use crate::config::TableSpec;
use crate::fault::quote;
use crate::player::{Closed, Player};
use crate::REFEREE;

/// The `hello` a bot of this table gets first: the protocol and its limits.
pub(crate) fn hello(cfg: &TableSpec) -> Vec<u8> {
    let hello = ToBot::Hello {
        protocol: PROTOCOL.to_owned(),
        referee: REFEREE.to_owned(),
        limits: Limits {
            startup_ms: cfg.time.startup.map(|d| d.as_millis() as u64),
            decision_ms: cfg.time.decision.map(|d| d.as_millis() as u64),
            time_bank_ms: cfg.time.bank.as_millis() as u64,
            clock: cfg.time.clock,
            max_line_bytes: cfg.time.max_line,
        },
    };
    serde_json::to_vec(&hello).expect("messages serialize")
}

/// Sends `hello` to a player just started; `Err`: why it failed to start.
pub async fn greet(player: &mut Player, hello: &[u8], write: Duration) -> Result<(), String> {
    player.queue_line(hello);
    match player.flush(Some(write)).await {
        Ok(()) => Ok(()),
        Err(_) => Err("could not send hello: the bot is not reading its stdin".to_owned()),
    }
}

/// The player's answer to `hello`, by `deadline` (`startup` is the limit the
/// deadline comes from, for the message): its name, or why it failed to start.
pub async fn answer(
    player: &mut Player,
    deadline: Option<Instant>,
    startup: Option<Duration>,
) -> Result<String, String> {
    match player.next_line(deadline).await {
        None => Err(format!(
            "no hello within {} ms (--startup-ms; {})",
            startup.unwrap_or_default().as_millis(),
            match player.is_remote() {
                // Its connector had connected (`--remote-wait`): the seat was
                // asked for, and no bot of its answered in time.
                true =>
                    "the remote seat's `referee connect` started no bot that answered in \
                         time: is it still running, and does its bot start within the limit \
                         on its owner's machine?",
                false =>
                    "a bot that builds itself first, such as `cargo run`, should be \
                          built beforehand",
            }
        )),
        Some(Incoming::Line { bytes, at }) => match serde_json::from_slice::<FromBot>(&bytes) {
            Ok(FromBot::Hello { name, protocol, .. }) if protocol == PROTOCOL => {
                player.said_hello(at);
                Ok(bounded_name(name))
            }
            Ok(FromBot::Hello { protocol, .. }) => Err(format!(
                "protocol mismatch: the bot speaks {}, the referee {PROTOCOL:?}",
                quote(protocol.as_bytes())
            )),
            _ => Err(format!("expected a hello, got {}", quote(&bytes))),
        },
        Some(Incoming::Oversized { len, .. }) => {
            Err(format!("a hello line of {len} bytes and more"))
        }
        // Only after a stale reply (never before hello): for completeness.
        Some(Incoming::Stale { other, .. }) => {
            Err(format!("expected a hello, got a reply to request {other}"))
        }
        // What the bot did, not how long the referee looked: it exited before
        // the startup deadline or it did not.
        Some(Incoming::Eof { .. }) | Some(Incoming::Error { .. }) => {
            match player.why_closed(deadline).await {
                Closed::Exited(s) => Err(format!("exited before hello: {s}")),
                Closed::StillThere => Err("closed stdout before hello".to_owned()),
                Closed::Dropped(why) => Err(format!("before hello: {why}")),
            }
        }
    }
}
