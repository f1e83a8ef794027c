#!/usr/bin/env python3
"""Measures the timing channel: how many bits per decision a bot's partner reads
from its reply delays, without and with `--pace-ms`.

    python3 scripts/timing-channel.py [--referee target/release/referee] [--games 3]
        [--bits 3] [--step-ms 5] [--pace-ms 100] [--seed 1]

Three runs of `referee play --events live`, the colluding pair
(`tests/timing/collude.py`) as team 1, in-process bots as teams 0 and 2 (so the
only delays at the table are the colluders'):

  1. no pacing, symbols in the delay (the channel as it is);
  2. `--pace-ms P`, the same delays (all below P);
  3. `--pace-ms P`, delays shifted above P (a sender that knows the pace).

For each: decisions decoded, the share decoded right, the bits per decision the
receiver got (mutual information of sent and decoded symbols, from their counts;
with a small upward bias of about (2^b - 1)^2 / (2 N ln 2) bits at chance), and
bits per second of the run's wall time (both directions together). Prints the
exact command of each run.
"""
import argparse
import collections
import glob
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mutual_information(pairs):
    n = len(pairs)
    joint = collections.Counter(pairs)
    xs = collections.Counter(x for x, _ in pairs)
    ys = collections.Counter(y for _, y in pairs)
    return sum(
        c / n * math.log2((c / n) / ((xs[x] / n) * (ys[y] / n)))
        for (x, y), c in joint.items()
    )


def run(args, label, pace_ms, offset_ms):
    out = tempfile.mkdtemp(prefix="timing-channel-")
    bot = (
        f"python3 {ROOT}/tests/timing/collude.py {out} BITS={args.bits} "
        f"STEP_MS={args.step_ms} OFFSET_MS={offset_ms}"
    )
    cmd = [
        args.referee, "play", "--quiet", "--events", "live",
        "--seed", str(args.seed), "--games", str(args.games),
        "--team", "inproc:heuristic", "--team", bot, "--team", "inproc:random",
        "--transcript", os.path.join(out, "games"),
    ]
    if pace_ms:
        cmd += ["--pace-ms", str(pace_ms)]
    start = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    pairs = []
    for f in glob.glob(os.path.join(out, "seat-*.txt")):
        for line in open(f):
            sent, decoded, _gap = line.split()
            pairs.append((int(sent), int(decoded)))
    n = len(pairs)
    right = sum(1 for s, d in pairs if s == d)
    mi = mutual_information(pairs) if pairs else 0.0
    print(f"## {label}")
    print("$ " + " ".join(shlex.quote(c) for c in cmd))
    print(
        f"{n} decisions decoded, {right / n:.1%} right (chance {1 / (1 << args.bits):.1%}), "
        f"{mi:.2f} of {args.bits} bits per decision, {mi * n / wall:.1f} bit/s "
        f"over {wall:.1f} s"
    )
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--referee", default=os.path.join(ROOT, "target/release/referee"))
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--bits", type=int, default=3)
    p.add_argument("--step-ms", type=float, default=5)
    p.add_argument("--pace-ms", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if not os.path.exists(args.referee):
        sys.exit(f"no referee at {args.referee}: cargo build --release -p referee")
    run(args, "no pacing", 0, 0)
    run(args, f"--pace-ms {args.pace_ms}, delays below the pace", args.pace_ms, 0)
    run(args, f"--pace-ms {args.pace_ms}, delays shifted above it", args.pace_ms, args.pace_ms)


if __name__ == "__main__":
    main()
