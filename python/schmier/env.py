"""Environments over ``schmier.Game``: a PettingZoo AEC environment
(:func:`aec_env`) and a Gymnasium single-agent one (:class:`GymEnv`).
Both need the extra: ``pip install "./python[envs]"``.

Agents ``seat_0`` ... ``seat_5``; action space ``Discrete(ACTION_COUNT)`` (the
fixed numbering of docs/python.md: pass, bids, trumps, cards, done — an
exchange or the dealer's discard is taken card by card, then ``done``).
Observation: a dict ``{"observation": float32[OBS_LEN], "action_mask":
int8[ACTION_COUNT]}``; ``observation`` is ``schmier.encode`` of the agent's
seat view followed by 53 flags of the cards chosen so far in a card-by-card
exchange or discard (the agent's own, while it chooses); ``action_mask`` is
the legal indices for the agent to act, all zero for the others.

Rewards (``reward="win"``, the default): nothing until the game ends, then +1
to each seat of the winning team and -0.5 to each of the four others (zero
sum); 0 to everyone for a game stopped by the hand cap. ``reward="score"``:
after each hand, each seat gets its team's score change minus the mean of the
other two teams' changes (zero sum, every hand). ``max_steps`` (optional)
truncates an episode after that many steps.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

import gymnasium
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import ACTION_COUNT, Action, Game, encode, OBSERVATION_LEN

OBS_LEN = OBSERVATION_LEN + 53
AGENTS = [f"seat_{i}" for i in range(6)]
_CARD_INDEX = {r + s: i * 13 + j for i, s in enumerate("SHDC") for j, r in enumerate("23456789TJQKA")}
_CARD_INDEX["JK"] = 52


def observe_seat(game: Game, seat: int) -> Dict[str, np.ndarray]:
    """The observation dict of ``seat`` (see the module's doc)."""
    obs = np.zeros(OBS_LEN, dtype=np.float32)
    if not game.is_over:
        obs[:OBSERVATION_LEN] = encode(game.view(seat))
    mask = np.zeros(ACTION_COUNT, dtype=np.int8)
    if game.to_act == seat:
        for c in game.selection:
            obs[OBSERVATION_LEN + _CARD_INDEX[c]] = 1.0
        mask[game.legal_indices()] = 1
    return {"observation": obs, "action_mask": mask}


def _observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            # Scores / target are the only values outside [0, 1]: |score| <= 6 x 200 deals.
            "observation": spaces.Box(low=-64.0, high=64.0, shape=(OBS_LEN,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(ACTION_COUNT,), dtype=np.int8),
        }
    )


def _final_rewards(game: Game) -> List[float]:
    if game.winner is None:
        return [0.0] * 6
    return [1.0 if s % 3 == game.winner else -0.5 for s in range(6)]


def _hand_rewards(before: List[int], after: List[int]) -> List[float]:
    delta = [a - b for a, b in zip(after, before)]
    team = [delta[t] - (sum(delta) - delta[t]) / 2.0 for t in range(3)]
    return [float(team[s % 3]) for s in range(6)]


class SchmierAEC(AECEnv):
    """The six-seat game as a PettingZoo AEC environment."""

    metadata = {"name": "schmier_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, *, stick_the_dealer: bool = False, trump_anytime: bool = False,
                 reward: str = "win", max_steps: Optional[int] = None,
                 render_mode: Optional[str] = None):
        super().__init__()
        if reward not in ("win", "score"):
            raise ValueError(f"reward is 'win' or 'score', got {reward!r}")
        self.rules = {"stick_the_dealer": stick_the_dealer, "trump_anytime": trump_anytime}
        self.reward_kind = reward
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self._obs_spaces = {a: _observation_space() for a in AGENTS}
        self._act_spaces = {a: spaces.Discrete(ACTION_COUNT) for a in AGENTS}
        self.game: Optional[Game] = None
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = Game(int(self._rng.integers(0, 2**63)), **self.rules)
        self.steps = 0
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = AGENTS[self.game.to_act]

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        return observe_seat(self.game, AGENTS.index(agent))

    def step(self, action: Optional[int]) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        self._cumulative_rewards[agent] = 0.0
        before, deal = game.scores, game.deal
        game.apply(int(action))
        self.steps += 1
        rewards = [0.0] * 6
        if game.is_over and self.reward_kind == "win":
            rewards = _final_rewards(game)
        elif self.reward_kind == "score" and (game.deal != deal or game.is_over):
            rewards = _hand_rewards(before, game.scores)
        self.rewards = {a: rewards[i] for i, a in enumerate(self.agents)}
        if game.is_over:
            self.terminations = {a: True for a in self.agents}
        elif self.max_steps is not None and self.steps >= self.max_steps:
            self.truncations = {a: True for a in self.agents}
        if not game.is_over:
            self.agent_selection = AGENTS[game.to_act]
        self._accumulate_rewards()

    def render(self) -> Optional[str]:
        if self.render_mode != "ansi" or self.game is None:
            return None
        return repr(self.game)

    def close(self) -> None:
        pass


def raw_env(**kwargs: Any) -> SchmierAEC:
    """The AEC environment without PettingZoo's checking wrappers."""
    return SchmierAEC(**kwargs)


def aec_env(**kwargs: Any) -> AECEnv:
    """The AEC environment, wrapped as PettingZoo's classic games are (an
    illegal action ends the game for the agent that took it: -1, the others
    0; see PettingZoo's TerminateIllegalWrapper)."""
    env: AECEnv = SchmierAEC(**kwargs)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    env = wrappers.OrderEnforcingWrapper(env)
    return env


Opponent = Callable[[Game, int, np.random.Generator], Union[int, Action]]


def random_opponent(game: Game, seat: int, rng: np.random.Generator) -> int:
    """A uniformly random legal index."""
    legal = game.legal_indices()
    return legal[int(rng.integers(len(legal)))]


class GymEnv(gymnasium.Env):
    """One seat (``seat``) learns; the five others play ``opponent`` (a
    callable ``(game, seat, rng) -> index or Action``; default: random legal
    indices from the environment's own seeded generator). Observation and
    action spaces as the AEC environment's; reward: the learner's seat's
    reward of the AEC environment (``reward="win"`` or ``"score"``). An
    illegal action ends the episode with ``illegal_reward`` (default -1) and
    ``info["illegal"]``; use the observation's ``action_mask``."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, seat: int = 0, opponent: Optional[Opponent] = None, *,
                 stick_the_dealer: bool = False, trump_anytime: bool = False,
                 reward: str = "win", max_steps: Optional[int] = None,
                 illegal_reward: float = -1.0, render_mode: Optional[str] = None):
        if reward not in ("win", "score"):
            raise ValueError(f"reward is 'win' or 'score', got {reward!r}")
        self.illegal_reward = illegal_reward
        self.seat = seat
        self.opponent = opponent or random_opponent
        self.rules = {"stick_the_dealer": stick_the_dealer, "trump_anytime": trump_anytime}
        self.reward_kind = reward
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.observation_space = _observation_space()
        self.action_space = spaces.Discrete(ACTION_COUNT)
        self.game: Optional[Game] = None

    def _others(self) -> float:
        """Plays the other seats until the learner acts or the game ends;
        returns the learner's reward on the way (``score`` rewards)."""
        game, total = self.game, 0.0
        while not game.is_over and game.to_act != self.seat:
            before, deal = game.scores, game.deal
            game.apply(self.opponent(game, game.to_act, self.np_random))
            total += self._reward(before, deal)
        return total

    def _reward(self, before: List[int], deal: int) -> float:
        game = self.game
        if game.is_over and self.reward_kind == "win":
            return _final_rewards(game)[self.seat]
        if self.reward_kind == "score" and (game.deal != deal or game.is_over):
            return _hand_rewards(before, game.scores)[self.seat]
        return 0.0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.game = Game(int(self.np_random.integers(0, 2**63)), **self.rules)
        self.steps = 0
        self._others()
        return observe_seat(self.game, self.seat), {}

    def step(self, action: int):
        game = self.game
        before, deal = game.scores, game.deal
        if not game.legal_mask()[int(action)]:
            # An illegal action ends the episode, as PettingZoo's classic games do.
            obs = observe_seat(game, self.seat)
            return obs, float(self.illegal_reward), True, False, {"illegal": True}
        game.apply(int(action))
        self.steps += 1
        reward = self._reward(before, deal) + self._others()
        truncated = self.max_steps is not None and self.steps >= self.max_steps and not game.is_over
        return observe_seat(game, self.seat), float(reward), game.is_over, truncated, {}

    def render(self) -> Optional[str]:
        return repr(self.game) if self.render_mode == "ansi" else None
