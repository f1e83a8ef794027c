"""A test bot: plays first-legal-ish answers through schmier.run_bot, records
every request it gets (game number, seat, id, view) as a JSON line in
$RECORD_DIR/<pid>.jsonl, and every $FAULT_EVERY-th request answers with
something illegal or malformed, so that the referee's fallback decides."""

import json
import os
import random
import sys

import schmier

record_dir = os.environ["RECORD_DIR"]
fault_every = int(os.environ.get("FAULT_EVERY", "0"))
out = open(os.path.join(record_dir, f"{os.getpid()}.jsonl"), "w")
rng = random.Random(os.getpid())


class Recorder:
    game = 0
    seat = 0

    def on_message(self, msg):
        if msg["type"] == "game_start":
            self.game, self.seat = msg["game"], msg["seat"]

    def __call__(self, d):
        out.write(json.dumps({"game": self.game, "seat": self.seat, "id": d.id, "view": d.view}) + "\n")
        out.flush()
        if fault_every and d.id % fault_every == 0:
            return {"not": "an action"}  # sent as it is: run_bot is strict below
        legal = list(schmier.bot.legal_answers(d.decision, d.legal_wire))
        return legal[rng.randrange(min(len(legal), 50))]


policy = Recorder()
# strict: the faulty replies go out as they are (run_bot would otherwise
# replace them with the first legal answer).
schmier.run_bot(policy, name="recorder", strict=bool(fault_every))
