//! A set of cards as a 64-bit mask: bit `i` is the card with index `i`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{Card, Rank, Suit};

#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CardSet(u64);

/// `EFFECTIVE_SUITS[trump][suit]`: the cards of `suit` while `trump` stands.
const EFFECTIVE_SUITS: [[u64; 4]; 4] = {
    let mut table = [[0; 4]; 4];
    let mut t = 0;
    while t < 4 {
        let mut s = 0;
        while s < 4 {
            table[t][s] = effective_suit_bits(Suit::from_index(s), Suit::from_index(t));
            s += 1;
        }
        t += 1;
    }
    table
};

const fn effective_suit_bits(suit: Suit, trump: Suit) -> u64 {
    let left = CardSet::single(Card::left_bower(trump)).0;
    if suit as u8 == trump as u8 {
        CardSet::printed_suit(suit).0 | left | CardSet::single(Card::JOKER).0
    } else {
        CardSet::printed_suit(suit).0 & !left
    }
}

/// `SUIT_OF[trump][card]`: the effective suit of the card, as a set.
const SUIT_OF: [[u64; Card::COUNT]; 4] = {
    let mut table = [[0; Card::COUNT]; 4];
    let mut t = 0;
    while t < 4 {
        let trump = Suit::from_index(t);
        let mut i = 0;
        while i < Card::COUNT {
            let card = Card::from_index(i);
            let suit = card.effective_suit(trump);
            table[t][i] = EFFECTIVE_SUITS[t][suit as usize];
            i += 1;
        }
        t += 1;
    }
    table
};

/// `PROTECTED[trump]`: the trump A, 2, both bowers and the joker.
const PROTECTED: [u64; 4] = {
    let mut table = [0; 4];
    let mut t = 0;
    while t < 4 {
        let trump = Suit::from_index(t);
        table[t] = CardSet::single(Card::new(Rank::Ace, trump)).0
            | CardSet::single(Card::new(Rank::Two, trump)).0
            | CardSet::single(Card::right_bower(trump)).0
            | CardSet::single(Card::left_bower(trump)).0
            | CardSet::single(Card::JOKER).0;
        t += 1;
    }
    table
};

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th set bit of the byte `b`.
const SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[0; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                table[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);
    pub const FULL: CardSet = CardSet((1 << Card::COUNT) - 1);

    #[inline]
    pub const fn from_bits(bits: u64) -> CardSet {
        CardSet(bits & CardSet::FULL.0)
    }

    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }

    #[inline]
    pub const fn single(card: Card) -> CardSet {
        CardSet(1 << card.index())
    }

    /// The 13 cards printed in `suit`.
    #[inline]
    pub const fn printed_suit(suit: Suit) -> CardSet {
        CardSet(0x1fff << (suit as u64 * 13))
    }

    /// The cards of `suit` while `trump` stands (RULES.md §12): trump gains the left
    /// bower and the joker; the suit of trump's colour loses its jack.
    #[inline]
    pub const fn effective_suit(suit: Suit, trump: Suit) -> CardSet {
        CardSet(EFFECTIVE_SUITS[trump as usize][suit as usize])
    }

    #[inline]
    pub const fn trumps(trump: Suit) -> CardSet {
        CardSet::effective_suit(trump, trump)
    }

    /// The five cards the dealer may never discard (RULES.md §16).
    #[inline]
    pub const fn protected(trump: Suit) -> CardSet {
        CardSet(PROTECTED[trump as usize])
    }

    /// The effective suit (RULES.md §12) of the card `card` belongs to while `trump`
    /// stands, as a set: the trumps for a trump, else its printed suit minus the
    /// left bower.
    #[inline]
    pub(crate) const fn suit_of(card: Card, trump: Suit) -> CardSet {
        CardSet(SUIT_OF[trump as usize][card.index()])
    }

    #[inline]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub const fn contains(self, card: Card) -> bool {
        self.0 & (1 << card.index()) != 0
    }

    #[inline]
    pub const fn is_subset(self, other: CardSet) -> bool {
        self.0 & !other.0 == 0
    }

    #[inline]
    pub fn insert(&mut self, card: Card) {
        self.0 |= 1 << card.index();
    }

    #[inline]
    pub fn remove(&mut self, card: Card) {
        self.0 &= !(1 << card.index());
    }

    #[inline]
    pub const fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    #[inline]
    pub const fn intersection(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    #[inline]
    pub const fn difference(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// The lowest-index card, if any.
    #[inline]
    pub const fn first(self) -> Option<Card> {
        if self.0 == 0 {
            None
        } else {
            Some(Card::from_index(self.0.trailing_zeros() as usize))
        }
    }

    /// The `n`-th card in index order (0-based), if the set has that many.
    #[inline]
    pub fn nth(self, n: u32) -> Option<Card> {
        self.select(CardSet::byte_sums(self.0), n)
    }

    /// `self.nth(choose(self.len()))`, faster: `choose` must return less than
    /// its argument (else `None`); the empty set gives `None` without calling it.
    #[inline]
    pub(crate) fn pick(self, choose: impl FnOnce(u32) -> u32) -> Option<Card> {
        let x = self.0;
        let len = x.count_ones();
        if len == 0 {
            return None;
        }
        if len <= 6 {
            // A hand in the play phase. The positions of the (up to) six cards
            // do not depend on `choose`, so they are found while it runs; what
            // remains after it is one load.
            let mut at = [0u8; 8];
            let mut rest = x;
            for slot in at.iter_mut().take(6) {
                *slot = rest.trailing_zeros() as u8;
                rest &= rest.wrapping_sub(1);
            }
            let n = choose(len);
            return (n < len).then(|| Card::from_index(usize::from(at[n as usize & 7])));
        }
        self.select(CardSet::byte_sums(x), choose(len))
    }

    /// `n` cards drawn one by one without replacement, each as
    /// `pick(choose)` would from the cards not yet drawn (so with the same
    /// `choose` results, the same cards). Panics if the set has fewer than `n`.
    #[inline]
    pub(crate) fn pick_many(self, n: u32, mut choose: impl FnMut(u32) -> u32) -> CardSet {
        let mut pool = self;
        let mut sums = CardSet::byte_sums(pool.0);
        let mut len = (sums >> 56) as u32;
        assert!(n <= len, "not enough cards");
        for _ in 0..n {
            let c = pool.select(sums, choose(len)).expect("a card");
            pool.remove(c);
            // One card fewer in the byte holding it and in every later byte.
            sums -= 0x0101_0101_0101_0101 << (c.index() & !7);
            len -= 1;
        }
        self.difference(pool)
    }

    /// Byte `i` of the result: the number of set bits in bytes `0..=i` of `x`
    /// (at most 53, so each fits in 7 bits).
    #[inline]
    const fn byte_sums(x: u64) -> u64 {
        let mut s = x - ((x >> 1) & 0x5555_5555_5555_5555);
        s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
        s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
        s.wrapping_mul(0x0101_0101_0101_0101)
    }

    /// Branch-free broadword select (Vigna, "Broadword implementation of
    /// rank/select queries", 2008): a bytewise comparison of the prefix sums with
    /// `n` finds the byte, a table the bit within it.
    #[inline]
    fn select(self, sums: u64, n: u32) -> Option<Card> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const MSBS: u64 = 0x8080_8080_8080_8080;
        if u64::from(n) >= sums >> 56 {
            return None;
        }
        let k = u64::from(n) * ONES;
        // Byte i is 1 where sums[i] <= n: the bytes wholly before the card.
        let below = ((((k | MSBS) - (sums & !MSBS)) ^ sums ^ k) & MSBS) >> 7;
        let place = (below.wrapping_mul(ONES) >> 53) as u32 & !7;
        let before = ((sums << 8) >> place) as u32 & 0xff;
        let in_byte = ((self.0 >> place) & 0xff) as usize;
        let bit = SELECT_IN_BYTE[in_byte][(n - before) as usize & 7];
        Some(Card::from_index((place + u32::from(bit)) as usize))
    }

    #[inline]
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
    #[inline]
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
    fn nth_pick_and_suit_of_agree_with_the_plain_definitions() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Dense sets (about 26 cards) and sparse ones (0 to about 8 cards).
            let set = CardSet::from_bits(x);
            let sparse = CardSet::from_bits(x & x.rotate_left(19) & x.rotate_left(41));
            for set in [set, sparse] {
                for (i, c) in set.iter().enumerate() {
                    assert_eq!(set.nth(i as u32), Some(c));
                    let picked = set.pick(|len| {
                        assert_eq!(len, set.len());
                        i as u32
                    });
                    assert_eq!(picked, Some(c));
                }
                assert_eq!(set.nth(set.len()), None);
                assert_eq!(set.nth(u32::MAX), None);
                assert_eq!(set.pick(|len| len), None);
            }
            assert_eq!(CardSet::EMPTY.pick(|_| unreachable!()), None);
            let mut k = x;
            let drawn = set.pick_many(set.len().min(9), |len| {
                k = k.rotate_left(7);
                (k % u64::from(len)) as u32
            });
            let mut k = x;
            let mut pool = set;
            for _ in 0..set.len().min(9) {
                k = k.rotate_left(7);
                let c = pool.nth((k % u64::from(pool.len())) as u32).unwrap();
                pool.remove(c);
            }
            assert_eq!(drawn, set.difference(pool));
        }
        for trump in Suit::ALL {
            for c in Card::all() {
                let s = CardSet::suit_of(c, trump);
                assert_eq!(s, CardSet::effective_suit(c.effective_suit(trump), trump));
                assert!(s.contains(c));
            }
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
