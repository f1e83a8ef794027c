#!/usr/bin/env python3
"""A deliberately misbehaving Schmier bot, one way per MODE, for the referee's tests.

    python3 tests/hostile/bot.py MODE [KEY=VALUE ...] [--tag TOKEN]

Outside its misbehaviour it plays correctly: it answers each request with the first
legal action. `--tag` is ignored; tests put a unique token there to find leftover
processes by their command line.
"""
import json
import os
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "instant"
# Settings as KEY=VALUE words after the mode (e.g. FRACTION=0.8 FIRST=20).
SETTINGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
out = sys.stdout.buffer
# A name that is terminal control, as a console-injection probe sent it: erase the
# line (ESC [2K), carriage return, cursor up (ESC [1A), an OSC 52 clipboard write,
# a C1 CSI (U+009B) clearing the screen, and a right-to-left override.
NAMES = {
    "evil-name": "evil\x1b[2K\rgood\x1b[1A\x1b]52;c;aGVsbG8=\x07\x9b2J\u202eeman",
    # 152 KB of name and of version (the run raises --max-line-bytes to let it in).
    "bloat": "b" * 152_000,
    # Names that would break a page that escaped them for the wrong context: a
    # comment opener that switches a <script> element's parser, a script end
    # tag, and quotes ending an attribute. Each also sends its name as its
    # first (malformed) reply, to be quoted in the fault's reason.
    "page-comment": "<!--<script>",
    "page-close": "</script><script>document.body.dataset.pwned=1</script>",
    "page-quote": "\"'><img src=x onerror=\"document.body.dataset.pwned=1\">&amp;\u2028",
}


def send(obj):
    out.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
    out.flush()


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        need = legal["min"] - 0
        return legal["must"] + legal["from"][:need]
    return legal[0]


def reply(req, action=None):
    send({"type": "reply", "id": req["id"], "action": first_legal(req) if action is None else action})


def hang():
    while True:
        time.sleep(3600)


def fill_scratch(game):
    """Writes 1 MiB files to $SCHMIER_SCRATCH until a write fails (or MB
    megabytes, 100 by default), and says on stderr how far it got and how it
    stopped: `FILL game G wrote N ERRNO` (`ok` if nothing stopped it)."""
    import errno
    scratch = os.environ["SCHMIER_SCRATCH"]
    chunk, wrote, how = b"s" * (1 << 20), 0, "ok"
    for i in range(int(SETTINGS.get("MB", "100"))):
        try:
            with open(os.path.join(scratch, f"fill-{game}-{i}"), "wb") as f:
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            wrote += len(chunk)
        except OSError as e:
            how = errno.errorcode.get(e.errno, str(e.errno))
            break
    sys.stderr.write(f"FILL game {game} wrote {wrote} {how}\n")
    sys.stderr.flush()


def main():
    if MODE == "exit-at-start":
        sys.exit(3)
    if MODE == "stderr-trickle":
        # One byte per write, before hello: each write could wake the referee.
        for _ in range(int(SETTINGS.get("WRITES", "1000000"))):
            os.write(2, b"x")
    if MODE == "stderr-before-hello":
        # A verbose but honest bot: MB megabytes of log before it reads hello,
        # in 1 MiB writes (each blocks while the referee's pipe is full), at
        # RATE MB/s if given (else as fast as it can).
        chunk = b"l" * (1 << 20)
        rate = float(SETTINGS.get("RATE", "0"))
        start = time.monotonic()
        for i in range(int(SETTINGS.get("MB", "100"))):
            sys.stderr.buffer.write(chunk)
            sys.stderr.buffer.flush()
            if rate > 0:
                time.sleep(max(0.0, start + (i + 1) / rate - time.monotonic()))
    if MODE == "read-model":
        # Waits for the test's SIGUSR1 (it reads the view holder's memory
        # meanwhile), then reads the model.bin beside this script: its data
        # at the start, and 1 MiB of a hole 1 GiB in. SIGUSR2 is blocked
        # too, and not waited for, so that /proc's SigBlk shows it while
        # SIGUSR1 is waited for (sigwait unblocks what it waits for): the
        # test's sign that SIGUSR1 no longer kills the bot.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
        signal.sigwait({signal.SIGUSR1})
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "model.bin"), "rb") as f:
            head = f.read(7)
            f.seek(1 << 30)
            hole = f.read(1 << 20)
        zeros = len(hole) == 1 << 20 and hole == bytes(len(hole))
        sys.stderr.write(f"MODEL {head.decode(errors='replace')} hole-zeros={zeros}\n")
        sys.stderr.flush()
    requests = 0
    games = 0
    first = None
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "game_start":
            games += 1
            if MODE == "fill-scratch":
                fill_scratch(games)
        if kind == "hello":
            if MODE == "wrong-protocol":
                send({"type": "hello", "name": "old", "protocol": "schmier/0"})
                continue
            hello = {"type": "hello", "name": NAMES.get(MODE, "hostile-" + MODE), "protocol": "schmier/1"}
            if MODE == "bloat":
                hello["version"] = "v" * 152_000
            send(hello)
            if MODE == "preempt":
                send({"type": "reply", "id": 0, "action": "pass"})
            if MODE == "deaf":
                hang()
            if MODE == "close-stdout":
                out.flush()
                os.close(1)
                hang()
            if MODE == "stderr-flood":
                # 8 MiB: eight times the cap.
                chunk = b"e" * (1 << 20)
                for _ in range(8):
                    sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()
            if MODE == "fork-grandchild":
                if os.fork() == 0:
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                    # Stay in the bot's process group, holding no pipes.
                    for fd in (0, 1, 2):
                        os.close(fd)
                    hang()
            continue
        if kind == "bye":
            return
        if kind != "request":
            continue
        requests += 1
        if MODE == "hog" and requests == 1:
            # In play, after hello: a bot that started and then grew (one that
            # cannot even start is a `start` fault, tested elsewhere).
            hog = bytearray(300 << 20)  # fails under --limit-memory-mb below 300
            hog[-1] = 1
        if MODE == "silent" or (MODE == "silent-from-game-2" and games >= 2):
            continue
        if MODE == "late-split" and requests <= 2:
            # Request 1 is never answered: it times out. While request 2 is
            # pending: a short stale line (its stale fault), then the opening
            # of a long reply to request 1, late, whose end comes only with
            # request 3, once request 2 has timed out too.
            if requests == 1:
                first = msg["id"]
            else:
                send({"type": "reply", "id": msg["id"] + 1000, "action": "pass"})
                out.write(('{"type":"reply","id":%d,"action":"pass","pad":"%s' % (first, "p" * 4000)).encode())
                out.flush()
            continue
        if MODE == "late-split" and requests == 3:
            out.write(b'"}\n')
        if MODE == "late" and requests == 1:
            # 1.3x the limit: late for this request, but awake again long before
            # the next one (sent when this one times out) runs out of time.
            time.sleep(msg["time_ms"] * 1.3 / 1000)
        if MODE in ("sleep", "spin") and requests <= int(SETTINGS.get("FIRST", "1000000")):
            # Take FRACTION of the time allowed: asleep (no CPU) or busy (all CPU).
            seconds = int(SETTINGS["LIMIT_MS"]) * float(SETTINGS["FRACTION"]) / 1000
            if MODE == "sleep":
                time.sleep(seconds)
            else:
                end = time.process_time() + seconds
                while time.process_time() < end:
                    pass
        if MODE in ("crash-mid-hand", "signal") and requests == 10:
            if MODE == "signal":
                os.kill(os.getpid(), signal.SIGKILL)
            sys.exit(7)
        if MODE == "garbage" and requests == 1:
            out.write(b"this is not json\n")
            out.flush()
            continue
        if MODE == "bad-utf8" and requests == 1:
            out.write(b'{"type":"reply","id":1,"action":"\xff\xfe"}\n')
            out.flush()
            continue
        if MODE == "huge-line" and requests == 1:
            out.write(b"x" * (10 << 20))
            out.flush()
            time.sleep(0.2)
            out.write(b"\n")
            out.flush()
            continue
        if MODE == "endless" and requests == 1:
            chunk = b"x" * (1 << 20)
            for _ in range(int(SETTINGS.get("MB", "300"))):
                out.write(chunk)
            out.flush()
            hang()
        if MODE.startswith("page-") and requests == 1:
            reply(msg, NAMES[MODE])
            continue
        if MODE == "bloat":
            # A 60 KB action of the wrong shape, every time: a string, or an
            # array holding one, which a parser's message would quote too.
            text = "x" * 60_000
            reply(msg, text if requests % 2 else [text])
            continue
        if MODE == "illegal" and msg["decision"] == "play":
            # A real card, but not one of the legal plays.
            reply(msg, next(r + s for s in "SHDC" for r in "23456789TJQKA" if r + s not in msg["legal"]))
            continue
        if MODE == "stale-spam":
            # Lines naming requests never asked, before every real reply; with
            # PAD=N each carries N bytes more (a long stale line).
            stale = {"type": "reply", "id": msg["id"] + 1000, "action": "pass"}
            if "PAD" in SETTINGS:
                stale["pad"] = "p" * int(SETTINGS["PAD"])
            spam = (json.dumps(stale) + "\n").encode()
            out.write(spam * int(SETTINGS.get("LINES", "100")))
        if MODE == "wrong-id" and requests == 1:
            send({"type": "reply", "id": msg["id"] + 1000, "action": first_legal(msg)})
        if MODE == "stdout-trickle" and requests <= int(SETTINGS.get("FIRST", "1")):
            # The reply after WRITES spaces (JSON allows them), one byte per
            # write: each write could wake the referee.
            out.flush()
            for _ in range(int(SETTINGS.get("WRITES", "60000"))):
                os.write(1, b" ")
        if MODE == "split":
            line = (json.dumps({"type": "reply", "id": msg["id"], "action": first_legal(msg)}) + "\n").encode()
            for i in range(0, len(line), 3):
                out.write(line[i:i + 3])
                out.flush()
                time.sleep(0.001)
            continue
        if MODE == "ponder" and msg["id"] % int(SETTINGS.get("EVERY", "4")) == 0:
            # An honest bot that thinks a while on every EVERY-th request
            # (its id), MS ms, with the file MARK there meanwhile (if given):
            # the tests cut its link, or kill its connector, while it thinks.
            mark = SETTINGS.get("MARK")
            if mark:
                with open(mark + ".tmp", "w") as f:
                    f.write(str(msg["id"]))
                os.rename(mark + ".tmp", mark)
            time.sleep(int(SETTINGS.get("MS", "500")) / 1000)
            if mark and os.path.exists(mark):
                os.remove(mark)
        reply(msg)
        if MODE == "double":
            reply(msg)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
