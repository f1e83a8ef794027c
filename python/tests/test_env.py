"""The environments pass PettingZoo's and Gymnasium's own checkers, and their
rewards follow docs/python.md."""

import numpy as np
import pytest

# Needs the [envs] extra (scripts/test installs it).
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import schmier
from schmier import env as senv


def test_pettingzoo_api_test():
    api_test(senv.aec_env(), num_cycles=150)


def test_pettingzoo_seed_test():
    seed_test(lambda: senv.aec_env(), num_cycles=150)


def test_gymnasium_check_env():
    check_env(senv.GymEnv(seat=2), skip_render_check=True)


def test_gym_episode_with_masked_actions_ends_with_the_game():
    e = senv.GymEnv(seat=1, reward="score")
    obs, info = e.reset(seed=4)
    rng = np.random.default_rng(2)
    total, done, steps = 0.0, False, 0
    while not done:
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, r, done, trunc, info = e.step(a)
        assert e.observation_space.contains(obs) and not info.get("illegal")
        total += r
        steps += 1
    assert e.game.is_over
    # The learner's score rewards add up to its team's final duplicate score.
    s = e.game.scores
    assert total == pytest.approx(s[1] - (s[0] + s[2]) / 2.0)
    obs, info = e.reset(seed=4)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, r, done, trunc, info = e.step(illegal)
    assert done and r == -1.0 and info["illegal"]


def test_aec_game_to_the_end_rewards_the_winners():
    e = senv.aec_env()
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    total = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        total[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        assert obs["observation"].shape == (senv.OBS_LEN,)
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
    game = e.unwrapped.game
    assert game.is_over
    if game.winner is None:
        assert all(v == 0 for v in total.values())
    else:
        for i, a in enumerate(e.possible_agents):
            assert total[a] == (1.0 if i % 3 == game.winner else -0.5)
    assert abs(sum(total.values())) < 1e-9


def test_score_rewards_are_zero_sum_per_hand():
    e = senv.raw_env(reward="score")
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    sums = []
    for _ in range(2000):
        agent = e.agent_selection
        if e.terminations[agent]:
            break
        mask = e.observe(agent)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))
        sums.append(sum(e.rewards.values()))
    assert np.allclose(sums, 0.0)


def test_only_the_agent_to_act_has_a_mask_and_encode_matches():
    e = senv.raw_env()
    e.reset(seed=5)
    seat = e.unwrapped.game.to_act
    for i, a in enumerate(e.possible_agents):
        obs = e.observe(a)
        assert obs["action_mask"].any() == (i == seat)
        assert np.array_equal(obs["observation"][: schmier.OBSERVATION_LEN], schmier.encode(e.game.view(i)))
    buf = np.zeros(schmier.OBSERVATION_LEN, dtype=np.float32)
    schmier.encode_into(e.game.view(0), buf)
    assert np.array_equal(buf, schmier.encode(e.game.view(0)))
    with pytest.raises(ValueError):
        schmier.encode_into(e.game.view(0), np.zeros(3, dtype=np.float32))


def test_the_gym_observation_is_as_documented():
    """docs/python.md, "The observation": the space, `encode` of the
    learner's view, 53 flags of the cards it has chosen so far in a
    card-by-card exchange or discard, the legal mask; all zero once over."""
    e = senv.GymEnv(seat=4)
    space = e.observation_space
    assert space["observation"].shape == (schmier.OBSERVATION_LEN + 53,) == (687,)
    assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert space["action_mask"].shape == (schmier.ACTION_COUNT,) == (63,)
    obs, _ = e.reset(seed=11)
    rng = np.random.default_rng(3)
    order = {r + s: i * 13 + j for i, s in enumerate("SHDC") for j, r in enumerate("23456789TJQKA")}
    order["JK"] = 52
    chosen_seen = 0
    done = False
    while not done:
        g = e.game
        assert g.to_act == 4
        assert np.array_equal(obs["observation"][:634], schmier.encode(g.view(4)))
        flags = np.zeros(53, dtype=np.float32)
        flags[[order[c] for c in g.selection]] = 1.0
        assert np.array_equal(obs["observation"][634:], flags)
        chosen_seen += len(g.selection) > 0
        assert np.array_equal(obs["action_mask"], g.legal_mask().astype(np.int8))
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, done, _, _ = e.step(a)
    assert chosen_seen > 0, "no card-by-card choice was seen: pick another seed"
    assert not obs["observation"].any() and not obs["action_mask"].any()
