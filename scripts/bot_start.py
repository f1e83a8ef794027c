#!/usr/bin/env python3
"""Time from starting a bot process to its `hello`, bare and sandboxed.

    python3 scripts/bot_start.py REFEREE [RUNS]

Starts `REFEREE bot random` RUNS times (default 50) as the referee does: bare, and
through bubblewrap with the referee's own sandbox arguments (captured from a
`referee play --sandbox` run), alternating the two so that load hits both alike.
Prints the median and 90th percentile of each, in milliseconds.
"""
import os
import statistics
import subprocess
import sys
import time

referee = os.path.realpath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
HELLO = b'{"type":"hello","protocol":"schmier/1","referee":"bench","limits":{"startup_ms":null,"decision_ms":null,"time_bank_ms":0,"clock":"wall","max_line_bytes":65536}}\n'


def sandbox_argv():
    """The bubblewrap command line of a real `referee play --sandbox` bot."""
    play = subprocess.Popen(
        [referee, "play", "--sandbox", "--seed", "1", "--games", "1", "--decision-ms", "2000",
         "-q", "--transcript", "/tmp/bot-start-bench", "--team", "builtin:random"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        argv = f.read().split(b"\0")[:-1]
                except OSError:
                    continue
                if argv and argv[0].endswith(b"bwrap") and argv[-2:] == [b"bot", b"random"]:
                    # Not the descriptor the referee hands the bot's stdout in
                    # (none here), nor the word a sandbox built ahead waits for.
                    i = argv.index(b"--stdout-fd")
                    del argv[i:i + 2]
                    return [a for a in argv if a != b"--hold"]
            time.sleep(0.001)
    finally:
        play.kill()
        play.wait()


def start(argv, as_nobody):
    # A root referee starts bubblewrap as nobody; so does this script.
    ids = {"user": 65534, "group": 65534, "extra_groups": []} if as_nobody else {}
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env={"PATH": "/usr/local/bin:/usr/bin:/bin"}, **ids)
    p.stdin.write(HELLO)
    p.stdin.flush()
    p.stdout.readline()
    t = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return t * 1000


def main():
    boxed = sandbox_argv()
    bare = [referee.encode(), b"bot", b"random"]
    times = {"bare": [], "sandboxed": []}
    for _ in range(runs):
        times["bare"].append(start(bare, False))
        times["sandboxed"].append(start(boxed, os.getuid() == 0))
    for name, t in times.items():
        t.sort()
        print(f"{name:10} median {statistics.median(t):6.2f} ms  p90 {t[int(len(t) * 0.9)]:6.2f} ms  ({len(t)} starts)")


main()
