//! The JSON messages of protocol `schmier/1` (PROTOCOL.md is the reference a bot
//! author reads; this file is the one the referee and the Rust bots compile).
//!
//! One JSON object per line, UTF-8, each with a `"type"`. Referee -> bot messages
//! are [`ToBot`]; bot -> referee messages are [`FromBot`]. None of these types
//! rejects unknown fields: later revisions may add fields without breaking bots.

use serde::{Deserialize, Serialize};

use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::fault::FaultKind;
use crate::rules::{Action, Call, Decision, Legal, RulesConfig, SeatEvent, SeatView};
use crate::seat::{Seat, Team};

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    // The bot's input is quoted exactly as it sent it (as JSON), never re-cased.
    let err = |want: &str| {
        ActionShapeError(format!(
            "a {} reply's action must be {want}, got {action}",
            decision.name()
        ))
    };
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
                ActionShapeError(format!("{}: {e}", err("an array of distinct cards").0))
            })?;
            Ok(Action::cards(decision, cards))
        }
        Decision::Play => serde_json::from_value::<Card>(action.clone())
            .map(Action::Play)
            .map_err(|e| ActionShapeError(format!("{}: {e}", err("one card such as \"AS\"").0))),
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
}
