"""Batched playouts from one Python call against the native engine, and world
sampling, in one run:

- native: `cargo bench -p schmier-protocol --bench engine --
  hands/stick_the_dealer_chacha8_policy` (random play, every deal played, the
  policy drawing from ChaCha8 as schmier.playouts' "random" does);
- schmier.playouts(policy="random") over fresh stick-the-dealer games from
  Python, threads=1 and threads=2: played hands (deals) per second;
- schmier.sample_worlds from mid-game views: worlds per second.

Rounds alternate (native, Python) so that a load change hits both.

    target/benchenv/bin/python python/bench/playout_bench.py [--rounds 2] [--games 3000]
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


def native_hands_per_s():
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "schmier-protocol", "--bench", "engine", "--",
         "hands/stick_the_dealer_chacha8_policy$", "--warm-up-time", "1", "--measurement-time", "4"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    m = re.search(r"thrpt:\s*\[\S+ \S+ (\S+) (\S*)elem/s", out)
    return float(m.group(1)) * UNIT[m.group(2)]


def playout_hands_per_s(games, threads, seed):
    batch = [schmier.Game(seed * 100_000 + i, stick_the_dealer=True) for i in range(games)]
    start = time.perf_counter()
    rows = schmier.playouts(batch, policy="random", threads=threads, seed=seed)
    elapsed = time.perf_counter() - start
    return rows[:, 4].sum() / elapsed


def mid_game_views(n, seed):
    rng = random.Random(seed)
    views = []
    while len(views) < n:
        g = schmier.Game(rng.randrange(2**63))
        for _ in range(rng.randrange(10, 45)):
            g.apply(rng.choice(g.legal()))
        if not g.is_over and g.phase == "play":
            views.append((g.view(g.to_act), g.rules))
    return views


def worlds_per_s(views, per_view):
    start = time.perf_counter()
    total = 0
    for i, (v, rules) in enumerate(views):
        total += len(schmier.sample_worlds(v, per_view, i, rules=rules))
    return total / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--games", type=int, default=3000)
    a = p.parse_args()
    views = mid_game_views(200, 1)
    res = {"native": [], "threads=1": [], "threads=2": [], "worlds": []}
    for r in range(a.rounds):
        res["native"].append(native_hands_per_s())
        res["threads=1"].append(playout_hands_per_s(a.games, 1, r))
        res["threads=2"].append(playout_hands_per_s(a.games, 2, r))
        res["worlds"].append(worlds_per_s(views, 1000))
    med = {k: statistics.median(v) for k, v in res.items()}
    print(f"native engine (criterion, 1 thread): {med['native']:12,.0f} hands/s")
    print(f"playouts threads=1:                  {med['threads=1']:12,.0f} hands/s  "
          f"{med['threads=1'] / med['native']:.2f}x native")
    print(f"playouts threads=2:                  {med['threads=2']:12,.0f} hands/s  "
          f"{med['threads=2'] / med['threads=1']:.2f}x threads=1")
    print(f"sample_worlds (1,000 per mid-game view, 200 views): {med['worlds']:12,.0f} worlds/s")
    print("all rounds:", {k: [round(x) for x in v] for k, v in res.items()})


if __name__ == "__main__":
    main()
