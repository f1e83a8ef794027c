//! The worked cases of RULES.md §8 that need the state machine, the thrown-in-deal
//! safeguards, the variants and the hand cap, driven through `Game`.
//!
//! Every case uses trump ♥ (so J♦ is the left bower) and teams A {0,3}, B {1,4},
//! C {2,5}, as RULES.md §8 does. Cases 1-6, 9-12 and 19 are unit tests in
//! `src/rules/trick.rs` and `src/rules/scoring.rs`.

use schmier_protocol::rules::{
    first_legal, random_legal, Action, Call, Decision, EndReason, Event, Game, HandScore, Legal,
    RuleError, RulesConfig, SeatView,
};
use schmier_protocol::shuffle::SeededRng;
use schmier_protocol::{Card, CardSet, Seat, Suit, Team};

const H: Suit = Suit::Hearts;
const A: Team = Team::new(0);
const B: Team = Team::new(1);
const C: Team = Team::new(2);

// ----- helpers -----

fn card(s: &str) -> Card {
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(card).collect()
}

fn set(s: &str) -> CardSet {
    cards(s).into_iter().collect()
}

fn seat(i: usize) -> Seat {
    Seat::new(i)
}

/// A deal given in part: each hand lists some of its cards, the stock its top
/// (drawn first) and bottom (what the dealer picks up when the others draw the
/// rest). Everything else is filled in card-index order, non-trumps (for ♥) first,
/// hands 0-5 before the stock, so unlisted trumps end up in the middle of the stock.
struct Spec {
    dealer: usize,
    hands: [&'static str; 6],
    stock_top: &'static str,
    stock_bottom: &'static str,
}

impl Spec {
    fn new(dealer: usize) -> Spec {
        Spec {
            dealer,
            hands: [""; 6],
            stock_top: "",
            stock_bottom: "",
        }
    }

    fn hand(mut self, seat: usize, cards: &'static str) -> Spec {
        self.hands[seat] = cards;
        self
    }

    fn stock_bottom(mut self, cards: &'static str) -> Spec {
        self.stock_bottom = cards;
        self
    }

    fn build(&self, config: RulesConfig) -> (Game, Vec<Event>) {
        let mut placed = CardSet::EMPTY;
        let mut place = |c: Card| {
            assert!(!placed.contains(c), "{c} listed twice");
            placed.insert(c);
        };
        for h in self.hands {
            cards(h).into_iter().for_each(&mut place);
        }
        let top = cards(self.stock_top);
        let bottom = cards(self.stock_bottom);
        top.iter().chain(&bottom).copied().for_each(&mut place);
        let mut fillers: Vec<Card> = Card::all().filter(|c| !placed.contains(*c)).collect();
        fillers.sort_by_key(|c| (c.is_trump(H), c.index()));
        let mut fillers = fillers.into_iter();
        let hands: [CardSet; 6] = std::array::from_fn(|i| {
            let mut h = set(self.hands[i]);
            while h.len() < 6 {
                h.insert(fillers.next().expect("enough cards"));
            }
            h
        });
        let mut stock: Vec<Card> = top;
        let middle = 17 - stock.len() - bottom.len();
        stock.extend(fillers.by_ref().take(middle));
        stock.extend(bottom);
        assert!(fillers.next().is_none());
        let stock: [Card; 17] = stock.try_into().expect("17 stock cards");
        let mut events = Vec::new();
        let game = Game::from_deal(7, config, seat(self.dealer), hands, stock, &mut events);
        (game, events)
    }
}

type Snapshot = (Vec<SeatView>, Option<Legal>, Option<Seat>, String);

fn snapshot(game: &Game) -> Snapshot {
    (
        Seat::all().map(|s| game.view(s)).collect(),
        game.legal(),
        game.to_act(),
        format!("{game:?}"),
    )
}

/// Applies a legal action, returning its events.
#[track_caller]
fn ok(game: &mut Game, action: Action) -> Vec<Event> {
    match game.apply(action) {
        Ok(events) => events,
        Err(e) => panic!("{action:?} by {:?} refused: {e}", game.to_act()),
    }
}

/// Checks that `action` is refused with `want` and changes nothing.
#[track_caller]
fn refused(game: &mut Game, action: Action, want: RuleError) {
    let before = snapshot(game);
    let mut out = Vec::new();
    assert_eq!(game.apply_into(action, &mut out), Err(want), "{action:?}");
    assert!(out.is_empty(), "a refused action emitted {out:?}");
    assert_eq!(
        snapshot(game),
        before,
        "a refused {action:?} changed the state"
    );
}

/// Whether `action` would be accepted (tried on a copy).
fn accepted(game: &Game, action: Action) -> bool {
    game.clone().apply(action).is_ok()
}

/// Seat 0 bids `bid`, the others (up to the dealer, seat 5) pass, seat 0 names ♥.
fn seat_0_bids_hearts(game: &mut Game, bid: u8) {
    assert_eq!(game.dealer(), seat(5));
    ok(game, Action::Bid(bid));
    for _ in 1..6 {
        ok(game, Action::Pass);
    }
    let events = ok(game, Action::Trump(H));
    assert_eq!(
        events,
        [Event::Trump {
            seat: seat(0),
            bid,
            suit: H
        }]
    );
}

/// Every non-dealer exchanges nothing.
fn nobody_exchanges(game: &mut Game) {
    for _ in 0..5 {
        ok(game, Action::Exchange(CardSet::EMPTY));
    }
    assert_eq!(game.decision(), Some(Decision::Discard));
}

/// Plays `cards` in turn order, starting with the seat to act.
fn play(game: &mut Game, cards_in_order: &str) -> Vec<Event> {
    let mut events = Vec::new();
    for c in cards(cards_in_order) {
        events.extend(ok(game, Action::Play(c)));
    }
    events
}

/// Plays on with `first_legal` until the current hand is scored.
fn finish_hand(game: &mut Game, events: &mut Vec<Event>) -> HandScore {
    loop {
        let action = first_legal(game);
        let new = ok(game, action);
        let score = new.iter().find_map(|e| match e {
            Event::HandEnd(s) => Some(*s),
            _ => None,
        });
        events.extend(new);
        if let Some(score) = score {
            return score;
        }
    }
}

/// Game counts recomputed from the trick events (RULES.md §23).
fn game_counts(events: &[Event]) -> [u32; 3] {
    let mut counts = [0; 3];
    for e in events {
        if let Event::Trick { cards, winner, .. } = e {
            counts[winner.team().index()] += cards.iter().map(|p| p.card.game_value()).sum::<u32>();
        }
    }
    counts
}

fn trick(events: &[Event], number: u8) -> (Vec<(Seat, Card)>, Seat) {
    events
        .iter()
        .find_map(|e| match e {
            Event::Trick {
                number: n,
                cards,
                winner,
                ..
            } if *n == number => Some((cards.iter().map(|p| (p.seat, p.card)).collect(), *winner)),
            _ => None,
        })
        .expect("trick event")
}

// ----- worked cases -----

#[test]
fn case_7_low_goes_to_the_team_that_played_the_two_even_when_the_trick_is_lost() {
    // Trick 1: 0 leads 3H, 1 (B) plays 2H, 3 (A) wins with KH.
    let (mut game, _) = Spec::new(5)
        .hand(0, "3H AH")
        .hand(1, "2H QH")
        .hand(2, "4H JH")
        .hand(3, "KH")
        .hand(4, "5H JD")
        .hand(5, "6H JK")
        .build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    nobody_exchanges(&mut game);
    // The dealer holds 6 trumps among 23 cards: he discards the 17 others.
    let legal = game.legal().unwrap();
    let Legal::Cards {
        must,
        from,
        min,
        max,
    } = legal
    else {
        panic!("{legal:?}")
    };
    assert_eq!((must, from.len(), min, max), (CardSet::EMPTY, 17, 17, 17));
    ok(&mut game, Action::Discard(from));
    assert_eq!(game.hand(seat(5)), set("6H 7H 8H 9H TH JK"));

    let mut events = play(&mut game, "3H 2H 4H KH 5H 6H");
    let (played, winner) = trick(&events, 1);
    assert_eq!(played[1], (seat(1), card("2H")));
    assert_eq!(winner, seat(3));
    assert_eq!(
        game.to_act(),
        Some(seat(3)),
        "the winner leads the next trick"
    );

    let score = finish_hand(&mut game, &mut events);
    assert_eq!(
        score.points.low,
        Some(B),
        "Low goes to the team that played the 2"
    );
    assert_eq!(score.points.high, Some(A));
    // The K's 3 game-count points (and the rest of trick 1) went to A.
    assert_eq!(score.game_counts, game_counts(&events));
    let trick_1_value: u32 = played.iter().map(|(_, c)| c.game_value()).sum();
    assert_eq!(trick_1_value, 3);
    assert!(score.game_counts[A.index()] >= 3);
}

#[test]
fn case_8_left_goes_to_the_team_winning_the_trick() {
    // Trick 1: 0 (A) leads AH, 2 (C) plays JD, AH wins.
    let (mut game, _) = Spec::new(5)
        .hand(0, "AH")
        .hand(1, "2H")
        .hand(2, "JD")
        .hand(3, "3H")
        .hand(4, "4H")
        .hand(5, "5H")
        .build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    nobody_exchanges(&mut game);
    // The dealer holds 5H + KH QH JH TH 9H 8H 7H 6H JK from the stock: 10 trumps.
    let legal = game.legal().unwrap();
    let Legal::Cards {
        must,
        from,
        min,
        max,
    } = legal
    else {
        panic!("{legal:?}")
    };
    assert_eq!(must.len(), 13, "every non-trump must go");
    assert_eq!(from, set("5H 6H 7H 8H 9H TH QH KH"));
    assert_eq!((min, max), (4, 4));
    ok(&mut game, Action::Discard(must.union(set("7H 8H 9H TH"))));
    assert_eq!(game.hand(seat(5)), set("5H 6H JH QH KH JK"));

    let mut events = play(&mut game, "AH 2H JD 3H 4H 5H");
    let (played, winner) = trick(&events, 1);
    assert_eq!(played[2], (seat(2), card("JD")));
    assert_eq!(winner, seat(0));
    let score = finish_hand(&mut game, &mut events);
    assert_eq!(
        score.points.left,
        Some(A),
        "Left goes to the trick's winner"
    );
    assert_eq!(score.points.high, Some(A));
    assert_eq!(score.points.low, Some(B));
    assert_eq!(score.game_counts, game_counts(&events));
}

#[test]
fn case_13_bids_must_rise_and_a_six_ends_bidding() {
    let (mut game, _) = Spec::new(5).build(RulesConfig::default());
    assert_eq!(game.to_act(), Some(seat(0)));
    assert_eq!(
        game.legal(),
        Some(Legal::Bid {
            pass: true,
            lowest: 3
        })
    );
    ok(&mut game, Action::Bid(4));
    assert_eq!(game.to_act(), Some(seat(1)));
    assert_eq!(
        game.legal(),
        Some(Legal::Bid {
            pass: true,
            lowest: 5
        })
    );
    refused(
        &mut game,
        Action::Bid(4),
        RuleError::BidTooLow { bid: 4, highest: 4 },
    );
    refused(
        &mut game,
        Action::Bid(3),
        RuleError::BidTooLow { bid: 3, highest: 4 },
    );
    refused(
        &mut game,
        Action::Bid(2),
        RuleError::BidOutOfRange { bid: 2 },
    );
    refused(
        &mut game,
        Action::Bid(7),
        RuleError::BidOutOfRange { bid: 7 },
    );
    refused(
        &mut game,
        Action::Bid(0),
        RuleError::BidOutOfRange { bid: 0 },
    );
    refused(
        &mut game,
        Action::Trump(H),
        RuleError::WrongDecision {
            expected: Decision::Bid,
            got: Decision::Trump,
        },
    );
    ok(&mut game, Action::Pass);

    // Seat 2 bids 6: bidding ends at once, seats 3, 4 and 5 never act.
    let events = ok(&mut game, Action::Bid(6));
    assert_eq!(
        events,
        [Event::Bid {
            seat: seat(2),
            bid: Call::Bid(6)
        }]
    );
    assert_eq!(game.decision(), Some(Decision::Trump));
    assert_eq!(game.to_act(), Some(seat(2)));
    let view = game.view(seat(3));
    assert_eq!(view.bids.len(), 3);
    assert_eq!((view.bidder, view.bid), (Some(seat(2)), Some(6)));
    refused(
        &mut game,
        Action::Pass,
        RuleError::WrongDecision {
            expected: Decision::Trump,
            got: Decision::Bid,
        },
    );
    refused(
        &mut game,
        Action::Bid(6),
        RuleError::WrongDecision {
            expected: Decision::Trump,
            got: Decision::Bid,
        },
    );
    let events = ok(&mut game, Action::Trump(Suit::Clubs));
    assert_eq!(
        events,
        [Event::Trump {
            seat: seat(2),
            bid: 6,
            suit: Suit::Clubs
        }]
    );
    // The exchange starts left of the dealer, whoever the bidder is.
    assert_eq!(game.decision(), Some(Decision::Exchange));
    assert_eq!(game.to_act(), Some(seat(0)));
}

#[test]
fn case_14_all_pass_the_same_dealer_deals_again_and_no_score_changes() {
    let seed = 11;
    let (mut game, _) = Game::new(seed, RulesConfig::default());
    // Play random hands until the scores are not all zero.
    let mut rng = SeededRng::new(seed, 99);
    while game.scores() == [0; 3] {
        let action = random_legal(&game, &mut rng);
        ok(&mut game, action);
        assert!(!game.is_over());
    }
    assert_eq!(game.decision(), Some(Decision::Bid));
    let (scores, dealer, deal) = (game.scores(), game.dealer(), game.deals());
    let old_hands: Vec<CardSet> = Seat::all().map(|s| game.hand(s)).collect();

    for i in 0..5 {
        assert_eq!(game.to_act(), Some(dealer.plus(1 + i)));
        ok(&mut game, Action::Pass);
    }
    assert_eq!(game.to_act(), Some(dealer));
    assert_eq!(
        game.legal(),
        Some(Legal::Bid {
            pass: true,
            lowest: 3
        }),
        "below the redeal limit the dealer may pass"
    );
    let events = ok(&mut game, Action::Pass);
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        events[0],
        Event::Bid {
            seat: dealer,
            bid: Call::Pass
        }
    );
    assert_eq!(
        events[1],
        Event::ThrownIn {
            deal,
            dealer,
            streak: 1
        }
    );
    let Event::Deal {
        deal: new_deal,
        dealer: new_dealer,
        hands,
        ..
    } = events[2]
    else {
        panic!("{events:?}")
    };
    assert_eq!((new_deal, new_dealer), (deal + 1, dealer));
    assert_eq!((game.deals(), game.dealer()), (deal + 1, dealer));
    assert_eq!(game.scores(), scores);
    assert_eq!(game.to_act(), Some(dealer.left()));
    assert_eq!(game.decision(), Some(Decision::Bid));
    let new_hands: Vec<CardSet> = Seat::all().map(|s| game.hand(s)).collect();
    assert_eq!(new_hands, hands);
    assert_ne!(new_hands, old_hands, "a fresh shuffle");
    let view = game.view(dealer);
    assert!(view.bids.is_empty());
    assert_eq!((view.bidder, view.trump, view.scores), (None, None, scores));
}

#[test]
fn case_15_non_dealer_may_not_discard_a_trump_nor_more_than_three() {
    let (mut game, _) = Spec::new(5)
        .hand(0, "JD JK 2S 3S 4S 5S")
        .build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    assert_eq!(game.to_act(), Some(seat(0)));
    assert_eq!(
        game.legal(),
        Some(Legal::Cards {
            must: CardSet::EMPTY,
            from: set("2S 3S 4S 5S"),
            min: 0,
            max: 3
        })
    );
    refused(
        &mut game,
        Action::Exchange(set("JD")),
        RuleError::TrumpDiscarded { card: card("JD") },
    );
    refused(
        &mut game,
        Action::Exchange(set("2S JK")),
        RuleError::TrumpDiscarded { card: Card::JOKER },
    );
    refused(
        &mut game,
        Action::Exchange(set("2S 3S 4S 5S")),
        RuleError::TooManyExchanged { count: 4 },
    );
    refused(
        &mut game,
        Action::Exchange(set("2S AC")),
        RuleError::CardsNotInHand {
            seat: seat(0),
            cards: set("AC"),
        },
    );
    refused(
        &mut game,
        Action::Discard(set("2S")),
        RuleError::WrongDecision {
            expected: Decision::Exchange,
            got: Decision::Discard,
        },
    );
    let events = ok(&mut game, Action::Exchange(CardSet::EMPTY));
    assert_eq!(
        events,
        [Event::Exchange {
            seat: seat(0),
            discarded: CardSet::EMPTY,
            drawn: CardSet::EMPTY
        }]
    );
    assert_eq!(game.hand(seat(0)), set("JD JK 2S 3S 4S 5S"));
    assert_eq!(game.to_act(), Some(seat(1)));
}

#[test]
fn case_16_all_five_discard_three_and_the_dealer_picks_up_two() {
    // All 36 dealt cards are non-trumps; the stock ends ... 2 trumps (JD, JK).
    let (mut game, _) = Spec::new(5).build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    let mut stock_drawn = CardSet::EMPTY;
    for s in 0..5 {
        let hand = game.hand(seat(s));
        let three: CardSet = hand.iter().take(3).collect();
        let events = ok(&mut game, Action::Exchange(three));
        let [Event::Exchange { drawn, .. }] = events[..] else {
            panic!("{events:?}")
        };
        assert_eq!(drawn.len(), 3);
        stock_drawn = stock_drawn.union(drawn);
        assert_eq!(game.hand(seat(s)), hand.difference(three).union(drawn));
    }
    assert_eq!(stock_drawn.len(), 15);
    assert_eq!(game.to_act(), Some(seat(5)));
    assert_eq!(game.decision(), Some(Decision::Discard));
    let hand = game.hand(seat(5));
    assert_eq!(hand.len(), 8);
    assert_eq!(game.view(seat(5)).dealer_pickup, Some(2));
    assert_eq!(game.view(seat(0)).dealer_pickup, Some(2));
    assert_eq!(hand.intersection(set("JD JK")), set("JD JK"));
    let others = hand.difference(set("JD JK"));
    assert_eq!(
        game.legal(),
        Some(Legal::Cards {
            must: CardSet::EMPTY,
            from: others,
            min: 2,
            max: 2
        })
    );
    let one: CardSet = others.iter().take(1).collect();
    let three: CardSet = others.iter().take(3).collect();
    refused(
        &mut game,
        Action::Discard(one),
        RuleError::WrongDiscardCount { need: 2, count: 1 },
    );
    refused(
        &mut game,
        Action::Discard(three),
        RuleError::WrongDiscardCount { need: 2, count: 3 },
    );
    refused(
        &mut game,
        Action::Discard(one.union(set("JK"))),
        RuleError::ProtectedDiscarded { card: Card::JOKER },
    );
    let two: CardSet = others.iter().skip(4).collect();
    let events = ok(&mut game, Action::Discard(two));
    assert_eq!(
        events,
        [Event::DealerDiscard {
            seat: seat(5),
            picked_up: set("JD JK"),
            discarded: two
        }]
    );
    assert_eq!(game.hand(seat(5)), hand.difference(two));
    assert_eq!(game.decision(), Some(Decision::Play));
    assert_eq!(game.to_act(), Some(seat(0)), "the bidder leads");
}

#[test]
fn case_17_dealer_with_eight_trumps_keeps_six_and_never_the_protected_five() {
    // The dealer holds AH KH QH JH JD TH and picks up 2H JK 2S 3S 4S after seats
    // 0-3 draw 3 each and seat 4 none.
    let (mut game, _) = Spec::new(5)
        .hand(5, "AH KH QH JH JD TH")
        .stock_bottom("2H JK 2S 3S 4S")
        .build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    for s in 0..4 {
        let three: CardSet = game.hand(seat(s)).iter().take(3).collect();
        ok(&mut game, Action::Exchange(three));
    }
    ok(&mut game, Action::Exchange(CardSet::EMPTY));
    assert_eq!(game.hand(seat(5)), set("AH KH QH JH JD TH 2H JK 2S 3S 4S"));
    assert_eq!(
        game.legal(),
        Some(Legal::Cards {
            must: set("2S 3S 4S"),
            from: set("KH QH TH"),
            min: 2,
            max: 2
        })
    );
    for protected in ["AH", "JH", "JD", "2H", "JK"] {
        refused(
            &mut game,
            Action::Discard(set("2S 3S 4S KH").union(set(protected))),
            RuleError::ProtectedDiscarded {
                card: card(protected),
            },
        );
    }
    refused(
        &mut game,
        Action::Discard(set("2S 3S KH QH TH")),
        RuleError::TrumpsNotKept { keep: 6, kept: 5 },
    );
    refused(
        &mut game,
        Action::Discard(set("2S 3S 4S KH")),
        RuleError::WrongDiscardCount { need: 5, count: 4 },
    );
    for pair in ["KH QH", "KH TH", "QH TH"] {
        assert!(accepted(
            &game,
            Action::Discard(set("2S 3S 4S").union(set(pair)))
        ));
    }
    ok(&mut game, Action::Discard(set("2S 3S 4S KH TH")));
    assert_eq!(game.hand(seat(5)), set("AH QH JH JD 2H JK"));
}

#[test]
fn case_18_dealer_keeps_all_of_four_trumps_and_any_two_others() {
    // The dealer holds AH KH 2S 3S 4S 5S and picks up QH JK 6S 7S after the
    // others draw 3, 3, 3, 3 and 1: 4 trumps among 10 cards.
    let spec = Spec::new(5)
        .hand(5, "AH KH 2S 3S 4S 5S")
        .stock_bottom("QH JK 6S 7S");
    let (mut game, _) = spec.build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    for (s, n) in [3, 3, 3, 3, 1].into_iter().enumerate() {
        let discard: CardSet = game.hand(seat(s)).iter().take(n).collect();
        ok(&mut game, Action::Exchange(discard));
    }
    let others = set("2S 3S 4S 5S 6S 7S");
    assert_eq!(game.hand(seat(5)), others.union(set("AH KH QH JK")));
    assert_eq!(
        game.legal(),
        Some(Legal::Cards {
            must: CardSet::EMPTY,
            from: others,
            min: 4,
            max: 4
        })
    );
    // Any 4 of the 6 others: all 15 choices are accepted.
    let mut choices = 0;
    for bits in 0u32..64 {
        if bits.count_ones() != 4 {
            continue;
        }
        let discard: CardSet = others
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, c)| c)
            .collect();
        let mut g = game.clone();
        ok(&mut g, Action::Discard(discard));
        assert_eq!(g.hand(seat(5)).intersection(set("AH KH QH JK")).len(), 4);
        choices += 1;
    }
    assert_eq!(choices, 15);
    refused(
        &mut game,
        Action::Discard(set("2S 3S 4S KH")),
        RuleError::TrumpsNotKept { keep: 4, kept: 3 },
    );
    refused(
        &mut game,
        Action::Discard(set("2S 3S 4S JK")),
        RuleError::ProtectedDiscarded { card: Card::JOKER },
    );

    // If no one exchanged, the dealer holds 23 cards and discards 17.
    let (mut game, _) = spec.build(RulesConfig::default());
    seat_0_bids_hearts(&mut game, 3);
    nobody_exchanges(&mut game);
    let hand = game.hand(seat(5));
    assert_eq!(hand.len(), 23);
    // Here the stock held 11 more trumps: 15 in all, so he keeps 6 trumps.
    let trumps = hand.intersection(CardSet::trumps(H));
    assert_eq!(trumps.len(), 15);
    let Some(Legal::Cards {
        must,
        from,
        min,
        max,
    }) = game.legal()
    else {
        panic!()
    };
    assert_eq!(must, hand.difference(trumps));
    assert_eq!(from, trumps.difference(CardSet::protected(H)));
    assert_eq!((min, max), (9, 9));
    let discard = must.union(from.iter().take(9).collect());
    assert_eq!(discard.len(), 17);
    refused(
        &mut game,
        Action::Discard(must.union(from.iter().take(8).collect())),
        RuleError::WrongDiscardCount {
            need: 17,
            count: 16,
        },
    );
    ok(&mut game, Action::Discard(discard));
    let kept = game.hand(seat(5));
    assert_eq!(kept.len(), 6);
    assert!(kept.is_subset(trumps) && CardSet::protected(H).is_subset(kept));
}

/// Plays `games` whole games with random legal actions, calling `each_hand` with
/// the events of every scored hand (from its `Deal` to its `HandEnd`).
fn random_games(config: RulesConfig, games: u64, mut each_hand: impl FnMut(&[Event])) {
    for seed in 0..games {
        let mut rng = SeededRng::new(seed, 1);
        let (mut game, mut events) = Game::new(seed, config);
        let mut start = 0;
        while !game.is_over() {
            let action = random_legal(&game, &mut rng);
            let from = events.len();
            game.apply_into(action, &mut events).unwrap();
            for i in from..events.len() {
                match events[i] {
                    Event::Deal { .. } => start = i,
                    Event::HandEnd(_) => each_hand(&events[start..=i]),
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn case_20_trump_ace_both_bowers_trump_two_and_joker_are_always_played() {
    let mut hands = 0;
    let configs = [
        RulesConfig::default(),
        RulesConfig {
            trump_anytime: true,
            stick_the_dealer: true,
            ..RulesConfig::default()
        },
    ];
    for config in configs {
        random_games(config, 60, |events| {
            let trump = events
                .iter()
                .find_map(|e| match e {
                    Event::Trump { suit, .. } => Some(*suit),
                    _ => None,
                })
                .unwrap();
            let played: CardSet = events
                .iter()
                .filter_map(|e| match e {
                    Event::Play { card, .. } => Some(*card),
                    _ => None,
                })
                .collect();
            assert_eq!(played.len(), 36);
            assert!(
                CardSet::protected(trump).is_subset(played),
                "{trump:?}: {:?} not played",
                CardSet::protected(trump).difference(played)
            );
            let Some(Event::HandEnd(score)) = events.last() else {
                panic!()
            };
            let p = score.points;
            assert!([p.high, p.low, p.right, p.left, p.joker]
                .iter()
                .all(Option::is_some));
            hands += 1;
        });
    }
    assert!(hands > 500, "{hands} hands");
}

// ----- thrown-in deals, variants, the cap -----

/// The five seats before the dealer pass (checking the turn order).
fn first_five_pass(game: &mut Game) {
    let dealer = game.dealer();
    for i in 1..6 {
        assert_eq!(game.to_act(), Some(dealer.plus(i)));
        ok(game, Action::Pass);
    }
    assert_eq!(game.to_act(), Some(dealer));
}

/// Everybody passes; checks the deal is thrown in with `streak` and redealt.
fn thrown_in(game: &mut Game, streak: u32) {
    let (deal, dealer, scores) = (game.deals(), game.dealer(), game.scores());
    first_five_pass(game);
    let events = ok(game, Action::Pass);
    assert_eq!(
        events[1],
        Event::ThrownIn {
            deal,
            dealer,
            streak
        }
    );
    assert!(
        matches!(events[2], Event::Deal { deal: d, dealer: s, .. } if d == deal + 1 && s == dealer)
    );
    assert_eq!(
        (game.deals(), game.dealer(), game.scores()),
        (deal + 1, dealer, scores)
    );
}

#[test]
fn after_ten_thrown_in_deals_the_dealer_may_not_pass_until_a_deal_is_played() {
    let (mut game, _) = Game::new(3, RulesConfig::default());
    for streak in 1..=10 {
        thrown_in(&mut game, streak);
    }
    // Deal 11: the first five pass, so the dealer is stuck.
    assert_eq!(game.deals(), 11);
    let mut with_a_bid = game.clone();
    first_five_pass(&mut game);
    assert_eq!(
        game.legal(),
        Some(Legal::Bid {
            pass: false,
            lowest: 3
        })
    );
    refused(&mut game, Action::Pass, RuleError::DealerMustBid);
    refused(
        &mut game,
        Action::Bid(7),
        RuleError::BidOutOfRange { bid: 7 },
    );
    let dealer = game.dealer();
    ok(&mut game, Action::Bid(3));
    assert_eq!(game.decision(), Some(Decision::Trump));
    assert_eq!(game.to_act(), Some(dealer));

    // ...but if one of the first five bids, the dealer may pass as usual.
    ok(&mut with_a_bid, Action::Pass);
    ok(&mut with_a_bid, Action::Bid(3));
    for _ in 0..3 {
        ok(&mut with_a_bid, Action::Pass);
    }
    assert_eq!(
        with_a_bid.legal(),
        Some(Legal::Bid {
            pass: true,
            lowest: 4
        })
    );
    ok(&mut with_a_bid, Action::Pass);
    assert_eq!(with_a_bid.decision(), Some(Decision::Trump));

    // Playing the deal resets the count: ten more deals may be thrown in.
    let mut events = Vec::new();
    finish_hand(&mut game, &mut events);
    assert_eq!(game.deals(), 12);
    assert_eq!(game.dealer(), dealer.left(), "the deal passes left");
    for streak in 1..=10 {
        thrown_in(&mut game, streak);
    }
    first_five_pass(&mut game);
    refused(&mut game, Action::Pass, RuleError::DealerMustBid);
}

#[test]
fn stick_the_dealer_applies_from_the_first_deal() {
    let config = RulesConfig {
        stick_the_dealer: true,
        ..RulesConfig::default()
    };
    let (mut game, _) = Game::new(5, config);
    let fresh = game.clone();
    let dealer = game.dealer();
    first_five_pass(&mut game);
    assert_eq!(
        game.legal(),
        Some(Legal::Bid {
            pass: false,
            lowest: 3
        })
    );
    refused(&mut game, Action::Pass, RuleError::DealerMustBid);
    let events = ok(&mut game, Action::Bid(6));
    assert_eq!(
        events,
        [Event::Bid {
            seat: dealer,
            bid: Call::Bid(6)
        }]
    );
    assert_eq!(game.to_act(), Some(dealer));
    assert_eq!(game.decision(), Some(Decision::Trump));

    // The first-legal fallback bids the lowest allowed bid for a stuck dealer.
    let mut game = fresh.clone();
    first_five_pass(&mut game);
    assert_eq!(first_legal(&game), Action::Bid(3));

    // A dealer is only stuck when all five others passed.
    let mut game = fresh;
    ok(&mut game, Action::Bid(5));
    for _ in 0..4 {
        ok(&mut game, Action::Pass);
    }
    assert!(accepted(&game, Action::Pass));
    assert!(accepted(&game, Action::Bid(6)));
    refused(
        &mut game,
        Action::Bid(5),
        RuleError::BidTooLow { bid: 5, highest: 5 },
    );
}

/// A deal where seat 0 leads KS and seat 1 holds a spade, trumps and clubs.
fn trump_anytime_deal(trump_anytime: bool) -> Game {
    let config = RulesConfig {
        trump_anytime,
        ..RulesConfig::default()
    };
    let (mut game, _) = Spec::new(5)
        .hand(0, "KS")
        .hand(1, "2S 3H JD 2C 3C 4C")
        .build(config);
    seat_0_bids_hearts(&mut game, 3);
    nobody_exchanges(&mut game);
    let action = first_legal(&game);
    ok(&mut game, action);
    ok(&mut game, Action::Play(card("KS")));
    assert_eq!(game.to_act(), Some(seat(1)));
    game
}

#[test]
fn trump_anytime_variant_lets_a_seat_trump_instead_of_following() {
    // Default: seat 1 must follow spades.
    let mut game = trump_anytime_deal(false);
    assert_eq!(game.legal(), Some(Legal::Play(set("2S"))));
    refused(
        &mut game,
        Action::Play(card("3H")),
        RuleError::MustFollow {
            seat: seat(1),
            card: card("3H"),
            led: set("2S"),
        },
    );
    refused(
        &mut game,
        Action::Play(card("JD")),
        RuleError::MustFollow {
            seat: seat(1),
            card: card("JD"),
            led: set("2S"),
        },
    );
    ok(&mut game, Action::Play(card("2S")));

    // Trump anytime: a trump (the left bower too) may be played instead, but not
    // an off-suit non-trump.
    let mut game = trump_anytime_deal(true);
    assert_eq!(game.legal(), Some(Legal::Play(set("2S 3H JD"))));
    refused(
        &mut game,
        Action::Play(card("2C")),
        RuleError::MustFollow {
            seat: seat(1),
            card: card("2C"),
            led: set("2S 3H JD"),
        },
    );
    refused(
        &mut game,
        Action::Play(card("AS")),
        RuleError::NotInHand {
            seat: seat(1),
            card: card("AS"),
        },
    );
    let mut g = game.clone();
    ok(&mut g, Action::Play(card("JD")));
    ok(&mut game, Action::Play(card("3H")));
    // The highest trump of the trick wins it.
    let mut events = Vec::new();
    for _ in 0..4 {
        let action = first_legal(&game);
        events.extend(ok(&mut game, action));
    }
    let (played, winner) = trick(&events, 1);
    assert_eq!(played[1], (seat(1), card("3H")));
    let best_trump = played
        .iter()
        .filter(|(_, c)| c.is_trump(H))
        .max_by_key(|(_, c)| c.trump_strength(H))
        .unwrap();
    assert_eq!(winner, best_trump.0);
}

#[test]
fn the_hand_cap_ends_the_game_without_a_winner() {
    let config = RulesConfig {
        hand_cap: 5,
        redeal_limit: u32::MAX,
        ..RulesConfig::default()
    };
    let (mut game, _) = Game::new(1, config);
    let dealer = game.dealer();
    let mut events = Vec::new();
    while let Some(Legal::Bid { pass: true, .. }) = game.legal() {
        events.extend(ok(&mut game, Action::Pass));
    }
    assert!(game.is_over());
    let thrown: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            Event::ThrownIn { streak, .. } => Some(*streak),
            _ => None,
        })
        .collect();
    assert_eq!(thrown, [1, 2, 3, 4, 5]);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Deal { .. }))
            .count(),
        4,
        "deals 2-5 (deal 1 came from Game::new)"
    );
    assert_eq!(
        events.last(),
        Some(&Event::GameEnd {
            winner: None,
            scores: [0; 3],
            deals: 5,
            reason: EndReason::HandCap
        })
    );
    assert_eq!(
        (
            game.winner(),
            game.to_act(),
            game.legal(),
            game.deals(),
            game.dealer()
        ),
        (None, None, None, 5, dealer)
    );
    refused(&mut game, Action::Pass, RuleError::GameOver);
    refused(&mut game, Action::Play(Card::JOKER), RuleError::GameOver);

    // With the default redeal limit, the dealer is stuck from deal 11 on, so an
    // always-passing table cannot reach a cap above 10.
    let config = RulesConfig {
        hand_cap: 10,
        ..RulesConfig::default()
    };
    let (mut game, _) = Game::new(1, config);
    for streak in 1..10 {
        thrown_in(&mut game, streak);
    }
    first_five_pass(&mut game);
    let events = ok(&mut game, Action::Pass);
    assert!(matches!(
        events.last(),
        Some(Event::GameEnd {
            winner: None,
            deals: 10,
            reason: EndReason::HandCap,
            ..
        })
    ));

    // Played hands count towards the cap too: 3 hands can't reach 21 points.
    for seed in 0..20 {
        let config = RulesConfig {
            hand_cap: 3,
            ..RulesConfig::default()
        };
        let (mut game, mut events) = Game::new(seed, config);
        let mut rng = SeededRng::new(seed, 5);
        while !game.is_over() {
            let action = random_legal(&game, &mut rng);
            game.apply_into(action, &mut events).unwrap();
        }
        let Some(Event::GameEnd {
            winner,
            scores,
            deals,
            reason,
        }) = events.last()
        else {
            panic!()
        };
        assert_eq!((*winner, *deals, *reason), (None, 3, EndReason::HandCap));
        assert_eq!(*scores, game.scores());
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::HandEnd(s) if s.deal == 3)));
    }
}

#[test]
fn reaching_the_target_ends_the_game_with_the_bidders_tie_break() {
    // Through the state machine: with a target of 1, the first hand decides.
    for seed in 0..30 {
        let config = RulesConfig {
            target: 1,
            ..RulesConfig::default()
        };
        let (mut game, mut events) = Game::new(seed, config);
        let mut rng = SeededRng::new(seed, 6);
        while !game.is_over() {
            let action = random_legal(&game, &mut rng);
            game.apply_into(action, &mut events).unwrap();
        }
        let Some(Event::GameEnd { winner, reason, .. }) = events.last() else {
            panic!()
        };
        let last_hand = events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::HandEnd(s) => Some(*s),
                _ => None,
            })
            .unwrap();
        let best = *last_hand.scores.iter().max().unwrap();
        let leaders: Vec<Team> = [A, B, C]
            .into_iter()
            .filter(|t| last_hand.scores[t.index()] == best)
            .collect();
        let want = if best < 1 {
            None
        } else if leaders.len() == 1 {
            Some(leaders[0])
        } else if leaders.contains(&last_hand.bidder.team()) {
            Some(last_hand.bidder.team())
        } else {
            None
        };
        assert_eq!(*winner, want, "{last_hand:?}");
        assert_eq!(*reason, EndReason::Target);
        assert_eq!(game.winner(), want);
    }
}
