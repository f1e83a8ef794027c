//! Reading one line from the bot that was asked: the answer, a reply to some other
//! request, or a fault. The rules engine is the judge of legality.

use schmier_protocol::rules::{Action, Decision, Game};
use schmier_protocol::wire::{parse_action, FromBot};

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
    let msg = match serde_json::from_str::<FromBot>(text) {
        Ok(msg) => msg,
        Err(e) => {
            return Reply::Fault(Fault::new(
                FaultKind::Malformed,
                format!("not a protocol message ({e}): {}", quote(bytes)),
            ))
        }
    };
    match msg {
        FromBot::Reply { id: other, .. } if other != id => Reply::Other(other),
        FromBot::Reply { action, .. } => match parse_action(decision, &action) {
            Err(e) => Reply::Fault(Fault::new(FaultKind::Malformed, e.0)),
            Ok(action) => {
                // The engine is the judge: try the action on a copy.
                let mut trial = game.clone();
                match trial.apply_into(action, &mut Vec::new()) {
                    Ok(()) => Reply::Action(action),
                    Err(e) => Reply::Fault(Fault::new(
                        FaultKind::Illegal,
                        format!("{e} (sent {})", quote(bytes)),
                    )),
                }
            }
        },
        FromBot::Hello { .. } => Reply::Fault(Fault::new(
            FaultKind::Malformed,
            "a hello in the middle of a game",
        )),
    }
}
