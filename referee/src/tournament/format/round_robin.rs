//! The round robin: every combination of three entrants plays one matchup, all
//! in one round.

use super::Pairing;
use crate::tournament::schedule::GameResult;

/// From this many entrants on, a round robin suggests the balanced format: its
/// tables grow with the cube of the field, the balanced format's with the square.
const HINT_FROM: usize = 9;

pub struct RoundRobin;

impl Pairing for RoundRobin {
    fn title(&self, _name: &dyn Fn(usize) -> String) -> String {
        "round robin".into()
    }

    fn tables(&self, entrants: usize, _r: u32, _before: &[GameResult]) -> Vec<[usize; 3]> {
        triples(&(0..entrants).collect::<Vec<_>>())
    }

    fn hint(&self, entrants: usize, tables: usize) -> Option<String> {
        let n = entrants;
        (n >= HINT_FROM).then(|| {
            format!(
                "a round robin of {n} entrants is {tables} tables; `--format balanced` \
                 has every pair meet exactly once in about {} tables (for 7, 9, 13, 15, 19, … entrants)",
                n * (n - 1) / 6
            )
        })
    }
}

/// Every 3-element subset of `items`, in lexicographic order.
fn triples(items: &[usize]) -> Vec<[usize; 3]> {
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for (j, &b) in items.iter().enumerate().skip(i + 1) {
            for &c in &items[j + 1..] {
                out.push([a, b, c]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{matchups, Format};

    fn binomial(n: usize, k: usize) -> usize {
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    }

    #[test]
    fn round_robin_has_every_triple_once() {
        for n in 3..9 {
            let ms = matchups(n, &Format::RoundRobin, 1, 1);
            assert_eq!(ms.len(), binomial(n, 3), "{n} entrants");
            let mut seen = std::collections::BTreeSet::new();
            for m in &ms {
                let [a, b, c] = m.entrants;
                assert!(a < b && b < c && c < n);
                assert!(seen.insert(m.entrants), "{:?} twice", m.entrants);
            }
            // Every pair meets the same number of times: n - 2.
            for a in 0..n {
                for b in a + 1..n {
                    let meets = ms
                        .iter()
                        .filter(|m| m.entrants.contains(&a) && m.entrants.contains(&b))
                        .count();
                    assert_eq!(meets, n - 2);
                }
            }
        }
    }
}
