//! Suits, ranks and the 53 cards, with the wire notation (`"AS"`, `"TH"`, `"JK"`).
//!
//! A card is a small integer: `suit * 13 + rank` for the 52 suited cards and 52 for
//! the joker, so a set of cards fits one `u64` (see [`crate::CardSet`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One of the four suits. The order (spades, hearts, diamonds, clubs) is the
/// canonical order used wherever the referee has to pick "the first" suit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Suit {
    Spades = 0,
    Hearts = 1,
    Diamonds = 2,
    Clubs = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub const fn from_index(i: usize) -> Suit {
        Suit::ALL[i & 3]
    }

    /// The other suit of the same colour (spades <-> clubs, hearts <-> diamonds):
    /// its jack is the left bower when `self` is trump.
    #[inline]
    pub const fn same_colour(self) -> Suit {
        Suit::from_index(3 - self.index())
    }

    pub const fn letter(self) -> char {
        match self {
            Suit::Spades => 'S',
            Suit::Hearts => 'H',
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
        }
    }

    pub fn from_letter(c: char) -> Option<Suit> {
        match c {
            'S' => Some(Suit::Spades),
            'H' => Some(Suit::Hearts),
            'D' => Some(Suit::Diamonds),
            'C' => Some(Suit::Clubs),
            _ => None,
        }
    }

    pub const fn symbol(self) -> char {
        match self {
            Suit::Spades => '♠',
            Suit::Hearts => '♥',
            Suit::Diamonds => '♦',
            Suit::Clubs => '♣',
        }
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

impl FromStr for Suit {
    type Err = ParseCardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut chars = s.chars();
        match (chars.next().and_then(Suit::from_letter), chars.next()) {
            (Some(suit), None) => Ok(suit),
            _ => Err(ParseCardError::Suit(s.to_owned())),
        }
    }
}

impl Serialize for Suit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let buf = [self.letter() as u8];
        s.serialize_str(std::str::from_utf8(&buf).expect("ASCII"))
    }
}

impl<'de> Deserialize<'de> for Suit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(ParsedStr(std::marker::PhantomData))
    }
}

/// Reads a string and parses it with `FromStr`, without copying it into a
/// `String` first (a request holds dozens of cards). Its errors are those of
/// deserialising a `String` and then parsing it.
pub(crate) struct ParsedStr<T>(pub(crate) std::marker::PhantomData<T>);

impl<T: FromStr> serde::de::Visitor<'_> for ParsedStr<T>
where
    T::Err: fmt::Display,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }
}

/// Printed rank of a suited card, 2 (lowest) to ace (highest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Rank {
    Two = 0,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
    Ace,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn letter(self) -> char {
        b"23456789TJQKA"[self as usize] as char
    }

    pub fn from_letter(c: char) -> Option<Rank> {
        "23456789TJQKA".find(c).map(|i| Rank::ALL[i])
    }
}

/// One of the 53 cards. Internally `suit * 13 + rank`, or 52 for the joker.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

impl Card {
    pub const JOKER: Card = Card(52);
    /// Number of cards in the deck.
    pub const COUNT: usize = 53;

    #[inline]
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card with internal index `i` (0..53). Panics on a larger index.
    #[inline]
    pub const fn from_index(i: usize) -> Card {
        assert!(i < Card::COUNT, "card index out of range");
        Card(i as u8)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn is_joker(self) -> bool {
        self.0 == 52
    }

    /// The card as people read it, the one notation of every account and page
    /// (`show`, `replay`, a human seat) and of RULES.md: rank then suit symbol,
    /// `10` for the ten (`10♥`, `Q♠`), and `joker`. The wire notation is
    /// [`fmt::Display`] (`TH`, `JK`).
    pub fn human(self) -> String {
        match (self.rank(), self.suit()) {
            (Some(Rank::Ten), Some(s)) => format!("10{}", s.symbol()),
            (Some(r), Some(s)) => format!("{}{}", r.letter(), s.symbol()),
            _ => "joker".to_owned(),
        }
    }

    /// Printed suit; `None` for the joker.
    #[inline]
    pub const fn suit(self) -> Option<Suit> {
        if self.is_joker() {
            None
        } else {
            Some(Suit::from_index(self.0 as usize / 13))
        }
    }

    /// Printed rank; `None` for the joker.
    #[inline]
    pub const fn rank(self) -> Option<Rank> {
        if self.is_joker() {
            None
        } else {
            Some(Rank::ALL[self.0 as usize % 13])
        }
    }

    /// Every card, in index order (spades 2..A, hearts, diamonds, clubs, joker).
    pub fn all() -> impl Iterator<Item = Card> {
        (0..Card::COUNT).map(Card::from_index)
    }

    /// Game-count value (RULES.md §23): A 4, K 3, Q 2, J 1, 10 10, joker 1, else 0.
    #[inline]
    pub const fn game_value(self) -> u32 {
        if self.is_joker() {
            return 1;
        }
        match self.0 % 13 {
            12 => 4,
            11 => 3,
            10 => 2,
            9 => 1,
            8 => 10,
            _ => 0,
        }
    }

    /// The right bower: the jack of trump.
    #[inline]
    pub const fn right_bower(trump: Suit) -> Card {
        Card::new(Rank::Jack, trump)
    }

    /// The left bower: the other jack of trump's colour.
    #[inline]
    pub const fn left_bower(trump: Suit) -> Card {
        Card::new(Rank::Jack, trump.same_colour())
    }

    /// The suit this card belongs to while `trump` stands (RULES.md §12): the left
    /// bower and the joker are trump, every other card its printed suit.
    #[inline]
    pub const fn effective_suit(self, trump: Suit) -> Suit {
        if self.is_joker() || self.0 == Card::left_bower(trump).0 {
            trump
        } else {
            Suit::from_index(self.0 as usize / 13)
        }
    }

    #[inline]
    pub const fn is_trump(self, trump: Suit) -> bool {
        self.effective_suit(trump) as u8 == trump as u8
    }

    /// Strength within the trump suit (RULES.md §10), 15 for the ace down to 1 for
    /// the joker; 0 for a card that is not trump.
    #[inline]
    pub const fn trump_strength(self, trump: Suit) -> u8 {
        if self.is_joker() {
            return 1;
        }
        if self.0 == Card::left_bower(trump).0 {
            return 11;
        }
        if self.0 as usize / 13 != trump as usize {
            return 0;
        }
        match self.0 % 13 {
            12 => 15,   // A
            11 => 14,   // K
            10 => 13,   // Q
            9 => 12,    // right bower
            r => r + 2, // 10 -> 10, 9 -> 9, ..., 2 -> 2
        }
    }

    /// Whether the dealer may never discard this card (RULES.md §16): the trump A,
    /// both bowers, the trump 2 and the joker.
    #[inline]
    pub const fn is_protected(self, trump: Suit) -> bool {
        matches!(self.trump_strength(trump), 15 | 12 | 11 | 2 | 1)
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.rank(), self.suit()) {
            (Some(r), Some(s)) => write!(f, "{}{}", r.letter(), s.letter()),
            _ => f.write_str("JK"),
        }
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a card, suit or card list could not be parsed from its wire notation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseCardError {
    #[error("{0:?} is not a card: expected a rank (2-9, T, J, Q, K, A) then a suit (S, H, D, C), e.g. \"AS\" or \"TH\", or \"JK\" for the joker")]
    Card(String),
    #[error("{0:?} is not a suit: expected one of \"S\", \"H\", \"D\", \"C\"")]
    Suit(String),
}

impl FromStr for Card {
    type Err = ParseCardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "JK" {
            return Ok(Card::JOKER);
        }
        let mut chars = s.chars();
        match (
            chars.next().and_then(Rank::from_letter),
            chars.next().and_then(Suit::from_letter),
            chars.next(),
        ) {
            (Some(rank), Some(suit), None) => Ok(Card::new(rank, suit)),
            _ => Err(ParseCardError::Card(s.to_owned())),
        }
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 2];
        match (self.rank(), self.suit()) {
            (Some(r), Some(su)) => {
                buf[0] = r.letter() as u8;
                buf[1] = su.letter() as u8;
            }
            _ => buf = *b"JK",
        }
        s.serialize_str(std::str::from_utf8(&buf).expect("ASCII"))
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(ParsedStr(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips_for_all_53_cards() {
        let mut seen = std::collections::BTreeSet::new();
        for card in Card::all() {
            let text = card.to_string();
            assert_eq!(text.len(), 2);
            assert_eq!(text.parse::<Card>(), Ok(card));
            assert!(seen.insert(text));
        }
        assert_eq!(seen.len(), 53);
    }

    #[test]
    fn parsing_rejects_anything_else() {
        for bad in [
            "", "A", "1S", "10S", "as", "AX", "ASS", "jk", "J", "KJ", " AS",
        ] {
            let err = bad.parse::<Card>().unwrap_err();
            assert!(err.to_string().contains("is not a card"), "{bad}: {err}");
        }
        assert!("X".parse::<Suit>().is_err());
        assert!(serde_json::from_str::<Card>("\"ZZ\"").is_err());
        assert_eq!(
            serde_json::from_str::<Card>("\"TH\"").unwrap(),
            Card::new(Rank::Ten, Suit::Hearts)
        );
    }

    #[test]
    fn trump_order_is_a_k_q_bowers_ten_down_to_two_then_joker() {
        let t = Suit::Hearts;
        let order: Vec<Card> = [
            "AH", "KH", "QH", "JH", "JD", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H",
            "JK",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        for pair in order.windows(2) {
            assert!(
                pair[0].trump_strength(t) > pair[1].trump_strength(t),
                "{:?}",
                pair
            );
        }
        assert!(order.iter().all(|c| c.is_trump(t)));
        assert_eq!(Card::all().filter(|c| c.is_trump(t)).count(), 15);
        // J of clubs is an ordinary club while hearts are trump.
        let jc: Card = "JC".parse().unwrap();
        assert_eq!(jc.effective_suit(t), Suit::Clubs);
        assert_eq!(jc.trump_strength(t), 0);
    }

    #[test]
    fn game_values_sum_to_the_deck_total() {
        // Per suit: A4 K3 Q2 J1 T10 = 20; four suits plus the joker's 1.
        assert_eq!(Card::all().map(Card::game_value).sum::<u32>(), 81);
    }

    #[test]
    fn protected_cards_are_the_five_named() {
        let t = Suit::Spades;
        let protected: Vec<String> = Card::all()
            .filter(|c| c.is_protected(t))
            .map(|c| c.to_string())
            .collect();
        assert_eq!(protected, ["2S", "JS", "AS", "JC", "JK"]);
    }
}
