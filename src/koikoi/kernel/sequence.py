"""The sequence observation: every public event of a round (or match), in order, as tokens.

Version :data:`SEQUENCE_VERSION`. Beside the summary vector of
:mod:`koikoi.kernel.encoding`, for agents that read the history themselves
(transformers, LSTMs; Guan's Koi-Koi agent and DouZero feed the moves so far to
their networks). Each event becomes one **token**, a row of
:data:`TOKEN_WIDTH` small integers (``int16``), named by :data:`TOKEN_FIELDS`:

* ``kind``: what happened, an index of :data:`KINDS` (0 is padding);
* ``who``: who did it, seen from the observer: :data:`WHO_OWN` (0), :data:`WHO_OPPONENT`
  (1) or :data:`WHO_NOBODY` (2);
* ``card``: the card played, discarded, drawn or dealt to the field (0-47), or
  :data:`NO_CARD` (48);
* ``capture_1`` .. ``capture_3``: the field cards it captured, in card order
  (at most three), then :data:`NO_CARD`;
* ``value``: a number that depends on the kind (the new yaku total, the koi-koi
  calls so far, the points won, ... see :data:`VALUES`);
* ``round`` and ``month``: the round of the match (1, 2, ...) and its month (1-12).

A round's tokens are ``round_start`` (who: the dealer; value: the leader, as
``who`` codes it), a ``field`` token per card dealt face up (in card order),
then for each turn ``play`` or ``discard``, ``draw``, ``take`` (the capture
chosen for the drawn card), ``yaku`` (the score went up), ``koikoi`` or ``stop``,
and at the end ``exhausted`` and ``round_over``. A round has at most
:data:`MAX_ROUND_TOKENS` of them. A match adds ``redeal``, ``instant`` and
``match_over`` tokens.

The sequence array has ``length`` rows: the first ``count`` are tokens in
order, the rest zeros (padding, ``kind`` 0); when an episode has more tokens
than rows, the most recent ones are kept (as DouZero keeps the latest moves).

**Hidden information.** The tokens are made from the view's
:attr:`~koikoi.game.views.PlayerView.history`, which holds only the events the
player may see, and skip the private ``hand`` events: the sequence is a function of
the public events and the observer's seat alone. The player's own hand, the only
private part, is kept apart (:func:`hand_plane`).

>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=1)
>>> tokens, count = encode_sequence(view_of(m, m.current))
>>> tokens.shape == (MAX_ROUND_TOKENS, TOKEN_WIDTH), count  # round start, 8 field cards
(True, 9)
>>> KINDS[tokens[0, 0]], KINDS[tokens[1, 0]], int(tokens[count:].sum())
('round_start', 'field', 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt

from koikoi.game.cards import CODES, card_list
from koikoi.game.engine import Event
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView

__all__ = [
    "F_CAPTURE",
    "F_CARD",
    "F_KIND",
    "F_MONTH",
    "F_ROUND",
    "F_VALUE",
    "F_WHO",
    "KIND",
    "KINDS",
    "MAX_ROUND_TOKENS",
    "NO_CARD",
    "SCOPES",
    "SEQUENCE_VERSION",
    "TOKEN_FIELDS",
    "TOKEN_WIDTH",
    "VALUES",
    "WHO_NOBODY",
    "WHO_OPPONENT",
    "WHO_OWN",
    "default_length",
    "encode_sequence",
    "encode_sequence_into",
    "hand_plane",
    "sequence_tokens",
]

SEQUENCE_VERSION: Final = 1
TOKEN_FIELDS: Final[tuple[str, ...]] = (
    "kind",
    "who",
    "card",
    "capture_1",
    "capture_2",
    "capture_3",
    "value",
    "round",
    "month",
)
"""The columns of a token, in order."""
TOKEN_WIDTH: Final = len(TOKEN_FIELDS)
F_KIND: Final = 0
F_WHO: Final = 1
F_CARD: Final = 2
F_CAPTURE: Final = 3
"""The first of the ``capture_*`` columns."""
F_VALUE: Final = 6
F_ROUND: Final = 7
F_MONTH: Final = 8
CAPTURE_SLOTS: Final = 3
"""A card arriving on the field captures at most three field cards (a whole month)."""

KINDS: Final[tuple[str, ...]] = (
    "pad",
    "round_start",
    "field",
    "play",
    "discard",
    "draw",
    "take",
    "yaku",
    "koikoi",
    "stop",
    "exhausted",
    "round_over",
    "redeal",
    "instant",
    "match_over",
)
"""Token kinds by index (0: padding)."""
KIND: Final[Mapping[str, int]] = MappingProxyType({k: i for i, k in enumerate(KINDS)})
"""The index of each kind."""
VALUES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "round_start": "the leader (0: the observer, 1: the opponent)",
        "draw": "the field cards to choose from when the capture waits for a choice, else 0",
        "yaku": "the player's new yaku total",
        "koikoi": "the player's koi-koi calls so far",
        "stop": "1 when the stop was automatic (no choice was offered), else 0",
        "round_over": "the points won (0 without a winner)",
        "instant": "the instant hand's points",
    }
)
"""What ``value`` holds for each kind (0 for the kinds not listed)."""

WHO_OWN: Final = 0
WHO_OPPONENT: Final = 1
WHO_NOBODY: Final = 2
NO_CARD: Final = 48

TURNS: Final = 16
"""Turns in a round: eight hand cards each."""
MAX_ROUND_TOKENS: Final = 1 + 8 + 5 * TURNS + 2
"""Most tokens of a round: its start, eight field cards, five a turn (play, draw, take,
yaku, koi-koi or stop) and the end (exhausted, round over)."""
SCOPES: Final = ("round", "match")
"""``round``: the events of the view's round; ``match``: every event of the history."""

_CODE_INDEX: Final = {code: i for i, code in enumerate(CODES)}
_VALUE_KEYS: Final = {
    "yaku": "total",
    "koikoi": "calls",
    "stop": "automatic",
    "round_over": "points",
    "instant": "points",
}
"""The event data that ``value`` holds, by kind (``automatic``, a bool, as 0 or 1)."""


def default_length(scope: str, rules: Rules) -> int:
    """Rows of a sequence that hold every event of a round, or of a match under ``rules``
    (:data:`MAX_ROUND_TOKENS` a round; redeals aside, which practically never overflow it)."""
    if scope not in SCOPES:
        raise InvalidInputError(f"scope must be 'round' or 'match', not {scope!r}")
    return MAX_ROUND_TOKENS * (1 if scope == "round" else max(rules.game.rounds, 1))


def _who(player: object, observer: int) -> int:
    if not isinstance(player, int) or player < 0:
        return WHO_NOBODY
    return WHO_OWN if player == observer else WHO_OPPONENT


def _captures(cards: int, card: int | None) -> tuple[int, ...]:
    """The field cards of a capture ``cards`` (the arriving ``card`` left out), padded."""
    got = [int(c) for c in card_list(cards & ~(1 << card) if card is not None else cards)]
    if len(got) > CAPTURE_SLOTS:  # pragma: no cover - a month has four cards
        raise RuntimeError(f"a capture of {len(got)} field cards")
    return (*got, *(NO_CARD,) * (CAPTURE_SLOTS - len(got)))


def _in_scope(events: tuple[Event, ...], scope: str, round_number: int) -> Iterable[Event]:
    """The events of the round ``round_number`` (its last deal), or all of them."""
    if scope == "match":
        return events
    start = None
    for i, e in enumerate(events):
        if e.kind == "round_start" and e.data.get("round") == round_number:
            start = i
    if start is None:  # a round set up from a position: its events alone
        return events
    end = len(events)
    for i in range(start + 1, len(events)):
        if events[i].kind == "round_start" and events[i].data.get("round") != round_number:
            end = i
            break
    return events[start:end]


def sequence_tokens(view: PlayerView, scope: str = "round") -> list[tuple[int, ...]]:
    """Every token of ``view``'s history in ``scope`` (one of :data:`SCOPES`), in order.

    Raises:
        InvalidInputError: a spectator's view, or an unknown scope.
    """
    observer = view.player
    if observer is None:
        raise InvalidInputError("a spectator's view has no sequence observation: it has no seat")
    if scope not in SCOPES:
        raise InvalidInputError(f"scope must be 'round' or 'match', not {scope!r}")
    rnd, month = view.round_number, view.month
    out: list[tuple[int, ...]] = []
    none3 = (NO_CARD,) * CAPTURE_SLOTS
    for e in _in_scope(view.history, scope, view.round_number):
        if not e.visible_to(observer) or e.private_to is not None:
            continue  # the own hand is private: kept apart (hand_plane)
        kind = e.kind
        who = _who(e.player, observer)
        data = e.data
        rows: list[tuple[int, ...]]
        if kind == "round_start":
            rnd, month = int(data["round"]), int(data["month"])
            dealer, leader = _who(data["dealer"], observer), _who(data["leader"], observer)
            rows = [(KIND[kind], dealer, NO_CARD, *none3, leader)]
            field = sorted(_CODE_INDEX[c] for c in data["field"])
            rows += [(KIND["field"], WHO_NOBODY, c, *none3, 0) for c in field]
        elif kind == "play":
            k = KIND["discard"] if data.get("discard") else KIND["play"]
            rows = [(k, who, int(e.card or 0), *_captures(e.cards, e.card), 0)]
        elif kind in ("draw", "take"):
            pending = len(data.get("choice", ()))
            rows = [(KIND[kind], who, int(e.card or 0), *_captures(e.cards, e.card), pending)]
        elif kind in _VALUE_KEYS:
            value = int(data.get(_VALUE_KEYS[kind], 0))
            rows = [(KIND[kind], who, NO_CARD, *none3, value)]
        elif kind in ("exhausted", "redeal", "match_over"):
            rows = [(KIND[kind], who, NO_CARD, *none3, 0)]
        else:  # first_dealer: who deals and leads is in round_start
            continue
        out += [(*row, rnd, month) for row in rows]
    return out


def encode_sequence_into(view: PlayerView, out: npt.NDArray[np.int16], scope: str = "round") -> int:
    """Write ``view``'s sequence into ``out`` (int16, ``length x TOKEN_WIDTH``): the
    tokens (the latest ``length`` when there are more), then zeros. Returns the count.

    Raises:
        InvalidInputError: a spectator's view, an unknown scope or a wrong array.
    """
    if out.ndim != 2 or out.shape[1] != TOKEN_WIDTH or out.dtype != np.int16:
        raise InvalidInputError(
            f"the output must be an int16 array of shape (length, {TOKEN_WIDTH}), "
            f"not {out.dtype} {out.shape}"
        )
    tokens = sequence_tokens(view, scope)[-out.shape[0] :] if out.shape[0] else []
    out.fill(0)
    if tokens:
        out[: len(tokens)] = tokens
    return len(tokens)


def encode_sequence(
    view: PlayerView, *, length: int = MAX_ROUND_TOKENS, scope: str = "round"
) -> tuple[npt.NDArray[np.int16], int]:
    """``view``'s sequence as a new ``length x TOKEN_WIDTH`` int16 array, and its token count.

    Raises:
        InvalidInputError: a spectator's view, an unknown scope, or a length below 1.
    """
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise InvalidInputError(f"length must be a positive integer, not {length!r}")
    out = np.zeros((length, TOKEN_WIDTH), dtype=np.int16)
    return out, encode_sequence_into(view, out, scope)


def hand_plane(view: PlayerView) -> npt.NDArray[np.int8]:
    """The observer's own hand, 48 values (1: the card is in the hand): the private part
    kept apart from the sequence."""
    bits = np.zeros(48, dtype=np.int8)
    bits[card_list(view.hand)] = 1
    return bits
