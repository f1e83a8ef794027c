//! What a seat can do, and the exact set of legal choices at each decision.

use serde::{Deserialize, Serialize};

use crate::card::{Card, Suit};
use crate::cardset::CardSet;

/// One decision by the seat to act.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Pass,
    /// A bid of 3 to 6.
    Bid(u8),
    /// The bidder names trump.
    Trump(Suit),
    /// A non-dealer discards these cards (0-3, no trump) and draws as many.
    Exchange(CardSet),
    /// The dealer, holding 6 + the stock, discards these down to six.
    Discard(CardSet),
    Play(Card),
}

/// The kind of decision a seat is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Bid,
    Trump,
    Exchange,
    Discard,
    Play,
}

impl Decision {
    /// The name used on the wire (`"bid"`, `"trump"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Decision::Bid => "bid",
            Decision::Trump => "trump",
            Decision::Exchange => "exchange",
            Decision::Discard => "discard",
            Decision::Play => "play",
        }
    }
}

/// Every legal choice for the decision at hand, in a form that is exact and small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Legal {
    /// Whether passing is allowed, and the bids allowed (`lowest..=6`; empty if
    /// `lowest > 6`).
    Bid {
        pass: bool,
        lowest: u8,
    },
    Trump,
    /// Discard all of `must` and between `min` and `max` further cards of `from`
    /// (`must` and `from` are disjoint).
    Cards {
        must: CardSet,
        from: CardSet,
        min: u8,
        max: u8,
    },
    Play(CardSet),
}

impl Action {
    /// The card-set action answering `decision`: the dealer's discard for a
    /// `Discard` decision, a non-dealer's exchange otherwise.
    pub fn cards(decision: Decision, cards: CardSet) -> Action {
        if decision == Decision::Discard {
            Action::Discard(cards)
        } else {
            Action::Exchange(cards)
        }
    }
}

impl Legal {
    /// Bids allowed, in increasing order.
    pub fn bids(&self) -> impl Iterator<Item = u8> {
        let lowest = match self {
            Legal::Bid { lowest, .. } => *lowest,
            _ => 7,
        };
        lowest..=6
    }

    /// Whether `cards` is an allowed choice for a [`Legal::Cards`] decision.
    pub fn allows_cards(&self, cards: CardSet) -> bool {
        match *self {
            Legal::Cards {
                must,
                from,
                min,
                max,
            } => {
                let extra = cards.difference(must);
                must.is_subset(cards)
                    && extra.is_subset(from)
                    && (u32::from(min)..=u32::from(max)).contains(&extra.len())
            }
            _ => false,
        }
    }
}
