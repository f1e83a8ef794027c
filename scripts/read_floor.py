#!/usr/bin/env python3
"""What the least a reader can spend on a hostile bot's stdout costs, against the bot.

    python3 scripts/read_floor.py REFEREE ROUNDS MODE [KEY=VALUE ...] [-- READER...]

The floor under `scripts/hostile_cost.py`'s ratio: the same bot
(`tests/hostile/bot.py MODE KEY=VALUE...`) is given the messages seat 1 gets
in `hostile_cost.py`'s game (recorded once through REFEREE, `--seed 17`, from
a `tee` in front of an honest bot), from a file, so it answers them one after
the other; its stdout goes to READER (default `wc -l`: reads each byte once
and counts newlines in it) instead of a referee. Run alternately with the
`instant` mode ROUNDS times; prints the medians of the differences of the
reader's and the bot's CPU (rusage of each), and their ratio. With
`SCHMIER_FLOOR_CGROUP=DIR` (a cgroup v1 `cpu` or v2 directory the caller made,
e.g. with a quota of 25 ms per 100 ms) the bot runs in it, as under
`--limit-cpus 0.25`.
"""
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

referee = os.path.realpath(sys.argv[1])
rounds = int(sys.argv[2])
rest = sys.argv[3:]
reader = rest[rest.index("--") + 1:] if "--" in rest else ["wc", "-l"]
mode = rest[: rest.index("--")] if "--" in rest else rest
bot = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "tests", "hostile", "bot.py")
cgroup = os.environ.get("SCHMIER_FLOOR_CGROUP")


def record(path):
    """The messages seat 1 is sent in hostile_cost.py's game, into `path`."""
    with tempfile.TemporaryDirectory() as out:
        seat = f"sh -c 'tee {shlex.quote(path)} | python3 {shlex.quote(bot)} instant'"
        subprocess.run([referee, "play", "--seed", "17", "-q", "--transcript", out,
                        "--team", "inproc:heuristic", "--team", "inproc:random",
                        "--team", "inproc:random", "--decision-ms", "10000",
                        "--startup-ms", "120000", "--seat", "1=" + seat],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cpu(ru):
    return ru.ru_utime + ru.ru_stime


def run(messages, words):
    """(reader CPU s, bot CPU s) of the bot in `words` answering `messages`."""
    command = "exec python3 " + " ".join(shlex.quote(w) for w in [bot] + words)
    if cgroup:
        command = f"echo $$ > {shlex.quote(cgroup)}/cgroup.procs; " + command
    with open(messages, "rb") as stdin:
        writer = subprocess.Popen(["sh", "-c", command], stdin=stdin, stdout=subprocess.PIPE)
    reading = subprocess.Popen(reader, stdin=writer.stdout, stdout=subprocess.DEVNULL)
    writer.stdout.close()
    _, _, bot_ru = os.wait4(writer.pid, 0)
    _, _, reader_ru = os.wait4(reading.pid, 0)
    return cpu(reader_ru), cpu(bot_ru)


with tempfile.TemporaryDirectory() as tmp:
    messages = os.path.join(tmp, "seat1.jsonl")
    record(messages)
    costs = []
    for _ in range(rounds):
        hostile = run(messages, mode)
        plain = run(messages, ["instant"])
        costs.append((hostile[0] - plain[0], hostile[1] - plain[1]))
ref = statistics.median(c[0] for c in costs)
bot_cpu = statistics.median(c[1] for c in costs)
print(f"{' '.join(mode)} read by {' '.join(reader)}: reader {ref:.3f} s, bot {bot_cpu:.3f} s "
      f"of CPU (medians of {rounds}), ratio {ref / bot_cpu if bot_cpu > 0 else float('inf'):.3f}; "
      f"load {os.getloadavg()[0]:.1f}")
