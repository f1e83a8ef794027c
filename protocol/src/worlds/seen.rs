//! What a seat's view says about the cards it has not seen: which cards they
//! are, the places they can be now, how many cards each place holds, and the
//! suits each seat showed it lacks. Everything else the sampler needs follows.

use crate::card::Suit;
use crate::cardset::CardSet;
use crate::rules::{OwnExchange, SeatView, HAND_SIZE, STOCK_SIZE};
use crate::seat::Seat;

use super::WorldError;

/// How far the current deal has got, as the view's shape tells it (the same
/// test `Game::view` makes, in reverse).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    Bidding,
    Trump,
    Exchange,
    DealerDiscard,
    Play,
}

/// A place an unseen card can be now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Another seat's hand.
    Hand(Seat),
    /// What another non-dealer discarded in the exchange.
    Discard(Seat),
    /// What the dealer (another seat) discarded after the pickup.
    DealerDiscard,
    /// The stock not yet drawn, in order from the top.
    Stock,
}

/// The view, reduced to what constrains the unseen cards.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub me: Seat,
    pub dealer: Seat,
    pub stage: Stage,
    pub trump: Option<Suit>,
    /// Cards this seat has not seen (not in its hand, not its own exchange or
    /// pickup, not played face up).
    pub unknown: CardSet,
    /// Cards each seat has played in this deal.
    pub played: [CardSet; 6],
    /// Cards each seat cannot hold now: the suits it failed to follow.
    pub barred: [CardSet; 6],
    /// Non-dealers that have exchanged, in order, with their counts.
    pub exchanges: Vec<(Seat, u32)>,
    /// The dealer's pickup size, once known.
    pub pickup: u32,
    /// Every place holding unseen cards, with how many; stock first.
    pub places: Vec<(Place, u32)>,
}

impl Seen {
    pub fn read(view: &SeatView, trump_anytime: bool) -> Result<Seen, WorldError> {
        let stage = stage_of(view)?;
        let me = view.seat;
        let (played, known_played) = plays(view)?;
        let own = view.own_exchange.unwrap_or(OwnExchange {
            discarded: CardSet::EMPTY,
            drawn: CardSet::EMPTY,
        });
        let mut known = view.hand;
        for (what, cards) in [("played", known_played), ("own discard", own.discarded)] {
            if !known.intersection(cards).is_empty() {
                return Err(WorldError::inconsistent(format!(
                    "{:?} is both held or played and in the {what}",
                    known.intersection(cards)
                )));
            }
            known = known.union(cards);
        }
        // Own drawn cards are in hand or played by now (checked on replay).
        known = known.union(own.drawn);
        let exchanges: Vec<(Seat, u32)> =
            view.exchanges.iter().map(|e| (e.seat, e.count)).collect();
        let mut seen = Seen {
            me,
            dealer: view.dealer,
            stage,
            trump: view.trump,
            unknown: CardSet::FULL.difference(known),
            played,
            barred: [CardSet::EMPTY; 6],
            exchanges,
            pickup: view.dealer_pickup.unwrap_or(0),
            places: Vec::new(),
        };
        if let Some(trump) = view.trump {
            seen.barred = voids(view, trump, trump_anytime);
        }
        seen.places = seen.places_and_sizes()?;
        Ok(seen)
    }

    /// How many cards each place holds, checked against the unseen count.
    fn places_and_sizes(&self) -> Result<Vec<(Place, u32)>, WorldError> {
        let mut places = Vec::new();
        let drawn: u32 = self.exchanges.iter().map(|&(_, k)| k).sum();
        if drawn > STOCK_SIZE as u32 || self.exchanges.iter().any(|&(_, k)| k > 3) {
            return Err(WorldError::inconsistent("exchange counts out of range"));
        }
        if self.stage <= Stage::Exchange {
            places.push((Place::Stock, STOCK_SIZE as u32 - drawn));
        }
        for s in Seat::all().filter(|&s| s != self.me) {
            let played = self.played[s.index()].len();
            let held = match self.stage {
                Stage::Play => (HAND_SIZE as u32).checked_sub(played),
                Stage::DealerDiscard if s == self.dealer => Some(HAND_SIZE as u32 + self.pickup),
                _ => Some(HAND_SIZE as u32),
            };
            let held = held.ok_or_else(|| WorldError::inconsistent("a seat played 7 cards"))?;
            places.push((Place::Hand(s), held));
        }
        for &(s, k) in &self.exchanges {
            if s != self.me && k > 0 {
                places.push((Place::Discard(s), k));
            }
        }
        if self.stage == Stage::Play && self.dealer != self.me {
            places.push((Place::DealerDiscard, self.pickup));
        }
        let total: u32 = places.iter().map(|&(_, n)| n).sum();
        if total != self.unknown.len() {
            return Err(WorldError::inconsistent(format!(
                "the view leaves {} cards unseen but places for {total}",
                self.unknown.len()
            )));
        }
        places.retain(|&(_, n)| n > 0);
        Ok(places)
    }
}

fn stage_of(view: &SeatView) -> Result<Stage, WorldError> {
    Ok(if view.trick.is_some() {
        Stage::Play
    } else if view.dealer_pickup.is_some() {
        Stage::DealerDiscard
    } else if view.trump.is_some() {
        Stage::Exchange
    } else if view.bidder.is_some() {
        if view.hand.is_empty() {
            return Err(WorldError::GameOver);
        }
        Stage::Trump
    } else {
        Stage::Bidding
    })
}

/// Every card played this deal, by seat, and all of them; a card twice is an error.
fn plays(view: &SeatView) -> Result<([CardSet; 6], CardSet), WorldError> {
    let mut by_seat = [CardSet::EMPTY; 6];
    let mut all = CardSet::EMPTY;
    for t in view.tricks.iter().chain(view.trick.as_ref()) {
        for p in &t.cards {
            if all.contains(p.card) {
                return Err(WorldError::inconsistent(format!("{} played twice", p.card)));
            }
            all.insert(p.card);
            by_seat[p.seat.index()].insert(p.card);
        }
    }
    Ok((by_seat, all))
}

/// The suits each seat showed it lacks (RULES.md §20): a card outside the led
/// suit (§12's suits) means the seat held none of it, unless `trump_anytime`
/// let it play that card, a trump, while holding the led suit. Cards leave
/// hands but never enter them during play, so the void still holds now.
fn voids(view: &SeatView, trump: Suit, trump_anytime: bool) -> [CardSet; 6] {
    let trumps = CardSet::trumps(trump);
    let mut barred = [CardSet::EMPTY; 6];
    for t in view.tricks.iter().chain(view.trick.as_ref()) {
        let Some(first) = t.cards.first() else {
            continue;
        };
        let led = CardSet::suit_of(first.card, trump);
        for p in &t.cards[1..] {
            let excused = trump_anytime && trumps.contains(p.card);
            if !led.contains(p.card) && !excused {
                let b = &mut barred[p.seat.index()];
                *b = b.union(led);
            }
        }
    }
    barred
}

/// A card's class for counting: the trump suit splits into the five cards the
/// dealer may never discard and the rest (RULES.md §16); each other effective
/// suit is one class. Before trump is named every card is in class 0.
pub(super) fn classes(trump: Option<Suit>) -> Vec<CardSet> {
    let Some(trump) = trump else {
        return vec![CardSet::FULL];
    };
    let trumps = CardSet::trumps(trump);
    let protected = CardSet::protected(trump);
    let mut out = vec![protected, trumps.difference(protected)];
    out.extend(
        Suit::ALL
            .into_iter()
            .filter(|&s| s != trump)
            .map(|s| CardSet::effective_suit(s, trump)),
    );
    debug_assert_eq!(
        out.iter().fold(CardSet::EMPTY, |a, &c| a.union(c)),
        CardSet::FULL
    );
    out
}
