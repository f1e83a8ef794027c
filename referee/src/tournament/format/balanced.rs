//! The balanced format: a subset of the round robin in which every pair of
//! entrants meets exactly once (a Steiner triple system), all in one round. It
//! exists for 1 or 3 more than a multiple of 6 entrants only.

use anyhow::bail;

use super::{Format, Pairing, Params};
use crate::tournament::schedule::GameResult;

pub struct Balanced;

impl Pairing for Balanced {
    fn title(&self, _name: &dyn Fn(usize) -> String) -> String {
        "balanced round robin".into()
    }

    fn tables(&self, entrants: usize, _r: u32, _before: &[GameResult]) -> Vec<[usize; 3]> {
        // A field without a system has no tables; `build` refuses it first.
        steiner_triples(entrants).unwrap_or_default()
    }
}

/// `--format balanced`, refused for a field no system exists for.
pub(super) fn build(p: &Params) -> anyhow::Result<Format> {
    let n = p.entrants.len();
    if steiner_triples(n).is_none() {
        let next = (n + 1..)
            .find(|m| m % 6 == 1 || m % 6 == 3)
            .expect("a size");
        bail!(
            "--format balanced: every pair can meet exactly once only with a number of \
             entrants that is 1 or 3 more than a multiple of 6 (7, 9, 13, 15, 19, …); \
             there are {n}; add entrants to make {next}, or use round-robin"
        );
    }
    Ok(Format::Balanced)
}

/// A Steiner triple system on `0..n`: triples in which every pair of points lies
/// in exactly one. Bose's construction for n ≡ 3 (mod 6) and Skolem's for
/// n ≡ 1 (mod 6) (as in Lindner and Rodger, *Design Theory*, ch. 1); `None` for
/// other n, where none exists. Triples sorted, each ascending.
pub fn steiner_triples(n: usize) -> Option<Vec<[usize; 3]>> {
    let mut out = Vec::new();
    match n % 6 {
        3 => {
            // Points (x, i), x in Z_m, i in Z_3, numbered x + m·i; m = n / 3 is
            // odd, and x∘y = (x + y)(m + 1)/2 mod m is an idempotent commutative
            // quasigroup on Z_m.
            let m = n / 3;
            let p = |x: usize, i: usize| x + m * (i % 3);
            let op = |x: usize, y: usize| (x + y) * (m + 1) / 2 % m;
            for x in 0..m {
                out.push([p(x, 0), p(x, 1), p(x, 2)]);
            }
            for x in 0..m {
                for y in x + 1..m {
                    for i in 0..3 {
                        out.push([p(x, i), p(y, i), p(op(x, y), i + 1)]);
                    }
                }
            }
        }
        1 if n > 1 => {
            // Points ∞ = n − 1 and (x, i), x in Z_2k, i in Z_3, numbered x + 2k·i;
            // x∘y = σ((x + y) mod 2k) with σ(2j) = j, σ(2j + 1) = k + j is a
            // half-idempotent commutative quasigroup: x∘x = (x + k)∘(x + k) = x.
            let k = (n - 1) / 6;
            let q = 2 * k;
            let inf = n - 1;
            let p = |x: usize, i: usize| x + q * (i % 3);
            let op = |x: usize, y: usize| {
                let s = (x + y) % q;
                if s.is_multiple_of(2) {
                    s / 2
                } else {
                    k + s / 2
                }
            };
            for x in 0..k {
                out.push([p(x, 0), p(x, 1), p(x, 2)]);
                for i in 0..3 {
                    out.push([inf, p(k + x, i), p(x, i + 1)]);
                }
            }
            for x in 0..q {
                for y in x + 1..q {
                    for i in 0..3 {
                        out.push([p(x, i), p(y, i), p(op(x, y), i + 1)]);
                    }
                }
            }
        }
        _ => return None,
    }
    for t in &mut out {
        t.sort();
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::{matchups, Format};
    use super::*;

    #[test]
    fn a_balanced_round_robin_has_every_pair_meet_exactly_once() {
        for n in 3..=45 {
            let Some(triples) = steiner_triples(n) else {
                assert!(n % 6 != 1 && n % 6 != 3, "{n}: a system exists");
                continue;
            };
            assert_eq!(triples.len(), n * (n - 1) / 6, "{n}");
            let mut met = vec![vec![0; n]; n];
            for t in &triples {
                assert!(t[0] < t[1] && t[1] < t[2] && t[2] < n, "{n}: {t:?}");
                for (a, b) in [(t[0], t[1]), (t[0], t[2]), (t[1], t[2])] {
                    met[a][b] += 1;
                }
            }
            for (a, row) in met.iter().enumerate() {
                for (b, &times) in row.iter().enumerate().skip(a + 1) {
                    assert_eq!(times, 1, "{n}: {a} and {b}");
                }
            }
        }
        assert_eq!(matchups(7, &Format::Balanced, 1, 0).len(), 7);
    }
}
