"""The rollout policies' values and tuning constants, in plain Python.

The compiled kernel (:mod:`koikoi.kernel._compiled`) builds its tables from these
and :class:`~koikoi.agents.base.GreedyAgent` scores with :func:`greedy_value`, so
each number is written once. Importing this module does not import numba.

>>> from koikoi.game.cards import parse_card
>>> card_value(parse_card("1L")), card_value(parse_card("9A")), card_value(parse_card("2P1"))
(20, 10, 1)
"""

from __future__ import annotations

from typing import Final

from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE
from koikoi.game.cards import KINDS, MONTH_MASKS, Kind

__all__ = [
    "BOLD_HAND",
    "BOLD_POINTS",
    "CARD_VALUES",
    "PROGRESS_WEIGHT",
    "PROGRESS_YAKU",
    "SOFT_CAPTURE_BONUS",
    "SOFT_TEMPERATURE",
    "YAKU_WEIGHT",
    "card_value",
    "greedy_value",
]

_KIND_VALUE: Final = {Kind.BRIGHT: 20, Kind.ANIMAL: 10, Kind.RIBBON: 5, Kind.PLAIN: 1}

CARD_VALUES: Final[tuple[int, ...]] = tuple(_KIND_VALUE[KINDS[c]] for c in range(48))
"""The greedy value of each card by its kind: Bright 20, Animal 10, Ribbon 5, Plain 1."""

YAKU_WEIGHT: Final = 15
"""The ``yaku`` policy's worth of one yaku point, on the greedy card-value scale."""
PROGRESS_WEIGHT: Final = 8
"""The ``tactical`` policy's worth of one yaku point fully collected, on the progress scale."""
PROGRESS_YAKU: Final[tuple[str, ...]] = (
    "sanko",
    "inoshikacho",
    "tane",
    "akatan",
    "aotan",
    "tanzaku",
    "kasu",
    "hanami",
    "tsukimi",
)
"""The yaku whose progress the ``tactical`` and ``bold`` policies weigh (their cards:
:func:`koikoi.game.tables.yaku_cards`)."""
BOLD_HAND: Final = 2
"""The ``bold`` policy calls koi-koi only with at least this many cards left in hand."""
BOLD_POINTS: Final = 4
"""... and with a yaku total of at most this many points."""
SOFT_TEMPERATURE: Final = 16.0
"""The ``soft`` policy's temperature, in greedy card-value points (the default of
:class:`koikoi.agents.inference.PlayModel`)."""
SOFT_CAPTURE_BONUS: Final = 30
"""... and its bonus for any capture (the play model's default too)."""


def card_value(card: int) -> int:
    """A simple value of a card by its kind: Bright 20, Animal 10, Ribbon 5, Plain 1."""
    return CARD_VALUES[card]


def greedy_value(field: int, action_id: int) -> int:
    """The ``greedy`` policy's value of a card action on ``field``: the card value it captures.

    A take of the drawn card is worth the target; a play onto a chosen target,
    both cards; a play that matches, the card and every field card of its month
    (all three are taken when three lie there); laying a card without a capture,
    minus its value (the least valuable card is best given away); a discard, 0.
    Koi-koi and stop are not card actions and have no value here.

    >>> from koikoi.game.cards import parse_cards
    >>> greedy_value(parse_cards("1P1"), 0)  # 1L onto 1P1
    21
    """
    if action_id >= TAKE_BASE:
        return CARD_VALUES[action_id - TAKE_BASE]
    if action_id >= DISCARD_BASE:
        return 0
    if action_id >= PLAY_TARGET_BASE:
        card, target = divmod(action_id - PLAY_TARGET_BASE, 48)
        return CARD_VALUES[card] + CARD_VALUES[target]
    month_cards = field & MONTH_MASKS[action_id // 4]
    if not month_cards:
        return -CARD_VALUES[action_id]
    total = CARD_VALUES[action_id]
    while month_cards:
        low = month_cards & -month_cards
        total += CARD_VALUES[low.bit_length() - 1]
        month_cards ^= low
    return total
