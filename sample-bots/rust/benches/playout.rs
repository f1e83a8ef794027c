//! Playout throughput, single thread, for both built-in policies (see
//! BENCHMARKS.md for figures).
//!
//! One element = one hand played from its deal to its scoring by
//! `schmier_protocol::playout::playout(.., Horizon::Deal)`, every seat played
//! by the policy, under stick-the-dealer rules (so every deal is played).
//! Games run back to back (`Game::new` with seeds 0, 1, 2, ... whenever one
//! ends), so the per-game cost is included.
//!
//! - `playout/random`: `RandomPolicy` (ChaCha8 draws, seeded).
//! - `playout/heuristic`: `HeuristicPolicy`: the heuristic bot, asked through
//!   the request the referee would send (view and legal actions built for
//!   every decision).
//! - `playout/random_from_world`: a world sampled mid-play (1-4 tricks done)
//!   played to the end of its deal; includes the world's sampling.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use schmier_protocol::playout::{playout, Horizon, Policy, RandomPolicy};
use schmier_protocol::rules::{random_legal, Game, RulesConfig};
use schmier_protocol::shuffle::SeededRng;
use schmier_protocol::worlds::WorldSampler;
use schmier_sample_bots::HeuristicPolicy;

const HANDS: u64 = 100;

fn rules() -> RulesConfig {
    RulesConfig {
        stick_the_dealer: true,
        ..RulesConfig::default()
    }
}

struct Table {
    game: Game,
    next_seed: u64,
}

impl Table {
    fn new() -> Table {
        Table {
            game: Game::new(0, rules()).0,
            next_seed: 1,
        }
    }

    fn hands(&mut self, policy: &mut dyn Policy, n: u64) {
        for _ in 0..n {
            if self.game.is_over() {
                self.game = Game::new(self.next_seed, rules()).0;
                self.next_seed += 1;
            }
            black_box(playout(&mut self.game, policy, Horizon::Deal));
        }
    }
}

fn samplers() -> Vec<WorldSampler> {
    (0..16u64)
        .map(|seed| {
            let (mut game, _) = Game::new(seed, rules());
            let mut rng = SeededRng::new(seed, 1);
            let tricks = 1 + (seed % 4) as usize;
            loop {
                let view = game.view(game.to_act().unwrap());
                if view.tricks.len() == tricks {
                    return WorldSampler::new(&view).unwrap();
                }
                let a = random_legal(&game, &mut rng);
                game.apply(a).unwrap();
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(HANDS));
    let mut table = Table::new();
    let mut random = RandomPolicy::new(0xbe7c4);
    group.bench_function("random", |b| b.iter(|| table.hands(&mut random, HANDS)));
    let mut table = Table::new();
    group.bench_function("heuristic", |b| {
        b.iter(|| table.hands(&mut HeuristicPolicy, HANDS))
    });
    let samplers = samplers();
    let mut rng = SeededRng::new(7, 0);
    group.bench_function("random_from_world", |b| {
        b.iter(|| {
            for i in 0..HANDS as usize {
                let mut world = samplers[i % samplers.len()].sample(&mut rng);
                black_box(playout(&mut world, &mut random, Horizon::Deal));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
