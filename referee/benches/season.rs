//! A season's two computations between sets (see BENCHMARKS.md, "A
//! season's matchmaking and refit"): choosing the next set
//! (`season/matchmaking.rs`: the candidates from every set planned, then the
//! anchor and its opponents) and refitting the ratings when a set finishes
//! (`season/ratings.rs`: the Plackett–Luce fit of every game, warm-started
//! from the ratings before the set). No bot runs and no database is read.
//!
//! The made-up season: V versions, all active (the matchmaker's worst case:
//! every version an entrant's current one), G games in G / 6 sets, each set
//! three distinct versions drawn at random, its six games the six
//! arrangements of the three, each ranked as the model says from strengths
//! spread evenly in log from 0.25 to 4, one game in twenty with a forfeit.
//! The same on every machine (SplitMix64 from a fixed seed).
//!
//! - `season/next-set/V/G`: what `season run` computes to plan a set.
//! - `season/refit/V/G`: the refit after the last set, warm-started from
//!   the fit before it; `season/refit-cold/V/G`: the same from no start.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};

use referee::season::matchmaking::{candidates, next, Policy};
use referee::season::ratings::refit;
use referee::tournament::outcome::GameOutcome;

/// The season's defaults (`season init`).
const POLICY: Policy = Policy {
    min_sets: 3,
    pair_cap: 50,
};

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

/// Version `v` (1..=n)'s strength: 0.25 to 4, evenly in log.
fn strength(v: usize, n: usize) -> f64 {
    4f64.powf(2.0 * (v - 1) as f64 / (n - 1) as f64 - 1.0)
}

/// The six team arrangements of a set.
const ARRANGEMENTS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// A season's sets (id, versions) and games, as the database gives them.
struct Season {
    sets: Vec<(i64, [i64; 3])>,
    games: Vec<GameOutcome>,
}

fn season(versions: usize, games: usize) -> Season {
    let mut rng = Rng(0x5ea5_0046);
    let mut s = Season {
        sets: Vec::with_capacity(games / 6),
        games: Vec::with_capacity(games),
    };
    for id in 1..=(games / 6) as i64 {
        let trio = loop {
            let t = [0; 3].map(|_| 1 + rng.below(versions));
            if t[0] != t[1] && t[0] != t[2] && t[1] != t[2] {
                break t;
            }
        };
        s.sets.push((id, trio.map(|v| v as i64)));
        for (g, arrangement) in ARRANGEMENTS.iter().enumerate() {
            let teams = arrangement.map(|k| trio[k]);
            s.games.push(game(&mut rng, id, g, teams, versions));
        }
    }
    s
}

/// One game of `teams` (version ids by team position), ranked by the model.
fn game(rng: &mut Rng, set: i64, g: usize, teams: [usize; 3], n: usize) -> GameOutcome {
    let mut left = vec![0, 1, 2];
    let mut ranking = [0; 3];
    for slot in ranking.iter_mut().take(2) {
        let total: f64 = left.iter().map(|&t| strength(teams[t], n)).sum();
        let mut x = rng.unit() * total;
        let mut pick = left.len() - 1;
        for (k, &t) in left.iter().enumerate() {
            if x < strength(teams[t], n) {
                pick = k;
                break;
            }
            x -= strength(teams[t], n);
        }
        *slot = left.remove(pick);
    }
    ranking[2] = left[0];
    let forfeited = match rng.below(20) {
        0 => vec![ranking[2]],
        _ => Vec::new(),
    };
    GameOutcome {
        round: 0,
        matchup: set as u32,
        game: g as u32 + 1,
        seed: 0,
        teams,
        transcript: String::new(),
        scores: [0; 3],
        deals: 1,
        ranking,
        winner: Some(ranking[0]),
        forfeited,
        made: [0; 3],
        set: [0; 3],
        won: [0; 3],
        hands: 1,
        faults: Default::default(),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("season");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (v, g) in [
        (100, 100_000),
        (100, 1_000_000),
        (1_000, 100_000),
        (1_000, 1_000_000),
    ] {
        let s = season(v, g);
        let sets = s.sets.len() as i64;
        let before_last = s.games.len() - 6;
        let warm = refit(sets - 1, &s.games[..before_last], &[]);
        let ratings: BTreeMap<i64, f64> = warm.iter().map(|r| (r.version, r.rating)).collect();
        let active: Vec<i64> = (1..=v as i64).collect();
        let id = format!("{v}/{g}");
        group.bench_function(BenchmarkId::new("next-set", &id), |b| {
            b.iter(|| {
                let (cands, met) = candidates(black_box(&active), &s.sets, &ratings);
                next(&cands, &met, POLICY)
            });
        });
        group.bench_function(BenchmarkId::new("refit", &id), |b| {
            b.iter(|| refit(sets, black_box(&s.games), &warm).len());
        });
        group.bench_function(BenchmarkId::new("refit-cold", &id), |b| {
            b.iter(|| refit(sets, black_box(&s.games), &[]).len());
        });
        let (cands, met) = candidates(&active, &s.sets, &ratings);
        eprintln!(
            "season/{id}: {sets} sets; next set {:?}",
            next(&cands, &met, POLICY)
        );
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
