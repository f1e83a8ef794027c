#!/usr/bin/env python3
"""A tournament entrant that tells where it runs, for the per-entrant settings tests.

At `hello` it writes one line to stderr (kept in its log under DIR/stderr/):

    PLACED cwd=<working directory> who=<$WHO> all=<$ALL> extra=<$EXTRA> out=<seen|hidden> nofile=<N> scratch=<none|wrote|error>

where `out` says whether the path in $OUT (the tournament's output folder) exists
for it, `nofile` is its open-file limit (RLIMIT_NOFILE, soft), and `scratch`
whether it wrote a file `placed` into $SCHMIER_SCRATCH (`none`: no such
variable). Then it plays
the first legal action of every request. Self-contained, so it also runs in a
sandbox that shows it nothing but its own directory.
"""
import json
import os
import resource
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "hello":
        env = os.environ.get
        out = env("OUT")
        seen = "seen" if out and os.path.exists(out) else "hidden"
        scratch = env("SCHMIER_SCRATCH")
        wrote = "none"
        if scratch:
            try:
                with open(os.path.join(scratch, "placed"), "w") as f:
                    f.write("placed")
                wrote = "wrote"
            except OSError:
                wrote = "error"
        sys.stderr.write(
            f"PLACED cwd={os.getcwd()} who={env('WHO')} all={env('ALL')} "
            f"extra={env('EXTRA')} out={seen} "
            f"nofile={resource.getrlimit(resource.RLIMIT_NOFILE)[0]} scratch={wrote}\n"
        )
        sys.stderr.flush()
        send({"type": "hello", "name": "placed", "protocol": "schmier/1"})
    elif kind == "request":
        send({"type": "reply", "id": msg["id"], "action": first_legal(msg)})
    elif kind == "bye":
        break
