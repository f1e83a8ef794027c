//! Why an action was refused. The message says exactly what rule it broke.

use crate::card::Card;
use crate::cardset::CardSet;
use crate::seat::Seat;

use super::action::Decision;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the game is over")]
    GameOver,
    #[error("a {expected:?} decision is due, not a {got:?}")]
    WrongDecision { expected: Decision, got: Decision },
    #[error("bid {bid} is out of range: bids are 3 to 6")]
    BidOutOfRange { bid: u8 },
    #[error("bid {bid} does not beat the highest bid so far ({highest})")]
    BidTooLow { bid: u8, highest: u8 },
    #[error("the dealer may not pass here: the others all passed and the dealer is stuck")]
    DealerMustBid,
    #[error("card {card} is not in {seat}'s hand")]
    NotInHand { seat: Seat, card: Card },
    #[error("cards {cards:?} are not all in {seat}'s hand")]
    CardsNotInHand { seat: Seat, cards: CardSet },
    #[error("a non-dealer exchanges 0 to 3 cards, not {count}")]
    TooManyExchanged { count: u32 },
    #[error("trump {card} may not be discarded by a non-dealer")]
    TrumpDiscarded { card: Card },
    #[error("the dealer must discard exactly {need} cards, not {count}")]
    WrongDiscardCount { need: u32, count: u32 },
    #[error("the dealer may never discard {card} (the trump A, both bowers, the trump 2 and the joker are protected)")]
    ProtectedDiscarded { card: Card },
    #[error("the dealer must keep {keep} trumps but would keep {kept}")]
    TrumpsNotKept { keep: u32, kept: u32 },
    #[error("{card} does not follow suit: {seat} holds {led:?} to follow with")]
    MustFollow {
        seat: Seat,
        card: Card,
        led: CardSet,
    },
}
