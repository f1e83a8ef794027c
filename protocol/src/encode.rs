//! A fixed-size numeric observation of a [`SeatView`], for learning agents:
//! [`encode_into`] writes [`OBSERVATION_LEN`] `f32`s, laid out as [`layout`]
//! says, from the view alone (what the referee sends a bot), so a bot encodes
//! a request exactly as it was encoded in training.
//!
//! Conventions:
//! - **Seats are relative** to the observer: relative seat `r` is seat
//!   `observer + r` (mod 6): 0 is the observer, 1 the seat on its left (who
//!   plays next), 3 its partner. **Teams are relative** too: relative team `t`
//!   is the team of relative seat `t` (0: ours, 1: the left opponents, 2: the
//!   right opponents).
//! - **Cards** are 53-wide blocks indexed by [`Card::index`] (2S..AS, 2H..AH,
//!   2D..AD, 2C..AC, JK): printed cards, whatever trump is.
//! - **Suits** are absolute, in [`Suit::ALL`] order (S, H, D, C); "void" suits
//!   are effective suits (RULES.md §12) given the trump.
//! - One-hot blocks are all zero when the thing is not known yet (no trump
//!   named, no bid yet). Flags are 0.0 or 1.0; other scalars are scaled to
//!   about [-1, 1] as each field says.
//!
//! `tests::worked_example` checks the layout field by field on RULES.md §8
//! case 4 (the joker led to a trump trick).

use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::rules::{Call, SeatView};
use crate::seat::Seat;

/// Where each field lives in the observation (`start..end` ranges).
pub mod layout {
    use std::ops::Range;

    const fn after(prev: Range<usize>, len: usize) -> Range<usize> {
        prev.end..prev.end + len
    }

    /// The observer's hand: 1.0 per card held.
    pub const HAND: Range<usize> = 0..53;
    /// The observer's own exchange discards (non-dealer) or dealer's discard.
    pub const OWN_DISCARDED: Range<usize> = after(HAND, 53);
    /// The cards the observer drew from the stock (for the dealer: its pickup).
    pub const OWN_DRAWN: Range<usize> = after(OWN_DISCARDED, 53);
    /// Cards the observer has not seen anywhere (in other hands, discards or
    /// the stock): 1.0 per card.
    pub const UNSEEN: Range<usize> = after(OWN_DRAWN, 53);
    /// Cards played this deal, completed tricks and the current one, by
    /// relative seat: block `r` (53 wide) for relative seat `r`.
    pub const PLAYED_BY: Range<usize> = after(UNSEEN, 6 * 53);
    /// The current trick's cards by relative seat (block `r`, 53 wide).
    pub const TRICK_BY: Range<usize> = after(PLAYED_BY, 6 * 53);
    /// Suits not followed (RULES.md §20): block `r` (4 wide, S H D C) for
    /// relative seat `r`, 1.0 where that seat played off that led effective
    /// suit this deal. A void, except under the `trump_anytime` variant when
    /// the card played was a trump (the view does not carry the rules).
    pub const VOID: Range<usize> = after(TRICK_BY, 6 * 4);
    /// The auction: block `r` (5 wide) for relative seat `r`: pass, 3, 4, 5, 6
    /// (all zero: not called yet this deal).
    pub const BIDS: Range<usize> = after(VOID, 6 * 5);
    /// The bidder, one-hot over relative seats, once bidding is over.
    pub const BIDDER: Range<usize> = after(BIDS, 6);
    /// The winning bid, one-hot over 3, 4, 5, 6.
    pub const BID: Range<usize> = after(BIDDER, 4);
    /// Trump, one-hot over S, H, D, C.
    pub const TRUMP: Range<usize> = after(BID, 4);
    /// The dealer, one-hot over relative seats.
    pub const DEALER: Range<usize> = after(TRUMP, 6);
    /// Exchange counts: block `r` (4 wide: 0, 1, 2, 3 cards) for relative
    /// seat `r` once it has exchanged.
    pub const EXCHANGED: Range<usize> = after(DEALER, 6 * 4);
    /// The dealer's pickup: [known flag, cards / 17].
    pub const PICKUP: Range<usize> = after(EXCHANGED, 2);
    /// Scores before this hand by relative team, divided by the target.
    pub const SCORES: Range<usize> = after(PICKUP, 3);
    /// The decision due, one-hot: bid, trump, exchange, discard, play.
    pub const PHASE: Range<usize> = after(SCORES, 5);
    /// The seat to act, one-hot over relative seats (worked out from the view).
    pub const TO_ACT: Range<usize> = after(PHASE, 6);
    /// The current trick's leader, one-hot over relative seats (play only).
    pub const LEADER: Range<usize> = after(TO_ACT, 6);
    /// Completed tricks / 6.
    pub const TRICKS_DONE: Range<usize> = after(LEADER, 1);
    /// Points already decided this hand (RULES.md §23): block `p` (3 wide,
    /// relative teams) for High, Low, Right, Left, Joker; 1.0 for the team
    /// that holds that point (High/Low: played the trump A/2; the others: won
    /// the trick with that card).
    pub const POINTS: Range<usize> = after(TRICKS_DONE, 5 * 3);
    /// Game count (RULES.md §23) of the tricks won so far, by relative team,
    /// divided by 81 (every card's value).
    pub const GAME_COUNT: Range<usize> = after(POINTS, 3);
    /// Deal number within the game / 200 (the hand cap).
    pub const DEAL: Range<usize> = after(GAME_COUNT, 1);

    /// The observation's length.
    pub const LEN: usize = DEAL.end;
}

/// Length of an observation (see [`layout`]).
pub const OBSERVATION_LEN: usize = layout::LEN;

/// Writes the observation of `view` into `out` (all of it: every element is
/// set). Panics unless `out.len() == OBSERVATION_LEN`.
pub fn encode_into(view: &SeatView, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        OBSERVATION_LEN,
        "an observation is {OBSERVATION_LEN} floats"
    );
    out.fill(0.0);
    let me = view.seat;
    let rel = |s: Seat| (s.index() + 6 - me.index()) % 6;
    let rel_team = |t: usize| (t + 3 - me.team().index()) % 3;
    let mut o = Writer(out);
    o.cards(layout::HAND.start, view.hand);
    let own = view.own_exchange;
    let (discarded, drawn) =
        own.map_or((CardSet::EMPTY, CardSet::EMPTY), |e| (e.discarded, e.drawn));
    o.cards(layout::OWN_DISCARDED.start, discarded);
    o.cards(layout::OWN_DRAWN.start, drawn);
    let mut seen = view.hand.union(discarded).union(drawn);
    for t in view.tricks.iter().chain(view.trick.as_ref()) {
        for p in &t.cards {
            seen.insert(p.card);
            o.set(layout::PLAYED_BY.start + 53 * rel(p.seat) + p.card.index());
        }
    }
    o.cards(layout::UNSEEN.start, CardSet::FULL.difference(seen));
    if let Some(trick) = &view.trick {
        for p in &trick.cards {
            o.set(layout::TRICK_BY.start + 53 * rel(p.seat) + p.card.index());
        }
        o.set(layout::LEADER.start + rel(trick.leader));
    }
    auction(view, &mut o, &rel);
    o.set(layout::DEALER.start + rel(view.dealer));
    for e in &view.exchanges {
        o.set(layout::EXCHANGED.start + 4 * rel(e.seat) + (e.count as usize).min(3));
    }
    if let Some(p) = view.dealer_pickup {
        o.0[layout::PICKUP.start] = 1.0;
        o.0[layout::PICKUP.start + 1] = p as f32 / 17.0;
    }
    let target = view.target.max(1) as f32;
    for (t, &score) in view.scores.iter().enumerate() {
        o.0[layout::SCORES.start + rel_team(t)] = score as f32 / target;
    }
    let (phase, to_act) = phase_and_turn(view);
    o.set(layout::PHASE.start + phase);
    o.set(layout::TO_ACT.start + rel(to_act));
    o.0[layout::TRICKS_DONE.start] = view.tricks.len() as f32 / 6.0;
    if let Some(trump) = view.trump {
        o.set(layout::TRUMP.start + trump.index());
        play_facts(view, trump, &mut o, &rel, &rel_team);
    }
    o.0[layout::DEAL.start] = view.deal as f32 / 200.0;
}

/// An observation of `view` in a new vector.
pub fn encode(view: &SeatView) -> Vec<f32> {
    let mut out = vec![0.0; OBSERVATION_LEN];
    encode_into(view, &mut out);
    out
}

struct Writer<'a>(&'a mut [f32]);

impl Writer<'_> {
    fn set(&mut self, i: usize) {
        self.0[i] = 1.0;
    }

    fn cards(&mut self, start: usize, cards: CardSet) {
        for c in cards {
            self.0[start + c.index()] = 1.0;
        }
    }
}

fn auction(view: &SeatView, o: &mut Writer, rel: &dyn Fn(Seat) -> usize) {
    for call in &view.bids {
        let k = match call.bid {
            Call::Pass => 0,
            Call::Bid(n) => usize::from(n.clamp(3, 6) - 2),
        };
        o.set(layout::BIDS.start + 5 * rel(call.seat) + k);
    }
    if let Some(b) = view.bidder {
        o.set(layout::BIDDER.start + rel(b));
    }
    if let Some(n) = view.bid {
        o.set(layout::BID.start + usize::from(n.clamp(3, 6) - 3));
    }
}

/// The decision due (index into [`layout::PHASE`]) and who owes it, from the
/// view's shape (as `Game::view` builds it).
fn phase_and_turn(view: &SeatView) -> (usize, Seat) {
    let dealer = view.dealer;
    if let Some(trick) = &view.trick {
        return (4, trick.leader.plus(trick.cards.len()));
    }
    if view.dealer_pickup.is_some() {
        return (3, dealer);
    }
    if view.trump.is_some() {
        return (2, dealer.plus(1 + view.exchanges.len()));
    }
    match view.bidder {
        Some(b) => (1, b),
        None => (0, dealer.plus(1 + view.bids.len())),
    }
}

/// Voids, points decided and game counts, from the tricks.
fn play_facts(
    view: &SeatView,
    trump: Suit,
    o: &mut Writer,
    rel: &dyn Fn(Seat) -> usize,
    rel_team: &dyn Fn(usize) -> usize,
) {
    for t in view.tricks.iter().chain(view.trick.as_ref()) {
        let Some(first) = t.cards.first() else {
            continue;
        };
        let led = first.card.effective_suit(trump);
        for p in &t.cards[1..] {
            if p.card.effective_suit(trump) != led {
                o.set(layout::VOID.start + 4 * rel(p.seat) + led.index());
            }
        }
        let high = Card::new(Rank::Ace, trump);
        let low = Card::new(Rank::Two, trump);
        for p in &t.cards {
            let team = rel_team(p.seat.team().index());
            if p.card == high {
                o.set(layout::POINTS.start + team);
            }
            if p.card == low {
                o.set(layout::POINTS.start + 3 + team);
            }
        }
        let Some(winner) = t.winner else { continue };
        let team = rel_team(winner.team().index());
        for p in &t.cards {
            let block = if p.card == Card::right_bower(trump) {
                Some(2)
            } else if p.card == Card::left_bower(trump) {
                Some(3)
            } else if p.card.is_joker() {
                Some(4)
            } else {
                None
            };
            if let Some(b) = block {
                o.set(layout::POINTS.start + 3 * b + team);
            }
            o.0[layout::GAME_COUNT.start + team] += p.card.game_value() as f32 / 81.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{first_legal, random_legal, Action, Game, RulesConfig};
    use crate::shuffle::SeededRng;

    fn card(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn set(cards: &[&str]) -> CardSet {
        cards.iter().map(|c| card(c)).collect()
    }

    /// The block `range` as the set of its 1.0 positions.
    fn ones(obs: &[f32], range: std::ops::Range<usize>) -> Vec<usize> {
        obs[range.clone()]
            .iter()
            .enumerate()
            .filter(|(_, &x)| x == 1.0)
            .map(|(i, _)| i)
            .collect()
    }

    fn cards_in(obs: &[f32], start: usize) -> CardSet {
        ones(obs, start..start + 53)
            .into_iter()
            .map(Card::from_index)
            .collect()
    }

    #[test]
    fn the_layout_is_contiguous_and_fixed() {
        use layout::*;
        let fields = [
            HAND,
            OWN_DISCARDED,
            OWN_DRAWN,
            UNSEEN,
            PLAYED_BY,
            TRICK_BY,
            VOID,
            BIDS,
            BIDDER,
            BID,
            TRUMP,
            DEALER,
            EXCHANGED,
            PICKUP,
            SCORES,
            PHASE,
            TO_ACT,
            LEADER,
            TRICKS_DONE,
            POINTS,
            GAME_COUNT,
            DEAL,
        ];
        assert_eq!(fields[0].start, 0);
        for w in fields.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert_eq!(fields[fields.len() - 1].end, OBSERVATION_LEN);
        assert_eq!(
            OBSERVATION_LEN,
            53 * 4 + 6 * 53 * 2 + 24 + 30 + 6 + 4 + 4 + 6 + 24 + 2 + 3 + 5 + 6 + 6 + 1 + 15 + 3 + 1
        );
    }

    /// RULES.md §8 case 4 (trump ♥, the joker led; a hand {♥3, ♣A, ...} must
    /// play ♥3), seen by seat 2 as it must answer, field by field.
    #[test]
    fn worked_example() {
        let mut hands = [CardSet::EMPTY; 6];
        hands[1] = set(&["JK", "2C", "3C", "4C", "5C", "6C"]);
        hands[2] = set(&["3H", "AC", "2S", "3S", "4S", "5S"]);
        let mut rest = CardSet::FULL
            .difference(hands[1])
            .difference(hands[2])
            .iter();
        for h in [0, 3, 4, 5] {
            hands[h] = rest.by_ref().take(6).collect();
        }
        let stock: Vec<Card> = rest.collect();
        let dealer = Seat::new(0);
        let mut game = Game::from_deal(
            1,
            RulesConfig::default(),
            dealer,
            hands,
            stock.try_into().unwrap(),
            &mut Vec::new(),
        );
        let go = |g: &mut Game, a: Action| g.apply(a).unwrap();
        go(&mut game, Action::Bid(3));
        for _ in 0..5 {
            go(&mut game, Action::Pass);
        }
        go(&mut game, Action::Trump(Suit::Hearts));
        for _ in 0..5 {
            go(&mut game, Action::Exchange(CardSet::EMPTY));
        }
        let discard = first_legal(&game);
        go(&mut game, discard);
        go(&mut game, Action::Play(Card::JOKER));
        let me = Seat::new(2);
        assert_eq!(game.to_act(), Some(me));
        assert_eq!(
            game.legal_plays(),
            set(&["3H"]),
            "RULES.md §8 case 4: the ♥3 is forced"
        );
        let obs = encode(&game.view(me));
        assert_eq!(obs.len(), OBSERVATION_LEN);
        // Seat 1 is relative seat 5 from seat 2; the dealer, seat 0, is 4.
        assert_eq!(cards_in(&obs, layout::HAND.start), hands[2]);
        assert_eq!(
            cards_in(&obs, layout::TRICK_BY.start + 5 * 53),
            set(&["JK"])
        );
        assert_eq!(
            cards_in(&obs, layout::PLAYED_BY.start + 5 * 53),
            set(&["JK"])
        );
        for r in 0..5 {
            assert!(cards_in(&obs, layout::PLAYED_BY.start + r * 53).is_empty());
        }
        assert_eq!(
            cards_in(&obs, layout::UNSEEN.start),
            CardSet::FULL.difference(hands[2]).difference(set(&["JK"]))
        );
        assert!(cards_in(&obs, layout::OWN_DISCARDED.start).is_empty());
        assert_eq!(ones(&obs, layout::TRUMP), vec![Suit::Hearts.index()]);
        assert_eq!(ones(&obs, layout::BIDDER), vec![5]);
        assert_eq!(ones(&obs, layout::BID), vec![0], "a bid of 3");
        assert_eq!(ones(&obs, layout::DEALER), vec![4]);
        assert_eq!(ones(&obs, layout::PHASE), vec![4], "play");
        assert_eq!(ones(&obs, layout::TO_ACT), vec![0]);
        assert_eq!(ones(&obs, layout::LEADER), vec![5]);
        // Seat 1 bid 3 (block 5, slot 1); the others passed (slot 0).
        let bids = ones(&obs, layout::BIDS);
        assert_eq!(bids, vec![0, 5, 10, 15, 20, 5 * 5 + 1]);
        // Everyone exchanged 0 cards; the dealer picked up all 17.
        assert_eq!(ones(&obs, layout::EXCHANGED), vec![0, 4, 8, 12, 20]);
        assert_eq!(&obs[layout::PICKUP], &[1.0, 1.0]);
        assert_eq!(&obs[layout::SCORES], &[0.0; 3]);
        assert_eq!(obs[layout::TRICKS_DONE.start], 0.0);
        assert!(ones(&obs, layout::VOID).is_empty());
        assert!(ones(&obs, layout::POINTS).is_empty());
        assert_eq!(obs[layout::DEAL.start], 1.0 / 200.0);
        // Seat 2 plays the ♥3 and the trick goes round: seen by seat 2 again.
        go(&mut game, Action::Play(card("3H")));
        let mut rng = SeededRng::new(1, 1);
        while game.view(me).tricks.is_empty() {
            let a = random_legal(&game, &mut rng);
            go(&mut game, a);
        }
        let view = game.view(me);
        let obs = encode(&view);
        let trick = &view.tricks[0];
        let winner_team = (trick.winner.unwrap().team().index() + 3 - me.team().index()) % 3;
        // The Joker point (block 4) goes to the trick's winner; the count too.
        assert_eq!(
            ones(&obs, layout::POINTS.start + 12..layout::POINTS.start + 15),
            vec![winner_team]
        );
        let count: u32 = trick.cards.iter().map(|p| p.card.game_value()).sum();
        assert!((obs[layout::GAME_COUNT.start + winner_team] - count as f32 / 81.0).abs() < 1e-6);
        assert_eq!(obs[layout::TRICKS_DONE.start], 1.0 / 6.0);
        assert!(cards_in(&obs, layout::PLAYED_BY.start).contains(card("3H")));
        // Seat 1's clubs... any seat that did not follow hearts shows a void in H.
        for p in &trick.cards[1..] {
            let r = (p.seat.index() + 6 - 2) % 6;
            let off = !p.card.is_trump(Suit::Hearts);
            assert_eq!(
                obs[layout::VOID.start + 4 * r + Suit::Hearts.index()] == 1.0,
                off
            );
        }
    }

    /// Views that differ in one respect differ in the observation there, and
    /// the encoding writes every element (no stale values from the buffer).
    #[test]
    fn different_views_differ_where_they_should() {
        let (mut game, _) = Game::new(11, RulesConfig::default());
        let mut rng = SeededRng::new(11, 0);
        let mut buf = vec![7.0f32; OBSERVATION_LEN];
        for _ in 0..60 {
            let seat = game.to_act().unwrap();
            let before = game.view(seat);
            encode_into(&before, &mut buf);
            assert_eq!(buf, encode(&before), "every element is written");
            let a = random_legal(&game, &mut rng);
            game.apply(a).unwrap();
            let after = game.view(seat);
            let x = encode(&after);
            if let (Action::Play(c), true) = (a, after.deal == before.deal) {
                assert_eq!(buf[layout::HAND.start + c.index()], 1.0);
                assert_eq!(x[layout::HAND.start + c.index()], 0.0);
                assert_eq!(
                    x[layout::PLAYED_BY.start + c.index()],
                    1.0,
                    "relative seat 0 played it"
                );
            }
            assert_ne!(buf, x, "{a:?} changed nothing in {seat}'s observation");
            // Another seat sees the same public facts at other relative places.
            let other = encode(&game.view(seat.left()));
            assert_ne!(other, x);
        }
    }
}
