"""The information-state encoding: what one player knows, as a fixed-size vector.

Version :data:`ENCODING_VERSION`. Everything comes from a
:class:`~koikoi.game.views.PlayerView`, so no hidden card can reach it: two views
that differ only in where the unseen cards lie (the opponent's hand, the stock
order) encode the same.

The vector (``float32``, :data:`SIZE` values) is, in order:

* eight **card planes** of 48 values each (card ``c`` at offset ``48 * plane + c``,
  1.0 when the card is in the set): own hand, field, own capture pile, the
  opponent's capture pile, unseen cards (the opponent's hand and the stock), the
  drawn card waiting for its target, the months the player declined, the months
  the opponent declined (see :attr:`~koikoi.game.views.PlayerView.declined`);
* the **round**: hand sizes (own, opponent's, over 8), the stock size (over 24),
  the phase (play, take, decide: one-hot), whose turn, the month (one-hot),
  dealer and leader, both yaku totals (over 10), koi-koi calls (over 3, capped),
  the scores at the last call (over 10), who scored last (own, opponent, nobody);
* the **match**: both match scores and the lead (over 50), the round's place
  (rounds left after this one, over 12; the last round; the match length over 12);
* the **rules**: every option of :class:`~koikoi.game.rules.Rules` — numbers scaled
  (yaku points over 10, ...), switches as 0/1, choices one-hot, lists multi-hot —
  so a network sees the active rules' yaku values and multipliers.

The layout is declared once, in :data:`LAYOUT`: a :class:`Segment` (name, offset,
size, scale, feature names) per run of values, also by name in :data:`SEGMENTS`.
:data:`FEATURES` names every value (``"hand:1L"``, ``"phase:take"``,
``"rules:points.goko"``, ...). :func:`encode_into` writes it; the batched simulator
(:mod:`koikoi.kernel.batch`) writes the same vector in numba at the offsets and
with the scales of the same layout, and tests/envs/test_vector.py holds the two
equal, segment by segment, in every phase. The action
mask is over the fixed action ids of :mod:`koikoi.game.actions`. The
information-state string is the view's position (:mod:`koikoi.game.positions`):
everything the player knows that play depends on.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=1)
>>> obs = encode(view_of(m, m.current))
>>> obs.shape == (SIZE,), int(obs[:48].sum())  # eight cards in hand
(True, 8)
>>> int(action_mask(view_of(m, m.current)).sum()) == len(m.legal_ids())
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.cards import CODES, FULL_DECK
from koikoi.game.engine import Phase
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import CHOICES, REDEAL_CONDITIONS, SECTION_TYPES, Rules
from koikoi.game.views import PlayerView

__all__ = [
    "ENCODING_VERSION",
    "FEATURES",
    "KOIKOI_CAP",
    "LAYOUT",
    "PLANES",
    "SEGMENTS",
    "SIZE",
    "Segment",
    "action_mask",
    "encode",
    "encode_into",
    "info_state_string",
    "rule_features",
]

ENCODING_VERSION: Final = 1
PLANES: Final[tuple[str, ...]] = (
    "hand",
    "field",
    "own_pile",
    "opponent_pile",
    "unseen",
    "drawn",
    "own_declined",
    "opponent_declined",
)
MATCH_SCALE: Final = 50.0
"""Match scores and the lead are divided by this."""
ROUND_SCALE: Final = 10.0
"""Round yaku totals and called scores are divided by this."""


@dataclass(frozen=True)
class Segment:
    """One named run of values of the vector.

    Attributes:
        name: the segment's name (``"hand"``, ``"phase"``, ``"match:own"``, ...).
        offset: the index of its first value.
        size: how many values it has.
        scale: what a count is divided by (1.0 for flags, one-hots and card
            planes; the ``rules`` segment scales each option itself, see
            :func:`rule_features`).
        features: the name of each value (:data:`FEATURES` ``[offset:offset + size]``).
    """

    name: str
    offset: int
    size: int
    scale: float
    features: tuple[str, ...]


def _rule_layout() -> list[tuple[str, str, Any]]:
    """(feature name, option "section.key", how): how is None (number or switch),
    a choice string, or a list element."""
    layout: list[tuple[str, str, Any]] = []
    for section, cls in SECTION_TYPES.items():
        for f in fields(cls):
            key = f"{section}.{f.name}"
            default = getattr(cls(), f.name)
            if key in CHOICES:
                layout += [(f"rules:{key}={c}", key, c) for c in CHOICES[key]]
            elif isinstance(default, tuple):
                allowed = CODES if f.name == "viewing_spoiled_by" else REDEAL_CONDITIONS
                layout += [(f"rules:{key}+{c}", key, c) for c in allowed]
            else:
                layout.append((f"rules:{key}", key, None))
    return layout


_RULE_LAYOUT: Final = _rule_layout()
RULE_FEATURES: Final[tuple[str, ...]] = tuple(name for name, _, _ in _RULE_LAYOUT)

_ONE: Final[tuple[str, ...]] = ("",)
_HAND_SCALE, _STOCK_SCALE, _ROUNDS_SCALE = 8.0, 24.0, 12.0
KOIKOI_CAP: Final = 3
"""Koi-koi calls are counted up to this many (and divided by it)."""
_SEGMENT_SPECS: Final[tuple[tuple[str, tuple[str, ...], float], ...]] = (
    *((plane, CODES, 1.0) for plane in PLANES),
    ("own_hand_size", _ONE, _HAND_SCALE),
    ("opponent_hand_size", _ONE, _HAND_SCALE),
    ("stock_size", _ONE, _STOCK_SCALE),
    ("phase", ("play", "take", "decide"), 1.0),
    ("my_turn", _ONE, 1.0),
    ("month", tuple(str(m) for m in range(1, 13)), 1.0),
    ("i_deal", _ONE, 1.0),
    ("i_lead", _ONE, 1.0),
    ("own_score", _ONE, ROUND_SCALE),
    ("opponent_score", _ONE, ROUND_SCALE),
    ("own_koikoi", _ONE, float(KOIKOI_CAP)),  # calls, capped
    ("opponent_koikoi", _ONE, float(KOIKOI_CAP)),
    ("own_called", _ONE, ROUND_SCALE),
    ("opponent_called", _ONE, ROUND_SCALE),
    ("scored_last", ("own", "opponent", "nobody"), 1.0),
    ("match:own", _ONE, MATCH_SCALE),
    ("match:opponent", _ONE, MATCH_SCALE),
    ("match:lead", _ONE, MATCH_SCALE),
    ("match:rounds_left", _ONE, _ROUNDS_SCALE),
    ("match:last_round", _ONE, 1.0),
    ("match:rounds", _ONE, _ROUNDS_SCALE),
)
"""(name, labels, scale) of every segment but the rules, in order; a segment with
the one label "" is a single value named after the segment, the others name each
value ``"segment:label"``."""


def _layout() -> tuple[Segment, ...]:
    segments: list[Segment] = []
    offset = 0
    for name, labels, scale in _SEGMENT_SPECS:
        names = (name,) if labels == _ONE else tuple(f"{name}:{label}" for label in labels)
        segments.append(Segment(name, offset, len(names), scale, names))
        offset += len(names)
    segments.append(Segment("rules", offset, len(RULE_FEATURES), 1.0, RULE_FEATURES))
    return tuple(segments)


LAYOUT: Final[tuple[Segment, ...]] = _layout()
"""Every segment of the vector, in order: the one definition of its layout (the
batched simulator, :mod:`koikoi.kernel.batch`, writes from it too)."""
SEGMENTS: Final[Mapping[str, Segment]] = MappingProxyType({s.name: s for s in LAYOUT})
"""The segments of :data:`LAYOUT` by name."""
FEATURES: Final[tuple[str, ...]] = tuple(f for s in LAYOUT for f in s.features)
"""The name of every value of the vector, in order."""
SIZE: Final = len(FEATURES)
CARD_PLANES: Final = SEGMENTS[PLANES[-1]].offset + 48
"""Values in the card planes (they come first)."""
PLANE_OFFSETS: Final[tuple[int, ...]] = tuple(SEGMENTS[p].offset for p in PLANES)
"""The offset of each card plane, in the order of :data:`PLANES`."""
ROUND_OFFSET: Final = CARD_PLANES
RULES_OFFSET: Final = SEGMENTS["rules"].offset
ROUND_FEATURES: Final[tuple[str, ...]] = FEATURES[ROUND_OFFSET:RULES_OFFSET]
ROUND_WIDTH: Final = RULES_OFFSET - ROUND_OFFSET
"""Values in the round and match part (between the card planes and the rules)."""

# Offsets in the round part (from ROUND_OFFSET), written by encode_into.
_OWN_HAND: Final = SEGMENTS["own_hand_size"].offset - ROUND_OFFSET
_OPP_HAND: Final = SEGMENTS["opponent_hand_size"].offset - ROUND_OFFSET
_STOCK: Final = SEGMENTS["stock_size"].offset - ROUND_OFFSET
_PHASE: Final = SEGMENTS["phase"].offset - ROUND_OFFSET
_MY_TURN: Final = SEGMENTS["my_turn"].offset - ROUND_OFFSET
_MONTH: Final = SEGMENTS["month"].offset - ROUND_OFFSET
_I_DEAL: Final = SEGMENTS["i_deal"].offset - ROUND_OFFSET
_I_LEAD: Final = SEGMENTS["i_lead"].offset - ROUND_OFFSET
_OWN_SCORE: Final = SEGMENTS["own_score"].offset - ROUND_OFFSET
_OPP_SCORE: Final = SEGMENTS["opponent_score"].offset - ROUND_OFFSET
_OWN_KOIKOI: Final = SEGMENTS["own_koikoi"].offset - ROUND_OFFSET
_OPP_KOIKOI: Final = SEGMENTS["opponent_koikoi"].offset - ROUND_OFFSET
_OWN_CALLED: Final = SEGMENTS["own_called"].offset - ROUND_OFFSET
_OPP_CALLED: Final = SEGMENTS["opponent_called"].offset - ROUND_OFFSET
_SCORED_LAST: Final = SEGMENTS["scored_last"].offset - ROUND_OFFSET
_MATCH_OWN: Final = SEGMENTS["match:own"].offset - ROUND_OFFSET
_MATCH_OPP: Final = SEGMENTS["match:opponent"].offset - ROUND_OFFSET
_MATCH_LEAD: Final = SEGMENTS["match:lead"].offset - ROUND_OFFSET
_ROUNDS_LEFT: Final = SEGMENTS["match:rounds_left"].offset - ROUND_OFFSET
_LAST_ROUND: Final = SEGMENTS["match:last_round"].offset - ROUND_OFFSET
_ROUNDS: Final = SEGMENTS["match:rounds"].offset - ROUND_OFFSET
_SCALES: Final[dict[str, float]] = {
    "game.rounds": _ROUNDS_SCALE,
    "game.start_points": MATCH_SCALE,
    "koikoi.limit": 4.0,
}
"""Scales of the numeric rule options (others, yaku points included, over 10)."""


_RULE_CACHE: dict[Rules, npt.NDArray[np.float32]] = {}
_LAST: list[Any] = [None, None]


def rule_features(rules: Rules) -> npt.NDArray[np.float32]:
    """The rules part of the vector (:data:`RULE_FEATURES`), cached per rule set."""
    if rules is _LAST[0]:  # the usual case, without hashing the whole rule set
        last: npt.NDArray[np.float32] = _LAST[1]
        return last
    cached = _RULE_CACHE.get(rules)
    if cached is not None:
        _LAST[:] = [rules, cached]
    if cached is not None:
        return cached
    out = np.zeros(len(_RULE_LAYOUT), dtype=np.float32)
    for i, (_, key, how) in enumerate(_RULE_LAYOUT):
        section, name = key.split(".")
        value = getattr(getattr(rules, section), name)
        if how is None:
            out[i] = float(value) / _SCALES.get(key, 10.0)
        elif isinstance(value, tuple):
            out[i] = 1.0 if how in value else 0.0
        else:
            out[i] = 1.0 if value == how else 0.0
    if len(_RULE_CACHE) > 64:
        _RULE_CACHE.clear()
    _RULE_CACHE[rules] = out
    return out


def encode_into(view: PlayerView, out: npt.NDArray[np.float32]) -> None:
    """Write the encoding of ``view`` into ``out`` (a float32 array of :data:`SIZE`).

    Raises:
        InvalidInputError: for a spectator's view (it has no hand), or a wrong array.
    """
    me = view.player
    if me is None:
        raise InvalidInputError("a spectator's view has no information state: it holds no hand")
    if out.shape != (SIZE,) or out.dtype != np.float32:
        raise InvalidInputError(
            f"the output must be a float32 array of shape ({SIZE},), not {out.dtype} {out.shape}"
        )
    opp = 1 - me
    drawn = (1 << view.drawn) if view.drawn >= 0 else 0
    unseen = FULL_DECK & ~(view.hand | view.field | view.piles[0] | view.piles[1] | drawn)
    masks = np.array(
        (
            view.hand,
            view.field,
            view.piles[me],
            view.piles[opp],
            unseen,
            drawn,
            view.declined[me],
            view.declined[opp],
        ),
        dtype="<u8",
    )
    bits = np.unpackbits(masks.view(np.uint8), bitorder="little").reshape(len(PLANES), 64)
    out[:CARD_PLANES] = bits[:, :48].reshape(-1)
    r = [0.0] * ROUND_WIDTH  # filled as a list, written once (fast)
    r[_OWN_HAND] = view.hand_counts[me] / _HAND_SCALE
    r[_OPP_HAND] = view.hand_counts[opp] / _HAND_SCALE
    r[_STOCK] = view.stock_count / _STOCK_SCALE
    live = view.phase is not Phase.OVER
    if live:
        r[_PHASE + int(view.phase)] = 1.0
    r[_MY_TURN] = 1.0 if live and view.current == me else 0.0
    r[_MONTH + view.month - 1] = 1.0
    r[_I_DEAL] = 1.0 if view.dealer == me else 0.0
    r[_I_LEAD] = 1.0 if view.leader == me else 0.0
    r[_OWN_SCORE] = view.round_scores[me] / ROUND_SCALE
    r[_OPP_SCORE] = view.round_scores[opp] / ROUND_SCALE
    r[_OWN_KOIKOI] = min(view.koikoi_calls[me], KOIKOI_CAP) / KOIKOI_CAP
    r[_OPP_KOIKOI] = min(view.koikoi_calls[opp], KOIKOI_CAP) / KOIKOI_CAP
    r[_OWN_CALLED] = view.called_scores[me] / ROUND_SCALE
    r[_OPP_CALLED] = view.called_scores[opp] / ROUND_SCALE
    last = view.last_improver
    r[_SCORED_LAST + (0 if last == me else 1 if last == opp else 2)] = 1.0
    own, other = view.match_scores[me], view.match_scores[opp]
    r[_MATCH_OWN] = own / MATCH_SCALE
    r[_MATCH_OPP] = other / MATCH_SCALE
    r[_MATCH_LEAD] = (own - other) / MATCH_SCALE
    left = max(view.rounds - view.round_number, 0)
    r[_ROUNDS_LEFT] = left / _ROUNDS_SCALE
    r[_LAST_ROUND] = 1.0 if left == 0 else 0.0
    r[_ROUNDS] = view.rounds / _ROUNDS_SCALE
    out[ROUND_OFFSET:RULES_OFFSET] = r
    out[RULES_OFFSET:] = rule_features(view.rules)


def encode(view: PlayerView) -> npt.NDArray[np.float32]:
    """The encoding of ``view`` as a new float32 array of :data:`SIZE` values."""
    out = np.empty(SIZE, dtype=np.float32)
    encode_into(view, out)
    return out


def action_mask(view: PlayerView) -> npt.NDArray[np.int8]:
    """1 for each legal action id of ``view`` (:data:`~koikoi.game.actions.NUM_ACTIONS` values)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if view.legal_ids:
        mask[list(view.legal_ids)] = 1
    return mask


def info_state_string(view: PlayerView) -> str:
    """A string that identifies what the player knows: the view's position text.

    Two views with the same string offer the same choices and lead to the same
    futures for the player; the history before the position is summed up in it
    (piles, declined months, koi-koi calls), not listed move by move.
    """
    from koikoi.game.positions import position

    return position(view)
