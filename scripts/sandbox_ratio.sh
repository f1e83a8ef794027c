#!/bin/bash
# Sandboxed ÷ bare wall time of two referee builds, alternated (issue 27):
#
#     scripts/sandbox_ratio.sh OLD NEW [ROUNDS]
#
# Each round plays, for --jobs 1 and 2, the sample bracket
# (examples/sample-bracket.toml) and a lineup of four built-in bots (24 games
# each, competition policy), with OLD then NEW, bare then --sandbox, and
# prints one line per run, then a table of the ratios per round and their
# median. Run it from the repository root.
set -eu
old=$1 new=$2 rounds=${3:-3}
E="--entrant a=builtin:heuristic --entrant b=builtin:random --entrant c=builtin:heuristic --entrant d=builtin:random --seed 123456789"
out=$(mktemp -d) log=$(mktemp)
for round in $(seq "$rounds"); do for j in 1 2; do for lineup in bracket builtins; do
  for b in old new; do for m in "" --sandbox; do
    bin=$old; [ $b = new ] && bin=$new
    [ $lineup = bracket ] && args=examples/sample-bracket.toml || args=$E
    rm -rf "$out/run"
    s=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$bin" tournament $args --jobs $j --out "$out/run" -q $m >/dev/null 2>&1
    e=$(date +%s.%N)
    echo "$round $lineup j$j $b ${m:-bare} $(echo "$e - $s" | bc)" | tee -a "$log"
done; done; done; done; done
python3 - "$log" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, lineup, j, b, m, t = line.split()
    d[(lineup, j, b, m)].append(float(t))
print("| lineup, jobs, build | bare | sandboxed | ratio per round | median |")
print("|---|---|---|---|---|")
for lineup in ("bracket", "builtins"):
    for j in ("j1", "j2"):
        for b in ("old", "new"):
            bare, sb = d[(lineup, j, b, "bare")], d[(lineup, j, b, "--sandbox")]
            r = [s / x for s, x in zip(sb, bare)]
            print(f"| {lineup} {j} {b} | {' / '.join(f'{x:.2f}' for x in bare)} s "
                  f"| {' / '.join(f'{x:.2f}' for x in sb)} s "
                  f"| {' / '.join(f'{x:.2f}×' for x in r)} | {statistics.median(r):.2f}× |")
PY
rm -rf "$out" "$log"
