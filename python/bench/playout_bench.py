"""Batched playouts and world sampling from one Python call, side by side with
the native engine, in one run:

- native: criterion's `playout/random` and `playout/heuristic`
  (`cargo bench -p schmier-sample-bots --bench playout`: the same playout,
  `protocol::playout` with the sample bots' policies, called from Rust, one
  thread, stick-the-dealer games back to back) and `worlds/sample_chacha8`
  (`cargo bench -p schmier-protocol --bench worlds`: one world from a
  prebuilt sampler, the ChaCha8 stream sample_worlds uses);
- schmier.playouts(policy=...) over fresh stick-the-dealer games from Python,
  threads=1 and threads=2: played hands (deals) per second;
- schmier.sample_world_batch (a GameBatch: no Python object per world) and
  schmier.sample_worlds (a list of Games) from mid-game views: worlds per
  second, wall clock and per CPU-second of the process.

Rounds alternate (native, then Python) so that a load change hits both; the
figures printed are medians over the rounds.

    target/benchenv/bin/python python/bench/playout_bench.py [--rounds 3] [--games 2000]
"""

import argparse
import random
import re
import statistics
import subprocess
import time
from pathlib import Path

import schmier

ROOT = Path(__file__).resolve().parents[2]
UNIT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def criterion(package, bench, name, seconds=4):
    """The median throughput (elements/s) criterion reports for `name`."""
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", package, "--bench", bench, "--", f"^{name}$",
         "--warm-up-time", "1", "--measurement-time", str(seconds)],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    m = re.search(r"thrpt:\s*\[\S+ \S+ (\S+) (\S*)elem/s", out)
    if not m:
        raise SystemExit(f"no throughput for {name} in:\n{out}")
    return float(m.group(1)) * UNIT[m.group(2)]


def playout_hands_per_s(games, threads, seed, policy):
    batch = [schmier.Game(seed * 100_000 + i, stick_the_dealer=True) for i in range(games)]
    # Warm up (criterion warms its side up for a second): caches, the
    # allocator's arenas, the CPU's clock.
    schmier.playouts(batch[: max(1, games // 4)], policy=policy, threads=threads, seed=seed + 1)
    start = time.perf_counter()
    rows = schmier.playouts(batch, policy=policy, threads=threads, seed=seed)
    elapsed = time.perf_counter() - start
    return rows[:, 4].sum() / elapsed


def mid_game_views(n, seed):
    """Views of the seat to act in the play phase of a random-play game."""
    rng = random.Random(seed)
    views = []
    while len(views) < n:
        g = schmier.Game(rng.randrange(2**63), stick_the_dealer=True)
        for _ in range(rng.randrange(10, 45)):
            g.apply(rng.choice(g.legal()))
        if not g.is_over and g.phase == "play":
            views.append((g.view(g.to_act), g.rules))
    return views


def worlds_per_s(views, per_view, sample):
    """(worlds per wall-clock second, worlds per CPU-second of this process)."""
    sample(views[0][0], per_view, 0, rules=views[0][1])  # warm up, as above
    wall, cpu = time.perf_counter(), time.process_time()
    total = 0
    for i, (v, rules) in enumerate(views):
        total += len(sample(v, per_view, i, rules=rules))
    return total / (time.perf_counter() - wall), total / (time.process_time() - cpu)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--games", type=int, default=2000, help="games per random playouts call")
    p.add_argument("--heuristic-games", type=int, default=100)
    p.add_argument("--worlds", type=int, default=10_000, help="worlds per view")
    a = p.parse_args()
    views = mid_game_views(64, 1)
    res = {}

    def put(key, value):
        res.setdefault(key, []).append(value)

    for r in range(a.rounds):
        put("native random", criterion("schmier-sample-bots", "playout", "playout/random"))
        for t in (1, 2):
            put(f"random threads={t}", playout_hands_per_s(a.games, t, r, "random"))
        put("native heuristic", criterion("schmier-sample-bots", "playout", "playout/heuristic"))
        for t in (1, 2):
            put(f"heuristic threads={t}", playout_hands_per_s(a.heuristic_games, t, r, "heuristic"))
        put("native worlds", criterion("schmier-protocol", "worlds", "worlds/sample_chacha8"))
        for name, f in (("world batch", schmier.sample_world_batch), ("world list", schmier.sample_worlds)):
            wall, cpu = worlds_per_s(views, a.worlds, f)
            put(f"{name} wall", wall)
            put(f"{name} cpu", cpu)
    med = {k: statistics.median(v) for k, v in res.items()}
    for policy in ("random", "heuristic"):
        native = med[f"native {policy}"]
        one, two = med[f"{policy} threads=1"], med[f"{policy} threads=2"]
        print(f"{policy}: native (criterion, 1 thread) {native:12,.0f} hands/s")
        print(f"{policy}: playouts threads=1         {one:12,.0f} hands/s  {one / native:.2f}x native")
        print(f"{policy}: playouts threads=2         {two:12,.0f} hands/s  {two / one:.2f}x threads=1"
              f" ({two / (2 * one):.2f} per core)")
    native = med["native worlds"]
    print(f"worlds: native sample (criterion)     {native:12,.0f} worlds/s")
    for name in ("world batch", "world list"):
        wall, cpu = med[f"{name} wall"], med[f"{name} cpu"]
        print(f"worlds: {name:12} ({a.worlds:,}/view) {wall:12,.0f} worlds/s wall  "
              f"{cpu:12,.0f} per CPU-s  {wall / native:.2f}x native")
    print("all rounds:", {k: [round(x) for x in v] for k, v in res.items()})


if __name__ == "__main__":
    main()
