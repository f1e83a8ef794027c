"""schmier.playouts and policy_action: native play-outs by the built-in
policies, batched, with results independent of the thread count."""

import random

import numpy as np
import pytest

import schmier
from schmier import Game


def test_games_are_played_to_their_end_by_the_rules():
    games = [Game(s) for s in range(24)]
    rows = schmier.playouts(games, policy="heuristic", threads=2, seed=1)
    assert rows.dtype == np.int32 and rows.shape == (24, 5)
    for g, (s0, s1, s2, winner, deals) in zip(games, rows):
        assert not g.is_over and g.deal == 1  # the inputs are copies
        scores = [s0, s1, s2]
        if winner >= 0:
            # RULES.md §26: the winner reached 21 and no team is higher.
            assert scores[winner] >= 21 and scores[winner] == max(scores)
        else:
            assert deals >= 200
        assert deals >= 1


def test_results_do_not_depend_on_threads():
    games = [Game(s) for s in range(30)]
    for policy in ("random", "heuristic"):
        one = schmier.playouts(games, policy=policy, threads=1, seed=5)
        three = schmier.playouts(games, policy=policy, threads=3, seed=5)
        assert np.array_equal(one, three)
    other = schmier.playouts(games, policy="random", threads=1, seed=6)
    assert not np.array_equal(schmier.playouts(games, policy="random", seed=5), other)


def test_until_hand_stops_at_the_end_of_the_current_hand():
    rng = random.Random(3)
    g = Game(4)
    for _ in range(20):
        g.apply(rng.choice(g.legal()))
    rows = schmier.playouts([g] * 10, policy="random", until="hand", seed=2)
    for s0, s1, s2, winner, deals in rows:
        # The next deal has begun, or the game ended with this hand.
        assert deals == g.deal + 1 or (deals == g.deal and winner >= 0)
    # Scores move by at most the six points of one hand (RULES.md §23-25).
    before = np.array(g.scores)
    assert (np.abs(rows[:, :3] - before) <= 6).all()


def test_a_played_out_copy_matches_the_same_policy_stepped_from_python():
    g = Game(9)
    row = schmier.playouts([g], policy="heuristic")[0]
    while not g.is_over:
        g.apply(schmier.policy_action(g, "heuristic"))
    assert list(row) == g.scores + [g.winner if g.winner is not None else -1, g.deal]


def test_bad_arguments_say_what():
    with pytest.raises(ValueError, match="policy"):
        schmier.playouts([Game(1)], policy="smart")
    with pytest.raises(ValueError, match="until"):
        schmier.playouts([Game(1)], until="trick")
    with pytest.raises(ValueError, match="threads"):
        schmier.playouts([Game(1)], threads=0)
    assert schmier.playouts([], policy="random").shape == (0, 5)
