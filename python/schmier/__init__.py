"""schmier: the Schmier referee's own rules engine, for Python bots.

A tour: ``schmier.Game`` is a whole game (every card visible) with ``legal()``,
``apply()``, ``legal_mask()`` and ``view(seat)``; ``schmier.Action`` is one
decision and its wire form; ``schmier.run_bot(policy)`` plays a Python policy
in the referee; ``schmier.env`` has the PettingZoo and Gymnasium environments.
See README.md beside this package and docs/python.md in the repository.
"""

from ._schmier import (
    ACTION_COUNT,
    ACTION_NAMES,
    DONE,
    OBSERVATION_LEN,
    PROTOCOL,
    Action,
    Game,
    GameBatch,
    encode,
    encode_into,
    playouts,
    policy_action,
    sample_world_batch,
    sample_worlds,
)
from .bot import Decision, run_bot

__all__ = [
    "ACTION_COUNT",
    "ACTION_NAMES",
    "DONE",
    "OBSERVATION_LEN",
    "PROTOCOL",
    "Action",
    "Decision",
    "Game",
    "GameBatch",
    "encode",
    "encode_into",
    "playouts",
    "policy_action",
    "run_bot",
    "sample_world_batch",
    "sample_worlds",
]
