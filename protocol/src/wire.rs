//! The JSON messages of protocol `schmier/1` (PROTOCOL.md is the reference a bot
//! author reads; this file is the one the referee and the Rust bots compile).
//!
//! One JSON object per line, UTF-8, each with a `"type"`. Referee -> bot messages
//! are [`ToBot`]; bot -> referee messages are [`FromBot`]. None of these types
//! rejects unknown fields: later revisions may add fields without breaking bots.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::excerpt::{cut, quote_json, QUOTE_MAX};
use crate::fault::FaultKind;
use crate::rules::{Action, Call, Decision, Legal, RulesConfig, SeatEvent, SeatView};
use crate::seat::{Seat, Team};

// How a `LegalWire` is read back: by shape, like an untagged enum.
mod legal_shape;

/// The protocol version string both sides exchange in `hello`.
pub const PROTOCOL: &str = "schmier/1";

/// Limits announced in the referee's `hello`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Limits {
    /// Time to answer `hello`, in milliseconds (`null`: no limit).
    pub startup_ms: Option<u64>,
    /// Time per decision before any time bank is drawn on (`null`: no limit).
    pub decision_ms: Option<u64>,
    /// Per-game time bank: a decision may take longer than `decision_ms` by what
    /// is left of it (0: no bank).
    #[serde(default)]
    pub time_bank_ms: u64,
    /// `"wall"` (elapsed time) or `"cpu"` (CPU time of the bot's processes).
    #[serde(default)]
    pub clock: Clock,
    /// Longest line the referee accepts from a bot, newline included.
    pub max_line_bytes: usize,
}

/// Which clock a decision's time is measured on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// Elapsed (monotonic) time from the request's last byte to the reply's newline.
    #[default]
    Wall,
    /// CPU time the bot's processes used in that interval, with a wall-clock
    /// backstop of ten times the limit.
    Cpu,
}

impl Clock {
    pub fn name(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::Cpu => "cpu",
        }
    }
}

/// The complete set of legal answers to a request, in the shape the bot echoes.
// Read by shape (`wire/legal_shape.rs`), like an untagged enum, in variant order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum LegalWire {
    /// `bid`: the calls allowed, e.g. `["pass", 4, 5, 6]`.
    Bids(Vec<Call>),
    /// `trump`: the suits, always `["S", "H", "D", "C"]`.
    Suits(Vec<Suit>),
    /// `exchange` / `discard`: discard every card of `must` plus between `min` and
    /// `max` cards of `from`.
    Cards {
        must: CardSet,
        from: CardSet,
        min: u8,
        max: u8,
    },
    /// `play`: the cards that may be played.
    Play(CardSet),
}

impl From<&Legal> for LegalWire {
    fn from(legal: &Legal) -> LegalWire {
        match *legal {
            Legal::Bid { pass, .. } => {
                let mut calls: Vec<Call> = Vec::new();
                if pass {
                    calls.push(Call::Pass);
                }
                calls.extend(legal.bids().map(Call::Bid));
                LegalWire::Bids(calls)
            }
            Legal::Trump => LegalWire::Suits(Suit::ALL.to_vec()),
            Legal::Cards {
                must,
                from,
                min,
                max,
            } => LegalWire::Cards {
                must,
                from,
                min,
                max,
            },
            Legal::Play(cards) => LegalWire::Play(cards),
        }
    }
}

/// A decision request: everything needed to answer it, with no other state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Request {
    /// Echo this in the reply. Unique within the session, increasing.
    pub id: u64,
    pub decision: Decision,
    pub legal: LegalWire,
    /// Milliseconds allowed for this decision (`null`: no limit).
    pub time_ms: Option<u64>,
    pub view: SeatView,
}

impl Request {
    /// The request for the decision due in `game`, built from the acting seat's
    /// view only; `None` once the game is over.
    pub fn for_decision(
        game: &crate::rules::Game,
        id: u64,
        time_ms: Option<u64>,
    ) -> Option<Request> {
        let seat = game.to_act()?;
        Some(Request {
            id,
            decision: game.decision()?,
            legal: LegalWire::from(&game.legal()?),
            time_ms,
            view: game.view(seat),
        })
    }
}

/// A fault, as announced to every seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultNotice {
    pub seat: Seat,
    /// The request the fault concerns, if any. The faulty seat learns from this
    /// that its pending request is over (a late reply to it is discarded).
    #[serde(default)]
    pub request: Option<u64>,
    /// `timeout`, `crash`, `malformed`, `illegal`, `oversized`, `stale` or `closed`.
    pub fault: FaultKind,
    /// True once the seat's decisions are made by the referee's fallback for the
    /// rest of the game.
    pub replaced: bool,
}

/// Referee -> bot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToBot {
    Hello {
        protocol: String,
        referee: String,
        limits: Limits,
    },
    /// A new game starts; the seat may differ from the previous game's.
    GameStart {
        /// This game's number among the games the bot's process has played,
        /// from 1: always 1 where every game has processes of its own (a
        /// tournament under the competition policy or the sandbox). Never the
        /// duplicate set, which would tie the games of a set together.
        game: u32,
        seat: Seat,
        team: Team,
        partner: Seat,
        /// Player names by seat.
        players: Vec<String>,
        rules: RulesConfig,
    },
    Request(Request),
    Fault(FaultNotice),
    /// The session is over: exit.
    Bye {
        reason: String,
    },
    /// Any game event, as this seat may see it (its `type` is the event's).
    #[serde(untagged)]
    Event(SeatEvent),
}

/// Bot -> referee.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromBot {
    Hello {
        name: String,
        protocol: String,
        /// The bot's own version, free text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        version: Option<String>,
    },
    Reply {
        id: u64,
        action: serde_json::Value,
    },
}

/// Why a reply's `action` does not fit the decision asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ActionShapeError(pub String);

/// Reads a reply's `action` as an answer to a `decision` request. Checks the
/// shape only; the rules engine decides whether it is legal.
pub fn parse_action(
    decision: Decision,
    action: &serde_json::Value,
) -> Result<Action, ActionShapeError> {
    // The bot's input is quoted as it sent it (as JSON), never re-cased, and cut
    // to the quote cap: the action is the bot's to make as long as its line.
    let err = |want: &str| {
        ActionShapeError(format!(
            "a {} reply's action must be {want}, got {}",
            decision.name(),
            quote_json(action)
        ))
    };
    // A parser's message may quote the bot's input too.
    let why = |e: serde_json::Error| cut(&e.to_string(), QUOTE_MAX).into_owned();
    match decision {
        Decision::Bid => match serde_json::from_value::<Call>(action.clone()) {
            Ok(Call::Pass) => Ok(Action::Pass),
            Ok(Call::Bid(n)) => Ok(Action::Bid(n)),
            Err(_) => Err(err(r#""pass" or a number 3-6"#)),
        },
        Decision::Trump => serde_json::from_value::<Suit>(action.clone())
            .map(Action::Trump)
            .map_err(|_| err(r#"a suit letter "S", "H", "D" or "C""#)),
        Decision::Exchange | Decision::Discard => {
            let cards = serde_json::from_value::<CardSet>(action.clone()).map_err(|e| {
                ActionShapeError(format!(
                    "{}: {}",
                    err("an array of distinct cards").0,
                    why(e)
                ))
            })?;
            Ok(Action::cards(decision, cards))
        }
        Decision::Play => serde_json::from_value::<Card>(action.clone())
            .map(Action::Play)
            .map_err(|e| {
                ActionShapeError(format!("{}: {}", err("one card such as \"AS\"").0, why(e)))
            }),
    }
}

/// The JSON form of an action as a bot sends it (for the Rust sample bots).
pub fn action_json(action: Action) -> serde_json::Value {
    match action {
        Action::Pass => serde_json::json!("pass"),
        Action::Bid(n) => serde_json::json!(n),
        Action::Trump(s) => serde_json::json!(s),
        Action::Exchange(c) | Action::Discard(c) => serde_json::json!(c),
        Action::Play(c) => serde_json::json!(c),
    }
}

/// The `"type"` of a message line without parsing the rest of it: read straight
/// from the front when the line starts with `{"type":"` (as every message the
/// referee and the Rust bots write does), else found by scanning the object.
/// `None` if the line is not an object with a string `type`. Lets a reader pick
/// the one struct to deserialise, instead of buffering the whole message as an
/// internally tagged enum must.
pub fn message_type(line: &str) -> Option<Cow<'_, str>> {
    if let Some(rest) = line.strip_prefix("{\"type\":\"") {
        if let Some(end) = rest.find('"') {
            let kind = &rest[..end];
            if !kind.contains('\\') {
                return Some(Cow::Borrowed(kind));
            }
        }
    }
    #[derive(Deserialize)]
    struct Tagged<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
    }
    serde_json::from_str::<Tagged>(line).ok().map(|t| t.kind)
}

/// A `reply` read without buffering: the id, and the action still as JSON text.
#[derive(Deserialize)]
struct RawReply<'a> {
    id: u64,
    #[serde(borrow)]
    action: &'a serde_json::value::RawValue,
}

/// A [`RawReply`] with its type, for a line that does not start with it.
#[derive(Deserialize)]
struct TypedReply<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    id: u64,
    #[serde(borrow)]
    action: &'a serde_json::value::RawValue,
}

/// The quick reading of a bot's `reply` line for a `decision` request: `Some((id,
/// Some(action)))` when it is a well-formed reply whose action has the decision's
/// shape, `Some((id, None))` for a reply whose action does not, `None` when the
/// line is not a readable reply at all. It accepts exactly what `FromBot` and
/// [`parse_action`] accept; whoever gets less than an action falls back to those
/// for the wording of the fault.
pub fn quick_reply(line: &str, decision: Decision) -> Option<(u64, Option<Action>)> {
    // One pass over the line whatever its form: the type read from the front
    // where it stands there, else with the rest.
    let reply: RawReply = if line.starts_with("{\"type\":\"") {
        if message_type(line)? != "reply" {
            return None;
        }
        serde_json::from_str(line).ok()?
    } else {
        let typed: TypedReply = serde_json::from_str(line).ok()?;
        if typed.kind != "reply" {
            return None;
        }
        RawReply {
            id: typed.id,
            action: typed.action,
        }
    };
    let text = reply.action.get();
    let action = match decision {
        Decision::Bid => serde_json::from_str::<Call>(text).ok().map(|c| match c {
            Call::Pass => Action::Pass,
            Call::Bid(n) => Action::Bid(n),
        }),
        Decision::Trump => serde_json::from_str::<Suit>(text).ok().map(Action::Trump),
        Decision::Exchange | Decision::Discard => serde_json::from_str::<CardSet>(text)
            .ok()
            .map(|cards| Action::cards(decision, cards)),
        Decision::Play => serde_json::from_str::<Card>(text).ok().map(Action::Play),
    };
    Some((reply.id, action))
}

/// An action in the JSON form a bot sends it, serialised without building a
/// `serde_json::Value` (the form [`action_json`] returns).
#[derive(Clone, Copy, Debug)]
pub struct ActionWire(pub Action);

impl Serialize for ActionWire {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Action::Pass => s.serialize_str("pass"),
            Action::Bid(n) => s.serialize_u8(n),
            Action::Trump(suit) => suit.serialize(s),
            Action::Exchange(c) | Action::Discard(c) => c.serialize(s),
            Action::Play(c) => c.serialize(s),
        }
    }
}

/// Writes the line `{"type":"reply","id":ID,"action":ACTION}` and its newline to
/// `out`: the bytes `FromBot::Reply` serialises to, without the `Value`.
pub fn write_reply(out: &mut Vec<u8>, id: u64, action: Action) {
    #[derive(Serialize)]
    struct Reply {
        #[serde(rename = "type")]
        kind: &'static str,
        id: u64,
        action: ActionWire,
    }
    let reply = Reply {
        kind: "reply",
        id,
        action: ActionWire(action),
    };
    serde_json::to_writer(&mut *out, &reply).expect("a reply serialises");
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Game;

    #[test]
    fn events_keep_their_own_type_on_the_wire() {
        let (game, events) = Game::new(5, RulesConfig::default());
        let seat = game.to_act().unwrap();
        let msg = ToBot::Event(events[0].seen_by(seat));
        let text = serde_json::to_string(&msg).unwrap();
        assert!(text.starts_with(r#"{"type":"deal","deal":1,"#), "{text}");
        assert_eq!(serde_json::from_str::<ToBot>(&text).unwrap(), msg);
        let req = ToBot::Request(Request {
            id: 1,
            decision: Decision::Bid,
            legal: LegalWire::from(&game.legal().unwrap()),
            time_ms: Some(1000),
            view: game.view(seat),
        });
        let text = serde_json::to_string(&req).unwrap();
        assert!(text.contains(r#""legal":["pass",3,4,5,6]"#), "{text}");
        assert_eq!(serde_json::from_str::<ToBot>(&text).unwrap(), req);
    }

    #[test]
    fn actions_are_checked_for_shape() {
        use serde_json::json;
        assert_eq!(
            parse_action(Decision::Bid, &json!("pass")),
            Ok(Action::Pass)
        );
        assert_eq!(parse_action(Decision::Bid, &json!(4)), Ok(Action::Bid(4)));
        assert!(parse_action(Decision::Bid, &json!("four")).is_err());
        // The hint keeps its case and the bot's input is quoted as sent.
        let e = parse_action(Decision::Trump, &json!("Hearts")).unwrap_err();
        assert_eq!(
            e.0,
            r#"a trump reply's action must be a suit letter "S", "H", "D" or "C", got "Hearts""#
        );
        let e = parse_action(Decision::Bid, &json!("3")).unwrap_err();
        assert!(
            e.0.contains(r#"got "3""#) && e.0.contains("a bid reply"),
            "{e}"
        );
        assert_eq!(
            parse_action(Decision::Trump, &json!("H")),
            Ok(Action::Trump(Suit::Hearts))
        );
        assert!(parse_action(Decision::Play, &json!(["AS"])).is_err());
        let e = parse_action(Decision::Exchange, &json!(["AS", "AS"])).unwrap_err();
        assert!(e.0.contains("listed twice"), "{e}");
        for a in [
            Action::Pass,
            Action::Bid(5),
            Action::Trump(Suit::Clubs),
            Action::Play(Card::JOKER),
        ] {
            let d = match a {
                Action::Pass | Action::Bid(_) => Decision::Bid,
                Action::Trump(_) => Decision::Trump,
                _ => Decision::Play,
            };
            assert_eq!(parse_action(d, &action_json(a)), Ok(a));
        }
    }

    #[test]
    fn the_type_is_read_from_the_front_or_found_anywhere() {
        assert_eq!(
            message_type(r#"{"type":"request","id":1}"#).as_deref(),
            Some("request")
        );
        assert_eq!(
            message_type(r#"{"id":1, "type" : "reply"}"#).as_deref(),
            Some("reply")
        );
        // An escaped type is unescaped by the full reading, not cut at the backslash.
        assert_eq!(
            message_type(r#"{"type":"re\u0070ly"}"#).as_deref(),
            Some("reply")
        );
        assert_eq!(message_type(r#"{"id":1}"#), None);
        assert_eq!(message_type(r#"{"type":3}"#), None);
        assert_eq!(message_type("not json"), None);
    }

    /// The quick reading against the full one (`FromBot` then `parse_action`),
    /// which the referee used alone before: wherever the quick one gives an
    /// answer, it is the full one's.
    #[test]
    fn the_quick_reply_agrees_with_the_full_reading() {
        let lines = [
            r#"{"type":"reply","id":7,"action":"pass"}"#,
            r#"{"type":"reply","id":7,"action":4}"#,
            r#"{"type":"reply","id":7,"action":"4"}"#,
            r#"{"type":"reply","id":7,"action":"H"}"#,
            r#"{"type":"reply","id":7,"action":"Hearts"}"#,
            r#"{"type":"reply","id":7,"action":["AS","2C"]}"#,
            r#"{"type":"reply","id":7,"action":["AS","AS"]}"#,
            r#"{"type":"reply","id":7,"action":[]}"#,
            r#"{"type":"reply","id":7,"action":"JK"}"#,
            r#"{"type":"reply","id":7,"action":"1S"}"#,
            r#"{"action":"QH","id":9,"type":"reply","extra":{"a":[1]}}"#,
            r#"{"type":"reply","id":-1,"action":"QH"}"#,
            r#"{"type":"reply","id":7}"#,
            r#"{"type":"reply","action":"QH"}"#,
            r#"{"type":"reply","id":7,"action":"QH"} trailing"#,
            r#"{"type":"hello","name":"x","protocol":"schmier/1"}"#,
            r#"{"type":"nonsense","id":7,"action":"QH"}"#,
            r#"{"type":"reply","id":7,"action":"QH","id":8}"#,
        ];
        let decisions = [
            Decision::Bid,
            Decision::Trump,
            Decision::Exchange,
            Decision::Discard,
            Decision::Play,
        ];
        let mut answered = 0;
        for line in lines {
            for d in decisions {
                let full = match serde_json::from_str::<FromBot>(line) {
                    Ok(FromBot::Reply { id, action }) => Some((id, parse_action(d, &action).ok())),
                    _ => None,
                };
                match quick_reply(line, d) {
                    Some((id, Some(action))) => {
                        assert_eq!(full, Some((id, Some(action))), "{line} as {d:?}");
                        answered += 1;
                    }
                    Some((id, None)) => {
                        assert_eq!(
                            full.map(|(i, a)| (i, a.is_none())),
                            Some((id, true)),
                            "{line}"
                        )
                    }
                    None => assert!(
                        !matches!(full, Some((_, Some(_)))),
                        "{line} as {d:?}: the full reading gives {full:?}"
                    ),
                }
            }
        }
        assert!(answered >= 8, "only {answered} quick answers checked");
    }

    #[test]
    fn a_written_reply_is_the_bytes_of_from_bot_reply() {
        let actions = [
            Action::Pass,
            Action::Bid(6),
            Action::Trump(Suit::Diamonds),
            Action::Exchange(CardSet::EMPTY),
            Action::Discard([Card::JOKER].into_iter().collect()),
            Action::Play(Card::JOKER),
        ];
        for a in actions {
            let mut out = Vec::new();
            write_reply(&mut out, 42, a);
            let mut want = serde_json::to_vec(&FromBot::Reply {
                id: 42,
                action: action_json(a),
            })
            .unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    /// `Call`'s visitor against the untagged reading it replaced.
    #[test]
    fn a_call_reads_as_the_untagged_reading_did() {
        fn untagged(text: &str) -> Option<Call> {
            #[derive(Deserialize)]
            #[serde(untagged)]
            enum Raw {
                N(u64),
                S(String),
            }
            match serde_json::from_str::<Raw>(text).ok()? {
                Raw::N(n) if n <= 255 => Some(Call::Bid(n as u8)),
                Raw::S(s) if s == "pass" => Some(Call::Pass),
                _ => None,
            }
        }
        for t in [
            r#""pass""#,
            "3",
            "6",
            "0",
            "255",
            "256",
            "-3",
            "3.0",
            r#""Pass""#,
            r#""3""#,
            "null",
            "true",
            "[3]",
            r#"{"bid":3}"#,
            r#""pa\u0073s""#,
        ] {
            let ours = serde_json::from_str::<Call>(t);
            assert_eq!(ours.as_ref().ok().copied(), untagged(t), "{t}");
            if let Err(e) = ours {
                assert!(
                    e.to_string()
                        .starts_with(r#"a bid is "pass" or a number from 3 to 6"#),
                    "{t}: {e}"
                );
            }
        }
    }
}
