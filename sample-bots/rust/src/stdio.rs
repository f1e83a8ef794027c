//! The protocol loop: read a line, answer requests, ignore everything else.
//!
//! A line is recognised by its `"type"` alone ([`wire::message_type`]); only a
//! request is deserialised, straight into [`Request`] — never buffered as a whole
//! `ToBot` first, as an internally tagged enum would be — and events, which these
//! stateless bots do not need, are skipped unread. One buffer in, one buffer out,
//! one write per reply.

use std::io::{self, BufRead, Write};

use schmier_protocol::wire::{self, FromBot, Request, PROTOCOL};

use crate::Strategy;

/// What the loop does after a line.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// `out` holds the answer to send (possibly nothing); go on reading.
    Continue,
    /// `bye`: stop.
    Stop,
}

/// Handles one line from the referee, appending the answer (if any) to `out`.
pub fn respond(strategy: &mut dyn Strategy, line: &[u8], out: &mut Vec<u8>) -> Step {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t.trim_end_matches(['\n', '\r']),
        Err(_) => {
            eprintln!("{}: skipping a line that is not UTF-8", strategy.name());
            return Step::Continue;
        }
    };
    match wire::message_type(text).as_deref() {
        Some("request") => match serde_json::from_str::<Request>(text) {
            Ok(req) => wire::write_reply(out, req.id, strategy.decide(&req)),
            Err(e) => eprintln!(
                "{}: skipping a request I cannot read ({e}): {text}",
                strategy.name()
            ),
        },
        Some("hello") => {
            let hello = FromBot::Hello {
                name: strategy.name().to_owned(),
                protocol: PROTOCOL.to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            };
            serde_json::to_writer(&mut *out, &hello).expect("messages serialize");
            out.push(b'\n');
        }
        Some("bye") => return Step::Stop,
        // Events, game_start, faults, and (forward compatibility) any type this
        // bot does not know.
        Some(_) => {}
        None => eprintln!(
            "{}: skipping a line that is not a protocol message: {text}",
            strategy.name()
        ),
    }
    Step::Continue
}

/// Plays protocol `schmier/1` on stdin/stdout until `bye` or end of input.
pub fn run(strategy: &mut dyn Strategy) -> io::Result<()> {
    let mut stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let mut line = Vec::with_capacity(4096);
    let mut out = Vec::with_capacity(256);
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        out.clear();
        let step = respond(strategy, &line, &mut out);
        if !out.is_empty() {
            stdout.write_all(&out)?;
            stdout.flush()?;
        }
        if step == Step::Stop {
            return Ok(());
        }
    }
}
