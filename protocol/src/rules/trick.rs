//! Following suit and winning tricks (RULES.md §19-21), as pure functions.

use crate::card::{Card, Suit};
use crate::cardset::CardSet;

/// The cards `hand` may play to a trick whose first card was `led` (`None` when
/// leading: anything goes).
#[inline]
pub fn legal_plays(hand: CardSet, led: Option<Card>, trump: Suit, trump_anytime: bool) -> CardSet {
    let Some(led) = led else { return hand };
    // Branch-free: which of the three answers applies depends on random cards.
    let follow = hand.intersection(CardSet::suit_of(led, trump)).bits();
    let extra = if trump_anytime {
        hand.intersection(CardSet::trumps(trump)).bits()
    } else {
        0
    };
    let void = u64::from(follow == 0).wrapping_neg();
    CardSet::from_bits((hand.bits() & void) | ((follow | extra) & !void))
}

/// `POWER[trump][card]`: how strongly a card wins a trick it is eligible for:
/// 16 + its trump strength (17-31) for a trump, else 1 + its printed rank (1-13),
/// which only counts when it follows the led suit.
const POWER: [[u8; Card::COUNT]; 4] = {
    let mut table = [[0; Card::COUNT]; 4];
    let mut t = 0;
    while t < 4 {
        let trump = Suit::from_index(t);
        let mut i = 0;
        while i < Card::COUNT {
            let card = Card::from_index(i);
            let strength = card.trump_strength(trump);
            table[t][i] = if strength > 0 {
                16 + strength
            } else {
                1 + (i % 13) as u8
            };
            i += 1;
        }
        t += 1;
    }
    table
};

/// The winning position (0-based, in play order) among the cards of a trick: the
/// highest trump; if no trump was played, the highest card of the led suit.
/// `cards` holds 1 to 65,535 cards (a trick has six).
pub fn trick_winner(cards: &[Card], trump: Suit) -> usize {
    // Only trumps and cards of the led suit can win; every other card has power
    // 0. Eligible cards have distinct powers and the led card is eligible, so the
    // highest `power << 16 | !position` is unique and names the winner; taking a
    // maximum instead of branching on each comparison keeps random tricks from
    // costing branch mispredictions.
    let eligible = CardSet::trumps(trump).union(CardSet::suit_of(cards[0], trump));
    let power = &POWER[trump.index()];
    let mut best = 0u32;
    for (i, &c) in cards.iter().enumerate() {
        let p = u32::from(power[c.index()]) * u32::from(eligible.contains(c));
        best = best.max(p << 16 | (0xffff - i as u32));
    }
    0xffff - (best & 0xffff) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(s: &str) -> Vec<Card> {
        s.split_whitespace().map(|c| c.parse().unwrap()).collect()
    }
    fn set(s: &str) -> CardSet {
        cards(s).into_iter().collect()
    }
    const H: Suit = Suit::Hearts;

    // RULES.md §8 worked cases 1-6 (trump hearts, so JD is the left bower).

    #[test]
    fn case_1_left_bower_is_trump_so_the_seat_is_void_in_diamonds() {
        let legal = legal_plays(set("JD 5C"), Some(cards("KD")[0]), H, false);
        assert_eq!(legal, set("JD 5C"));
    }

    #[test]
    fn case_2_holding_a_real_diamond_forces_it() {
        let legal = legal_plays(set("JD 3D"), Some(cards("KD")[0]), H, false);
        assert_eq!(legal, set("3D"));
    }

    #[test]
    fn case_3_joker_must_follow_a_trump_lead() {
        let legal = legal_plays(set("JK AS KS"), Some(cards("4H")[0]), H, false);
        assert_eq!(legal, set("JK"));
    }

    #[test]
    fn case_4_joker_lead_is_a_trump_lead_and_wins_if_alone() {
        let legal = legal_plays(set("3H AC"), Some(Card::JOKER), H, false);
        assert_eq!(legal, set("3H"));
        // If no one else holds trump the joker wins.
        assert_eq!(trick_winner(&cards("JK AC KS QD 9C 2S"), H), 0);
    }

    #[test]
    fn case_5_joker_from_a_void_seat_wins_a_club_trick() {
        assert_eq!(trick_winner(&cards("5C AC JK KC QC TC"), H), 2);
    }

    #[test]
    fn case_6_trump_ranking() {
        assert_eq!(trick_winner(&cards("JH QH"), H), 1, "QH beats JH");
        assert_eq!(trick_winner(&cards("TH JD"), H), 1, "JD beats TH");
        assert_eq!(trick_winner(&cards("JK 2H"), H), 1, "2H beats the joker");
    }

    #[test]
    fn off_suit_cards_never_win_and_led_suit_ranks_by_print() {
        assert_eq!(trick_winner(&cards("5C AS KD 6C"), H), 3);
        // JC is an ordinary club under heart trump (JD is the left bower).
        assert_eq!(trick_winner(&cards("TC JC"), H), 1);
    }

    /// The table-driven winner agrees with RULES.md §21 spelled out directly.
    #[test]
    fn trick_winner_matches_the_rule_on_random_tricks() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let trump = Suit::from_index(next() as usize % 4);
            let mut deck: Vec<Card> = Card::all().collect();
            let trick: Vec<Card> = (0..6)
                .map(|_| deck.swap_remove(next() as usize % deck.len()))
                .collect();
            let led = trick[0].effective_suit(trump);
            let rule = |c: Card| -> (bool, u8, bool, u8) {
                let t = c.trump_strength(trump);
                let follows = c.effective_suit(trump) == led;
                (t > 0, t, follows, c.rank().map_or(0, |r| r.index() as u8))
            };
            let want = (0..6).max_by_key(|&i| rule(trick[i])).unwrap();
            assert_eq!(trick_winner(&trick, trump), want, "{trick:?} {trump:?}");
        }
    }

    #[test]
    fn trump_anytime_adds_trumps_only_when_following() {
        let hand = set("3D 4H JD AS");
        let kd = Some(cards("KD")[0]);
        assert_eq!(legal_plays(hand, kd, H, false), set("3D"));
        assert_eq!(legal_plays(hand, kd, H, true), set("3D 4H JD"));
        assert_eq!(legal_plays(set("4H AS"), kd, H, true), set("4H AS"));
    }
}
