//! Large fields, schedule and merge arithmetic only (see BENCHMARKS.md).
//!
//! No bot is started and no file is touched: these are the parts of a
//! tournament whose cost grows with the entrants rather than with the games
//! played.
//!
//! - `schedule/balanced/N`: `schedule::matchups` for `--format balanced` (a
//!   Steiner triple system; N must be 1 or 3 mod 6, hence 999 and 9,999).
//! - `schedule/swiss_round_10/N`: `schedule::round` for round 10 of a Swiss,
//!   from nine rounds of made-up results (every table's winner drawn from the
//!   game's seed; one duplicate set a table).
//! - `merge/swiss_10_rounds/N`: what `referee merge` computes for a finished
//!   10-round Swiss: every round seated again from the results (merge checks
//!   each shard against that schedule) and the standings.
//! - `merge/balanced/N`: the same for a balanced round robin: the schedule, the
//!   set of its game keys and the standings of one duplicate set a table.
//!
//! Not measured: reading journals and transcripts from disk and copying the
//! transcripts into the merged folder, which are linear in the games played and
//! bound by the disk.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};

use referee::tournament::format::{matchups, round, Format};
use referee::tournament::outcome::GameOutcome;
use referee::tournament::schedule::{GameKey, GameResult, Matchup};
use referee::tournament::standings::standings;

const SEED: u64 = 0x5ca1e;
const SETS: u32 = 1;
const ROUNDS: u32 = 10;

/// Made-up figures of a finished game, from its seed: any team may win.
fn outcome(m: &Matchup, key: GameKey) -> GameOutcome {
    let s = m.game_seed(key.game) ^ u64::from(key.game).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let first = (s % 3) as usize;
    let ranking = [first, (first + 1) % 3, (first + 2) % 3];
    let mut scores = [0i32; 3];
    for (place, &t) in ranking.iter().enumerate() {
        scores[t] = 60 - 20 * place as i32 - ((s >> (8 + 4 * t)) % 8) as i32;
    }
    GameOutcome {
        round: key.round,
        matchup: key.matchup,
        game: key.game,
        seed: m.game_seed(key.game),
        teams: m.teams(key.game),
        transcript: format!(
            "games/r{}-m{:06}-g{}.jsonl",
            key.round, key.matchup, key.game
        ),
        scores,
        deals: 12,
        ranking,
        winner: Some(first),
        forfeited: Vec::new(),
        made: [2, 1, 1],
        set: [1, 1, 0],
        won: scores,
        hands: 12,
        faults: Default::default(),
    }
}

fn play(ms: &[Matchup], into: &mut BTreeMap<GameKey, GameOutcome>) {
    for m in ms {
        for key in m.keys() {
            into.insert(key, outcome(m, key));
        }
    }
}

fn results(outcomes: &BTreeMap<GameKey, GameOutcome>, below: u32) -> Vec<GameResult> {
    outcomes
        .values()
        .filter(|o| o.round < below)
        .map(GameOutcome::result)
        .collect()
}

/// A Swiss of `n` entrants played through `rounds` rounds of made-up results.
fn swiss(n: usize, rounds: u32) -> BTreeMap<GameKey, GameOutcome> {
    let format = Format::Swiss { rounds: ROUNDS };
    let mut outcomes = BTreeMap::new();
    for r in 1..=rounds {
        let ms = round(n, &format, SETS, SEED, r, &results(&outcomes, r)).expect("a round");
        play(&ms, &mut outcomes);
    }
    outcomes
}

/// `referee merge`'s arithmetic for a Swiss: every round seated again, then
/// the standings.
fn merge_swiss(n: usize, names: &[String], outcomes: &BTreeMap<GameKey, GameOutcome>) -> usize {
    let format = Format::Swiss { rounds: ROUNDS };
    let mut known = BTreeSet::new();
    for r in 1..=ROUNDS {
        let ms = round(n, &format, SETS, SEED, r, &results(outcomes, r)).expect("a round");
        known.extend(ms.iter().flat_map(Matchup::keys));
    }
    assert!(outcomes.keys().all(|k| known.contains(k)));
    standings(names, &format, outcomes).entrants.len()
}

fn merge_balanced(n: usize, names: &[String], outcomes: &BTreeMap<GameKey, GameOutcome>) -> usize {
    let ms = matchups(n, &Format::Balanced, SETS, SEED);
    let known: BTreeSet<GameKey> = ms.iter().flat_map(Matchup::keys).collect();
    assert!(outcomes.keys().all(|k| known.contains(k)));
    standings(names, &Format::Balanced, outcomes).entrants.len()
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("bot-{i:05}")).collect()
}

fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for n in [999, 9_999] {
        group.bench_with_input(BenchmarkId::new("balanced", n), &n, |b, &n| {
            b.iter(|| matchups(black_box(n), &Format::Balanced, SETS, SEED).len());
        });
    }
    let format = Format::Swiss { rounds: ROUNDS };
    for n in [1_000, 10_000] {
        let before = results(&swiss(n, ROUNDS - 1), ROUNDS);
        group.bench_with_input(BenchmarkId::new("swiss_round_10", n), &n, |b, &n| {
            b.iter(|| {
                round(black_box(n), &format, SETS, SEED, ROUNDS, &before)
                    .expect("a round")
                    .len()
            });
        });
    }
    group.finish();
}

fn merge(c: &mut Criterion) {
    let mut group = c.benchmark_group("merge");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for n in [1_000, 10_000] {
        let outcomes = swiss(n, ROUNDS);
        let names = names(n);
        group.bench_with_input(BenchmarkId::new("swiss_10_rounds", n), &n, |b, &n| {
            b.iter(|| merge_swiss(black_box(n), &names, &outcomes));
        });
    }
    // 9,999 entrants balanced is 16.7 million tables, 100 million games: the
    // schedule alone is measured above; the games' outcomes would not fit in
    // memory (see BENCHMARKS.md).
    let n = 999;
    let mut outcomes = BTreeMap::new();
    play(&matchups(n, &Format::Balanced, SETS, SEED), &mut outcomes);
    let names = names(n);
    group.bench_with_input(BenchmarkId::new("balanced", n), &n, |b, &n| {
        b.iter(|| merge_balanced(black_box(n), &names, &outcomes));
    });
    group.finish();
}

/// The system allocator, counting the bytes live now and their peak since the
/// last [`Counting::reset`]: a case's own memory, whatever its setup freed
/// before it (a resident-set peak would hide what the allocator reuses).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn reset() -> usize {
        let live = LIVE.load(Ordering::Relaxed);
        PEAK.store(live, Ordering::Relaxed);
        live
    }

    fn grew(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Counting::grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout);
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Counting::grew(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the new block arriving before the old one leaves: the
        // peak of a copying reallocation.
        Counting::grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `SCHMIER_SCALE=CASE` (a benchmark id such as `merge/swiss_10_rounds/10000`)
/// runs that one case once, without criterion, after its setup, and prints its
/// time and the peak of heap bytes it held beyond what its setup left live
/// (the made-up results it starts from are not counted).
fn once(case: &str) {
    let n: usize = case
        .rsplit('/')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("SCHMIER_SCALE ends in /ENTRANTS");
    let swiss_format = Format::Swiss { rounds: ROUNDS };
    let run: Box<dyn Fn() -> usize> = match case.rsplit_once('/').map(|(c, _)| c) {
        Some("schedule/balanced") => {
            Box::new(move || matchups(n, &Format::Balanced, SETS, SEED).len())
        }
        Some("schedule/swiss_round_10") => {
            let before = results(&swiss(n, ROUNDS - 1), ROUNDS);
            Box::new(move || {
                round(n, &swiss_format, SETS, SEED, ROUNDS, &before)
                    .expect("a round")
                    .len()
            })
        }
        Some("merge/swiss_10_rounds") => {
            let outcomes = swiss(n, ROUNDS);
            let names = names(n);
            Box::new(move || merge_swiss(n, &names, &outcomes))
        }
        Some("merge/balanced") => {
            let mut outcomes = BTreeMap::new();
            play(&matchups(n, &Format::Balanced, SETS, SEED), &mut outcomes);
            let names = names(n);
            Box::new(move || merge_balanced(n, &names, &outcomes))
        }
        _ => panic!("SCHMIER_SCALE: unknown case {case}"),
    };
    let before = Counting::reset();
    let start = std::time::Instant::now();
    black_box(run());
    let secs = start.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    println!(
        "{case}: {secs:.3} s; peak heap beyond the setup's {:.1} MiB: {:.1} MiB",
        before as f64 / MIB,
        peak as f64 / MIB
    );
}

const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    if let Some(case) = std::env::var_os("SCHMIER_SCALE") {
        once(case.to_str().expect("SCHMIER_SCALE is UTF-8"));
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    schedule(&mut c);
    merge(&mut c);
    c.final_summary();
}
