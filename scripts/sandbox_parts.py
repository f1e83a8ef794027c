#!/usr/bin/env python3
"""Time the parts of a sandboxed bot start: `python3 scripts/sandbox_argv.py REFEREE > /tmp/sandbox-argv.json` first, then `python3 scripts/sandbox_parts.py ROUNDS [ARGV.json]` (as root: bubblewrap runs as nobody). Start = spawn to the hello reply; end = stdin closed to exit."""
import json, os, subprocess, sys, time, statistics
argv = json.load(open(sys.argv[2] if len(sys.argv) > 2 else "/tmp/sandbox-argv.json"))
i = argv.index("--stdout-fd"); del argv[i:i+2]
argv = [a for a in argv if a != "--hold"]  # a sandbox built ahead waits for a word first
referee = argv[-3]
HELLO = b'{"type":"hello","protocol":"schmier/1","referee":"bench","limits":{"startup_ms":null,"decision_ms":null,"time_bank_ms":0,"clock":"wall","max_line_bytes":65536}}\n'
def drop(a, flag, n):
    out=[]; k=0
    while k < len(a):
        if a[k]==flag and (flag!="--ro-bind" or a[k+1].startswith("/tmp/schmier-proc")): k+=n; continue
        out.append(a[k]); k+=1
    return out
sep = argv.index("--")
variants = {
  "bare": [referee, "bot", "random"],
  "sandbox": argv,
  "no-net": [a for a in argv if a != "--unshare-net"],
  "no-masks": drop(argv, "--ro-bind", 3),
  "no-landlock": argv[:sep+1] + [referee, "bot", "random"],
  "bwrap-true": argv[:sep+1] + ["/usr/bin/true"],
  "bwrap-min-true": ["/usr/bin/bwrap","--unshare-user","--unshare-pid","--unshare-net","--unshare-ipc","--unshare-uts","--ro-bind","/usr","/usr","--symlink","usr/lib","/lib","--symlink","usr/lib64","/lib64","--symlink","usr/bin","/bin","--","/usr/bin/true"],
}
def run(name, a):
    ids = {} if name == "bare" else {"user": 65534, "group": 65534, "extra_groups": []}
    t0 = time.perf_counter()
    p = subprocess.Popen(a, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": "/usr/local/bin:/usr/bin:/bin"}, **ids)
    if a[-1] == "/usr/bin/true":
        p.wait(); return (time.perf_counter()-t0)*1000, 0
    p.stdin.write(HELLO); p.stdin.flush(); line = p.stdout.readline()
    assert line, name
    t1 = time.perf_counter()
    p.stdin.close(); p.wait()
    return (t1-t0)*1000, (time.perf_counter()-t1)*1000
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
res = {k: ([], []) for k in variants}
for _ in range(runs):
    for k, a in variants.items():
        s, e = run(k, a); res[k][0].append(s); res[k][1].append(e)
for k,(s,e) in res.items():
    s.sort(); e.sort()
    print(f"{k:15} start p50 {statistics.median(s):7.2f} p90 {s[int(len(s)*.9)]:7.2f} ms   end p50 {statistics.median(e):6.2f} p90 {e[int(len(e)*.9)]:6.2f} ms")
