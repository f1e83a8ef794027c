//! The protocol loop: read a line, answer requests, ignore everything else.

use std::io::{self, BufRead, Write};

use schmier_protocol::wire::{self, FromBot, ToBot, PROTOCOL};

use crate::Strategy;

/// Plays protocol `schmier/1` on stdin/stdout until `bye` or end of input.
pub fn run(strategy: &mut dyn Strategy) -> io::Result<()> {
    let stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let mut send = |msg: &FromBot| -> io::Result<()> {
        let mut line = serde_json::to_vec(msg).expect("messages serialize");
        line.push(b'\n');
        stdout.write_all(&line)?;
        stdout.flush()
    };
    for line in stdin.lines() {
        let line = line?;
        let msg: ToBot = match serde_json::from_str(&line) {
            Ok(msg) => msg,
            // Forward compatibility: a message this bot does not know is skipped.
            Err(e) => {
                eprintln!(
                    "{}: skipping a message I cannot read ({e}): {line}",
                    strategy.name()
                );
                continue;
            }
        };
        match msg {
            ToBot::Hello { .. } => send(&FromBot::Hello {
                name: strategy.name().to_owned(),
                protocol: PROTOCOL.to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            })?,
            ToBot::Request(req) => {
                let action = strategy.decide(&req);
                send(&FromBot::Reply {
                    id: req.id,
                    action: wire::action_json(action),
                })?;
            }
            ToBot::Bye { .. } => break,
            _ => {}
        }
    }
    Ok(())
}
