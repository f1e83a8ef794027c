#!/usr/bin/env python3
"""Bots for the referee's clock tests: whose CPU is charged, and who gets it.

    python3 tests/spy/clock.py MODE [--tag TOKEN]

Each plays correctly (the first legal action).

    workers N MS  for each of its first N decisions, forks workers one after
                  another, each spinning until its own CPU clock shows 100 ms
                  and exiting (waited for), MS ms of CPU in all, then replies:
                  work a CPU clock that counts only live tasks never sees
    victim N MS   honest: for each of its first N decisions, works until its
                  own CPU clock shows MS ms more, then replies; it reports
                  each decision's CPU and wall time on stderr
                  (`CLOCK victim cpu_ms wall_ms`)
    hog N         from its first request on, N threads spin for as long as
                  it lives, while the others think as well as when it is asked
                  (N = 0: three per CPU it may run on)
    nice [lower]  honest: reports its nice value at each decision on stderr
                  (`NICE n`, field 19 of /proc/self/stat); with `lower`, first
                  tries to take a priority one above it (nice n - 1)

`--tag` is a token the tests use to find leftover processes.
"""
import hashlib
import json
import os
import sys
import threading
import time

MODE = sys.argv[1]
ARGS = [a for a in sys.argv[2:] if not a.startswith("--")]
out = sys.stdout.buffer


def send(obj):
    out.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
    out.flush()


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


def spin_cpu(seconds):
    """Works until this process's CPU clock shows `seconds` more."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def think_in_workers(total_ms):
    left = total_ms
    while left > 0:
        chunk = min(100, left)
        pid = os.fork()
        if pid == 0:
            spin_cpu(chunk / 1000)
            os._exit(0)
        os.waitpid(pid, 0)
        left -= chunk


def spin_without_the_gil():
    # hashlib lets go of Python's lock over large inputs, so the threads spin
    # on every CPU at once, as native threads would.
    data = b"x" * (1 << 20)
    while True:
        hashlib.sha256(data).digest()


def start_hog(threads):
    if threads == 0:
        threads = 3 * len(os.sched_getaffinity(0))
    for _ in range(threads):
        threading.Thread(target=spin_without_the_gil, daemon=True).start()


def main():
    asked = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "name": "clock-" + MODE, "protocol": "schmier/1"})
        elif kind == "request":
            asked += 1
            if MODE == "workers" and asked <= int(ARGS[0]):
                think_in_workers(int(ARGS[1]))
            elif MODE == "victim" and asked <= int(ARGS[0]):
                cpu, wall = time.process_time(), time.monotonic()
                spin_cpu(int(ARGS[1]) / 1000)
                cpu, wall = time.process_time() - cpu, time.monotonic() - wall
                sys.stderr.write(f"CLOCK victim {cpu * 1000:.0f} {wall * 1000:.0f}\n")
                sys.stderr.flush()
            elif MODE == "nice":
                if ARGS[:1] == ["lower"]:
                    try:
                        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)
                    except OSError:
                        pass
                with open("/proc/self/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                # Field 19 (nice); fields[0] is field 3 (state).
                sys.stderr.write(f"NICE {fields[16]}\n")
                sys.stderr.flush()
            elif MODE == "hog" and asked == 1:
                start_hog(int(ARGS[0]))
            send({"type": "reply", "id": msg["id"], "action": first_legal(msg)})
        elif kind == "bye":
            return


if __name__ == "__main__":
    main()
