//! World sampling: full [`Game`] states consistent with what one seat has seen,
//! for search bots (PIMC, ISMCTS) that must guess the cards they cannot see.
//!
//! ```
//! use schmier_protocol::rules::{Game, RulesConfig};
//! use schmier_protocol::worlds::{sample_worlds, WorldSampler};
//! use schmier_protocol::shuffle::SeededRng;
//!
//! let (game, _) = Game::new(7, RulesConfig::default());
//! let seat = game.to_act().unwrap();
//! let view = game.view(seat); // or a request's `view`, read from JSON
//! let worlds = sample_worlds(&view, 100, 1).unwrap();
//! assert!(worlds.iter().all(|w| w.view(seat) == view));
//!
//! let sampler = WorldSampler::new(&view).unwrap(); // reusable, and `Sync`
//! let mut rng = SeededRng::new(2, 0);
//! let world: Game = sampler.sample(&mut rng);
//! assert_eq!(world.view(seat), view);
//! ```
//!
//! # What a world is, and what "uniform" means
//!
//! The input is a [`SeatView`] exactly as the referee sends it in a request
//! (PROTOCOL.md), for the seat to act or any other, at any point of a deal in
//! progress. Every returned world is a [`Game`] whose `view(seat)` equals it,
//! reached from a deal by the public history (bids, trump, exchange counts,
//! the dealer's pickup, every card played) under the rules (RULES.md), so it
//! honours everything the seat has seen: its hand and own exchange, voids shown
//! by not following suit (§12's suits: the left bower and joker are trumps; under
//! `trump_anytime` a trump played on a plain suit shows nothing), no trump among
//! a non-dealer's discards (§13), the dealer's discard rules (§16: keep
//! min(T, 6) trumps, never a protected card), and the counts everyone saw.
//!
//! A *deal* here is where every card the seat has not seen is now: each other
//! seat's hand, each other non-dealer's exchange discards, the dealer's
//! discard (when the dealer is another seat), and the undrawn stock in order.
//! Worlds are **uniform over the consistent deals**: the other seats are not
//! modelled (no card is likelier in a hand because of how its owner bid or
//! played), only what the rules exclude. Each such deal arises from the same
//! number of original deals (hands + 17-card stock order) with the same public
//! history, so this is also uniform over original deals; the history a world
//! records (which of an exchanger's cards were drawn, which of the dealer's
//! came from the stock) is a uniform choice among those that fit, with the
//! drawn cards in card order within each seat's stretch of the stock (no later
//! event depends on that order).
//!
//! The deals after this one come from each world's own seed, drawn from the
//! sampler's random stream. The thrown-in streak (consecutive all-pass deals
//! before this one, which decides whether the dealer is stuck, RULES.md §8) is
//! not in the view: it is 0 unless given in [`Context`].
//!
//! # How
//!
//! `seen.rs` reads the view into unseen cards, places and voids; `count.rs`
//! draws a placement exactly uniformly by counting (a dynamic programme over
//! the card classes the constraints distinguish); `build.rs` turns it into a
//! history and a [`Game`]: the first world is replayed through the rules
//! engine (checking the view is possible at all), later ones copy it and
//! re-deal the hidden cards, which costs no replay.

mod build;
mod count;
mod seen;
#[cfg(test)]
mod tests;

use crate::rules::{Game, RuleError, RulesConfig, SeatView};
use crate::seat::Seat;
use crate::shuffle::{Draw, SeededRng};

use count::{Mask, Plan};
use seen::{Place, Seen, Stage};

/// Why no world can be sampled from a view.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    /// The view is of a finished game: no deal is in progress.
    #[error("the view shows no deal in progress (the game is over)")]
    GameOver,
    /// No deal fits the view (a card seen twice, counts that do not add up,
    /// voids that leave some hand nothing to hold).
    #[error("no deal is consistent with the view: {0}")]
    Inconsistent(String),
    /// The view's public history breaks the rules.
    #[error("the view's history breaks the rules at {action}: {error}")]
    Replay { action: String, error: RuleError },
    /// The history replays, but to a different view (a field that contradicts
    /// the others, such as the bidder or the team).
    #[error("the view's history replays to a different view")]
    Mismatch,
}

impl WorldError {
    fn inconsistent(why: impl Into<String>) -> WorldError {
        WorldError::Inconsistent(why.into())
    }
}

/// What a bot knows besides the view: the rules (from `game_start`) and the
/// thrown-in streak (from `thrown_in` events).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// The game's rules; `target` is taken from the view.
    pub rules: RulesConfig,
    /// Consecutive thrown-in deals just before this one (RULES.md §8).
    pub streak: u32,
}

/// Samples worlds for one view, as often as asked. Building it does the work
/// that does not depend on the random draws (reading the view, the counting
/// tables, one replay); [`WorldSampler::sample`] then costs a copy and a deal.
#[derive(Clone, Debug)]
pub struct WorldSampler {
    view: SeatView,
    seen: Seen,
    /// The placement tables: one, or two when the dealer (another seat) may
    /// have discarded trumps (then `plans[1]`, see `plan_set`).
    plans: Vec<Plan>,
    template: Game,
}

impl WorldSampler {
    /// A sampler under the default rules (with the view's target).
    pub fn new(view: &SeatView) -> Result<WorldSampler, WorldError> {
        WorldSampler::with_context(view, &Context::default())
    }

    /// A sampler under the given rules and streak.
    pub fn with_context(view: &SeatView, context: &Context) -> Result<WorldSampler, WorldError> {
        let mut rules = context.rules;
        rules.target = view.target;
        let seen = Seen::read(view, rules.trump_anytime)?;
        let plans = plan_set(&seen);
        if plans.iter().all(|p| p.total <= 0.0) {
            return Err(WorldError::inconsistent(
                "the voids shown leave the unseen cards nowhere to go",
            ));
        }
        let mut rng = SeededRng::new(0, 0);
        let placement = draw(&seen, &plans, &mut rng);
        let built = build::complete(&seen, view, &placement, &mut rng);
        let template = build::replay(view, rules, context.streak, &built)?;
        Ok(WorldSampler {
            view: view.clone(),
            seen,
            plans,
            template,
        })
    }

    /// The seat whose view this is.
    pub fn seat(&self) -> Seat {
        self.view.seat
    }

    /// One world, uniform over the deals consistent with the view (see the
    /// module doc), drawn from `rng`.
    pub fn sample<R: Draw + ?Sized>(&self, rng: &mut R) -> Game {
        let placement = draw(&self.seen, &self.plans, rng);
        let built = build::complete(&self.seen, &self.view, &placement, rng);
        let mut world = self.template.clone();
        world.set_hidden(&built.hidden);
        world
    }

    /// [`WorldSampler::sample`] by replaying the history through the rules
    /// engine instead of re-dealing the template (the same world for the same
    /// draws; slower; for tests).
    #[cfg(test)]
    fn sample_by_replay<R: Draw + ?Sized>(&self, rng: &mut R) -> Game {
        let placement = draw(&self.seen, &self.plans, rng);
        let built = build::complete(&self.seen, &self.view, &placement, rng);
        let streak = 0;
        build::replay(&self.view, *self.template.config(), streak, &built).expect("replays")
    }
}

/// `n` worlds for `view` under the default rules (see [`WorldSampler`]), from
/// the random stream `SeededRng::new(seed, 0)`: the same arguments give the
/// same worlds.
pub fn sample_worlds(view: &SeatView, n: usize, seed: u64) -> Result<Vec<Game>, WorldError> {
    sample_worlds_with(view, &Context::default(), n, seed)
}

/// [`sample_worlds`] under the given rules and streak.
pub fn sample_worlds_with(
    view: &SeatView,
    context: &Context,
    n: usize,
    seed: u64,
) -> Result<Vec<Game>, WorldError> {
    let sampler = WorldSampler::with_context(view, context)?;
    let mut rng = SeededRng::new(seed, 0);
    Ok((0..n).map(|_| sampler.sample(&mut rng)).collect())
}

/// Class bits (see `seen::classes`): 0 the protected trumps, 1 the other
/// trumps, 2-4 the other suits.
const TRUMP_CLASSES: Mask = 0b00011;
const OTHER_TRUMPS: Mask = 0b00010;
const NON_TRUMP: Mask = 0b11100;

/// The placement tables. The dealer's discard (RULES.md §16) holds no trump
/// unless the dealer kept six trumps, i.e. holds and has played only trumps;
/// then it may hold unprotected trumps. The second plan covers that case
/// loosely (it also counts discards without a trump, already in the first
/// plan); `draw` rejects those, which keeps the union uniform.
fn plan_set(seen: &Seen) -> Vec<Plan> {
    let mut plans = vec![plan(seen, false)];
    if let Some(trump) = seen.trump {
        let trumps = crate::cardset::CardSet::trumps(trump);
        let d = seen.dealer;
        if seen.stage == Stage::Play && d != seen.me && seen.played[d.index()].is_subset(trumps) {
            plans.push(plan(seen, true));
        }
    }
    plans
}

fn plan(seen: &Seen, dealer_kept_trumps: bool) -> Plan {
    let classes = seen::classes(seen.trump);
    let all: Mask = ((1u32 << classes.len()) - 1) as Mask;
    let known_trump = seen.trump.is_some();
    let places: Vec<(Place, u32, Mask)> = seen
        .places
        .iter()
        .map(|&(place, n)| {
            let allowed = match place {
                _ if !known_trump => all,
                Place::Stock => all,
                Place::Hand(s) => {
                    let barred = seen.barred[s.index()];
                    let mut m = classes
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.intersection(barred).is_empty())
                        .fold(0, |m, (k, _)| m | 1 << k);
                    if dealer_kept_trumps && s == seen.dealer {
                        m &= TRUMP_CLASSES;
                    }
                    m
                }
                Place::Discard(_) => NON_TRUMP,
                Place::DealerDiscard if dealer_kept_trumps => NON_TRUMP | OTHER_TRUMPS,
                Place::DealerDiscard => NON_TRUMP,
            };
            (place, n, allowed)
        })
        .collect();
    let unseen = classes
        .iter()
        .map(|&c| c.intersection(seen.unknown))
        .collect();
    Plan::new(unseen, &places)
}

/// One placement: a plan chosen by weight, then a draw from it (repeated when
/// the loose second plan gives a dealer's discard without a trump).
fn draw<R: Draw + ?Sized>(seen: &Seen, plans: &[Plan], rng: &mut R) -> count::Placement {
    let total: f64 = plans.iter().map(|p| p.total).sum();
    loop {
        let which = if plans.len() == 1 {
            0
        } else {
            let u = count::unit(rng) * total;
            usize::from(u >= plans[0].total)
        };
        let placement = plans[which].draw(rng);
        if which == 0 {
            return placement;
        }
        let trumps = crate::cardset::CardSet::trumps(seen.trump.expect("trump is named"));
        if !placement.dealer_discard.intersection(trumps).is_empty() {
            return placement;
        }
    }
}
