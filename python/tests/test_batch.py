"""schmier.GameBatch: many games stepped from one call give exactly the games
the same steps give one by one, all or nothing; sample_world_batch holds the
same worlds as sample_worlds; legal_mask(out=) fills a caller's array."""

import copy
import random

import numpy as np
import pytest

import schmier
from schmier import ACTION_COUNT, Game, GameBatch


def random_steps(masks, rng):
    """A uniformly random legal index per row, -1 for an all-false row."""
    out = []
    for row in masks:
        legal = np.flatnonzero(row)
        out.append(int(rng.choice(legal)) if len(legal) else -1)
    return out


def test_a_batch_steps_as_its_games_do_one_by_one():
    rng = random.Random(4)
    seeds = list(range(12))
    batch = GameBatch(seeds, stick_the_dealer=True)
    games = [Game(s, stick_the_dealer=True) for s in seeds]
    steps = 0
    while not batch.is_over.all() and steps < 400:
        masks = batch.legal_masks()
        assert masks.shape == (12, ACTION_COUNT) and masks.dtype == np.bool_
        for row, g in zip(masks, games):
            assert np.array_equal(row, g.legal_mask())
        assert list(batch.to_act) == [-1 if g.to_act is None else g.to_act for g in games]
        actions = random_steps(masks, rng)
        batch.apply(np.array(actions, dtype=np.int64))
        for g, a in zip(games, actions):
            if a >= 0:
                g.apply(a)
        steps += 1
    for i, g in enumerate(games):
        b = batch[i]
        assert b.view(0) == g.view(0) and b.scores == g.scores and b.selection == g.selection
        assert b.hand(3) == g.hand(3)
    assert batch.scores.tolist() == [g.scores for g in games]
    assert batch.winners.tolist() == [-1 if g.winner is None else g.winner for g in games]
    assert batch.deals.tolist() == [g.deal for g in games]


def test_an_illegal_entry_changes_no_game():
    batch = GameBatch([1, 2, 3])
    before = [g.view(0) for g in batch.games()]
    legal = [int(np.flatnonzero(m)[0]) for m in batch.legal_masks()]
    bad = list(legal)
    bad[2] = schmier.DONE  # never legal in an auction
    with pytest.raises(ValueError, match="game 2"):
        batch.apply(bad)
    with pytest.raises(ValueError, match="3 games"):
        batch.apply(legal[:2])
    with pytest.raises(ValueError):
        batch.apply(ACTION_COUNT)
    assert [g.view(0) for g in batch.games()] == before
    batch.apply(legal)
    assert [g.view(0) for g in batch.games()] != before


def test_one_action_for_every_game_and_copies_are_independent():
    g = Game(5)
    batch = GameBatch.from_games([g, g.clone()])
    other = copy.deepcopy(batch)
    first = g.legal()[0]
    batch.apply(first)
    g.apply(first)
    assert all(b.view(g.to_act) == g.view(g.to_act) for b in batch.games())
    assert other[0].view(0) == Game(5).view(0)
    assert len(batch) == 2 and batch[-1].view(1) == batch[1].view(1)
    with pytest.raises(IndexError):
        batch[2]


def test_observations_are_the_acting_seats_encodings():
    rng = random.Random(2)
    batch = GameBatch(range(5))
    for _ in range(30):
        batch.apply(random_steps(batch.legal_masks(), rng))
    obs = batch.observations()
    assert obs.shape == (5, schmier.OBSERVATION_LEN) and obs.dtype == np.float32
    for row, g in zip(obs, batch.games()):
        want = schmier.encode(g.view(g.to_act)) if g.to_act is not None else np.zeros_like(row)
        assert np.array_equal(row, want)
    out = np.full((5, schmier.OBSERVATION_LEN), 7.0, dtype=np.float32)
    assert batch.observations(out=out) is out and np.array_equal(out, obs)


def test_batch_playouts_equal_the_list_ones():
    games = [Game(s) for s in range(8)]
    batch = GameBatch.from_games(games)
    for policy in ("random", "heuristic"):
        a = schmier.playouts(games, policy=policy, seed=3, until="hand")
        assert np.array_equal(batch.playouts(policy=policy, seed=3, until="hand"), a)
        assert np.array_equal(schmier.playouts(batch, policy=policy, seed=3, until="hand"), a)
    assert not batch.is_over.any() and batch.deals.tolist() == [1] * 8  # unchanged


def test_a_world_batch_holds_the_sampled_worlds():
    rng = random.Random(8)
    g = Game(8)
    for _ in range(25):
        g.apply(rng.choice(g.legal()))
    seat = g.to_act
    v = g.view(seat)
    worlds = schmier.sample_worlds(v, 50, 9, rules=g.rules)
    batch = schmier.sample_world_batch(v, 50, 9, rules=g.rules)
    assert len(batch) == 50
    for w, b in zip(worlds, batch.games()):
        assert b.view(seat) == v
        assert all(b.hand(s) == w.hand(s) for s in range(6))


def test_legal_mask_fills_a_callers_array():
    rng = random.Random(3)
    g = Game(3)
    buf = np.ones(ACTION_COUNT, dtype=bool)
    while not g.is_over:
        assert g.legal_mask(buf) is buf
        assert np.array_equal(buf, g.legal_mask())
        g.legal_mask(out=buf)
        assert np.array_equal(buf, g.legal_mask())
        g.apply(rng.choice(g.legal_indices()))
    assert not g.legal_mask(buf).any()
    with pytest.raises(ValueError, match="elements"):
        g.legal_mask(np.zeros(ACTION_COUNT + 1, dtype=bool))
    frozen = np.zeros(ACTION_COUNT, dtype=bool)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        g.legal_mask(frozen)
    with pytest.raises(ValueError, match="contiguous"):
        g.legal_mask(np.zeros(2 * ACTION_COUNT, dtype=bool)[::2])
    with pytest.raises(TypeError):
        g.legal_mask(np.zeros(ACTION_COUNT, dtype=np.int8))


def test_reset_deals_new_games_under_the_same_rules():
    batch = GameBatch([1, 2, 3], trump_anytime=True)
    batch.apply([int(np.flatnonzero(m)[0]) for m in batch.legal_masks()])
    batch.reset([0, -1], [10, 11])
    assert batch[0].view(0) == Game(10, trump_anytime=True).view(0)
    assert batch[2].view(4) == Game(11, trump_anytime=True).view(4)
    assert batch[1].view(0) != Game(2, trump_anytime=True).view(0)  # stepped, kept
    batch.reset(1, 12)
    assert batch[1].rules == Game(12, trump_anytime=True).rules
    with pytest.raises(IndexError):
        batch.reset([3], [1])
    with pytest.raises(ValueError, match="seeds"):
        batch.reset([0, 1], [1])
