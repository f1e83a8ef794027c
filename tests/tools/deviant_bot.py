#!/usr/bin/env python3
"""A deterministic test bot that can deviate once, at a known place.

    python3 deviant_bot.py                 # always the first legal answer
    python3 deviant_bot.py play 3          # ... except at its 3rd play decision
                                           #     with a choice: the last legal card
    python3 deviant_bot.py bid 1           # ... or at its 1st bid with a choice
    python3 deviant_bot.py echo            # copies every line in ("IN ...") and
                                           # out ("OUT ...") to stderr

When it deviates it writes one line to stderr, the test's oracle for where two
games part:  DEVIATED game=G deal=D trick=T seat=S first=X chosen=Y request=K id=I
(K: the request's place among this game's requests to the bot, from 1; I: its id).
"""
import json
import sys

args = [a for a in sys.argv[1:] if a != "echo"]
echo = len(args) < len(sys.argv) - 1
kind = args[0] if len(args) > 1 else None
at = int(args[1]) if len(args) > 1 else 0
seen = 0
game = 0
asked = 0


def first(decision, legal):
    if decision in ("exchange", "discard"):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


def send(msg):
    line = json.dumps(msg)
    if echo:
        print("OUT " + line, file=sys.stderr, flush=True)
    print(line, flush=True)


for line in sys.stdin:
    if echo:
        print("IN " + line.rstrip("\n"), file=sys.stderr, flush=True)
    msg = json.loads(line)
    t = msg.get("type")
    if t == "hello":
        send({"type": "hello", "name": "deviant", "protocol": "schmier/1"})
    elif t == "game_start":
        game = msg["game"]
        asked = 0
    elif t == "request":
        asked += 1
        decision, legal, view = msg["decision"], msg["legal"], msg["view"]
        action = first(decision, legal)
        if decision == kind and isinstance(legal, list) and len(legal) > 1:
            seen += 1
            if seen == at:
                action = legal[-1]
                trick = len(view["tricks"]) + 1
                print(
                    f"DEVIATED game={game} deal={view['deal']} trick={trick} "
                    f"seat={view['seat']} first={first(decision, legal)} chosen={action} "
                    f"request={asked} id={msg['id']}",
                    file=sys.stderr,
                    flush=True,
                )
        send({"type": "reply", "id": msg["id"], "action": action})
    elif t == "bye":
        break
