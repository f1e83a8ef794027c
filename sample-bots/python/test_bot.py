"""Self-tests for bot.py: they run it as a subprocess on hand-written sessions.

    python3 -m unittest discover -s sample-bots/python        (from the repo root)

Standard library only. Keep them passing when you change the bot.
"""

import json
import os
import subprocess
import sys
import unittest

BOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bot.py")
STRATEGIES = ["random", "simple"]


def line(msg):
    return json.dumps(msg, separators=(",", ":")) + "\n"


HELLO = {"type": "hello", "protocol": "schmier/1", "referee": "schmier-referee 0.1.0",
         "limits": {"startup_ms": 10000, "decision_ms": 1000, "max_line_bytes": 65536}}
GAME_START = {"type": "game_start", "game": 1, "seat": 2, "team": 2, "partner": 5,
              "players": ["a", "b", "c", "d", "e", "f"],
              "rules": {"stick_the_dealer": False, "trump_anytime": False, "redeal_limit": 10,
                        "target": 21, "hand_cap": 200}}
DEAL = {"type": "deal", "deal": 1, "dealer": 4, "hand": ["4S", "9S", "KH", "JD", "5C", "JK"]}
BYE = {"type": "bye", "reason": "session over"}


def view(**changes):
    """A realistic `view` for seat 2 (dealer 4), with some fields changed."""
    v = {"seat": 2, "team": 2, "partner": 5, "deal": 1, "dealer": 4, "scores": [0, 0, 0],
         "target": 21, "hand": ["4S", "9S", "KH", "JD", "5C", "JK"],
         "bids": [{"seat": 5, "bid": "pass"}, {"seat": 0, "bid": "pass"}, {"seat": 1, "bid": "pass"}],
         "bidder": None, "bid": None, "trump": None, "exchanges": [], "dealer_pickup": None,
         "own_exchange": None, "trick": None, "tricks": []}
    v.update(changes)
    return v


def request(id, decision, legal, v):
    return {"type": "request", "id": id, "decision": decision, "legal": legal, "time_ms": 1000, "view": v}


AFTER_BIDS = dict(bids=[{"seat": 5, "bid": "pass"}, {"seat": 0, "bid": "pass"}, {"seat": 1, "bid": "pass"},
                        {"seat": 2, "bid": 3}, {"seat": 3, "bid": "pass"}, {"seat": 4, "bid": "pass"}],
                  bidder=2, bid=3)
REQUESTS = [
    request(1, "bid", ["pass", 3, 4, 5, 6], view()),
    request(2, "trump", ["S", "H", "D", "C"], view(**AFTER_BIDS)),
    request(3, "exchange", {"must": [], "from": ["4S", "9S"], "min": 0, "max": 2},
            view(**AFTER_BIDS, trump="S", hand=["4S", "9S", "KH", "JD", "5C", "JK"])),
    request(4, "discard", {"must": ["2C"], "from": ["3H", "4H"], "min": 1, "max": 1},
            view(**AFTER_BIDS, trump="H", dealer=2, dealer_pickup=2,
                 hand=["AH", "KH", "QH", "JH", "JD", "4H", "3H", "2H", "JK", "2C"],
                 own_exchange={"discarded": [], "drawn": ["3H", "2C"]},
                 exchanges=[{"seat": 3, "count": 3}, {"seat": 4, "count": 3}, {"seat": 5, "count": 3},
                            {"seat": 0, "count": 3}, {"seat": 1, "count": 3}])),
    request(5, "play", ["4S", "9S"],
            view(**AFTER_BIDS, trump="H", dealer_pickup=5,
                 trick={"leader": 1, "cards": [{"seat": 1, "card": "7S"}]})),
]
SESSION = [HELLO, GAME_START, DEAL, {"type": "bid", "seat": 5, "bid": "pass"}] + REQUESTS + [BYE]


def run(args, text):
    """Run the bot on `text` (str or bytes); return (process, list of stdout messages)."""
    data = text.encode() if isinstance(text, str) else text
    proc = subprocess.run([sys.executable, BOT, *args], input=data, capture_output=True, timeout=30)
    return proc, [json.loads(out) for out in proc.stdout.decode().splitlines()]


def is_legal(decision, legal, action):
    """Whether `action` is a legal answer, as PROTOCOL.md defines it."""
    if decision in ("exchange", "discard"):
        if not isinstance(action, list) or len(set(action)) != len(action):
            return False
        rest = [c for c in action if c not in legal["must"]]
        return (set(legal["must"]) <= set(action) and set(rest) <= set(legal["from"])
                and legal["min"] <= len(rest) <= legal["max"])
    return not isinstance(action, bool) and action in legal and type(action) in (int, str)


class BotTest(unittest.TestCase):
    def session(self, strategy, messages):
        proc, out = run([strategy], "".join(line(m) for m in messages))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        return proc, out

    def check_replies(self, requests, replies):
        self.assertEqual([r["id"] for r in replies], [q["id"] for q in requests])
        for q, r in zip(requests, replies):
            self.assertEqual(r["type"], "reply")
            self.assertTrue(is_legal(q["decision"], q["legal"], r["action"]),
                            f"{q['decision']}: {r['action']!r} not in {q['legal']!r}")

    def test_answers_hello_then_every_request_legally(self):
        for strategy in STRATEGIES:
            with self.subTest(strategy=strategy):
                _, out = self.session(strategy, SESSION)
                self.assertEqual(out[0], {"type": "hello", "name": f"{strategy}-py", "protocol": "schmier/1"})
                self.check_replies(REQUESTS, out[1:])

    def test_same_input_same_output(self):
        for strategy in STRATEGIES:
            with self.subTest(strategy=strategy):
                first, second = self.session(strategy, SESSION), self.session(strategy, SESSION)
                self.assertEqual(first[0].stdout, second[0].stdout)

    def test_ignores_unknown_and_malformed_lines(self):
        noise = ("\n" "not json at all\n" "[1,2,3]\n" "\"hello\"\n" '{"no_type":1}\n'
                 '{"type":"mystery","x":[1,2]}\n' '{"type":"fault","seat":1,"fault":"timeout","replaced":false}\n')
        text = (line(dict(HELLO, extra={"new": "field"})) + noise + line(REQUESTS[0]) + noise
                + line(dict(REQUESTS[4], future_field=42)) + line(BYE))
        for strategy in STRATEGIES:
            with self.subTest(strategy=strategy):
                proc, out = run([strategy], text.encode() + b"\xff\xfe bad utf-8\n")
                self.assertEqual(proc.returncode, 0)
                self.assertEqual(out[0]["type"], "hello")
                self.check_replies([REQUESTS[0], REQUESTS[4]], out[1:])
                self.assertIn(b"malformed", proc.stderr)  # logged, on stderr only

    def test_stops_at_bye_and_at_eof(self):
        for strategy in STRATEGIES:
            with self.subTest(strategy=strategy):
                _, out = self.session(strategy, [HELLO, BYE, REQUESTS[0]])
                self.assertEqual(len(out), 1)  # nothing after bye
                _, out = self.session(strategy, [HELLO, REQUESTS[0]])  # EOF, no bye
                self.assertEqual(len(out), 2)

    def test_exits_on_bye_while_stdin_stays_open(self):
        proc = subprocess.Popen([sys.executable, BOT], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdin.write((line(HELLO) + line(BYE)).encode())
        proc.stdin.flush()
        try:
            self.assertEqual(proc.wait(timeout=10), 0)
        finally:
            proc.kill()
            proc.stdin.close()
            proc.stdout.close()

    def test_random_is_legal_and_varied_across_ids(self):
        requests = [dict(q, id=q["id"] + 10 * i) for i in range(60) for q in REQUESTS]
        _, out = self.session("random", [HELLO] + requests)
        self.check_replies(requests, out[1:])
        for decision in ("bid", "trump", "exchange", "play"):
            actions = {json.dumps(r["action"]) for q, r in zip(requests, out[1:]) if q["decision"] == decision}
            self.assertGreater(len(actions), 1, decision)

    def test_stuck_dealer_bids(self):
        stuck = request(9, "bid", [3, 4, 5, 6], view(hand=["2S", "3H", "4D", "5C", "6S", "7H"]))
        for strategy in STRATEGIES:
            with self.subTest(strategy=strategy):
                _, out = self.session(strategy, [HELLO, stuck])
                self.check_replies([stuck], out[1:])

    def test_simple_heuristic(self):
        strong = ["AH", "KH", "JH", "JD", "5H", "2C"]
        lead = view(**AFTER_BIDS, trump="H", hand=strong, trick={"leader": 2, "cards": []})
        partner_wins = view(**AFTER_BIDS, trump="H", hand=["4S", "AS", "KH", "JD", "5C", "JK"],
                            trick={"leader": 5, "cards": [{"seat": 5, "card": "KS"}, {"seat": 0, "card": "3S"},
                                                          {"seat": 1, "card": "9S"}]})
        opponent_wins = dict(partner_wins, trick={"leader": 1, "cards": [{"seat": 1, "card": "QS"}]})
        cases = [  # (request, expected action)
            (request(1, "bid", ["pass", 3, 4, 5, 6], view(hand=strong)), 5),
            (request(2, "bid", ["pass", 3, 4, 5, 6], view(hand=["2S", "3H", "4D", "5C", "6S", "7H"])), "pass"),
            (request(3, "trump", ["S", "H", "D", "C"], view(hand=strong)), "H"),
            (request(4, "exchange", {"must": [], "from": ["AS", "9S", "2C"], "min": 0, "max": 3},
                     view(trump="H", hand=["AS", "9S", "2C", "KH", "JD", "JK"])), ["2C", "9S"]),
            (request(5, "play", strong, lead), "AH"),
            (request(6, "play", ["4S", "AS"], partner_wins), "4S"),
            (request(7, "play", ["4S", "AS"], opponent_wins), "AS"),
        ]
        _, out = self.session("simple", [HELLO] + [q for q, _ in cases])
        self.check_replies([q for q, _ in cases], out[1:])
        self.assertEqual([r["action"] for r in out[1:]], [want for _, want in cases])

    def test_unknown_strategy_is_an_error(self):
        proc, out = run(["no-such-strategy"], line(HELLO))
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(out, [])


if __name__ == "__main__":
    unittest.main()
