"""run_bot speaks the referee protocol (PROTOCOL.md): fed a session on a
string, it answers hello and every request with a legal reply."""

import io
import json

import schmier
from schmier import Action, Game


def session(game, seat, n_requests):
    """A referee session for `seat` of `game`, with requests for the seat's
    first `n_requests` decisions (other seats play their first legal action)."""
    lines = [
        {"type": "hello", "protocol": "schmier/1", "referee": "test",
         "limits": {"startup_ms": 1000, "decision_ms": 1000, "time_bank_ms": 0,
                    "clock": "wall", "max_line_bytes": 65536}},
        {"type": "game_start", "game": 1, "seat": seat, "team": seat % 3,
         "partner": (seat + 3) % 6, "players": ["p"] * 6, "rules": game.rules},
    ]
    requests, rid = [], 0
    while not game.is_over and len(requests) < n_requests:
        if game.to_act == seat:
            rid += 1
            req = game.request(id=rid, time_ms=1000)
            lines.append(req)
            requests.append(req)
        game.apply(game.legal()[0])
    lines.append({"type": "bye", "reason": "done"})
    return "".join(json.dumps(m) + "\n" for m in lines), requests


def run(policy, text, **kw):
    out = io.StringIO()
    schmier.run_bot(policy, stdin=io.StringIO(text), stdout=out, **kw)
    return [json.loads(l) for l in out.getvalue().splitlines()]


def test_hello_and_legal_replies():
    text, requests = session(Game(3), 2, 40)
    seen = []

    def policy(d):
        seen.append(d)
        return d.legal[-1]  # an Action

    replies = run(policy, text, name="t", version="1")
    assert replies[0] == {"type": "hello", "name": "t", "protocol": "schmier/1", "version": "1"}
    assert [r["id"] for r in replies[1:]] == [q["id"] for q in requests]
    for d, r, q in zip(seen, replies[1:], requests):
        assert r["type"] == "reply"
        assert d.is_legal(r["action"])
        assert d.view == q["view"] and d.seat == 2 and d.rules == Game(3).rules
        assert d.deadline is not None


def test_wire_answers_pass_through_and_bad_answers_fall_back():
    text, requests = session(Game(5), 0, 30)

    def policy(d):
        if d.id % 3 == 0:
            raise RuntimeError("a policy bug")
        if d.id % 3 == 1:
            return "not an action"
        return d.first_legal()

    replies = run(policy, text)
    for r, q in zip(replies[1:], requests):
        d = schmier.Decision(q)
        assert d.is_legal(r["action"])
        assert r["action"] == d.first_legal()


def test_legal_answers_for_cards_follow_the_request():
    d = schmier.Decision({"id": 1, "decision": "exchange", "time_ms": None,
                          "legal": {"must": [], "from": ["2S", "KH", "5C", "8C"], "min": 0, "max": 3},
                          "view": {"seat": 1}})
    assert len(d.legal) == 1 + 4 + 6 + 4
    assert d.is_legal(["KH", "2S"]) and not d.is_legal(["2S", "KH", "5C", "8C"])
    assert not d.is_legal(["AS"]) and not d.is_legal(["2S", "2S"])
    assert d.deadline is None
    dd = schmier.Decision({"id": 2, "decision": "discard", "time_ms": 5,
                           "legal": {"must": ["2S"], "from": ["3H", "4H", "5H"], "min": 1, "max": 1},
                           "view": {"seat": 1}})
    assert [a.to_wire() for a in dd.legal] == [["2S", "3H"], ["2S", "4H"], ["2S", "5H"]]
    assert not dd.is_legal(["3H"])


def test_a_listener_hears_every_message():
    text, _ = session(Game(2), 1, 5)
    heard = []

    class Policy:
        def __call__(self, d):
            return d.first_legal()

        def on_message(self, msg):
            heard.append(msg["type"])

    run(Policy(), text)
    assert heard[0] == "hello" and heard[1] == "game_start" and heard[-1] == "bye"
    assert "request" in heard


def test_the_starter_kit_beside_a_bot_does_not_hide_the_library(tmp_path):
    """The README's `cp sample-bots/python/schmier_kit.py … my-bot/` puts the
    kit beside a bot that may import the library: the kit's module name is its
    own (it was `schmier.py`, and `import schmier` then found the copy)."""
    import pathlib
    import shutil
    import subprocess
    import sys

    kit = pathlib.Path(__file__).resolve().parents[2] / "sample-bots" / "python"
    for name in kit.glob("*.py"):
        if not name.name.startswith("test_"):
            shutil.copy(name, tmp_path / name.name)
    assert not (tmp_path / "schmier.py").exists()
    probe = "import schmier, schmier_kit; print(schmier.run_bot.__module__, schmier_kit.run.__name__)"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["schmier.bot", "run"]


def test_a_raising_policy_is_logged_in_a_game_and_ends_the_bot_when_strict(capsys):
    """In a game (not strict) a raising policy gets the first legal answer
    sent and a line naming the exception in the log; strict (as under
    `referee check-bot`) the bot stops there, saying why."""
    text, requests = session(Game(4), 3, 3)

    def policy(d):
        raise ZeroDivisionError("a policy bug")

    replies = run(policy, text, strict=False)
    assert [r["action"] for r in replies[1:]] == [schmier.Decision(q).first_legal() for q in requests]
    err = capsys.readouterr().err
    assert "schmier.run_bot: the policy raised ZeroDivisionError: a policy bug (request 1, " in err
    assert "sending the first legal answer" in err

    try:
        run(policy, text, strict=True)
    except SystemExit as e:
        assert e.code == 1
    else:
        raise AssertionError("a strict run_bot went on after the policy raised")
    err = capsys.readouterr().err
    assert "Traceback" in err and "under check-bot (SCHMIER_CHECK_BOT) the bot stops here" in err


def test_strict_sends_an_illegal_answer_as_it_is(monkeypatch):
    """Strict by the environment `referee check-bot` sets: the policy's
    illegal answer goes out unchanged, for the checker to judge."""
    monkeypatch.setenv("SCHMIER_CHECK_BOT", "1")
    text, requests = session(Game(5), 0, 2)
    replies = run(lambda d: "not an action", text)
    assert [r["action"] for r in replies[1:]] == ["not an action"] * len(requests)


def test_check_bot_fails_a_library_bot_whose_policy_raises(tmp_path):
    """`referee check-bot` on a library bot whose policy raises on every
    decision: it passed all 19 checks on the library's fallback (issue 45);
    now it fails, naming the exception. The same bot with a working policy
    passes, so the failure is the policy's."""
    import os
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    referee = pathlib.Path(os.environ.get("SCHMIER_REFEREE", root / "target" / "debug" / "referee"))
    assert referee.exists(), f"no referee at {referee}: build it or set SCHMIER_REFEREE"
    results = {}
    for kind, body in [("raises", "raise ZeroDivisionError('a policy bug')"), ("works", "return d.legal[0]")]:
        bot = tmp_path / f"{kind}.py"
        bot.write_text(f"import schmier\n\ndef policy(d):\n    {body}\n\nschmier.run_bot(policy, name={kind!r})\n")
        results[kind] = subprocess.run(
            [str(referee), "check-bot", "--decision-ms", "20000", "--", sys.executable, str(bot)],
            capture_output=True, text=True, timeout=600,
        )
    works = results["works"]
    assert works.returncode == 0 and works.stdout.endswith("all 19 checks passed\n"), works.stdout
    raises = results["raises"]
    assert raises.returncode == 1, raises.stdout + raises.stderr
    assert "[ok]   handshake" in raises.stdout
    assert "[FAIL]" in raises.stdout and "checks passed" not in raises.stdout
    assert "| ZeroDivisionError: a policy bug" in raises.stdout
    assert "schmier.run_bot: the policy raised ZeroDivisionError: a policy bug" in raises.stdout
