#!/usr/bin/env python3
"""Start-to-hello times of a tournament's bots, bare and sandboxed, as the
referee itself measures them.

    python3 scripts/hello_times.py REFEREE ROUNDS -- TOURNAMENT-ARGS...

Runs `REFEREE tournament TOURNAMENT-ARGS -q --out DIR` ROUNDS times without
and with `--sandbox`, alternating, with `RUST_LOG=referee::player=debug`, and
reads the referee's lines "bot PID said hello N us after its start". A bot's
start is when the table asks for it: its spawn, or, for a sandboxed bot built
ahead of its game and held, the word that lets it run (the part of its start
that lies on the game's critical path). Prints the p50 and p90 of each, in ms,
over every bot start of every round (the entrants' start check included).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(rb"said hello (\d+) us after its start")


def run(referee, args, sandbox, out):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, RUST_LOG="referee::player=debug")
    cmd = [referee, "tournament", *args, "-q", "--out", out] + (["--sandbox"] if sandbox else [])
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.decode(errors='replace')[-2000:]}")
    return [int(m.group(1)) / 1000 for m in LINE.finditer(p.stderr)]


def main():
    if "--" not in sys.argv or len(sys.argv) < 4:
        sys.exit(__doc__)
    cut = sys.argv.index("--")
    referee, rounds = os.path.realpath(sys.argv[1]), int(sys.argv[2])
    args = sys.argv[cut + 1:]
    times = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for sandbox in (False, True):
                times[sandbox] += run(referee, args, sandbox, os.path.join(tmp, "out"))
    for sandbox, t in times.items():
        if not t:
            sys.exit("no start-to-hello lines: is the referee's debug log on?")
        q = statistics.quantiles(t, n=10)
        label = "sandboxed" if sandbox else "bare"
        print(f"{label:9}: {len(t)} starts, p50 {statistics.median(t):.1f} ms, p90 {q[8]:.1f} ms")


if __name__ == "__main__":
    main()
