"""examples/pimc-bot answers every request legally, from the request alone
(called directly, so that an exception fails the test instead of being
covered by run_bot's fallback)."""

import importlib.util
from pathlib import Path

import schmier
from schmier import Game

from test_bot import session

BOT = Path(__file__).resolve().parents[2] / "examples" / "pimc-bot" / "bot.py"


def load_bot():
    spec = importlib.util.spec_from_file_location("pimc_bot", BOT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pimc_answers_legally():
    bot = load_bot()
    kinds = set()
    for seed, seat in [(3, 0), (8, 4), (11, 2)]:
        game = Game(seed)
        _, requests = session(game.clone(), seat, 50)
        start = {"rules": game.rules, "players": ["p"] * 6}
        pimc = bot.Pimc()
        for q in requests:
            d = schmier.Decision(q, start)
            kinds.add(d.decision)
            answer = pimc(d)
            wire = answer.to_wire() if isinstance(answer, schmier.Action) else answer
            assert d.is_legal(wire), (q["legal"], wire)
    assert {"bid", "exchange", "play"} <= kinds
