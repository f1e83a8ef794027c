"""The protocol loop of a Schmier bot, so that your bot is one function.

    from schmier_kit import run

    def choose(request):
        return request["legal"][0]      # any legal answer (see below)

    run(choose, name="my-bot")

`run` speaks protocol `schmier/1` (PROTOCOL.md) on stdin/stdout: it answers the
referee's `hello`, calls `choose(request)` for every `request` and sends what it
returns as the reply's `action`, ignores every other message (events, faults,
message types from later protocol versions), and returns at `bye` or when stdin
ends. Standard library only; copy this file next to your bot.

`request` is the referee's message as a dict:

    request["decision"]   "bid", "trump", "exchange", "discard" or "play"
    request["legal"]      every legal answer:
        bid       e.g. ["pass", 4, 5, 6]       -> return one: "pass" or a number
        trump     ["S", "H", "D", "C"]         -> return one letter
        exchange  {"must": [...], "from": [...], "min": m, "max": n}
        discard     -> return a list: all of "must" plus m..n distinct cards of "from"
        play      e.g. ["4S", "9S"]            -> return one card
    request["view"]       everything your seat knows: "hand", "trump", "bids",
                          "trick" (the cards played so far), "tricks", "scores", ...
    request["id"], request["time_ms"]

A bid is a JSON number (return 4, not "4"). Cards are "AS", "TH", "2C", ... and
"JK" for the joker; the joker and the left bower are trumps (docs/RULES.md §12).

If `choose` raises, `run` logs the error to stderr and answers with `fallback`
(the first legal answer), so a bug in your strategy costs a bad move, not a
fault. Log with `log(...)`: stdout carries protocol lines only.
"""

import json
import sys
import traceback

PROTOCOL = "schmier/1"


def log(*args):
    """Diagnostics go to stderr: the referee keeps them in a log file per bot."""
    print("[bot]", *args, file=sys.stderr, flush=True)


def send(msg):
    """One compact JSON object per line, flushed at once."""
    print(json.dumps(msg, separators=(",", ":")), flush=True)


def fallback(request):
    """The first legal answer: all of `must` plus the fewest cards of `from` for
    an exchange or discard, else the first entry of `legal`."""
    legal = request["legal"]
    if isinstance(legal, dict):
        return list(legal["must"]) + list(legal["from"][: legal["min"]])
    return legal[0]


def run(choose, name="python-bot", on_message=None):
    """Plays a whole session: hello, then a reply to every request, until bye.

    `on_message(msg)`, if given, sees every other message (game_start, events,
    faults, game_end), for a bot that keeps its own state."""
    # Read UTF-8 whatever the locale; undecodable bytes become U+FFFD (then bad JSON).
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            log("ignoring a malformed line:", e, line.rstrip()[:200])
            continue
        kind = msg.get("type")
        try:
            if kind == "hello":
                if msg.get("protocol") != PROTOCOL:
                    log("the referee speaks", msg.get("protocol"), "but this bot", PROTOCOL)
                send({"type": "hello", "name": name, "protocol": PROTOCOL})
            elif kind == "request":
                try:
                    action = choose(msg)
                except Exception:  # a bug in the strategy must not cost a fault
                    log("choose() failed, playing the first legal answer:", traceback.format_exc())
                    action = fallback(msg)
                send({"type": "reply", "id": msg["id"], "action": action})
            elif kind == "bye":
                break
            elif on_message is not None:
                on_message(msg)
        except BrokenPipeError:  # the referee closed our stdout: nobody is listening
            break
        except Exception:  # a message of an unexpected shape: log it, keep playing
            log("error handling a", kind, "message:", traceback.format_exc())
