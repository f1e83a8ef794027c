#!/usr/bin/env python3
"""A bot whose thinking, not the CPU, is the cost: it runs another bot (the
rest of its command line) and holds each of that bot's answers for MS
milliseconds before passing it on. Used by scripts/worker-throughput.

    python3 scripts/thinking_bot.py MS referee bot heuristic
"""
import subprocess
import sys
import threading
import time


def main() -> None:
    delay = int(sys.argv[1]) / 1000
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def forward_in() -> None:
        for line in sys.stdin.buffer:
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=forward_in, daemon=True).start()
    for line in child.stdout:
        time.sleep(delay)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
