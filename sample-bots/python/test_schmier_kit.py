"""Tests for schmier_kit.py (the protocol loop) through my_bot.py, run as the
referee runs it. Standard library only:

    python3 -m unittest discover -s sample-bots/python
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
HELLO = {"type": "hello", "protocol": "schmier/1", "referee": "test", "limits": {}}
VIEW = {"seat": 1, "hand": ["AS", "2H", "JK", "9D", "TC", "3C"], "trump": None, "bids": []}


def session(script, messages, *args):
    text = "".join(json.dumps(m) + "\n" for m in messages)
    out = subprocess.run([sys.executable, os.path.join(HERE, script), *args], input=text,
                         capture_output=True, text=True, timeout=30, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()], out.stderr


class ProtocolLoop(unittest.TestCase):
    def test_hello_replies_and_unknown_messages(self):
        replies, _ = session("my_bot.py", [
            HELLO,
            {"type": "x_from_the_future", "data": 1},
            {"type": "request", "id": 7, "decision": "bid", "legal": ["pass", 3, 4], "view": VIEW,
             "x_unknown_field": True},
            {"type": "request", "id": 8, "decision": "exchange",
             "legal": {"must": ["2C"], "from": ["AS", "2H"], "min": 1, "max": 1}, "view": VIEW},
            {"type": "bye"},
            {"type": "request", "id": 9, "decision": "bid", "legal": ["pass"], "view": VIEW},
        ])
        self.assertEqual(replies, [
            {"type": "hello", "name": "my-bot", "protocol": "schmier/1"},
            {"type": "reply", "id": 7, "action": "pass"},
            {"type": "reply", "id": 8, "action": ["2C", "AS"]},
        ])

    def test_a_failing_choose_answers_the_first_legal_action(self):
        # A `choose` that raises: the loop logs it and still answers legally.
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from schmier_kit import run\n"
                "def choose(r): raise RuntimeError('boom')\n"
                "run(choose, name='broken')\n") % HERE
        text = json.dumps(HELLO) + "\n" + json.dumps(
            {"type": "request", "id": 3, "decision": "play", "legal": ["9D", "TC"], "view": VIEW}) + "\n"
        out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                             text=True, timeout=30, check=True)
        lines = [json.loads(line) for line in out.stdout.splitlines()]
        self.assertEqual(lines[1], {"type": "reply", "id": 3, "action": "9D"})
        self.assertIn("boom", out.stderr)


if __name__ == "__main__":
    unittest.main()
