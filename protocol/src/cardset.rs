//! A set of cards as a 64-bit mask: bit `i` is the card with index `i`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{Card, Rank, Suit};

#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CardSet(u64);

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);
    pub const FULL: CardSet = CardSet((1 << Card::COUNT) - 1);

    pub const fn from_bits(bits: u64) -> CardSet {
        CardSet(bits & CardSet::FULL.0)
    }

    pub const fn bits(self) -> u64 {
        self.0
    }

    pub const fn single(card: Card) -> CardSet {
        CardSet(1 << card.index())
    }

    /// The 13 cards printed in `suit`.
    pub const fn printed_suit(suit: Suit) -> CardSet {
        CardSet(0x1fff << (suit as u64 * 13))
    }

    /// The cards of `suit` while `trump` stands (RULES.md §12): trump gains the left
    /// bower and the joker; the suit of trump's colour loses its jack.
    pub const fn effective_suit(suit: Suit, trump: Suit) -> CardSet {
        let left = CardSet::single(Card::left_bower(trump)).0;
        if suit as u8 == trump as u8 {
            CardSet(CardSet::printed_suit(suit).0 | left | CardSet::single(Card::JOKER).0)
        } else {
            CardSet(CardSet::printed_suit(suit).0 & !left)
        }
    }

    pub const fn trumps(trump: Suit) -> CardSet {
        CardSet::effective_suit(trump, trump)
    }

    /// The five cards the dealer may never discard (RULES.md §16).
    pub const fn protected(trump: Suit) -> CardSet {
        CardSet(
            CardSet::single(Card::new(Rank::Ace, trump)).0
                | CardSet::single(Card::new(Rank::Two, trump)).0
                | CardSet::single(Card::right_bower(trump)).0
                | CardSet::single(Card::left_bower(trump)).0
                | CardSet::single(Card::JOKER).0,
        )
    }

    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn contains(self, card: Card) -> bool {
        self.0 & (1 << card.index()) != 0
    }

    pub const fn is_subset(self, other: CardSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub fn insert(&mut self, card: Card) {
        self.0 |= 1 << card.index();
    }

    pub fn remove(&mut self, card: Card) {
        self.0 &= !(1 << card.index());
    }

    pub const fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    pub const fn intersection(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    pub const fn difference(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// The lowest-index card, if any.
    pub const fn first(self) -> Option<Card> {
        if self.0 == 0 {
            None
        } else {
            Some(Card::from_index(self.0.trailing_zeros() as usize))
        }
    }

    /// The `n`-th card in index order (0-based), if the set has that many.
    pub fn nth(self, n: u32) -> Option<Card> {
        let mut bits = self.0;
        for _ in 0..n {
            bits &= bits.wrapping_sub(1);
        }
        CardSet(bits).first()
    }

    pub fn iter(self) -> Iter {
        Iter(self.0)
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> Self {
        let mut set = CardSet::EMPTY;
        for card in iter {
            set.insert(card);
        }
        set
    }
}

impl IntoIterator for CardSet {
    type Item = Card;
    type IntoIter = Iter;
    fn into_iter(self) -> Iter {
        self.iter()
    }
}

/// Iterates a [`CardSet`] in index order.
#[derive(Clone)]
pub struct Iter(u64);

impl Iterator for Iter {
    type Item = Card;
    fn next(&mut self) -> Option<Card> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(Card::from_index(i))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter {}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// On the wire a card set is a JSON array of card strings in index order.
impl Serialize for CardSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Parses a JSON array of cards; a repeated card is an error, not silently merged.
impl<'de> Deserialize<'de> for CardSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let cards = Vec::<Card>::deserialize(d)?;
        let mut set = CardSet::EMPTY;
        for card in cards {
            if set.contains(card) {
                return Err(serde::de::Error::custom(format!(
                    "card {card} is listed twice"
                )));
            }
            set.insert(card);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_suits_partition_the_deck_for_every_trump() {
        for trump in Suit::ALL {
            let mut all = CardSet::EMPTY;
            let mut total = 0;
            for suit in Suit::ALL {
                let s = CardSet::effective_suit(suit, trump);
                assert!(all.intersection(s).is_empty());
                all = all.union(s);
                total += s.len();
                for c in s {
                    assert_eq!(c.effective_suit(trump), suit);
                }
            }
            assert_eq!(all, CardSet::FULL);
            assert_eq!(total, 53);
            assert_eq!(CardSet::trumps(trump).len(), 15);
            assert_eq!(
                CardSet::effective_suit(trump.same_colour(), trump).len(),
                12
            );
            assert_eq!(CardSet::protected(trump).len(), 5);
        }
    }

    #[test]
    fn nth_and_iter_agree() {
        let set: CardSet = ["AS", "2H", "JK", "TC"]
            .iter()
            .map(|s| s.parse::<Card>().unwrap())
            .collect();
        let v: Vec<Card> = set.iter().collect();
        for (i, c) in v.iter().enumerate() {
            assert_eq!(set.nth(i as u32), Some(*c));
        }
        assert_eq!(set.nth(4), None);
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"["AS","2H","TC","JK"]"#
        );
        assert!(serde_json::from_str::<CardSet>(r#"["AS","AS"]"#).is_err());
    }
}
