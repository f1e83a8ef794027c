#!/usr/bin/env python3
"""Two partners that talk through reply delay, for measuring the timing channel.

    python3 tests/timing/collude.py OUT_DIR [BITS=3] [STEP_MS=5] [OFFSET_MS=0]

Both partners run this program. As the *sender*, a bot answers each request (with
the first legal action) after a delay that encodes a symbol of BITS bits:
OFFSET_MS + (symbol + 1/2) * STEP_MS. As the *receiver*, it watches the live events
and times its partner's actions: the time from the event just before the partner's
action event to that event is the partner's delay plus the referee's overhead, so
floor((gap - OFFSET_MS) / STEP_MS) is the symbol (clamped to the alphabet).

The symbols are not a secret here: the k-th decision of a seat carries the k-th
symbol of a stream both partners can compute, so the receiver scores itself. It
writes one line per decision it decoded to OUT_DIR/seat-PID.txt:
`expected decoded gap_ms`. `scripts/timing-channel.py` runs the experiment and
turns those files into accuracy and bits per decision.

With `--events live` and fast bystanders (in-process bots) the gap is the
partner's delay to within a fraction of a millisecond; `--pace-ms P` makes every
gap at least P, so delays below P (OFFSET_MS 0) leave nothing to decode, while
delays above P (OFFSET_MS = P) still get through, each decision costing P more.
"""
import json
import os
import random
import sys
import time

OUT = sys.argv[1]
SETTINGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
BITS = int(SETTINGS.get("BITS", "3"))
STEP = float(SETTINGS.get("STEP_MS", "5")) / 1000
OFFSET = float(SETTINGS.get("OFFSET_MS", "0")) / 1000
ACTIONS = {"bid", "trump", "exchange", "dealer_discard", "play"}


def symbol(k):
    """The k-th symbol a seat sends (k from 0), known to both partners."""
    return random.Random(1_000_003 * k + 7).randrange(1 << BITS)


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


def lines():
    """Each line of stdin with the time it was read (one read may hold several)."""
    pending = b""
    while True:
        chunk = os.read(0, 1 << 16)
        at = time.monotonic()
        if not chunk:
            return
        pending += chunk
        *whole, pending = pending.split(b"\n")
        for line in whole:
            yield line, at


def main():
    log = open(os.path.join(OUT, f"seat-{os.getpid()}.txt"), "w")
    sent = 0  # my requests so far (the index of my next symbol)
    heard = 0  # my partner's actions so far
    partner = None
    last = None  # when the previous event arrived
    for raw, at in lines():
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "name": "collude", "protocol": "schmier/1"})
        elif kind == "game_start":
            partner = msg["partner"]
        elif kind == "request":
            time.sleep(OFFSET + (symbol(sent) + 0.5) * STEP)
            sent += 1
            send({"type": "reply", "id": msg["id"], "action": first_legal(msg)})
        elif kind == "bye":
            break
        elif kind in ACTIONS and msg.get("seat") == partner and last is not None:
            gap = at - last
            decoded = min(max(int((gap - OFFSET) // STEP), 0), (1 << BITS) - 1)
            log.write(f"{symbol(heard)} {decoded} {gap * 1000:.3f}\n")
            heard += 1
        elif kind in ACTIONS and msg.get("seat") == partner:
            heard += 1  # no reference point for the very first event
        if kind != "request":
            last = at
        else:
            # My own reply's delay is not my partner's: time from now on.
            last = time.monotonic()
    log.close()


def send(obj):
    os.write(1, (json.dumps(obj, separators=(",", ":")) + "\n").encode())


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
