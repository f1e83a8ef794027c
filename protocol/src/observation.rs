//! A fixed-size numeric encoding of a [`SeatView`], for learning code: what one
//! seat knows as [`OBSERVATION_LEN`] floats, every seat relative to the
//! observer (relative seat `r` is the seat `r` places left of it: 0 itself, 3
//! its partner), every card at its index (♠2..♠A, ♥2.., ♦2.., ♣2.., joker).
//!
//! | offset | length | what (1.0 = yes, 0.0 = no unless said) |
//! |---|---|---|
//! | 0 | 53 | the seat's hand |
//! | 53 | 6 × 53 | cards each relative seat played this hand (completed tricks and the current one) |
//! | 371 | 53 | cards of the trick in progress |
//! | 424 | 53 | cards the seat threw away itself (exchange, or as dealer its discard) |
//! | 477 | 53 | cards it drew (as dealer: picked up) |
//! | 530 | 5 | trump S, H, D, C, or none yet |
//! | 535 | 5 | stage: auction, naming trump, exchanges, dealer's discard, tricks |
//! | 540 | 6 | relative seat of the dealer |
//! | 546 | 7 | relative seat of the bidder, or none |
//! | 553 | 4 | the winning bid 3, 4, 5, 6 (none: all zero) |
//! | 557 | 6 × 6 | each relative seat's call: not yet, pass, 3, 4, 5, 6 |
//! | 593 | 6 × 5 | each relative seat's exchange count: not yet, 0, 1, 2, 3 |
//! | 623 | 1 | cards the dealer picked up / 17 (0 before) |
//! | 624 | 3 | scores of the observer's team, the team on its left, the team on its right, / target |
//! | 627 | 6 | relative seat leading the trick in progress (none: all zero) |
//! | 633 | 1 | completed tricks / 6 |
//!
//! The stage is read from the view alone (a bot has no more): the auction
//! until a bidder is known, then trump until it is named, then exchanges until
//! the dealer has picked up, the discard until the first trick starts.

use crate::card::Card;
use crate::cardset::CardSet;
use crate::rules::{Call, SeatView};
use crate::seat::Seat;

/// Length of [`encode_into`]'s output.
pub const OBSERVATION_LEN: usize = 634;

const HAND: usize = 0;
const PLAYED: usize = 53;
const TRICK: usize = 371;
const DISCARDED: usize = 424;
const DRAWN: usize = 477;
const TRUMP: usize = 530;
const STAGE: usize = 535;
const DEALER: usize = 540;
const BIDDER: usize = 546;
const BID: usize = 553;
const CALLS: usize = 557;
const EXCHANGES: usize = 593;
const PICKUP: usize = 623;
const SCORES: usize = 624;
const LEADER: usize = 627;
const TRICKS: usize = 633;

fn cards(out: &mut [f32], at: usize, set: CardSet) {
    for c in set.iter() {
        out[at + c.index()] = 1.0;
    }
}

fn card(out: &mut [f32], at: usize, c: Card) {
    out[at + c.index()] = 1.0;
}

/// Writes the encoding of `view` into `out` (all of it: zeros first). Panics
/// unless `out` has [`OBSERVATION_LEN`] elements.
pub fn encode_into(view: &SeatView, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        OBSERVATION_LEN,
        "an observation has OBSERVATION_LEN floats"
    );
    out.fill(0.0);
    let me = view.seat;
    let rel = |s: Seat| (s.index() + 6 - me.index()) % 6;
    cards(out, HAND, view.hand);
    for t in view.tricks.iter().chain(view.trick.iter()) {
        for p in &t.cards {
            card(out, PLAYED + 53 * rel(p.seat), p.card);
        }
    }
    if let Some(t) = &view.trick {
        for p in &t.cards {
            card(out, TRICK, p.card);
        }
        out[LEADER + rel(t.leader)] = 1.0;
    }
    if let Some(own) = &view.own_exchange {
        cards(out, DISCARDED, own.discarded);
        cards(out, DRAWN, own.drawn);
    }
    out[TRUMP + view.trump.map_or(4, |s| s.index())] = 1.0;
    let stage = match (view.bidder, view.trump, view.dealer_pickup, &view.trick) {
        (None, ..) => 0,
        (Some(_), None, ..) => 1,
        (Some(_), Some(_), None, _) => 2,
        (Some(_), Some(_), Some(_), None) => 3,
        _ => 4,
    };
    out[STAGE + stage] = 1.0;
    out[DEALER + rel(view.dealer)] = 1.0;
    out[BIDDER + view.bidder.map_or(6, rel)] = 1.0;
    if let Some(b) = view.bid.filter(|b| (3..=6).contains(b)) {
        out[BID + usize::from(b) - 3] = 1.0;
    }
    let mut called = [0usize; 6];
    for c in &view.bids {
        called[rel(c.seat)] = match c.bid {
            Call::Pass => 1,
            Call::Bid(n) => usize::from(n.clamp(3, 6)) - 1,
        };
    }
    let mut exchanged = [0usize; 6];
    for e in &view.exchanges {
        exchanged[rel(e.seat)] = 1 + e.count.min(3) as usize;
    }
    for r in 0..6 {
        out[CALLS + 6 * r + called[r]] = 1.0;
        out[EXCHANGES + 5 * r + exchanged[r]] = 1.0;
    }
    out[PICKUP] = view.dealer_pickup.unwrap_or(0) as f32 / 17.0;
    let target = view.target.max(1) as f32;
    for k in 0..3 {
        out[SCORES + k] = view.scores[(me.team().index() + k) % 3] as f32 / target;
    }
    out[TRICKS] = view.tricks.len() as f32 / 6.0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{random_legal, Game, RulesConfig};
    use crate::shuffle::SeededRng;

    /// Invariants of every encoding along random games: one-hot groups have
    /// exactly one 1, the hand block is the hand, and the played blocks hold
    /// each played card once, under the seat that played it.
    #[test]
    fn encodings_follow_the_layout() {
        let mut out = vec![0.0; OBSERVATION_LEN];
        for seed in 0..5 {
            let (mut game, _) = Game::new(seed, RulesConfig::default());
            let mut rng = SeededRng::new(seed, 1);
            let mut steps = 0;
            while !game.is_over() && steps < 3000 {
                let seat = game.to_act().unwrap();
                let view = game.view(seat);
                encode_into(&view, &mut out);
                let ones =
                    |at: usize, n: usize| out[at..at + n].iter().filter(|&&x| x == 1.0).count();
                for (at, n) in [(TRUMP, 5), (STAGE, 5), (DEALER, 6), (BIDDER, 7)] {
                    assert_eq!(ones(at, n), 1, "group at {at}");
                }
                for r in 0..6 {
                    assert_eq!(ones(CALLS + 6 * r, 6), 1);
                    assert_eq!(ones(EXCHANGES + 5 * r, 5), 1);
                }
                assert_eq!(ones(HAND, 53), game.hand(seat).len() as usize);
                assert_eq!(out[DEALER], f32::from(game.dealer() == seat));
                let played: usize = view.tricks.iter().map(|t| t.cards.len()).sum::<usize>()
                    + view.trick.as_ref().map_or(0, |t| t.cards.len());
                assert_eq!(ones(PLAYED, 6 * 53), played);
                game.apply(random_legal(&game, &mut rng)).unwrap();
                steps += 1;
            }
        }
    }
}
