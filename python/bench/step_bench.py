"""Python-loop random play, side by side in one run: schmier (legal_mask +
apply; legal_indices + apply; a GameBatch stepped from one call), OpenSpiel's
pyspiel on a trick-taking game of its own, and RLCard on one of its card
games; and, as the ceiling of the `legal_mask` loop, that loop's numpy and
`random` work with no engine at all. Steps per second, median of rounds
alternated between the engines (the host is shared: one round of each, then
again). A step is one decision of one
game (OpenSpiel's chance nodes, the deal, count as steps, as its own loop takes
them); every loop chooses uniformly among the legal actions.

    target/benchenv/bin/python python/bench/step_bench.py [--seconds 2] [--rounds 5]

Needs schmier, open_spiel and rlcard installed in the interpreter (not run in
CI; see BENCHMARKS.md).
"""

import argparse
import random
import statistics
import time

import numpy as np


def schmier_mask_steps(seconds):
    """legal_mask(buf) (one bool array of ours, filled in place) +
    buf.nonzero() + a uniformly random set index + apply(index), whole games
    from fresh seeds."""
    import schmier

    rng = random.Random(1)
    buf = np.zeros(schmier.ACTION_COUNT, dtype=bool)
    steps, seed = 0, 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        g = schmier.Game(seed)
        seed += 1
        while not g.is_over:
            legal = g.legal_mask(buf).nonzero()[0]
            g.apply(legal[rng.randrange(len(legal))])
            steps += 1
    return steps / (time.perf_counter() - start)


def no_engine_steps(seconds, steps_per_game=6820):
    """The `legal_mask(buf)` loop's own Python and numpy work with no engine
    call at all: nonzero of a fixed mask (3 legal entries, about a Schmier
    step's mean), a random index into it, the loop (inner runs as long as a
    random Schmier game, ~6,800 steps). No engine driven by this loop can
    make it faster than this row."""
    rng = random.Random(1)
    buf = np.zeros(63, dtype=bool)
    buf[[3, 8, 12]] = True
    steps = 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        for _ in range(steps_per_game):
            legal = buf.nonzero()[0]
            legal[rng.randrange(len(legal))]
            steps += 1
    return steps / (time.perf_counter() - start)


def schmier_mask_new_steps(seconds):
    """legal_mask() (a new array each step) + np.flatnonzero + apply."""
    import schmier

    rng = random.Random(1)
    steps, seed = 0, 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        g = schmier.Game(seed)
        seed += 1
        while not g.is_over:
            legal = np.flatnonzero(g.legal_mask())
            g.apply(int(legal[rng.randrange(len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - start)


def schmier_batch_steps(seconds, n=256):
    """A Python loop over a GameBatch of n games: legal_masks(buf) + a
    uniformly random legal index per game, drawn vectorised (the argmax of
    uniform noise plus the mask: a legal entry always wins) + apply(indices); finished games
    are dealt again (reset). A step is one game's decision, as above."""
    import schmier

    rng = np.random.default_rng(1)
    batch = schmier.GameBatch(range(n))
    masks = np.zeros((n, schmier.ACTION_COUNT), dtype=bool)
    noise = np.zeros(masks.shape, dtype=np.float32)
    steps, seed = 0, n
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        batch.legal_masks(masks)
        rng.random(dtype=np.float32, out=noise)
        noise += masks  # legal entries in [1, 2), the others in [0, 1)
        batch.apply(noise.argmax(axis=1))
        steps += n
        over = np.flatnonzero(batch.is_over)
        if len(over):
            batch.reset(over.tolist(), list(range(seed, seed + len(over))))
            seed += len(over)
    return steps / (time.perf_counter() - start)


def schmier_indices_steps(seconds):
    """legal_indices() (a list) + random.choice + apply(index)."""
    import schmier

    rng = random.Random(1)
    steps, seed = 0, 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        g = schmier.Game(seed)
        seed += 1
        while not g.is_over:
            g.apply(rng.choice(g.legal_indices()))
            steps += 1
    return steps / (time.perf_counter() - start)


def pyspiel_steps(seconds, name):
    """legal_actions() + random.choice + apply_action; chance nodes (the deal)
    sampled from chance_outcomes() and counted as steps too."""
    import pyspiel

    game = pyspiel.load_game(name)
    rng = random.Random(1)
    steps = 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - start)


def rlcard_steps(seconds, name):
    """env.step(random legal action) with the legal actions from the state."""
    import rlcard

    env = rlcard.make(name, config={"seed": 1})
    rng = random.Random(1)
    steps = 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        state, player = env.reset()
        while not env.is_over():
            action = rng.choice(list(state["legal_actions"].keys()))
            state, player = env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--openspiel-game", default="euchre")
    p.add_argument("--rlcard-game", default="doudizhu")
    a = p.parse_args()
    runs = {
        "schmier legal_mask(buf)+apply": lambda: schmier_mask_steps(a.seconds),
        "no engine: the mask loop's numpy+random": lambda: no_engine_steps(a.seconds),
        "schmier legal_mask()+flatnonzero": lambda: schmier_mask_new_steps(a.seconds),
        "schmier legal_indices+apply": lambda: schmier_indices_steps(a.seconds),
        "schmier GameBatch(256) masks+apply": lambda: schmier_batch_steps(a.seconds),
        f"pyspiel {a.openspiel_game}": lambda: pyspiel_steps(a.seconds, a.openspiel_game),
        f"rlcard {a.rlcard_game}": lambda: rlcard_steps(a.seconds, a.rlcard_game),
    }
    results = {k: [] for k in runs}
    for _ in range(a.rounds):
        for k, f in runs.items():
            results[k].append(f())
    medians = {k: statistics.median(v) for k, v in results.items()}
    base = medians[f"pyspiel {a.openspiel_game}"]
    print(f"{'engine':40} {'steps/s (median)':>18} {'us/step':>9} {'x pyspiel':>10}")
    for k, m in medians.items():
        print(f"{k:40} {m:18,.0f} {1e6 / m:9.2f} {m / base:10.2f}")


if __name__ == "__main__":
    main()
