#!/usr/bin/env python3
"""The Python sample bot behind a gate, for the test that kills a season's
final in the middle (tests/integration/season_final.rs).

Usage: gate_bot.py GATE STRATEGY. If the file GATE exists and the file it
names (its content: a path, the final's journal) holds a line, the bot
creates GATE.waiting and then waits, without saying hello, until GATE is
gone; then (or at once) it becomes the Python sample bot with STRATEGY. The
gate is a file named on the command line, not the environment (a season
records no --bot-env), so the runs a test compares seat the same command."""

import os
import sys
import time

gate = sys.argv[1]


def journaled(path):
    try:
        with open(path) as f:
            return any(line.strip() for line in f)
    except OSError:
        return False


if os.path.exists(gate):
    with open(gate) as f:
        watched = f.read().strip()
    if journaled(watched):
        open(gate + ".waiting", "w").close()
        while os.path.exists(gate):
            time.sleep(0.01)

here = os.path.dirname(os.path.abspath(__file__))
bot = os.path.join(here, "..", "..", "sample-bots", "python", "bot.py")
os.execv(sys.executable, [sys.executable, bot] + sys.argv[2:])
