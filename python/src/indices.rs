//! `Game.legal_indices()`'s list, built straight from the mask: a Python loop
//! calls it once a step (`random.choice(g.legal_indices())`).
//!
//! Why not collect a `Vec<usize>` and let PyO3 convert it: the filter over
//! the 63 entries did not vectorise and, with the vector's allocation, was
//! a tenth of that loop's time (`perf`, BENCHMARKS.md "Python library").
//! Folding the mask into one `u64` does vectorise, and the list is then
//! filled from its set bits, a handful a step, with no allocation of ours.

use schmier_protocol::action_space::ACTION_COUNT;

const _: () = assert!(ACTION_COUNT <= 64, "the action space fits one u64");

/// The mask as bits: bit `i` set when index `i` is legal.
pub fn bits(mask: &[bool; ACTION_COUNT]) -> u64 {
    mask.iter()
        .enumerate()
        .fold(0, |acc, (i, &legal)| acc | (u64::from(legal) << i))
}

/// The set bits' positions, increasing.
pub struct Indices(pub u64);

impl Iterator for Indices {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Indices {}
