//! The rating's fit (`tournament/rating.rs`) on a million games (see
//! BENCHMARKS.md): everything `standings` does for the rating column — the
//! games counted together, the MM fit, the observed information and its
//! inverse — and nothing else. No bot runs and no file is read.
//!
//! - `rating/fit/1000000-games/E`: a million games of random tables of three
//!   from a field of E entrants, each ranked as the model says from made-up
//!   strengths (0.25 to 4, spread evenly), one game in twenty with a forfeit.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};

use referee::tournament::rating::{fit, Ranked};

const GAMES: usize = 1_000_000;

/// SplitMix64: made-up games that read the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Entrant `e` of `n`'s strength: 0.25 to 4, evenly in log.
fn strength(e: usize, n: usize) -> f64 {
    4f64.powf(2.0 * e as f64 / (n - 1) as f64 - 1.0)
}

fn games(n: usize) -> Vec<Ranked> {
    let mut rng = Rng(0x5ca1e);
    (0..GAMES)
        .map(|_| {
            let mut left = loop {
                let t = [rng.below(n), rng.below(n), rng.below(n)];
                if t[0] != t[1] && t[0] != t[2] && t[1] != t[2] {
                    break t.to_vec();
                }
            };
            let mut order = [0; 3];
            for slot in order.iter_mut().take(2) {
                let total: f64 = left.iter().map(|&e| strength(e, n)).sum();
                let mut x = rng.unit() * total;
                let mut pick = left.len() - 1;
                for (k, &e) in left.iter().enumerate() {
                    if x < strength(e, n) {
                        pick = k;
                        break;
                    }
                    x -= strength(e, n);
                }
                *slot = left.remove(pick);
            }
            order[2] = left[0];
            let choices = if rng.below(20) == 0 { 1 } else { 2 };
            Ranked { order, choices }
        })
        .collect()
}

fn rating(c: &mut Criterion) {
    let mut group = c.benchmark_group("rating/fit");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for n in [10, 100, 1_000] {
        let games = games(n);
        let id = BenchmarkId::new(format!("{GAMES}-games"), n);
        group.bench_with_input(id, &n, |b, &n| {
            b.iter(|| fit(black_box(n), games.iter().copied()).updates);
        });
        let r = fit(n, games.iter().copied());
        eprintln!(
            "rating/fit/{GAMES}-games/{n}: {} MM updates; top entrant {:+.1} ± {:.1}",
            r.updates,
            r.rating(n - 1),
            1.96 * r.error(n - 1)
        );
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    rating(&mut c);
    c.final_summary();
}
