#!/usr/bin/env python3
"""Measures the pipe inode-number channel between two processes (SECURITY.md,
"Host-wide counters that remain").

    python3 scripts/inode-channel.py SENDER_CPU RECEIVER_CPU [BITS] [SLOT_S]

A CPU of `-` leaves the process where the scheduler puts it (what a sandboxed
bot gets: `sched_setaffinity` is refused). Pipe inode numbers come from one
host-wide counter, handed to each CPU in batches of 1024: in each time slot
the sender creates 300 pipes for a 1 and none for a 0; the receiver creates a
pipe at the slot's start and end and reads the difference of their `st_ino`.
Prints the error rate at the best threshold (an attacker can calibrate one)
and the channel's capacity, (1 - H(error)) / slot.
"""
import math
import os
import random
import sys
import time


def ino():
    r, w = os.pipe()
    i = os.fstat(r).st_ino
    os.close(r)
    os.close(w)
    return i


def wait(t):
    d = t - time.time()
    if d > 0:
        time.sleep(d)


def run(role, cpu, bits, slot, start):
    if cpu != "-":
        os.sched_setaffinity(0, {int(cpu)})
    if role == "send":
        for k, b in enumerate(bits):
            wait(start + k * slot + slot * 0.2)
            for _ in range(300 if b else 0):
                ino()
        return None
    got = []
    for k in range(len(bits)):
        wait(start + k * slot + slot * 0.05)
        a = ino()
        wait(start + k * slot + slot * 0.9)
        got.append(ino() - a)
    return got


def main():
    send_cpu, recv_cpu = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    slot = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0125
    rng = random.Random(7)
    bits = [rng.randrange(2) for _ in range(n)]
    start = time.time() + 0.5
    pid = os.fork()
    if pid == 0:
        run("send", send_cpu, bits, slot, start)
        os._exit(0)
    got = run("recv", recv_cpu, bits, slot, start)
    os.waitpid(pid, 0)
    errors, threshold = min((sum((d > t) != b for d, b in zip(got, bits)), t) for t in sorted(set(got)))
    p = errors / n
    h = 0 if p in (0, 1) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    print(f"cpus {send_cpu}/{recv_cpu}: {n} bits, {errors} errors ({100 * p:.1f} %) at threshold "
          f"{threshold}, raw {1 / slot:.0f} bit/s, capacity {(1 - h) / slot:.1f} bit/s")


if __name__ == "__main__":
    main()
