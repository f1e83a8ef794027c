"""schmier.sample_worlds: every world fits the view it was drawn from
(docs/python.md; the sampler itself is protocol/src/worlds, tested there for
uniformity)."""

import random

import pytest

import schmier
from schmier import Game


def mid_game(seed, steps, **rules):
    rng = random.Random(seed)
    g = Game(seed, **rules)
    for _ in range(steps):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal()))
    return g


def test_worlds_give_back_the_view_at_every_stage():
    for seed in range(40):
        g = mid_game(seed, seed * 7 % 120)
        if g.is_over:
            continue
        for seat in range(6):
            v = g.view(seat)
            worlds = schmier.sample_worlds(v, 20, seed, rules=g.rules)
            assert len(worlds) == 20
            for w in worlds:
                assert w.view(seat) == v
                assert w.to_act == g.to_act and w.phase == g.phase


def test_worlds_vary_the_hidden_cards_only():
    g = mid_game(3, 30)
    seat = g.to_act
    v = g.view(seat)
    worlds = schmier.sample_worlds(v, 50, 1, rules=g.rules)
    others = {tuple(tuple(w.hand(s)) for s in range(6) if s != seat) for w in worlds}
    assert len(others) > 1
    assert all(w.hand(seat) == g.hand(seat) for w in worlds)


def test_same_seed_same_worlds_and_a_request_view_works():
    g = mid_game(5, 40, trump_anytime=True)
    req = g.request(id=3)
    a = schmier.sample_worlds(req["view"], 10, 7, rules=g.rules)
    b = schmier.sample_worlds(req["view"], 10, 7, rules=g.rules)
    assert [[w.hand(s) for s in range(6)] for w in a] == [[w.hand(s) for s in range(6)] for w in b]


def test_worlds_play_on_to_the_end():
    g = mid_game(8, 60)
    rng = random.Random(0)
    for w in schmier.sample_worlds(g.view(g.to_act), 5, 2, rules=g.rules):
        while not w.is_over:
            w.apply(rng.choice(w.legal_indices()))


def test_an_impossible_view_is_refused():
    g = mid_game(2, 10)
    v = g.view(g.to_act)
    v["hand"] = v["hand"][:-1]  # a card missing: no deal fits
    with pytest.raises(ValueError):
        schmier.sample_worlds(v, 1, 0)
    with pytest.raises(ValueError):
        schmier.sample_worlds({"seat": 1}, 1, 0)
