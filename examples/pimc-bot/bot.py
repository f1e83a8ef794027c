"""A search bot built on the schmier library: perfect-information Monte Carlo.

At each decision with a choice it samples worlds (full deals consistent with
everything its seat has seen: schmier.sample_world_batch), tries every candidate
action in each world, plays the rest of the hand out natively with the
built-in heuristic for every seat (schmier.playouts), and picks the action
whose hands end best on average for its team: its team's score change minus
the mean change of the two other teams (the duplicate score `referee sprt`
measures). Every candidate is tried on the same worlds, so the comparison's
noise is the worlds', not the draws'.

Candidates: every legal bid, suit and card; for an exchange or the dealer's
discard with more than MAX_CARD_CANDIDATES answers, the heuristic's own choice
and the answers that differ from it by one card. Ties go to the heuristic's
choice.

    referee play --team "v/bin/python examples/pimc-bot/bot.py"

(`v` a virtual environment made with `python3 -m venv --copies v` and
`v/bin/pip install ./python`; see docs/python.md.) Environment:
PIMC_WORLDS (default 32) worlds per decision, PIMC_BUDGET_MS (default 150)
the time it aims to stay within per decision (it halves its worlds when a
decision took longer).
"""

import os
import sys

import numpy as np

import schmier

WORLDS = int(os.environ.get("PIMC_WORLDS", "32"))
BUDGET = float(os.environ.get("PIMC_BUDGET_MS", "150")) / 1000.0
MAX_CARD_CANDIDATES = 24


class Pimc:
    def __init__(self):
        self.streak = 0  # thrown-in deals in a row (decides a stuck dealer)
        self.worlds = WORLDS
        self.calls = 0

    def on_message(self, msg):
        kind = msg.get("type")
        if kind == "thrown_in":
            self.streak = msg["streak"]
        elif kind in ("hand_end", "game_start"):
            self.streak = 0

    def candidates(self, d, model):
        """The actions to compare, the heuristic's first."""
        mine = schmier.policy_action(model, "heuristic")
        if d.decision not in ("exchange", "discard"):
            legal = d.legal
        else:
            legal = []
            for i, wire in enumerate(schmier.bot.legal_answers(d.decision, d.legal_wire)):
                if i >= MAX_CARD_CANDIDATES:
                    legal = near(d, mine)
                    break
                legal.append(schmier.Action.from_wire(wire))
        # The heuristic chose in a sampled world: its choice is legal here
        # unless the world differs where the view is silent (a stuck dealer).
        first = [mine] if d.is_legal(mine.to_wire()) else []
        return first + [a for a in legal if a != mine]

    def __call__(self, d):
        import time

        start = time.monotonic()
        self.calls += 1
        seed = d.id * 7919 + self.calls
        # A GameBatch: the worlds stay native, no Python object each.
        worlds = schmier.sample_world_batch(d.view, self.worlds, seed, rules=d.rules or None, streak=self.streak)
        cands = self.candidates(d, worlds[0])
        if len(cands) == 1:
            return cands[0]
        rows = np.concatenate([playouts_hand(worlds, a, seed) for a in cands])
        team = d.view["seat"] % 3
        before = np.array(d.view["scores"])
        delta = rows[:, :3] - before
        value = delta[:, team] - (delta.sum(axis=1) - delta[:, team]) / 2.0
        means = value.reshape(len(cands), len(worlds)).mean(axis=1)
        best = cands[int(np.argmax(means))]
        spent = time.monotonic() - start
        if spent > BUDGET and self.worlds > 8:
            self.worlds //= 2
        elif spent < BUDGET / 4 and self.worlds < WORLDS:
            self.worlds *= 2
        return best


def playouts_hand(worlds, action, seed):
    """Each world with `action` taken, played out to the end of the hand."""
    games = worlds.clone()
    games.apply(action)
    return games.playouts(policy="heuristic", until="hand", seed=seed)


def near(d, mine):
    """Answers one card away from the heuristic's own (swap one card)."""
    legal = d.legal_wire
    chosen = set(mine.cards)
    out = []
    for c in chosen - set(legal["must"]):
        for other in legal["from"]:
            if other not in chosen:
                cand = (chosen - {c}) | {other}
                if d.is_legal(sorted(cand)):
                    out.append(schmier.Action.from_wire(sorted(cand)))
    return out


if __name__ == "__main__":
    schmier.run_bot(Pimc(), name="pimc", version="1")
