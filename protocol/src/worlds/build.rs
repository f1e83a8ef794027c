//! From a placement of the unseen cards to a full [`Game`]: the history that
//! leads there (the deal, each exchange, the dealer's pickup), replayed once
//! through the rules engine to make a template world, then re-dealt into a copy
//! of the template for every further world.

use crate::card::Card;
use crate::cardset::CardSet;
use crate::rules::{Action, Call, Game, Hidden, RulesConfig, SeatView, STOCK_SIZE};
use crate::shuffle::Draw;

use super::count::Placement;
use super::seen::{Seen, Stage};
use super::WorldError;

/// One world's hidden state, and the deal it started from.
pub(super) struct Built {
    pub hidden: Hidden,
    /// Each seat's six cards as dealt.
    pub dealt: [CardSet; 6],
}

/// Completes `placement` into a history: which of each exchanger's cards it
/// drew (a uniform choice), which of the dealer's cards came from the stock
/// (likewise), and the stock order those draws imply.
pub(super) fn complete<R: Draw + ?Sized>(
    seen: &Seen,
    view: &SeatView,
    placement: &Placement,
    rng: &mut R,
) -> Built {
    let me = seen.me;
    let mut hands = placement.hands;
    hands[me.index()] = view.hand;
    let mut hidden = Hidden {
        seed: world_seed(rng),
        hands,
        stock: [Card::JOKER; STOCK_SIZE],
        exchanges: [None; 6],
        dealer_pickup: CardSet::EMPTY,
        dealer_discard: None,
    };
    let mut dealt: [CardSet; 6] = std::array::from_fn(|s| hands[s].union(seen.played[s]));
    let own = view.own_exchange;
    let mut top = 0;
    for &(s, k) in &seen.exchanges {
        let (discarded, drawn) = match own {
            Some(own) if s == me => (own.discarded, own.drawn),
            _ => (
                placement.discards[s.index()],
                dealt[s.index()].pick_many(k, |len| rng.below(len)),
            ),
        };
        hidden.exchanges[s.index()] = Some((discarded, drawn));
        dealt[s.index()] = dealt[s.index()].difference(drawn).union(discarded);
        for c in drawn {
            hidden.stock[top] = c;
            top += 1;
        }
    }
    if seen.stage >= Stage::DealerDiscard {
        let d = seen.dealer.index();
        let (discard, pickup) = match own {
            Some(own) if seen.dealer == me => (own.discarded, own.drawn),
            _ => {
                let discard = placement.dealer_discard;
                let all = dealt[d].union(discard);
                (discard, all.pick_many(seen.pickup, |len| rng.below(len)))
            }
        };
        dealt[d] = dealt[d].union(discard).difference(pickup);
        hidden.dealer_pickup = pickup;
        hidden.dealer_discard = (seen.stage == Stage::Play).then_some(discard);
        for c in pickup {
            hidden.stock[top] = c;
            top += 1;
        }
    } else {
        hidden.stock[top..].copy_from_slice(&placement.stock[..placement.stock_len]);
        top += placement.stock_len;
    }
    debug_assert_eq!(top, STOCK_SIZE);
    Built { hidden, dealt }
}

/// The seed of the deals after this one: unknown to everybody, so drawn.
fn world_seed<R: Draw + ?Sized>(rng: &mut R) -> u64 {
    (0..4).fold(0u64, |acc, _| acc << 16 | u64::from(rng.below(1 << 16)))
}

/// The world `built` describes, made by replaying the view's public history
/// through the rules engine from the deal: every step is checked, and the
/// result must show the seat exactly `view`.
pub(super) fn replay(
    view: &SeatView,
    rules: RulesConfig,
    streak: u32,
    built: &Built,
) -> Result<Game, WorldError> {
    let h = &built.hidden;
    let mut game = Game::from_deal_at(
        h.seed,
        rules,
        view.dealer,
        view.deal,
        view.scores,
        streak,
        built.dealt,
        h.stock,
    );
    let mut out = Vec::new();
    let mut step = |game: &mut Game, action: Action| {
        out.clear();
        game.apply_into(action, &mut out)
            .map_err(|error| WorldError::Replay {
                action: format!("{action:?}"),
                error,
            })
    };
    for call in &view.bids {
        step(
            &mut game,
            match call.bid {
                Call::Pass => Action::Pass,
                Call::Bid(n) => Action::Bid(n),
            },
        )?;
    }
    if let Some(trump) = view.trump {
        step(&mut game, Action::Trump(trump))?;
    }
    for e in &view.exchanges {
        let (discarded, _) = h.exchanges[e.seat.index()].unwrap_or_default();
        step(&mut game, Action::Exchange(discarded))?;
    }
    if let Some(discard) = h.dealer_discard {
        step(&mut game, Action::Discard(discard))?;
    }
    for t in view.tricks.iter().chain(view.trick.as_ref()) {
        for p in &t.cards {
            step(&mut game, Action::Play(p.card))?;
        }
    }
    if game.view(view.seat) != *view {
        return Err(WorldError::Mismatch);
    }
    debug_assert!(crate::seat::Seat::all().all(|s| game.hand(s) == h.hands[s.index()]));
    Ok(game)
}
