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

:data:`FEATURES` names every value (``"hand:1L"``, ``"phase:take"``,
``"rules:points.goko"``, ...). The action mask is over the fixed action ids of
:mod:`koikoi.game.actions`. The information-state string is the view's position
(:mod:`koikoi.game.positions`): everything the player knows that play depends on.

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

from dataclasses import fields
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
    "PLANES",
    "SIZE",
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
CARD_PLANES: Final = len(PLANES) * 48
MATCH_SCALE: Final = 50.0
"""Match scores and the lead are divided by this."""
ROUND_SCALE: Final = 10.0
"""Round yaku totals and called scores are divided by this."""

_SCALES: Final[dict[str, float]] = {
    "game.rounds": 12.0,
    "game.start_points": MATCH_SCALE,
    "koikoi.limit": 4.0,
}
"""Scales of the numeric rule options (others, yaku points included, over 10)."""


def _round_features() -> list[str]:
    names = ["own_hand_size", "opponent_hand_size", "stock_size"]
    names += [f"phase:{p}" for p in ("play", "take", "decide")]
    names += ["my_turn"]
    names += [f"month:{m}" for m in range(1, 13)]
    names += ["i_deal", "i_lead"]
    names += ["own_score", "opponent_score", "own_koikoi", "opponent_koikoi"]
    names += ["own_called", "opponent_called"]
    names += ["scored_last:own", "scored_last:opponent", "scored_last:nobody"]
    names += ["match:own", "match:opponent", "match:lead"]
    names += ["match:rounds_left", "match:last_round", "match:rounds"]
    return names


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
ROUND_FEATURES: Final[tuple[str, ...]] = tuple(_round_features())
RULE_FEATURES: Final[tuple[str, ...]] = tuple(name for name, _, _ in _RULE_LAYOUT)
FEATURES: Final[tuple[str, ...]] = (
    tuple(f"{plane}:{CODES[c]}" for plane in PLANES for c in range(48))
    + ROUND_FEATURES
    + RULE_FEATURES
)
"""The name of every value of the vector, in order."""
SIZE: Final = len(FEATURES)
ROUND_OFFSET: Final = CARD_PLANES
RULES_OFFSET: Final = CARD_PLANES + len(ROUND_FEATURES)

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
    r = [0.0] * len(ROUND_FEATURES)  # filled as a list, written once (fast)
    r[0] = view.hand_counts[me] / 8.0
    r[1] = view.hand_counts[opp] / 8.0
    r[2] = view.stock_count / 24.0
    if view.phase is not Phase.OVER:
        r[3 + int(view.phase)] = 1.0
    r[6] = 1.0 if view.current == me and view.phase is not Phase.OVER else 0.0
    r[7 + view.month - 1] = 1.0
    r[19] = 1.0 if view.dealer == me else 0.0
    r[20] = 1.0 if view.leader == me else 0.0
    r[21] = view.round_scores[me] / ROUND_SCALE
    r[22] = view.round_scores[opp] / ROUND_SCALE
    r[23] = min(view.koikoi_calls[me], 3) / 3.0
    r[24] = min(view.koikoi_calls[opp], 3) / 3.0
    r[25] = view.called_scores[me] / ROUND_SCALE
    r[26] = view.called_scores[opp] / ROUND_SCALE
    last = view.last_improver
    r[27 if last == me else 28 if last == opp else 29] = 1.0
    own, other = view.match_scores[me], view.match_scores[opp]
    r[30] = own / MATCH_SCALE
    r[31] = other / MATCH_SCALE
    r[32] = (own - other) / MATCH_SCALE
    left = max(view.rounds - view.round_number, 0)
    r[33] = left / 12.0
    r[34] = 1.0 if left == 0 else 0.0
    r[35] = view.rounds / 12.0
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
