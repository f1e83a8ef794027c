//! Reading one line from the bot that was asked: the answer, a reply to some other
//! request, or a fault. The rules engine is the judge of legality.

use schmier_protocol::rules::{Action, Decision, Game};
use schmier_protocol::wire::{parse_action, quick_reply, FromBot};

use schmier_protocol::excerpt::{cut, QUOTE_MAX};

use crate::fault::{quote, Fault, FaultKind};

pub enum Reply {
    /// A legal action answering the pending request.
    Action(Action),
    /// A reply naming request `0` instead of the pending one.
    Other(u64),
    Fault(Fault),
}

/// Interprets one line from the bot asked for request `id`.
pub fn read_reply(bytes: &[u8], id: u64, decision: Decision, game: &Game) -> Reply {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Reply::Fault(Fault::new(
            FaultKind::Malformed,
            format!("not UTF-8: {}", quote(bytes)),
        ));
    };
    // The common case read in one pass; anything less than a well-formed reply
    // is read again below, where its fault is worded.
    match quick_reply(text, decision) {
        Some((other, _)) if other != id => return Reply::Other(other),
        Some((_, Some(action))) => return judge(action, game, bytes),
        _ => {}
    }
    let msg = match serde_json::from_str::<FromBot>(text) {
        Ok(msg) => msg,
        Err(e) => {
            return Reply::Fault(Fault::new(
                FaultKind::Malformed,
                format!(
                    "not a protocol message ({}): {}",
                    cut(&e.to_string(), QUOTE_MAX),
                    quote(bytes)
                ),
            ))
        }
    };
    match msg {
        FromBot::Reply { id: other, .. } if other != id => Reply::Other(other),
        FromBot::Reply { action, .. } => match parse_action(decision, &action) {
            Err(e) => Reply::Fault(Fault::new(FaultKind::Malformed, e.0)),
            Ok(action) => judge(action, game, bytes),
        },
        FromBot::Hello { .. } => Reply::Fault(Fault::new(
            FaultKind::Malformed,
            "a hello in the middle of a game",
        )),
    }
}

/// The engine is the judge: the action is tried on a copy of the game.
fn judge(action: Action, game: &Game, bytes: &[u8]) -> Reply {
    let mut trial = game.clone();
    match trial.apply(action) {
        Ok(_) => Reply::Action(action),
        Err(e) => Reply::Fault(Fault::new(
            FaultKind::Illegal,
            format!("{e} (sent {})", quote(bytes)),
        )),
    }
}
