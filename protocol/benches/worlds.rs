//! World sampling throughput, single thread (see BENCHMARKS.md for figures).
//!
//! The views: 64 *mid-game* views — random-play games (seeded random legal
//! policy, stick-the-dealer rules so every deal is played), each stopped in the
//! play phase of its first deal after 1 to 4 completed tricks (chosen by the
//! seed) plus 0 to 5 cards of the current trick, viewed by the seat to act.
//! Elements are worlds (or samplers built).
//!
//! - `worlds/sample_fastrand`: `WorldSampler::sample` round-robin over the 64
//!   prebuilt samplers, drawing from `fastrand` (wyrand). One element = one
//!   full `Game` consistent with the view.
//! - `worlds/sample_chacha8`: the same, drawing from `SeededRng` (ChaCha8), as
//!   `sample_worlds` does.
//! - `worlds/sampler_new`: `WorldSampler::new` for each view (reading it, the
//!   counting tables, one replay through the engine).
//! - `worlds/sample_worlds_100`: `sample_worlds(view, 100, seed)`, the whole
//!   call (one sampler + 100 worlds in a `Vec`); one element = one world.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use schmier_protocol::rules::{random_legal, Game, RulesConfig, SeatView};
use schmier_protocol::shuffle::{Draw, SeededRng};
use schmier_protocol::worlds::{sample_worlds, WorldSampler};

struct Fast(fastrand::Rng);

impl Draw for Fast {
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        self.0.u32(..n)
    }
}

const VIEWS: u64 = 64;

/// A random game stopped mid-play (see the module doc).
fn mid_game_view(seed: u64) -> SeatView {
    let rules = RulesConfig {
        stick_the_dealer: true,
        ..RulesConfig::default()
    };
    let (mut game, _) = Game::new(seed, rules);
    let mut rng = SeededRng::new(seed, 1);
    let tricks = 1 + (seed % 4) as usize;
    let extra = (seed / 4 % 6) as usize;
    let mut out = Vec::new();
    loop {
        let view = game.view(game.to_act().expect("mid-deal"));
        if view.tricks.len() == tricks && view.trick.as_ref().map(|t| t.cards.len()) == Some(extra)
        {
            return view;
        }
        let a = random_legal(&game, &mut rng);
        game.apply_into(a, &mut out).expect("legal");
        out.clear();
    }
}

fn views() -> Vec<SeatView> {
    (0..VIEWS).map(mid_game_view).collect()
}

fn worlds(c: &mut Criterion) {
    let views = views();
    let samplers: Vec<WorldSampler> = views
        .iter()
        .map(|v| WorldSampler::new(v).expect("a consistent view"))
        .collect();
    let mut group = c.benchmark_group("worlds");
    group.throughput(Throughput::Elements(VIEWS));
    let mut fast = Fast(fastrand::Rng::with_seed(0xbe7c4));
    group.bench_function("sample_fastrand", |b| {
        b.iter(|| {
            for s in &samplers {
                black_box(s.sample(&mut fast));
            }
        })
    });
    let mut chacha = SeededRng::new(0xbe7c4, 0);
    group.bench_function("sample_chacha8", |b| {
        b.iter(|| {
            for s in &samplers {
                black_box(s.sample(&mut chacha));
            }
        })
    });
    group.bench_function("sampler_new", |b| {
        b.iter(|| {
            for v in &views {
                black_box(WorldSampler::new(black_box(v)).expect("consistent"));
            }
        })
    });
    group.throughput(Throughput::Elements(100));
    let mut i = 0;
    group.bench_function("sample_worlds_100", |b| {
        b.iter(|| {
            i += 1;
            let v = &views[i % views.len()];
            black_box(sample_worlds(v, 100, i as u64).expect("consistent"))
        })
    });
    group.finish();
}

criterion_group!(benches, worlds);

/// `SCHMIER_BENCH_WORLDS=N` samples N worlds round-robin over the 64 views
/// (fastrand draws) and exits, without criterion: a fixed workload for
/// `valgrind --tool=callgrind`. `SCHMIER_BENCH_SAMPLERS=N` builds N samplers.
fn main() {
    let count = |var: &str| -> Option<u64> {
        std::env::var_os(var).map(|n| n.to_str().and_then(|s| s.parse().ok()).expect("a number"))
    };
    if let Some(n) = count("SCHMIER_BENCH_WORLDS") {
        let samplers: Vec<WorldSampler> = views()
            .iter()
            .map(|v| WorldSampler::new(v).expect("consistent"))
            .collect();
        let mut fast = Fast(fastrand::Rng::with_seed(0xbe7c4));
        for i in 0..n {
            black_box(samplers[i as usize % samplers.len()].sample(&mut fast));
        }
        return;
    }
    if let Some(n) = count("SCHMIER_BENCH_SAMPLERS") {
        let views = views();
        for i in 0..n {
            black_box(WorldSampler::new(&views[i as usize % views.len()]).expect("consistent"));
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
