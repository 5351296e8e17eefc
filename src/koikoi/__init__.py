"""koikoi: the Japanese Hanafuda card game Koi-Koi, every rule set, exactly.

The names a newcomer needs, from the layers below (``koikoi.game``, the game
itself, and ``koikoi.agents``, the AI players):

* a whole game: :class:`Match` (deals, rounds, scores; seeded chance), one deal:
  :class:`Round`, and what either waits for: :class:`Phase`;
* rules by name: :func:`get_rules` (a preset), :func:`load_rules` (a preset or a
  house-rules ``.toml`` file), :data:`PRESET_NAMES`;
* actions: :func:`parse_action` and the fixed integer ids of ``legal_ids()``;
* cards: :func:`parse_cards`, :func:`format_cards` (card sets are ints);
* what one player may know: :func:`view_of` gives a :class:`PlayerView`;
* positions, one line of text for a moment of a round: :func:`position` writes
  one, :func:`parse_position` reads one, :meth:`Round.from_position` sets it up
  (``repr(round)`` is that call), :func:`determinize` re-deals a view's hidden cards;
* players by spec (``"random"``, ``"greedy"``, ``"heuristic"``, ``"expert"``):
  :func:`make_agent`;
* scoring a capture pile: :func:`score_cards`;
* the errors, all :class:`KoiKoiError` (a ``ValueError``).

Importing ``koikoi`` loads neither numba nor numpy; the search players load
them when they first search.

>>> import random
>>> import koikoi
>>> match = koikoi.Match(koikoi.get_rules("nintendo"), seed=5)
>>> players = [koikoi.make_agent("greedy"), koikoi.make_agent("random")]
>>> rng = random.Random(0)
>>> for _ in range(6):
...     me = match.current
...     match.apply(players[me].act(koikoi.view_of(match, me), rng))
>>> len(match.actions)
6
>>> text = koikoi.position(match.round)
>>> koikoi.Round.from_position(text).hands == match.round.hands
True
>>> pile = koikoi.parse_cards("1L 3L 8L 11L")
>>> koikoi.score_cards(koikoi.get_rules("nintendo"), pile).points
14
"""

from __future__ import annotations

from koikoi.agents import Agent, make_agent
from koikoi.game import __version__
from koikoi.game.actions import Action, Phase, parse_action
from koikoi.game.cards import format_cards, parse_cards
from koikoi.game.engine import Match, Round
from koikoi.game.errors import (
    IllegalActionError,
    InvalidInputError,
    KoiKoiError,
    RecordError,
    RulesError,
)
from koikoi.game.notation import Position, PositionError, parse_position
from koikoi.game.positions import position
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules, load_rules
from koikoi.game.scoring import Settlement, score_cards
from koikoi.game.views import PlayerView, determinize, view_of

__all__ = [
    "PRESET_NAMES",
    "Action",
    "Agent",
    "IllegalActionError",
    "InvalidInputError",
    "KoiKoiError",
    "Match",
    "Phase",
    "PlayerView",
    "Position",
    "PositionError",
    "RecordError",
    "Round",
    "Rules",
    "RulesError",
    "Settlement",
    "__version__",
    "determinize",
    "format_cards",
    "get_rules",
    "load_rules",
    "make_agent",
    "parse_action",
    "parse_cards",
    "parse_position",
    "position",
    "score_cards",
    "view_of",
]
