#!/usr/bin/env python3
"""The bot under test in this example (any language works the same way): it
always gives the first legal answer. snapshot.sh pins its play."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "my-bot", "protocol": "schmier/1"}), flush=True)
    elif msg["type"] == "request":
        legal = msg["legal"]
        if msg["decision"] in ("exchange", "discard"):
            action = legal["must"] + legal["from"][: legal["min"]]
        else:
            action = legal[0]
        print(json.dumps({"type": "reply", "id": msg["id"], "action": action}), flush=True)
    elif msg["type"] == "bye":
        break
