#!/usr/bin/env python3
"""What one freeze and thaw of a bot's cgroup costs (`--freeze-waiting`), with
cgroup v1's freezer and with v2's `cgroup.freeze`, as root on a host that has
both (a hybrid host: v2 at /sys/fs/cgroup/unified):

    python3 scripts/freeze_cost.py [CYCLES]

For each kind of wait a bot's task may be asleep in (the sample bots' main
threads block in `read` or `epoll_wait`; a Node bot's other threads in a
futex; the sandbox's init in `waitpid`), a Python process of THREADS tasks
asleep so is frozen and thawed CYCLES times (default 2000), 0.2 ms apart.
Printed: the medians of the two writes (the referee's cost, on its table's
path) and the context switches of the target per cycle (each is a task woken
to be frozen or thawed: its CPU's cost). One other cgroup stays frozen all
along, as in a game, where five seats wait: v1 makes its freezer's static key
live with the first frozen cgroup and patches the kernel's text at each
0 <-> 1 change (about 130 us a write here), which a game does not see."""
import os, subprocess, sys, time

CYCLES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
V1 = "/sys/fs/cgroup/freezer"
V2 = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
WAITS = {
    "read": "sys.stdin.read()",
    "epoll_wait": "import select\ne = select.epoll(); e.register(0, select.EPOLLIN); e.poll()",
    "futex": "import threading\nl = threading.Lock(); l.acquire(); l.acquire()",
    "waitpid": "import os\npid = os.fork()\nif pid == 0:\n    time.sleep(1e6)\nos.waitpid(pid, 0)",
    "sigwait": "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD]); signal.sigwait([signal.SIGCHLD])",
}


def switches(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        for line in open(f"/proc/{pid}/task/{task}/status"):
            if "ctxt_switches" in line:
                total += int(line.split()[1])
    return total


def measure(version, wait, threads):
    root = V1 if version == "v1" else V2
    control, on, off = ("freezer.state", b"FROZEN", b"THAWED") if version == "v1" else ("cgroup.freeze", b"1", b"0")
    d = f"{root}/schmier-freeze-cost-{os.getpid()}"
    os.mkdir(d)
    helpers = "".join("threading.Thread(target=lambda: time.sleep(1e6), daemon=True).start()\n" for _ in range(threads - 1))
    code = f"import sys, time, threading\n{helpers}{WAITS[wait]}\n"
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, start_new_session=True)
    time.sleep(0.3)
    open(f"{d}/cgroup.procs", "w").write(str(p.pid))
    f = os.open(f"{d}/{control}", os.O_WRONLY)
    before = switches(p.pid)
    freeze, thaw = [], []
    for _ in range(CYCLES):
        a = time.perf_counter_ns(); os.pwrite(f, on, 0)
        b = time.perf_counter_ns(); os.pwrite(f, off, 0)
        c = time.perf_counter_ns()
        freeze.append(b - a); thaw.append(c - b)
        time.sleep(0.0002)
    woken = (switches(p.pid) - before) / CYCLES
    os.close(f)
    open(f"{root}/cgroup.procs", "w").write(str(p.pid))
    os.killpg(p.pid, 9); p.wait()
    time.sleep(0.1); os.rmdir(d)
    med = lambda v: sorted(v)[len(v) // 2] / 1000
    print(f"{version} {wait:<10} tasks {threads}: freeze {med(freeze):5.1f} us, thaw {med(thaw):5.1f} us, "
          f"the target's context switches {woken:4.2f} a cycle")


keep = f"{V1}/schmier-freeze-keep-{os.getpid()}"
os.mkdir(keep)
sleeper = subprocess.Popen(["sleep", "1000"])
open(f"{keep}/cgroup.procs", "w").write(str(sleeper.pid))
open(f"{keep}/freezer.state", "w").write("FROZEN")
try:
    for version in ("v1", "v2"):
        for wait in WAITS:
            measure(version, wait, 1)
        measure(version, "epoll_wait", 7)
finally:
    open(f"{keep}/freezer.state", "w").write("THAWED")
    sleeper.kill(); sleeper.wait(); time.sleep(0.1); os.rmdir(keep)
