//! The gauntlet: each challenger plays every pair of the other (pool) entrants,
//! all in one round; the standings add each challenger's score difference to
//! each opponent.

use anyhow::{bail, Context};

use super::{Format, Pairing, Params};
use crate::tournament::schedule::GameResult;

pub struct Gauntlet<'a> {
    /// Entrant indices of the challengers, in the order given.
    pub challengers: &'a [usize],
}

impl Pairing for Gauntlet<'_> {
    fn title(&self, name: &dyn Fn(usize) -> String) -> String {
        let who: Vec<String> = self.challengers.iter().map(|&c| name(c)).collect();
        format!("gauntlet of {}", who.join(", "))
    }

    fn tables(&self, entrants: usize, _r: u32, _before: &[GameResult]) -> Vec<[usize; 3]> {
        let pool: Vec<usize> = (0..entrants).filter(|e| !self.is_challenger(*e)).collect();
        self.challengers
            .iter()
            .flat_map(|&c| pairs(&pool).into_iter().map(move |[a, b]| [c, a, b]))
            .collect()
    }

    fn head_to_head(&self, entrants: usize) -> Vec<(usize, usize)> {
        self.challengers
            .iter()
            .flat_map(|&c| {
                (0..entrants)
                    .filter(|o| !self.is_challenger(*o))
                    .map(move |o| (c, o))
            })
            .collect()
    }
}

impl Gauntlet<'_> {
    fn is_challenger(&self, e: usize) -> bool {
        self.challengers.contains(&e)
    }
}

/// `--format gauntlet`: the challengers by name (each once), with at least two
/// other entrants to play against.
pub(super) fn build(p: &Params) -> anyhow::Result<Format> {
    if p.challengers.is_empty() {
        bail!("--format gauntlet: name at least one --challenger");
    }
    let mut challengers = Vec::new();
    for name in p.challengers {
        let i = p
            .entrants
            .iter()
            .position(|e| e == name)
            .with_context(|| format!("--challenger {name:?}: no entrant has that name"))?;
        if !challengers.contains(&i) {
            challengers.push(i);
        }
    }
    if p.entrants.len() - challengers.len() < 2 {
        bail!("--format gauntlet: a challenger needs at least two other entrants to play against");
    }
    Ok(Format::Gauntlet { challengers })
}

/// A gauntlet of `entrants` for the property tests: one challenger (the first)
/// or two (the last and the second) by `choice`; none when too few are left.
#[cfg(test)]
pub(super) fn sample(entrants: usize, choice: u64) -> Option<Format> {
    let challengers = if choice.is_multiple_of(2) {
        vec![0]
    } else {
        vec![entrants - 1, 1]
    };
    (entrants - challengers.len() >= 2).then_some(Format::Gauntlet { challengers })
}

/// Every 2-element subset of `items`, in lexicographic order.
fn pairs(items: &[usize]) -> Vec<[usize; 2]> {
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for &b in &items[i + 1..] {
            out.push([a, b]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{matchups, Format};

    #[test]
    fn gauntlet_puts_each_challenger_against_every_pool_pair() {
        let ms = matchups(
            6,
            &Format::Gauntlet {
                challengers: vec![4, 1],
            },
            2,
            9,
        );
        // Pool {0, 2, 3, 5}: 6 pairs, for each of 2 challengers.
        assert_eq!(ms.len(), 12);
        for (i, m) in ms.iter().enumerate() {
            let challenger = if i < 6 { 4 } else { 1 };
            assert_eq!(m.entrants[0], challenger);
            assert!(!m.entrants[1..].contains(&4) && !m.entrants[1..].contains(&1));
            assert_eq!(m.games(), 12);
        }
    }
}
