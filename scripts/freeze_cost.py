#!/usr/bin/env python3
"""What one freeze and thaw of a bot cgroup costs (`--freeze-waiting`), as root on a
host with cgroup v2 (at /sys/fs/cgroup/unified on a hybrid host): `python3 scripts/freeze_cost.py`.
A sleeping process is frozen and thawed 20,000 times, against two writes that change nothing."""
import os, subprocess, sys, time
root = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
d = f"{root}/schmier-freeze-bench-{os.getpid()}"
os.mkdir(d)
p = subprocess.Popen(["sleep", "1000"])
open(f"{d}/cgroup.procs", "w").write(str(p.pid))
f = os.open(f"{d}/cgroup.freeze", os.O_WRONLY)
n = 20000
t = time.perf_counter()
for _ in range(n):
    os.pwrite(f, b"1", 0); os.pwrite(f, b"0", 0)
pair = (time.perf_counter() - t) / n
t = time.perf_counter()
for _ in range(n):
    os.pwrite(f, b"0", 0); os.pwrite(f, b"0", 0)
noop = (time.perf_counter() - t) / n
p.kill(); p.wait(); os.close(f); os.rmdir(d)
print(f"freeze+thaw pair: {pair*1e6:.1f} us; two no-op writes: {noop*1e6:.1f} us")
