#!/usr/bin/env python3
"""Measures the dentry-cache store (SECURITY.md, "Duplicate-set memory"): a
name that does not exist, looked up under a directory every bot sees
(`/usr/bin`), leaves a negative dentry in the host's cache, which a later bot
reads back.

    python3 scripts/dentry-channel.py [--bits 20000] [--sets 1]
        [--referee target/debug/referee] [--skip-set]
    python3 scripts/dentry-channel.py --defences    (root)

1. Raw, on the host, a writer process and then a reader process (the store
   outlives its writer) with `tests/spy/dentries.py`, for BITS random bits:
   - `cached`: the reader asks `openat2(RESOLVE_CACHED)` (refused in the
     sandbox: `ENOSYS`);
   - `timed`: each bit a pair of names of which the writer looks one up; the
     reader times `stat` of both and takes the faster (what a sandboxed bot
     can still do).
   - `C timed`: the timed pairs again, read and written by a C program the
     script compiles (`cc`), as a bot that is not in Python would.
   For each: bit errors, the reader's and the writer's bits per second, and
   the capacity (1 - H(error)) x the reader's rate.
2. A sandboxed duplicate set (`referee tournament --sandbox`, the spy
   `remember-dentries-timed` against the in-process bots, as
   `tests/integration/spy_dentries.rs` plays it): the opponents' hands the
   spies of later games claimed, against the transcripts: claims, hands
   right, bit errors (36 bits a hand), and the readers' bits per second of
   reading time.

With `--defences`, what a fresh mount per sandbox would change (written
under one mount of /usr/bin, timed under another, against names nobody looked
up): a fresh overlay over it, and a fresh file-backed erofs image of it (a
superblock per mount; needs `mkfs.erofs`).

Prints the host load first and last.
"""
import argparse
import glob
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests/spy"))
sys.dont_write_bytecode = True
import dentries  # noqa: E402


def entropy(p):
    return 0.0 if p in (0, 1) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def in_child(fn):
    """Runs `fn` in a process of its own; returns what it returned."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(fn()).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = json.loads(f.read())
    os.waitpid(pid, 0)
    return out


def raw(how, n):
    tag = f"dentry-channel-{random.getrandbits(48):x}"
    bits = [random.getrandbits(1) for _ in range(n)]
    name = lambda j, b=None: f"{dentries.DIR}/.{tag}-{j}" + ("" if b is None else f"-{b}")

    def write():
        start = time.perf_counter()
        for j, b in enumerate(bits):
            if how == "cached":
                if b:
                    dentries.look_up(name(j))
            else:
                dentries.look_up(name(j, b))
        return time.perf_counter() - start

    def read():
        start = time.perf_counter()
        if how == "cached":
            got = [int(dentries.cached(name(j)) == "yes") for j in range(n)]
        else:
            store = dentries.Store(tag, "timed")
            got = [store.pair(name(j, 0), name(j, 1)) for j in range(n)]
        return time.perf_counter() - start, got

    wrote = in_child(write)
    took, got = in_child(read)
    errors = sum(a != b for a, b in zip(bits, got))
    p = errors / n
    print(f"{how:6}: {n} bits, {errors} errors ({100 * p:.2f} %), reader {n / took:,.0f} bit/s, "
          f"writer {n / wrote:,.0f} bit/s, capacity {(1 - entropy(p)) * n / took:,.0f} bit/s")


# The timed store read and written in C: what a bot that is not a Python
# program gets out of it. `dentry write|read TAG N`: bit j (from a generator
# both sides run) is name j-b looked up; the reader times both names of each
# pair, in an order that alternates, and prints its errors and its seconds.
C_STORE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
static unsigned long long s = 88172645463325252ULL;
static int bit(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s & 1; }
static long long ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec; }
static long long timed(const char *p) { struct stat st; long long a = ns(); stat(p, &st);
  return ns() - a; }
int main(int argc, char **argv) {
  int n = atoi(argv[3]), errors = 0; char a[256], b[256]; struct stat st;
  long long start = ns();
  for (int j = 0; j < n; j++) {
    int x = bit();
    snprintf(a, sizeof a, "/usr/bin/.%s-%d-%d", argv[2], j, 0);
    snprintf(b, sizeof b, "/usr/bin/.%s-%d-%d", argv[2], j, 1);
    if (argv[1][0] == 'w') { stat(x ? b : a, &st); continue; }
    long long t0, t1;
    if (j & 1) { t0 = timed(a); t1 = timed(b); } else { t1 = timed(b); t0 = timed(a); }
    errors += (t1 < t0) != x;
  }
  printf("%d %.6f\n", errors, (ns() - start) / 1e9);
  return 0;
}
"""


def raw_c(n):
    import shutil
    cc = shutil.which("cc")
    if not cc:
        print("C     : no C compiler: not measured")
        return
    work = tempfile.mkdtemp(prefix="dentry-c-")
    src, exe = os.path.join(work, "dentry.c"), os.path.join(work, "dentry")
    with open(src, "w") as f:
        f.write(C_STORE)
    subprocess.run([cc, "-O2", "-o", exe, src], check=True)
    tag = f"dentry-c-{random.getrandbits(48):x}"
    wrote = float(subprocess.run([exe, "w", tag, str(n)], capture_output=True, text=True,
                                 check=True).stdout.split()[1])
    errors, took = subprocess.run([exe, "r", tag, str(n)], capture_output=True, text=True,
                                  check=True).stdout.split()
    errors, took = int(errors), float(took)
    p = errors / n
    print(f"C timed: {n} bits, {errors} errors ({100 * p:.2f} %), reader {n / took:,.0f} bit/s, "
          f"writer {n / wrote:,.0f} bit/s, capacity {(1 - entropy(p)) * n / took:,.0f} bit/s")
    shutil.rmtree(work)


def sandboxed_set(args):
    tag = f"dentry-set-{random.getrandbits(48):x}"
    out = tempfile.mkdtemp(prefix="dentry-channel-")
    cmd = [
        args.referee, "tournament",
        "--entrant", f"spy=python3 tests/spy/spy.py remember-dentries-timed --tag {tag}",
        "--entrant", "h=inproc:heuristic", "--entrant", "r=inproc:random",
        "--sets", str(args.sets), "--sandbox", "--quiet",
        "--startup-ms", "20000", "--decision-ms", "10000", "--out", os.path.join(out, "t"),
    ]
    print("$ " + " ".join(cmd))
    start = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    claims, read_ns = [], 0
    for log in glob.glob(os.path.join(out, "t/stderr/**/*.log"), recursive=True):
        for line in open(log):
            if line.startswith("CLAIM "):
                claims.append(json.loads(line[6:]))
            elif " store=" in line:
                store = json.loads(line.split(" store=")[1].split(" game_start.game=")[0])
                read_ns += store["read_ns"]
    games = []
    for path in glob.glob(os.path.join(out, "t/games/*.jsonl")):
        lines = [json.loads(x) for x in open(path)]
        spies = {s["seat"] for s in lines[0]["seats"] if s["name"].startswith("spy-")}
        games.append((spies, [x for x in lines if x["type"] == "deal"]))
    wrong_bits = right = 0
    for c in claims:
        dealt = next(d["hands"][c["seat"]] for spies, deals in games for d in deals
                     if d["deal"] == c["deal"] and c["me"] in spies and d["hands"][c["me"]] == c["my_hand"])
        right += c["hand"] == dealt
        wrong_bits += sum(a != b for a, b in zip(dentries.encode(c["hand"]), dentries.encode(dealt)))
    n = len(claims) * dentries.BITS
    p = wrong_bits / n if n else 0
    secs = read_ns / 1e9
    print(f"sandboxed set: {len(games)} games in {wall:.0f} s, {len(claims)} opponents' hands claimed, "
          f"{right} exactly right, {wrong_bits} of {n} bits wrong ({100 * p:.2f} %); "
          f"reading (markers, versions and bits) took {secs:.3f} s: {n / secs if secs else 0:,.0f} bit/s, "
          f"capacity {(1 - entropy(p)) * n / secs if secs else 0:,.0f} bit/s")


def across(label, write_dir, read_dir, n):
    """Names looked up under `write_dir` (one process), then timed under
    `read_dir` (another), against names nobody looked up, in interleaved
    pairs: the share of pairs in which the written name was not the faster
    (half: nothing crosses), and what `RESOLVE_CACHED` says."""
    tag = f"dentry-across-{random.getrandbits(48):x}"
    written = [f".{tag}-w{j}" for j in range(n)]
    never = [f".{tag}-n{j}" for j in range(n)]
    in_child(lambda: [dentries.look_up(os.path.join(write_dir, x)) for x in written] and 0)

    def read():
        # Asked first: a timed read looks the name up.
        seen = dentries.cached(os.path.join(read_dir, written[0]))
        store = dentries.Store(tag, "timed")
        wrong = sum(1 - store.pair(os.path.join(read_dir, b), os.path.join(read_dir, a))
                    for a, b in zip(written, never))
        return wrong, seen

    wrong, seen = in_child(read)
    print(f"{label}: {wrong} of {n} pairs wrong ({100 * wrong / n:.1f} %; 50 % is chance), "
          f"RESOLVE_CACHED of a written name: {seen}")


def defences(n):
    """Fresh mounts of /usr/bin, each a superblock of its own or not, as a
    sandbox per game could have them (root only)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    work = tempfile.mkdtemp(prefix="dentry-defences-")
    mounts = []

    def mount(source, target, fstype, data=None):
        os.makedirs(target, exist_ok=True)
        if libc.mount(source.encode(), target.encode(), fstype.encode(), 1,  # MS_RDONLY
                      data.encode() if data else None):
            raise OSError(ctypes.get_errno(), f"mount {fstype} on {target}")
        mounts.append(target)
        return target

    try:
        across("host /usr/bin, written and read there (control)", "/usr/bin", "/usr/bin", n)
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        ovl = [mount("overlay", os.path.join(work, f"ovl{k}"), "overlay", f"lowerdir={empty}:/usr/bin")
               for k in (1, 2)]
        across("overlay per sandbox, written in one, read in another", ovl[0], ovl[1], n)
        mkfs = subprocess.run(["sh", "-c", "command -v mkfs.erofs"], capture_output=True, text=True).stdout.strip()
        if not mkfs:
            print("erofs: no mkfs.erofs (erofs-utils) on this host: not measured")
            return
        image = os.path.join(work, "usr-bin.erofs")
        start = time.monotonic()
        subprocess.run([mkfs, image, "/usr/bin"], check=True, capture_output=True)
        took = time.monotonic() - start
        print(f"erofs image of /usr/bin: {os.path.getsize(image) >> 20} MiB in {took:.1f} s")
        ero = [mount(image, os.path.join(work, f"ero{k}"), "erofs") for k in (1, 2)]
        devs = {os.stat(m).st_dev for m in ero}
        print(f"erofs mounts of one image, file-backed: {len(devs)} superblocks")
        across("erofs per sandbox, written in one, read in another", ero[0], ero[1], n)
    finally:
        for m in reversed(mounts):
            libc.umount2(m.encode(), 0)
        subprocess.run(["rm", "-rf", work])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bits", type=int, default=20000)
    p.add_argument("--sets", type=int, default=1)
    p.add_argument("--referee", default=os.path.join(ROOT, "target/debug/referee"))
    p.add_argument("--skip-set", action="store_true")
    p.add_argument("--defences", action="store_true",
                   help="only the defences: fresh overlay and erofs mounts per sandbox (root)")
    args = p.parse_args()
    print("load:", open("/proc/loadavg").read().strip())
    if args.defences:
        defences(min(args.bits, 4000))
        print("load:", open("/proc/loadavg").read().strip())
        return
    raw("cached", args.bits)
    raw("timed", args.bits)
    raw_c(args.bits)
    if not args.skip_set:
        if not os.path.exists(args.referee):
            sys.exit(f"no referee at {args.referee}: cargo build -p referee")
        sandboxed_set(args)
    print("load:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
