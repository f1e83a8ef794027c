#!/usr/bin/env python3
"""Print the bubblewrap argv (JSON) of a real `REFEREE play --sandbox` bot, read from /proc.
    sandbox_argv.py REFEREE > ARGV.json"""
import os, subprocess, sys, time, json
referee = sys.argv[1]
bot = sys.argv[2:] or ["bot", "random"]
play = subprocess.Popen([referee, "play", "--sandbox", "--seed", "1", "--games", "1", "--decision-ms", "2000",
     "-q", "--transcript", "/tmp/sandbox-argv-run", "--overwrite", "--team", "builtin:random"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while True:
        for pid in os.listdir("/proc"):
            try:
                argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1]
            except OSError:
                continue
            if argv and argv[0].endswith(b"bwrap") and argv[-2:] == [b"bot", b"random"]:
                print(json.dumps([a.decode() for a in argv]))
                sys.exit(0)
        time.sleep(0.001)
finally:
    play.kill(); play.wait()
