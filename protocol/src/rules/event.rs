//! What happened: the engine's output, one event per fact. The transcript is these
//! events, unredacted; what each seat is told is derived from them in `view.rs`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::seat::{Seat, Team};

use super::scoring::Points;

/// A seat's call in the auction: a pass or a bid of 3 to 6. On the wire: `"pass"`
/// or the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Pass,
    Bid(u8),
}

impl Serialize for Call {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Call::Pass => s.serialize_str("pass"),
            Call::Bid(n) => s.serialize_u8(*n),
        }
    }
}

impl<'de> Deserialize<'de> for Call {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d) {
            Ok(Raw::N(n)) if n <= 255 => Ok(Call::Bid(n as u8)),
            Ok(Raw::S(s)) if s == "pass" => Ok(Call::Pass),
            _ => Err(serde::de::Error::custom(
                r#"a bid is "pass" or a number from 3 to 6"#,
            )),
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Pass => f.write_str("pass"),
            Call::Bid(n) => write!(f, "{n}"),
        }
    }
}

/// A card and the seat that played it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Played {
    pub seat: Seat,
    pub card: Card,
}

/// Why the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A team reached the target (RULES.md §26).
    Target,
    /// The hand cap was reached without a winner (RULES.md §27).
    HandCap,
}

/// The scoring of one played hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HandScore {
    pub deal: u32,
    pub bidder: Seat,
    pub bid: u8,
    pub trump: Suit,
    pub points: Points,
    /// Game count (card values in tricks won) per team.
    pub game_counts: [u32; 3],
    /// Points won per team.
    pub won: [i32; 3],
    /// Did the bidder's team win at least its bid?
    pub made: bool,
    /// Change of each team's score.
    pub delta: [i32; 3],
    /// Scores after the hand.
    pub scores: [i32; 3],
}

/// One fact of the game, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A deal: every hand and the stock (top first). `deal` counts from 1 and
    /// includes thrown-in deals.
    Deal {
        deal: u32,
        dealer: Seat,
        hands: [CardSet; 6],
        stock: [Card; 17],
    },
    Bid {
        seat: Seat,
        bid: Call,
    },
    /// Everybody passed; the same dealer deals again. `streak` counts consecutive
    /// thrown-in deals.
    ThrownIn {
        deal: u32,
        dealer: Seat,
        streak: u32,
    },
    Trump {
        seat: Seat,
        bid: u8,
        suit: Suit,
    },
    /// A non-dealer's exchange.
    Exchange {
        seat: Seat,
        discarded: CardSet,
        drawn: CardSet,
    },
    /// The dealer picked up the rest of the stock and discarded down to six.
    DealerDiscard {
        seat: Seat,
        picked_up: CardSet,
        discarded: CardSet,
    },
    Play {
        seat: Seat,
        card: Card,
    },
    /// A completed trick: `number` 1-6, cards in play order from `leader`.
    Trick {
        number: u8,
        leader: Seat,
        cards: [Played; 6],
        winner: Seat,
    },
    HandEnd(HandScore),
    GameEnd {
        winner: Option<Team>,
        scores: [i32; 3],
        deals: u32,
        reason: EndReason,
    },
}

impl Event {
    /// The engine events that are a seat's own decision (as opposed to
    /// consequences the engine derives), with the seat that made it.
    pub fn decision(&self) -> Option<(Seat, super::Action)> {
        use super::Action;
        Some(match *self {
            Event::Bid {
                seat,
                bid: Call::Pass,
            } => (seat, Action::Pass),
            Event::Bid {
                seat,
                bid: Call::Bid(n),
            } => (seat, Action::Bid(n)),
            Event::Trump { seat, suit, .. } => (seat, Action::Trump(suit)),
            Event::Exchange {
                seat, discarded, ..
            } => (seat, Action::Exchange(discarded)),
            Event::DealerDiscard {
                seat, discarded, ..
            } => (seat, Action::Discard(discarded)),
            Event::Play { seat, card } => (seat, Action::Play(card)),
            _ => return None,
        })
    }
}
