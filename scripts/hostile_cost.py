#!/usr/bin/env python3
"""The referee's own CPU against its hostile bot's, for one misbehaviour.

    python3 scripts/hostile_cost.py REFEREE ROUNDS MODE [KEY=VALUE ...] [-- REFEREE-FLAGS]

Plays one game with `tests/hostile/bot.py MODE KEY=VALUE...` in seat 1 and
built-in bots elsewhere (in the referee's own process), and the same game with
`tests/hostile/bot.py instant` (the same plays, no misbehaviour), alternated
ROUNDS times so that load hits both alike. Each run's CPU is read from the
referee's /proc entry after it exits and before it is reaped: the referee's own
(every thread) and its reaped children's (the bot). Prints the medians of the
differences (what the misbehaviour cost each side), their ratio, and the wall
time of the hostile runs. Flags after `--` go to `referee play` (e.g.
`--limit-cpus 0.25`, `--sandbox`).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

referee = os.path.realpath(sys.argv[1])
rounds = int(sys.argv[2])
rest = sys.argv[3:]
flags = rest[rest.index("--") + 1:] if "--" in rest else []
mode = rest[: rest.index("--")] if "--" in rest else rest
HZ = os.sysconf("SC_CLK_TCK")


def run(bot):
    """(referee CPU s, bot CPU s, wall s) of one game with `bot` in seat 1."""
    with tempfile.TemporaryDirectory() as out:
        argv = [referee, "play", "--seed", "17", "-q", "--transcript", out,
                "--team", "inproc:heuristic", "--team", "inproc:random", "--team", "inproc:random",
                "--decision-ms", "10000", "--startup-ms", "120000",
                "--seat", "1=python3 tests/hostile/bot.py " + " ".join(bot)] + flags
        start = time.monotonic()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        wall = time.monotonic() - start
        with open(f"/proc/{child.pid}/stat") as f:
            stat = f.read()
        fields = stat[stat.rfind(")") + 2:].split()
        ticks = [int(fields[i - 3]) for i in (14, 15, 16, 17)]
        child.wait()
        return (ticks[0] + ticks[1]) / HZ, (ticks[2] + ticks[3]) / HZ, wall


costs = []
for _ in range(rounds):
    hostile = run(mode)
    plain = run(["instant"])
    costs.append((hostile[0] - plain[0], hostile[1] - plain[1], hostile[2]))
ref = statistics.median(c[0] for c in costs)
bot = statistics.median(c[1] for c in costs)
wall = statistics.median(c[2] for c in costs)
print(f"{' '.join(mode)} {' '.join(flags)}: referee {ref:.2f} s, bot {bot:.2f} s of CPU "
      f"(medians of {rounds}), ratio {ref / bot if bot > 0 else float('inf'):.3f}; "
      f"hostile game {wall:.2f} s wall; load {os.getloadavg()[0]:.1f}")
