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

/// How long a bot whose stdin would not take `hello` is given to be seen
/// exited: one that has closed its stdin is usually ending (an import that
/// failed), and its exit status says more than the write that failed.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Sends `hello` to a player just started; `Err`: why it failed to start.
pub async fn greet(player: &mut Player, hello: &[u8], write: Duration) -> Result<(), String> {
    player.queue_line(hello);
    if player.flush(Some(write)).await.is_ok() {
        return Ok(());
    }
    match player.why_closed(Some(Instant::now() + EXIT_WAIT)).await {
        Closed::Exited(s) => Err(format!("exited before hello: {s}")),
        Closed::StillThere | Closed::Dropped(_) => {
            Err("could not send hello: the bot is not reading its stdin".to_owned())
        }
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

/// Lines of a failed bot's stderr shown with its reason: a traceback's end.
const STDERR_LINES: usize = 5;

/// The most of each such line shown (the log holds all of it).
const STDERR_LINE_BYTES: usize = 300;

/// The last lines of a failed bot's stderr log that hold anything (none if
/// it wrote nothing), each cut at [`STDERR_LINE_BYTES`], to go with the
/// reason it failed to start. Read once the bot is ended, so that all it
/// wrote is there.
pub fn stderr_tail(log: &std::path::Path) -> Vec<String> {
    let bytes = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(STDERR_LINES)..];
    tail.iter().map(|l| cut(l, STDERR_LINE_BYTES)).collect()
}

/// `line` up to `max` bytes (at a character's boundary), `…` where cut.
fn cut(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_owned();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bot gone before its `hello` is written (it died on an import, and
    /// its stdin is closed): the write fails, and the reason given is its
    /// exit, not a bot that does not read (issue 45).
    #[tokio::test]
    async fn a_bot_that_exited_before_hello_was_written_is_reported_as_exited() {
        let sh = std::fs::canonicalize("/bin/sh").expect("sh is installed");
        let spawn = crate::bot::Spawn {
            launch: crate::bot::Launch {
                dir: sh.parent().unwrap().to_path_buf(),
                program: sh,
                args: vec!["-c".into(), "exit 3".into()],
                scratch: None,
                slot: None,
                invoked: None,
            },
            env: crate::config::Isolation::env(&[]),
            sandbox: None,
            max_line: 1024,
            limits: crate::bot::ResourceLimits::default(),
            stderr_log: None,
            stderr_cap: 0,
            hold: false,
            before_any_game: false,
        };
        let mut player = Player::spawn_async(&spawn).await.unwrap();
        // Gone for sure before anything is written.
        assert!(matches!(player.why_closed(None).await, Closed::Exited(_)));
        let why = greet(&mut player, b"{}", Duration::from_secs(5)).await;
        assert_eq!(why, Err("exited before hello: exit status: 3".to_owned()));
    }

    /// The last lines that hold anything, each bounded (a bot's line can be
    /// as long as its log), cut at a character's boundary.
    #[test]
    fn the_stderr_tail_is_the_last_lines_each_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("player0.log");
        let long = "é".repeat(1000);
        let text = format!("1\n2\n3\n\n4\n{long}\n5\n  \n6\n");
        std::fs::write(&log, text).unwrap();
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), STDERR_LINES);
        assert_eq!(tail[0], "3");
        assert_eq!(tail[4], "6");
        assert!(tail[2].ends_with('…') && tail[2].len() <= STDERR_LINE_BYTES + 3);
        assert!(stderr_tail(&dir.path().join("none.log")).is_empty());
    }
}
