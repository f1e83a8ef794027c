"""Type stubs of the extension module schmier._schmier (python/src/)."""

from os import PathLike
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

ACTION_COUNT: int
"""Size of the action space (63): 0 pass, 1-4 bid 3-6, 5-8 trump S H D C,
9-61 card (play it, or add it to an exchange or discard), 62 done."""
DONE: int
ACTION_NAMES: List[str]
PROTOCOL: str

Wire = Union[str, int, List[str]]

class Action:
    """One whole decision: its wire form is a reply's ``action``."""

    @staticmethod
    def from_wire(obj: Wire) -> Action: ...
    def to_wire(self) -> Wire: ...
    @property
    def kind(self) -> str:
        """"pass", "bid", "trump", "cards" or "play"."""
    @property
    def bid(self) -> Optional[int]: ...
    @property
    def suit(self) -> Optional[str]: ...
    @property
    def card(self) -> Optional[str]: ...
    @property
    def cards(self) -> Optional[List[str]]: ...
    @property
    def index(self) -> Optional[int]:
        """The single action-space index (None for cards)."""
    def indices(self) -> List[int]:
        """The action-space indices taking this action (cards: each, then DONE)."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Game:
    """One game of Schmier with every card visible: the referee's own engine."""

    def __init__(self, seed: int, *, stick_the_dealer: bool = False, trump_anytime: bool = False) -> None: ...
    @staticmethod
    def from_transcript(path: Union[str, PathLike[str]]) -> Game: ...
    @property
    def to_act(self) -> Optional[int]: ...
    @property
    def phase(self) -> str:
        """"bid", "trump", "exchange", "discard", "play" or "over"."""
    @property
    def is_over(self) -> bool: ...
    @property
    def scores(self) -> List[int]: ...
    @property
    def winner(self) -> Optional[int]: ...
    @property
    def dealer(self) -> int: ...
    @property
    def deal(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def trump(self) -> Optional[str]: ...
    @property
    def rules(self) -> Dict[str, Any]: ...
    @property
    def selection(self) -> List[str]: ...
    def hand(self, seat: int) -> List[str]: ...
    def legal(self) -> List[Action]: ...
    def legal_wire(self) -> Any: ...
    def legal_mask(self, out: Optional[npt.NDArray[np.bool_]] = None) -> npt.NDArray[np.bool_]:
        """The legal indices as a bool array of ACTION_COUNT; with ``out`` (a
        writable, contiguous bool array of that length) filled in place and
        returned. Pass ``out`` by position in a hot loop: a keyword costs a dict."""
    def legal_indices(self) -> List[int]: ...
    def apply(self, action: Union[Action, int]) -> None: ...
    def clone(self) -> Game: ...
    def __copy__(self) -> Game: ...
    def __deepcopy__(self, memo: Dict[int, Any]) -> Game: ...
    def view(self, seat: int) -> Dict[str, Any]: ...
    def request(self, id: int = 1, time_ms: Optional[int] = None) -> Optional[Dict[str, Any]]: ...

def sample_worlds(
    view: Dict[str, Any], n: int, seed: int, *, rules: Optional[Dict[str, Any]] = None, streak: int = 0
) -> List[Game]:
    """``n`` full games drawn uniformly from the deals consistent with ``view``
    (a ``Game.view`` or a request's ``view``); each has ``view(seat) == view``."""

def sample_world_batch(
    view: Dict[str, Any], n: int, seed: int, *, rules: Optional[Dict[str, Any]] = None, streak: int = 0
) -> GameBatch:
    """The same worlds as ``sample_worlds`` with the same arguments, held
    natively in a ``GameBatch`` (no Python object per world)."""

ActionsArg = Union[int, Action, Sequence[int], npt.NDArray[np.integer[Any]]]

class GameBatch:
    """Many games held natively and stepped together from one call."""

    def __init__(self, seeds: Iterable[int], *, stick_the_dealer: bool = False, trump_anytime: bool = False) -> None:
        """One new game per seed, each dealt as ``Game(seed, ...)``."""
    @staticmethod
    def from_games(games: Sequence[Game]) -> GameBatch:
        """Copies of ``games`` (their card-by-card selections too)."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Game:
        """A copy of game ``i``."""
    def games(self) -> List[Game]:
        """Every game, as copies."""
    def clone(self) -> GameBatch: ...
    def __copy__(self) -> GameBatch: ...
    def __deepcopy__(self, memo: Dict[int, Any]) -> GameBatch: ...
    @property
    def to_act(self) -> npt.NDArray[np.int32]:
        """The seat to act in each game, -1 where it is over."""
    @property
    def is_over(self) -> npt.NDArray[np.bool_]: ...
    @property
    def scores(self) -> npt.NDArray[np.int32]:
        """Scores by team, shape (n, 3)."""
    @property
    def winners(self) -> npt.NDArray[np.int32]:
        """The winning team of each game, -1 while it runs or for a capped game."""
    @property
    def deals(self) -> npt.NDArray[np.int32]: ...
    def legal_masks(self, out: Optional[npt.NDArray[np.bool_]] = None) -> npt.NDArray[np.bool_]:
        """Shape (n, ACTION_COUNT); an all-false row for a game over; ``out``
        filled in place."""
    def apply(self, actions: ActionsArg) -> None:
        """One index per game (negative: leave that game), or one index or
        ``Action`` for all. All or nothing: an illegal entry raises ValueError
        naming the game, and no game changes."""
    def reset(self, indices: Union[int, Sequence[int]], seeds: Union[int, Sequence[int]]) -> None:
        """Game ``indices[k]`` replaced by a new game dealt from ``seeds[k]``
        under the rules of the game it replaces."""
    def observations(self, out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]:
        """``encode`` of each acting seat's view, shape (n, OBSERVATION_LEN);
        zeros for a game over; ``out`` filled in place."""
    def playouts(
        self, *, policy: str = "heuristic", threads: int = 1, seed: int = 0, until: str = "game"
    ) -> npt.NDArray[np.int32]:
        """``schmier.playouts`` of copies of these games (the batch does not change)."""

def playouts(
    games: Union[Sequence[Game], GameBatch], *, policy: str = "heuristic", threads: int = 1, seed: int = 0, until: str = "game"
) -> npt.NDArray[np.int32]:
    """Copies of ``games`` played on natively (GIL released, ``threads`` threads)
    to the end of the game or of the current hand (``until="hand"``), every seat
    by ``policy`` ("random" or "heuristic"). Rows: scores of teams 0-2, winning
    team (-1 none), deals."""

def policy_action(game: Game, policy: str = "heuristic", seed: int = 0) -> Optional[Action]:
    """The built-in policy's whole action for the seat to act (None once over;
    ``random``: the first draw of the policy seeded ``seed``)."""

OBSERVATION_LEN: int
"""Length of ``encode``'s vector (layout: docs/python.md)."""

def encode(view: Dict[str, Any]) -> npt.NDArray[np.float32]: ...
def encode_into(view: Dict[str, Any], buffer: npt.NDArray[np.float32]) -> None: ...
