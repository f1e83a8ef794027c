#!/usr/bin/env python3
"""Request-to-reply times of every decision in the timings sidecars of a run.

    python3 scripts/decision_times.py DIR [DIR ...]

Reads DIR/timings/game-*.jsonl (or, from older runs, DIR/game-*.timings.jsonl)
and prints, per DIR, how many decisions and the
median, 90th and 99th percentile and mean of `micros` (from the request's last
byte written to the reply's newline read).
"""
import glob
import json
import statistics
import sys

for d in sys.argv[1:]:
    t = sorted(
        json.loads(line)["micros"]
        for f in glob.glob(f"{d}/timings/game-*.jsonl") + glob.glob(f"{d}/game-*.timings.jsonl")
        for line in open(f)
        if line.strip() and json.loads(line).get("micros") is not None
    )
    pct = lambda q: t[min(len(t) - 1, int(len(t) * q))]
    print(f"{d}: {len(t)} decisions, median {statistics.median(t):.0f} us, p90 {pct(0.9)} us, "
          f"p99 {pct(0.99)} us, mean {statistics.mean(t):.0f} us")
