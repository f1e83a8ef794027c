#!/usr/bin/env python3
"""What the Landlock wrapper adds to a bot's start, outside any sandbox.

    python3 scripts/landlock_cost.py REFEREE

Runs `/bin/true` 200 times bare and 200 times through `REFEREE landlock RULES --
/bin/true` (what bubblewrap runs in place of each bot under --sandbox: exec the
referee, restrict with Landlock, exec the bot), alternating, and prints the
median and 90th percentile of each in milliseconds.
"""
import statistics, subprocess, sys, time
ref = sys.argv[1]
rules = ["--read", "/usr", "--read", "/etc", "--read", "/proc", "--write", "/tmp", "--device", "/dev/null", "--list", "/dev"]
bare, wrapped = [], []
for _ in range(200):
    for argv, out in ((["/bin/true"], bare), ([ref, "landlock", *rules, "--", "/bin/true"], wrapped)):
        t0 = time.perf_counter(); subprocess.run(argv, check=True, env={}); out.append((time.perf_counter() - t0) * 1000)
for n, t in (("true", bare), ("landlock+true", wrapped)):
    t.sort(); print(f"{n:14} median {statistics.median(t):5.2f} ms  p90 {t[int(len(t)*0.9)]:5.2f} ms")
