//! Following suit and winning tricks (RULES.md §19-21), as pure functions.

use crate::card::{Card, Suit};
use crate::cardset::CardSet;

/// The cards `hand` may play to a trick whose first card was `led` (`None` when
/// leading: anything goes).
pub fn legal_plays(hand: CardSet, led: Option<Card>, trump: Suit, trump_anytime: bool) -> CardSet {
    let Some(led) = led else { return hand };
    let led_suit = led.effective_suit(trump);
    let follow = hand.intersection(CardSet::effective_suit(led_suit, trump));
    if follow.is_empty() {
        hand
    } else if trump_anytime {
        follow.union(hand.intersection(CardSet::trumps(trump)))
    } else {
        follow
    }
}

/// The winning position (0-based, in play order) among the cards of a trick: the
/// highest trump; if no trump was played, the highest card of the led suit.
pub fn trick_winner(cards: &[Card], trump: Suit) -> usize {
    let led_suit = cards[0].effective_suit(trump);
    let power = |c: Card| -> u16 {
        let t = c.trump_strength(trump);
        if t > 0 {
            100 + u16::from(t)
        } else if c.effective_suit(trump) == led_suit {
            // Non-trump suits rank A..2 by printed rank.
            1 + c.rank().map_or(0, |r| r.index() as u16)
        } else {
            0
        }
    };
    let mut best = 0;
    for (i, &c) in cards.iter().enumerate().skip(1) {
        if power(c) > power(cards[best]) {
            best = i;
        }
    }
    best
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

    #[test]
    fn trump_anytime_adds_trumps_only_when_following() {
        let hand = set("3D 4H JD AS");
        let kd = Some(cards("KD")[0]);
        assert_eq!(legal_plays(hand, kd, H, false), set("3D"));
        assert_eq!(legal_plays(hand, kd, H, true), set("3D 4H JD"));
        assert_eq!(legal_plays(set("4H AS"), kd, H, true), set("4H AS"));
    }
}
