//! Drawing a placement of the unseen cards uniformly, by counting.
//!
//! Cards fall into a few *classes* (`seen::classes`: the trump suit split in
//! two, and each other suit) whose cards every constraint treats alike, and
//! places into *groups* of the same allowed classes. A uniform placement of
//! distinct cards is then drawn in two steps, both exact:
//!
//! 1. How many cards of each class go to each group, drawn with probability
//!    proportional to the number of placements with those counts. For counts
//!    `n[k][g]` that number is `Π_k |k|! / Π_g n[k][g]!` times a factor that
//!    depends only on the group sizes (`Π_g N_g! / Π_{place in g} size!`: how
//!    a group's cards split among its places), so the weight to sample by is
//!    `Π 1/n[k][g]!`. A dynamic programme over the constrained groups, with
//!    the cards left in each class as state, sums these weights (the free
//!    group's share ends each path); each state keeps its choices' cumulative
//!    weights so a draw walks one path through it.
//! 2. Which cards: a uniform subset of each class for each group, then a
//!    uniform split of each group's cards among its places (the stock in a
//!    uniform order).
//!
//! Places that accept every class form the one *free* group, which takes what
//! the constrained groups leave, so it adds no state.

use std::collections::HashMap;

use crate::card::Card;
use crate::cardset::CardSet;
use crate::rules::STOCK_SIZE;
use crate::shuffle::Draw;

use super::seen::Place;

/// Most constrained groups a view can produce: five other hands with
/// different voids, the non-trump discards, and the dealer's discard when it
/// may hold trumps.
pub(super) const MAX_GROUPS: usize = 8;

/// The `next` of a choice for the last class.
const LEAF: u32 = u32::MAX;

/// A place's allowed classes, as bits of a class mask.
pub(super) type Mask = u8;

#[derive(Clone, Debug)]
struct Group {
    allowed: Mask,
    cap: u32,
    places: Vec<(Place, u32)>,
}

/// Most card classes (`seen::classes`).
pub(super) const MAX_CLASSES: usize = 5;

#[derive(Clone, Copy, Debug)]
struct Choice {
    /// Cumulative weight of this node's choices up to this one.
    cum: f64,
    /// Cards of each class the group takes.
    counts: [u8; MAX_CLASSES],
    next: u32,
}

/// One state's choices: `choices[start..end]`.
#[derive(Clone, Copy, Debug)]
struct Node {
    start: u32,
    end: u32,
}

/// Where each unseen card is, in one sampled world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Placement {
    pub hands: [CardSet; 6],
    pub discards: [CardSet; 6],
    pub dealer_discard: CardSet,
    /// The undrawn stock, top first: `stock[..stock_len]`.
    pub stock: [Card; STOCK_SIZE],
    pub stock_len: usize,
}

impl Placement {
    const EMPTY: Placement = Placement {
        hands: [CardSet::EMPTY; 6],
        discards: [CardSet::EMPTY; 6],
        dealer_discard: CardSet::EMPTY,
        stock: [Card::JOKER; STOCK_SIZE],
        stock_len: 0,
    };

    fn put(&mut self, place: Place, cards: CardSet) {
        match place {
            Place::Hand(s) => self.hands[s.index()] = cards,
            Place::Discard(s) => self.discards[s.index()] = cards,
            Place::DealerDiscard => self.dealer_discard = cards,
            Place::Stock => unreachable!("the stock is dealt in order"),
        }
    }
}

/// The counting tables for one set of constraints.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The unseen cards of each class.
    classes: Vec<CardSet>,
    groups: Vec<Group>,
    free: Vec<(Place, u32)>,
    nodes: Vec<Node>,
    choices: Vec<Choice>,
    root: u32,
    /// How many placements there are, up to a factor common to every plan
    /// for the same view (0: none is consistent).
    pub total: f64,
}

impl Plan {
    /// `classes`: the unseen cards of each class; `places`: each place with its
    /// size and allowed classes (the stock, if any, first).
    pub fn new(classes: Vec<CardSet>, places: &[(Place, u32, Mask)]) -> Plan {
        let all: Mask = ((1u32 << classes.len()) - 1) as Mask;
        let mut groups: Vec<Group> = Vec::new();
        let mut free = Vec::new();
        for &(place, n, allowed) in places {
            if allowed & all == all {
                free.push((place, n));
                continue;
            }
            match groups.iter_mut().find(|g| g.allowed == allowed & all) {
                Some(g) => {
                    g.cap += n;
                    g.places.push((place, n));
                }
                None => groups.push(Group {
                    allowed: allowed & all,
                    cap: n,
                    places: vec![(place, n)],
                }),
            }
        }
        assert!(groups.len() <= MAX_GROUPS, "at most {MAX_GROUPS} groups");
        let mut plan = Plan {
            classes,
            groups,
            free,
            nodes: Vec::new(),
            choices: Vec::new(),
            root: LEAF,
            total: 0.0,
        };
        assert!(plan.classes.len() <= MAX_CLASSES);
        let mut rem = [0u8; MAX_CLASSES];
        for (r, c) in rem.iter_mut().zip(&plan.classes) {
            *r = c.len() as u8;
        }
        let (total, root) = Solver::new().solve(&mut plan, 0, rem);
        // Comparable across plans with the same places: times how many ways
        // each group's cards split among its places, up to a common factor.
        let sizes = plan.groups.iter().map(|g| g.cap);
        let free: u32 = plan.free.iter().map(|&(_, n)| n).sum();
        plan.total = sizes.chain([free]).fold(total, |w, n| w * factorial(n));
        plan.root = root;
        plan
    }

    /// Draws one placement (uniform among the consistent ones).
    pub fn draw<R: Draw + ?Sized>(&self, rng: &mut R) -> Placement {
        let mut pools = [CardSet::EMPTY; MAX_CLASSES];
        pools[..self.classes.len()].copy_from_slice(&self.classes);
        let mut out = Placement::EMPTY;
        let mut node = self.root;
        for group in &self.groups {
            let choice = self.pick(node, rng);
            let mut cards = CardSet::EMPTY;
            for (pool, &n) in pools.iter_mut().zip(&choice.counts) {
                if n > 0 {
                    let got = pool.pick_many(u32::from(n), |len| rng.below(len));
                    cards = cards.union(got);
                    *pool = pool.difference(got);
                }
            }
            spread(cards, &group.places, rng, &mut out);
            node = choice.next;
        }
        let free = pools.iter().fold(CardSet::EMPTY, |a, &p| a.union(p));
        spread(free, &self.free, rng, &mut out);
        out
    }

    fn pick<R: Draw + ?Sized>(&self, node: u32, rng: &mut R) -> Choice {
        let Node { start, end } = self.nodes[node as usize];
        let options = &self.choices[start as usize..end as usize];
        if options.len() == 1 {
            return options[0];
        }
        let u = unit(rng) * options[options.len() - 1].cum;
        *options
            .iter()
            .find(|c| c.cum > u)
            .unwrap_or(&options[options.len() - 1])
    }
}

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

/// A uniform draw from [0, 1) with 53 bits.
pub(super) fn unit<R: Draw + ?Sized>(rng: &mut R) -> f64 {
    let hi = f64::from(rng.below(1 << 26));
    let lo = f64::from(rng.below(1 << 27));
    (hi * (1u64 << 27) as f64 + lo) / (1u64 << 53) as f64
}

/// Splits `cards` uniformly among `places` (their sizes add up to its size).
fn spread<R: Draw + ?Sized>(
    mut cards: CardSet,
    places: &[(Place, u32)],
    rng: &mut R,
    out: &mut Placement,
) {
    for (i, &(place, n)) in places.iter().enumerate() {
        if place == Place::Stock {
            for slot in &mut out.stock[..n as usize] {
                let c = cards.pick(|len| rng.below(len)).expect("enough cards");
                cards.remove(c);
                *slot = c;
            }
            out.stock_len = n as usize;
        } else if i + 1 == places.len() {
            debug_assert_eq!(cards.len(), n);
            out.put(place, cards);
        } else {
            let got = cards.pick_many(n, |len| rng.below(len));
            cards = cards.difference(got);
            out.put(place, got);
        }
    }
}

/// The dynamic programme's working state.
struct Solver {
    memo: HashMap<u64, (f64, u32)>,
    inv_fact: [f64; 64],
}

impl Solver {
    fn new() -> Solver {
        let mut inv_fact = [1.0f64; 64];
        for n in 1..64 {
            inv_fact[n] = inv_fact[n - 1] / n as f64;
        }
        Solver {
            memo: HashMap::new(),
            inv_fact,
        }
    }

    /// The summed weight of filling groups `g..` from the unseen cards left
    /// in each class, `rem` (the free group takes the rest), and the node
    /// holding group `g`'s choices.
    fn solve(&mut self, plan: &mut Plan, g: usize, rem: [u8; MAX_CLASSES]) -> (f64, u32) {
        if g == plan.groups.len() {
            let w = rem.iter().map(|&r| self.inv_fact[usize::from(r)]).product();
            return (w, LEAF);
        }
        let key = rem.iter().fold(g as u64, |acc, &r| acc << 6 | u64::from(r));
        if let Some(&hit) = self.memo.get(&key) {
            return hit;
        }
        let group = &plan.groups[g];
        let allowed: Vec<usize> = (0..plan.classes.len())
            .filter(|&k| group.allowed & (1 << k) != 0)
            .collect();
        let mut options = Vec::new();
        compositions(&allowed, &rem, group.cap, [0; MAX_CLASSES], &mut options);
        let mut local: Vec<Choice> = Vec::new();
        let mut cum = 0.0;
        for n in options {
            let mut w = 1.0;
            let mut next = rem;
            for &k in &allowed {
                w *= self.inv_fact[usize::from(n[k])];
                next[k] -= n[k];
            }
            let (child, at) = self.solve(plan, g + 1, next);
            if child > 0.0 {
                cum += w * child;
                local.push(Choice {
                    cum,
                    counts: n,
                    next: at,
                });
            }
        }
        let start = plan.choices.len() as u32;
        plan.choices.extend(local);
        let node = plan.nodes.len() as u32;
        plan.nodes.push(Node {
            start,
            end: plan.choices.len() as u32,
        });
        let result = if cum > 0.0 { (cum, node) } else { (0.0, LEAF) };
        self.memo.insert(key, result);
        result
    }
}

/// Every way to take exactly `need` cards from the classes `allowed` (at most
/// `rem[k]` of class `k`), appended to `out`.
fn compositions(
    allowed: &[usize],
    rem: &[u8; MAX_CLASSES],
    need: u32,
    acc: [u8; MAX_CLASSES],
    out: &mut Vec<[u8; MAX_CLASSES]>,
) {
    let Some((&k, rest)) = allowed.split_first() else {
        if need == 0 {
            out.push(acc);
        }
        return;
    };
    let most = u32::from(rem[k]).min(need);
    // What the later classes can still take bounds this one from below.
    let later: u32 = rest.iter().map(|&j| u32::from(rem[j])).sum();
    for n in need.saturating_sub(later)..=most {
        let mut next = acc;
        next[k] = n as u8;
        compositions(rest, rem, need - n, next, out);
    }
}
