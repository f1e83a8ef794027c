#!/usr/bin/env python3
"""Run a referee tournament and time, with inotify on its games/ folder, each
game's start (its transcript's .partial created) and end (renamed into place).
Prints the run's wall time, the time before the first game starts and after
the last one ends, and the p50/p90 of game lengths and of the gaps from
one game's end to the next game's start (--jobs 1), in ms.
    gaps.py OUT -- REFEREE tournament ... --out OUT ..."""
import ctypes, os, struct, subprocess, sys, time, statistics, select
out = sys.argv[1]; cmd = sys.argv[sys.argv.index("--")+1:]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
IN_CREATE, IN_MOVED_TO = 0x100, 0x80
fd = libc.inotify_init1(0)
os.makedirs(out, exist_ok=True)
top = libc.inotify_add_watch(fd, out.encode(), IN_CREATE)
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
ev = []
while True:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        buf = os.read(fd, 65536); now = time.monotonic(); i = 0
        while i < len(buf):
            wd, mask, cookie, ln = struct.unpack_from("iIII", buf, i)
            name = buf[i+16:i+16+ln].rstrip(b"\0").decode(); i += 16 + ln
            if wd == top:
                if name == "games": libc.inotify_add_watch(fd, (out + "/games").encode(), IN_CREATE | IN_MOVED_TO)
                continue
            if name.endswith(".jsonl.partial") and mask & IN_CREATE: ev.append((now, "start", name))
            elif name.endswith(".jsonl") and mask & IN_MOVED_TO: ev.append((now, "end", name))
    elif p.poll() is not None:
        break
wall = time.monotonic() - t0
ev.sort()
lengths, gaps, last_end = [], [], None
starts = {}
for t, k, n in ev:
    if k == "start":
        starts[n[:-8]] = t
        if last_end is not None: gaps.append((t - last_end) * 1000); last_end = None
    else:
        if n in starts: lengths.append((t - starts[n]) * 1000)
        last_end = t
q = lambda v, f: sorted(v)[min(len(v)-1, int(len(v)*f))] if v else float("nan")
first = min((t for t, k, _ in ev if k == "start"), default=t0) - t0
tail = wall - (max((t for t, k, _ in ev if k == "end"), default=t0) - t0)
print(f"wall {wall:.2f} s rc {p.returncode}; before the first game {first*1000:.0f} ms, after the last {tail*1000:.0f} ms; games {len(lengths)}: length p50 {q(lengths,.5):.0f} p90 {q(lengths,.9):.0f} ms; end->next start p50 {q(gaps,.5):.0f} p90 {q(gaps,.9):.0f} ms ({len(gaps)} gaps)")
