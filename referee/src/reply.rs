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
    /// One more stale reply after the first, not read (see [`read_reply`]).
    Unread,
    Fault(Fault),
}

/// Interprets one line from the bot asked for request `id`; `after_stale`: the
/// request has had a reply to another request already.
///
/// A bot that spams long lines naming other requests must not cost the referee
/// a parse of each (a 60 KB stale line is read at the bot's cost of a copy):
/// a line that opens as a reply naming another request (`{"type":"reply",
/// "id":N`, JSON spaces allowed) is that request's, unread past its id; and once
/// the request has had a stale reply, such a line is not even checked for UTF-8
/// (its opening is all that is read of it), and a line that does not name the
/// request's id as `"id":ID` anywhere is taken for one more stale reply, unread.
pub fn read_reply(
    bytes: &[u8],
    id: u64,
    decision: Decision,
    game: &Game,
    after_stale: bool,
) -> Reply {
    if after_stale {
        if let Some(other) = opening_id(bytes).filter(|&other| other != id) {
            return Reply::Other(other);
        }
        if !names_id(bytes, id) {
            return Reply::Unread;
        }
    }
    // Checked first (a pass far cheaper than a parse): invalid UTF-8 is
    // `malformed` whatever the line opens with.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Reply::Fault(Fault::new(
            FaultKind::Malformed,
            format!("not UTF-8: {}", quote(bytes)),
        ));
    };
    if let Some(other) = opening_id(bytes).filter(|&other| other != id) {
        return Reply::Other(other);
    }
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

/// The id of a line that opens `{"type":"reply","id":N` followed by `,` or
/// `}` (JSON whitespace allowed between the tokens), read without the rest
/// (the line reader also knows a stale line by it: `bot/lines.rs`).
pub(crate) fn opening_id(bytes: &[u8]) -> Option<u64> {
    let mut rest = bytes;
    for token in [
        &b"{"[..],
        b"\"type\"",
        b":",
        b"\"reply\"",
        b",",
        b"\"id\"",
        b":",
    ] {
        rest = skip_space(rest).strip_prefix(token)?;
    }
    let (n, rest) = digits(skip_space(rest))?;
    matches!(skip_space(rest).first(), Some(b',' | b'}')).then_some(n)
}

/// Whether `"id":ID` (spaces allowed around the colon, no digit after) is in
/// the line: a reply to request `ID` must hold it.
fn names_id(bytes: &[u8], id: u64) -> bool {
    memchr::memmem::find_iter(bytes, b"\"id\"").any(|at| {
        let rest = skip_space(&bytes[at + 4..]);
        rest.strip_prefix(b":")
            .and_then(|r| digits(skip_space(r)))
            .is_some_and(|(n, _)| n == id)
    })
}

fn skip_space(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        .count();
    &b[n..]
}

/// A JSON unsigned integer at the front (no leading zero but `0` itself, no
/// fraction or exponent after), and what follows it.
fn digits(b: &[u8]) -> Option<(u64, &[u8])> {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let (num, rest) = b.split_at(n);
    if n == 0 || (n > 1 && num[0] == b'0') || matches!(rest.first(), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let value = std::str::from_utf8(num).ok()?.parse().ok()?;
    Some((value, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schmier_protocol::rules::RulesConfig;

    fn read(line: &str, id: u64, after_stale: bool) -> String {
        let (game, _) = Game::new(5, RulesConfig::default());
        let decision = game.to_act().map(|_| Decision::Bid).unwrap();
        match read_reply(line.as_bytes(), id, decision, &game, after_stale) {
            Reply::Action(a) => format!("action {a:?}"),
            Reply::Other(n) => format!("other {n}"),
            Reply::Unread => "unread".into(),
            Reply::Fault(f) => format!("{:?}", f.kind),
        }
    }

    #[test]
    fn a_reply_to_another_request_is_known_by_its_opening() {
        let pad = "p".repeat(60_000);
        // Read no further than the id: what follows does not matter.
        assert_eq!(
            read(r#"{"type":"reply","id":12,"action":"pass"}"#, 5, false),
            "other 12"
        );
        assert_eq!(
            read(
                &format!(r#"{{ "type" : "reply", "id": 12, "pad":"{pad}"#),
                5,
                false
            ),
            "other 12"
        );
        // The pending id, or an opening that is not exactly a reply's: read whole.
        assert_eq!(
            read(r#"{"type":"reply","id":5,"action":"pass"}"#, 5, false),
            "action Pass"
        );
        assert_eq!(
            read(r#"{"type":"reply","id":5,"action":"pass""#, 5, false),
            "Malformed"
        );
        assert_eq!(
            read(r#"{"id":12,"type":"reply","action":"pass"}"#, 5, false),
            "other 12"
        );
        assert_eq!(
            read(r#"{"type":"reply","id":012,"action":"pass"}"#, 5, false),
            "Malformed"
        );
        assert_eq!(
            read(r#"{"type":"reply","id":12.0,"action":"pass"}"#, 5, false),
            "Malformed"
        );
    }

    #[test]
    fn after_a_stale_reply_only_a_line_naming_the_pending_id_is_read() {
        assert_eq!(
            read(r#"{"action":"pass","id":5,"type":"reply"}"#, 5, true),
            "action Pass"
        );
        assert_eq!(
            read(r#"{"action":"pass","id" : 5,"type":"reply"}"#, 5, true),
            "action Pass"
        );
        assert_eq!(
            read(r#"{"action":"pass","id":15,"type":"reply"}"#, 5, true),
            "unread"
        );
        assert_eq!(read("garbage", 5, true), "unread");
        // Before any stale reply, garbage is a fault as ever.
        assert_eq!(read("garbage", 5, false), "Malformed");
        // Naming the id in passing gets a line read, and judged as it is.
        assert_eq!(
            read(
                r#"{"action":"pass","x":{"id":5},"id":15,"type":"reply"}"#,
                5,
                true
            ),
            "other 15"
        );
    }

    /// After a stale reply, a line that opens as another request's reply is
    /// known by its opening alone: named (so a late reply among the spam is
    /// still told apart), neither searched for the pending id nor checked for
    /// UTF-8, however long; before it, invalid UTF-8 is `malformed` as ever.
    #[test]
    fn after_a_stale_reply_a_line_opening_with_another_id_is_read_no_further() {
        let (game, _) = Game::new(5, RulesConfig::default());
        let decision = Decision::Bid;
        let mut line = br#"{"type":"reply","id":12,"pad":""#.to_vec();
        line.extend(std::iter::repeat_n(0xff, 60_000));
        line.extend(br#"","id":5}"#);
        let read = |after_stale| match read_reply(&line, 5, decision, &game, after_stale) {
            Reply::Other(n) => format!("other {n}"),
            Reply::Fault(f) => format!("{:?}", f.kind),
            _ => "something else".into(),
        };
        assert_eq!(read(true), "other 12");
        assert_eq!(read(false), "Malformed");
        assert_eq!(
            self::read(r#"{"type":"reply","id":15,"action":"pass"}"#, 5, true),
            "other 15"
        );
    }
}
