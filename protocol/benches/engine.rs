//! Rules-engine throughput, single thread (see BENCHMARKS.md for figures).
//!
//! `hands/*` counts complete random-play hands. One element = one *played* hand:
//! shuffle (ChaCha8 + Fisher-Yates), deal, the auction, trump, five exchanges, the
//! dealer's pickup and discard, 36 plays in 6 tricks, and scoring (the `HandEnd`
//! event). Every decision is made by `rules::random_legal` drawing from one
//! policy RNG and applied with `Game::apply_into` (which validates it) into a
//! reused event buffer. Games run back to back (`Game::start` with seeds 0, 1, 2,
//! ... whenever one ends), so the per-game cost (first-dealer draw, game end) is
//! included, spread over the ~100 hands a random-play game lasts.
//!
//! The policy RNG is the `fastrand` crate's wyrand generator seeded with
//! `0xbe7c4` (bounded draws by `Rng::u32(..n)`); the deck orders are the engine's
//! own, ChaCha8 as always.
//!
//! - `hands/stick_the_dealer`: every deal is played (the dealer may not pass when
//!   the five others did), so elements = deals.
//! - `hands/default_rules`: the rules page's auction; the rare all-pass deal
//!   (about 1 in 15,600 under random bidding) is thrown in, its cost included
//!   but not counted.
//! - `hands/stick_the_dealer_chacha8_policy`: as `stick_the_dealer`, but the
//!   policy draws from a `SeededRng` (ChaCha8) stream `(0xbe7c4, 0)`, as this
//!   benchmark did before the policy RNG became a parameter.
//!
//! `shuffle/*` isolates the ChaCha8 cost that bounds the figure above: one
//! element = one deck order (`shuffle::deck_order`, 52 bounded draws after keying a
//! fresh ChaCha8 stream), or one keyed stream plus its first 64 words.

use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};

use schmier_protocol::rules::{random_legal, Event, Game, RulesConfig};
use schmier_protocol::shuffle::{deck_order, Draw, SeededRng};

/// The policy's randomness: `fastrand` (wyrand), much cheaper than ChaCha8.
struct Fast(fastrand::Rng);

impl Fast {
    fn new(seed: u64) -> Fast {
        Fast(fastrand::Rng::with_seed(seed))
    }
}

impl Draw for Fast {
    #[inline]
    fn below(&mut self, n: u32) -> u32 {
        self.0.u32(..n)
    }
}

/// Hands per measured iteration.
const HANDS: u64 = 1_000;

/// The policy's seed (and ChaCha8 stream 0 for the ChaCha8 variant).
const POLICY_SEED: u64 = 0xbe7c4;

/// A table that plays random legal hands forever, one game after another.
struct Table<R> {
    config: RulesConfig,
    next_seed: u64,
    game: Game,
    rng: R,
    events: Vec<Event>,
}

impl<R: Draw> Table<R> {
    fn new(config: RulesConfig, rng: R) -> Table<R> {
        let mut events = Vec::with_capacity(64);
        let game = Game::start(0, config, &mut events);
        Table {
            config,
            next_seed: 1,
            game,
            rng,
            events,
        }
    }

    /// Plays until `n` more hands have been scored.
    fn play_hands(&mut self, n: u64) {
        let mut scored = 0;
        while scored < n {
            if self.game.is_over() {
                self.events.clear();
                self.game = Game::start(self.next_seed, self.config, &mut self.events);
                self.next_seed += 1;
            }
            self.events.clear();
            let action = random_legal(&self.game, &mut self.rng);
            self.game
                .apply_into(action, &mut self.events)
                .expect("random_legal is legal");
            // A hand's last play emits Play, Trick, HandEnd, then Deal or GameEnd.
            if self.events.len() > 2 && matches!(self.events[2], Event::HandEnd(_)) {
                scored += 1;
            }
        }
    }
}

fn hands(c: &mut Criterion) {
    let mut group = c.benchmark_group("hands");
    group.throughput(Throughput::Elements(HANDS));
    let stick = RulesConfig {
        stick_the_dealer: true,
        ..RulesConfig::default()
    };
    for (name, config) in [
        ("stick_the_dealer", stick),
        ("default_rules", RulesConfig::default()),
    ] {
        let mut table = Table::new(config, Fast::new(POLICY_SEED));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| table.play_hands(HANDS))
        });
    }
    let mut table = Table::new(stick, SeededRng::new(POLICY_SEED, 0));
    group.bench_function(
        BenchmarkId::from_parameter("stick_the_dealer_chacha8_policy"),
        |b| b.iter(|| table.play_hands(HANDS)),
    );
    group.finish();
}

fn shuffle(c: &mut Criterion) {
    let mut group = c.benchmark_group("shuffle");
    group.throughput(Throughput::Elements(1));
    let mut deal = 0u64;
    group.bench_function("deck_order", |b| {
        b.iter(|| {
            deal += 1;
            deck_order(black_box(42), deal)
        })
    });
    let mut stream = 0u64;
    group.bench_function("chacha8_key_and_64_words", |b| {
        b.iter(|| {
            stream += 1;
            let mut rng = SeededRng::new(black_box(42), stream);
            let mut x = 0u32;
            for _ in 0..64 {
                x ^= rng.next_u32();
            }
            x
        })
    });
    group.finish();
}

criterion_group!(benches, hands, shuffle);

/// `SCHMIER_BENCH_HANDS=N` plays N stick-the-dealer hands (fastrand policy, as
/// `hands/stick_the_dealer`) and exits, without criterion: a fixed workload for
/// `perf stat` / `valgrind --tool=callgrind`. `SCHMIER_BENCH_POLICY=chacha8`
/// draws the policy from ChaCha8 instead.
fn main() {
    if let Some(n) = std::env::var_os("SCHMIER_BENCH_HANDS") {
        let n: u64 = n.to_str().and_then(|s| s.parse().ok()).expect("a number");
        let config = RulesConfig {
            stick_the_dealer: true,
            ..RulesConfig::default()
        };
        let start = std::time::Instant::now();
        if std::env::var_os("SCHMIER_BENCH_POLICY").is_some_and(|p| p == "chacha8") {
            Table::new(config, SeededRng::new(POLICY_SEED, 0)).play_hands(n);
        } else {
            Table::new(config, Fast::new(POLICY_SEED)).play_hands(n);
        }
        let secs = start.elapsed().as_secs_f64();
        println!("{n} hands in {secs:.3} s: {:.0} hands/s", n as f64 / secs);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
