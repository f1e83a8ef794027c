#!/usr/bin/env python3
"""The Python sample bot behind a gate, for the resume test.

If the environment names a gate file (SCHMIER_TEST_GATE, given with
`referee tournament --bot-env`) and that file exists, the bot's first start by a
referee process (the tournament's start check of every entrant, before any game)
passes and leaves `<gate>.checked-<referee pid>`; every later start by the same
referee first creates `<gate>.waiting` and then waits,
without saying hello, until the gate file is gone; then (or at once, without a
gate) it becomes the Python sample bot with the strategy given as argument. The environment is not part of
the command line, so a gated and an ungated run record the same tournament."""

import os
import sys
import time

gate = os.environ.get("SCHMIER_TEST_GATE")
# The referee forks its bots itself: the parent is the referee of this run.
checked = "%s.checked-%d" % (gate, os.getppid()) if gate else None
if gate and os.path.exists(gate) and not os.path.exists(checked):
    open(checked, "w").close()
elif gate and os.path.exists(gate):
    open(gate + ".waiting", "w").close()
    while os.path.exists(gate):
        time.sleep(0.01)

here = os.path.dirname(os.path.abspath(__file__))
bot = os.path.join(here, "..", "..", "sample-bots", "python", "bot.py")
os.execv(sys.executable, [sys.executable, bot] + sys.argv[1:])
