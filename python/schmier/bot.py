"""``run_bot``: a Python policy as a referee bot (protocol ``schmier/1``, one
JSON object a line on stdin/stdout; see PROTOCOL.md).

A policy is a callable ``policy(decision) -> action`` where ``decision`` is a
:class:`Decision` (the request with the game's rules and seat) and ``action``
is a :class:`schmier.Action` or the reply's wire JSON (``"pass"``, ``4``,
``"H"``, ``["5C", "8C"]``, ``"AS"``). An object with a method
``on_message(msg)`` is also told every message the referee sends (events,
faults, ``game_start``) before it is handled.

A policy that raises, or answers something not in ``legal``, does not fault
in a game: the error goes to stderr (the bot's log), with a line saying so,
and the first legal answer is sent instead (the referee's own fallback
choice for bids, exchanges and plays). The referee still times the reply, so
a slow policy times out as any bot would.

Under ``referee check-bot`` (which sets ``SCHMIER_CHECK_BOT=1`` in the bot's
environment) there is no such net, so that the check fails a broken policy
instead of passing its fallback: a policy that raises ends the bot, after
its traceback and a line naming the exception, and an illegal answer is sent
as it is, for the checker to judge.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
import traceback
from typing import IO, Any, Callable, Dict, List, Optional, Union

from ._schmier import PROTOCOL, Action

WireAction = Union[str, int, List[str]]

#: Set (to ``1``) in a bot's environment by ``referee check-bot``: ``run_bot``
#: then fails loudly instead of falling back (see the module's doc).
CHECK_ENV = "SCHMIER_CHECK_BOT"


class Decision:
    """One request, as a policy sees it.

    Attributes: ``request`` (the request message as JSON), ``id``,
    ``decision`` (``"bid"``, ``"trump"``, ``"exchange"``, ``"discard"``,
    ``"play"``), ``view`` (the seat's view: ``Game.view`` gives the same
    object), ``legal_wire`` (the request's ``legal`` JSON), ``time_ms``,
    ``deadline`` (``time.monotonic()`` value by which to have answered, or
    None without a limit), ``rules``, ``seat``, ``players`` (from
    ``game_start``).
    """

    def __init__(self, request: Dict[str, Any], game_start: Optional[Dict[str, Any]] = None):
        self.request = request
        self.id: int = request["id"]
        self.decision: str = request["decision"]
        self.view: Dict[str, Any] = request["view"]
        self.legal_wire: Any = request["legal"]
        self.time_ms: Optional[int] = request.get("time_ms")
        self.received = time.monotonic()
        self.deadline: Optional[float] = (
            None if self.time_ms is None else self.received + self.time_ms / 1000.0
        )
        start = game_start or {}
        self.rules: Dict[str, Any] = start.get("rules", {})
        self.seat: int = self.view["seat"]
        self.players: List[str] = start.get("players", [])
        self._legal: Optional[List[Action]] = None

    @property
    def legal(self) -> List[Action]:
        """Every legal answer as an Action (for an exchange or discard, every
        allowed set of cards: by size, then in card order)."""
        if self._legal is None:
            self._legal = [Action.from_wire(w) for w in legal_answers(self.decision, self.legal_wire)]
        return self._legal

    def first_legal(self) -> WireAction:
        """The first legal answer (the referee's fallback for a bid, exchange,
        discard or play; for trump, spades)."""
        return next(iter(legal_answers(self.decision, self.legal_wire)))

    def is_legal(self, wire: Any) -> bool:
        """Whether the wire action ``wire`` is one of the legal answers."""
        legal = self.legal_wire
        if self.decision in ("exchange", "discard"):
            if not isinstance(wire, list) or len(set(wire)) != len(wire):
                return False
            chosen = set(wire)
            must, frm = set(legal["must"]), set(legal["from"])
            extra = chosen - must
            return must <= chosen and extra <= frm and legal["min"] <= len(extra) <= legal["max"]
        if isinstance(wire, bool):
            return False
        return wire in legal


def legal_answers(decision: str, legal: Any):
    """Every legal wire answer to a request's ``legal`` (a generator)."""
    if decision not in ("exchange", "discard"):
        yield from legal
        return
    order = _card_order()
    must = sorted(legal["must"], key=order.__getitem__)
    frm = sorted(legal["from"], key=order.__getitem__)
    for k in range(legal["min"], legal["max"] + 1):
        for extra in itertools.combinations(frm, k):
            yield sorted(must + list(extra), key=order.__getitem__)


_ORDER: Dict[str, int] = {}


def _card_order() -> Dict[str, int]:
    if not _ORDER:
        ranks = "23456789TJQKA"
        for s, suit in enumerate("SHDC"):
            for r, rank in enumerate(ranks):
                _ORDER[rank + suit] = s * 13 + r
        _ORDER["JK"] = 52
    return _ORDER


def _to_wire(action: Any) -> Any:
    if isinstance(action, Action):
        return action.to_wire()
    return action


def run_bot(
    policy: Callable[[Decision], Any],
    *,
    name: str = "python-bot",
    version: Optional[str] = None,
    stdin: Optional[IO[str]] = None,
    stdout: Optional[IO[str]] = None,
    strict: Optional[bool] = None,
) -> None:
    """Plays ``policy`` through a referee session on stdin/stdout until ``bye``
    or the end of input. ``strict``: a policy that raises ends the bot and an
    illegal answer is sent as it is (the module's doc); default: whether
    ``SCHMIER_CHECK_BOT`` is set, as ``referee check-bot`` sets it."""
    if strict is None:
        strict = bool(os.environ.get(CHECK_ENV))
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    listener = getattr(policy, "on_message", None)
    game_start: Optional[Dict[str, Any]] = None

    def send(msg: Dict[str, Any]) -> None:
        out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        out.flush()

    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if listener is not None:
            listener(msg)
        if kind == "hello":
            hello: Dict[str, Any] = {"type": "hello", "name": name, "protocol": PROTOCOL}
            if version is not None:
                hello["version"] = version
            send(hello)
        elif kind == "game_start":
            game_start = msg
        elif kind == "request":
            d = Decision(msg, game_start)
            send({"type": "reply", "id": d.id, "action": _answer(policy, d, strict)})
        elif kind == "bye":
            return


def _answer(policy: Callable[[Decision], Any], d: Decision, strict: bool) -> Any:
    try:
        wire = _to_wire(policy(d))
    except Exception as e:  # a policy's bug must not cost the game a fault
        traceback.print_exc(file=sys.stderr)
        what = f"the policy raised {type(e).__name__}: {e} (request {d.id}, {d.decision})"
        if strict:
            print(f"schmier.run_bot: {what}; under check-bot ({CHECK_ENV}) the bot stops "
                  "here (in a game it sends the first legal answer)", file=sys.stderr, flush=True)
            sys.exit(1)
        print(f"schmier.run_bot: {what}; sending the first legal answer", file=sys.stderr, flush=True)
        return d.first_legal()
    if strict or d.is_legal(wire):
        return wire
    print(f"schmier.run_bot: the policy answered {wire!r}, not legal for {d.legal_wire!r}; "
          "sending the first legal answer", file=sys.stderr)
    return d.first_legal()
