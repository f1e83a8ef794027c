"""The Game API against RULES.md and the referee's protocol (PROTOCOL.md)."""

import copy
import random

import numpy as np
import pytest

import schmier
from schmier import ACTION_COUNT, DONE, Action, Game

CARDS = [r + s for s in "SHDC" for r in "23456789TJQKA"] + ["JK"]


def random_game(seed, rng, steps=None, **rules):
    """A game played by uniformly random whole actions for `steps` decisions
    (or to the end)."""
    g = Game(seed, **rules)
    n = 0
    while not g.is_over and (steps is None or n < steps):
        g.apply(rng.choice(g.legal()))
        n += 1
    return g


def test_a_new_game_starts_with_the_auction():
    g = Game(1)
    assert g.phase == "bid"
    assert g.to_act == (g.dealer + 1) % 6  # RULES.md §6: left of the dealer
    assert g.scores == [0, 0, 0]
    assert not g.is_over and g.winner is None
    assert [a.to_wire() for a in g.legal()] == ["pass", 3, 4, 5, 6]
    for s in range(6):
        assert len(g.hand(s)) == 6  # RULES.md §5
    assert len({c for s in range(6) for c in g.hand(s)}) == 36


def test_same_seed_same_deal_and_variants_are_kept():
    a, b = Game(42), Game(42)
    assert [a.hand(s) for s in range(6)] == [b.hand(s) for s in range(6)]
    g = Game(42, stick_the_dealer=True, trump_anytime=True)
    assert g.rules["stick_the_dealer"] and g.rules["trump_anytime"]
    assert not Game(42).rules["trump_anytime"]


def test_stuck_dealer_may_not_pass():
    # RULES.md §8 variant: with stick-the-dealer the dealer may not pass when
    # the five others passed.
    g = Game(7, stick_the_dealer=True)
    for _ in range(5):
        g.apply(Action.from_wire("pass"))
    assert g.to_act == g.dealer
    assert "pass" not in [a.to_wire() for a in g.legal()]
    with pytest.raises(ValueError):
        g.apply(Action.from_wire("pass"))


def test_illegal_actions_raise_and_change_nothing():
    g = Game(3)
    before = g.view(g.to_act)
    for bad in [Action.from_wire("AS"), Action.from_wire("H"), Action.from_wire(["2S"]), DONE, 9, 63]:
        with pytest.raises(ValueError):
            g.apply(bad)
        assert g.view(g.to_act) == before
    with pytest.raises(ValueError):
        g.apply("pass")  # a wire value is not an action: Action.from_wire first
    g.apply(Action.from_wire(4))
    with pytest.raises(ValueError):
        g.apply(Action.from_wire(3))  # RULES.md §6: a bid must beat every bid so far


def test_wire_round_trip_and_kinds():
    for wire, kind in [("pass", "pass"), (5, "bid"), ("D", "trump"), ("TH", "play"),
                       (["5C", "8C"], "cards"), ([], "cards"), ("JK", "play")]:
        a = Action.from_wire(wire)
        assert a.kind == kind
        assert a.to_wire() == wire
        assert Action.from_wire(a.to_wire()) == a
    for bad in ["4", 7, 2, "X", "ZZ", {"a": 1}, True, None, ["AS", "AS"], 4.0]:
        with pytest.raises(ValueError):
            Action.from_wire(bad)


def test_random_games_end_by_the_rules():
    rng = random.Random(5)
    for seed in range(20):
        g = random_game(seed, rng)
        assert g.is_over and g.to_act is None and g.phase == "over"
        assert g.legal() == [] and not g.legal_mask().any()
        if g.winner is not None:
            # RULES.md §26: the winner has reached 21 and no team is higher.
            assert g.scores[g.winner] >= 21
            assert g.scores[g.winner] == max(g.scores)
        else:
            assert g.deal >= 200  # RULES.md §27: only the hand cap ends a game undecided


def test_every_legal_action_is_accepted_and_listed_once():
    rng = random.Random(9)
    g = Game(11)
    while not g.is_over:
        legal = g.legal()
        assert len(set(legal)) == len(legal)
        for a in legal[:60]:
            g.clone().apply(a)
        g.apply(rng.choice(legal))


def test_mask_matches_legal_for_single_step_decisions():
    rng = random.Random(1)
    g = Game(21)
    while not g.is_over:
        mask = g.legal_mask()
        assert mask.dtype == np.bool_ and mask.shape == (ACTION_COUNT,)
        assert list(np.flatnonzero(mask)) == g.legal_indices()
        if g.phase in ("bid", "trump", "play"):
            assert sorted(a.index for a in g.legal()) == g.legal_indices()
        else:
            assert not g.selection
        g.apply(rng.choice(g.legal()))


def test_apply_and_legal_mask_take_every_calling_form():
    # A call with one positional argument takes a fast path
    # (python/src/fastcall.rs); every other form goes to the full method.
    g, h = Game(5), Game(5)
    buf = np.zeros(ACTION_COUNT, dtype=bool)
    assert g.legal_mask(buf) is buf
    assert g.legal_mask(out=buf) is buf
    assert list(g.legal_mask()) == list(buf) == list(g.legal_mask(None))
    i = g.legal_indices()[0]
    g.apply(i)
    h.apply(action=np.int64(i))
    Game.apply(g, g.legal()[0])
    h.apply(h.legal()[0])
    assert g.view(0) == h.view(0) and g.to_act == h.to_act
    for call in (lambda: g.apply(), lambda: g.apply(1, 2), lambda: g.apply(x=1),
                 lambda: g.legal_mask(buf, buf), lambda: g.legal_mask([True]),
                 lambda: g.legal_mask(np.zeros(ACTION_COUNT, dtype=np.int8)),
                 lambda: Game.apply(3, 1)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(ValueError, match="contiguous"):
        g.legal_mask(np.zeros(2 * ACTION_COUNT, dtype=bool)[::2])
    buf.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        g.legal_mask(buf)
    assert Game.apply.__text_signature__ == "($self, action)"
    assert Game.legal_mask.__text_signature__ == "($self, out=None)"
    assert Game.apply.__doc__.startswith("Applies an `Action`")


def test_card_by_card_and_whole_actions_reach_the_same_states():
    # The requirement: the exchange and the dealer's discard taken card
    # by card (indices, then DONE) give the same game as the whole action.
    rng = random.Random(2)
    checked = {"exchange": 0, "discard": 0}
    for seed in range(30):
        g = Game(seed)
        while not g.is_over and g.deal < 4:
            action = rng.choice(g.legal())
            if action.kind == "cards":
                checked[g.phase] += 1
                by_steps = g.clone()
                order = action.indices()
                assert order[-1] == DONE
                # Any order of the cards works; shuffle them.
                cards = order[:-1]
                rng.shuffle(cards)
                for i in cards:
                    assert by_steps.legal_mask()[i]
                    by_steps.apply(i)
                    assert by_steps.to_act == g.to_act  # the same seat goes on choosing
                assert by_steps.legal_mask()[DONE]
                by_steps.apply(DONE)
                g.apply(action)
                for s in range(6):
                    assert by_steps.view(s) == g.view(s)
                assert by_steps.to_act == g.to_act and by_steps.phase == g.phase
            else:
                g.apply(action)
    assert checked["exchange"] > 20 and checked["discard"] > 5


def test_index_play_reaches_the_end():
    rng = random.Random(3)
    for seed in range(10):
        g = Game(seed, trump_anytime=seed % 2 == 1)
        n = 0
        while not g.is_over:
            g.apply(rng.choice(g.legal_indices()))
            n += 1
            assert n < 500_000
        assert g.is_over


def test_clone_is_independent():
    g = Game(4)
    c = g.clone()
    c.apply(c.legal()[0])
    assert g.view(g.to_act)["bids"] == []
    assert copy.deepcopy(g).view(0) == g.view(0)
    assert copy.copy(c).view(0) == c.view(0)


def test_view_is_the_request_view_and_hides_other_hands():
    rng = random.Random(6)
    g = random_game(8, rng, steps=80)
    seat = g.to_act
    req = g.request(id=17, time_ms=1000)
    assert req["type"] == "request" and req["id"] == 17 and req["time_ms"] == 1000
    assert req["view"] == g.view(seat)
    assert req["legal"] == g.legal_wire()
    assert req["decision"] == g.phase
    v = g.view(seat)
    assert v["seat"] == seat and v["team"] == seat % 3 and v["partner"] == (seat + 3) % 6
    assert v["hand"] == g.hand(seat)
    text = repr(g.view(seat))
    for other in range(6):
        if other != seat:
            for card in g.hand(other):  # still held, so never seen by `seat`
                assert f"'{card}'" not in text


def test_bad_arguments_say_what():
    g = Game(1)
    with pytest.raises(ValueError, match="seat"):
        g.hand(6)
    with pytest.raises(ValueError, match="seat"):
        g.view(9)
    with pytest.raises(OSError):
        Game.from_transcript("/nonexistent/transcript.jsonl")
