"""The named card sets of the yaku, and which cards make which yaku.

The one home of these facts: :mod:`koikoi.game.scoring`, the agents, the progress
display and the compiled kernel all import them from here. The kinds
(:data:`~koikoi.game.cards.BRIGHTS` ...) and the ribbon sets
(:data:`~koikoi.game.cards.AKATAN`, :data:`~koikoi.game.cards.AOTAN`) stay in
:mod:`koikoi.game.cards`.

Card sets are 48-bit masks (bit ``i`` is card ``i``); :data:`LIGHTNING` is a card id.

>>> from koikoi.game.cards import format_cards
>>> format_cards(INO_SHIKA_CHO), format_cards(HANAMI)
('6A 7A 10A', '3L 9A')
>>> from koikoi.game.rules import get_rules
>>> [(y.name, y.need) for y in yaku_cards(get_rules("nintendo"), 1)][:3]
[('goko', 5), ('shiko', 4), ('ame_shiko', 4)]
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from koikoi.game.cards import AKATAN, ANIMALS, AOTAN, BRIGHTS, MONTH_MASKS, PLAINS, RIBBONS, Card
from koikoi.game.errors import InvalidInputError

if TYPE_CHECKING:
    from koikoi.game.rules import Rules

__all__ = [
    "ANIMALS_NO_SAKE",
    "BRIGHT_YAKU",
    "CURTAIN",
    "DOUBLE_RIBBONS",
    "HANAMI",
    "INO_SHIKA_CHO",
    "LIGHTNING",
    "MOON",
    "NON_RAIN_BRIGHTS",
    "RAIN_MAN",
    "SAKE_CUP",
    "TSUKIMI",
    "VIEW_CARDS",
    "WILLOWS",
    "YakuCards",
    "yaku_cards",
]

LIGHTNING: Final[int] = int(Card.WILLOW_LIGHTNING)
"""The Lightning card's id (11P, wild under ``play.wild_lightning``)."""
RAIN_MAN: Final[int] = 1 << Card.WILLOW_RAIN_MAN
"""The Rain Man (11L), the Bright that Shiko and most Sanko leave out."""
CURTAIN: Final[int] = 1 << Card.CHERRY_CURTAIN
"""The Curtain (3L) of Hanami."""
MOON: Final[int] = 1 << Card.SUSUKI_MOON
"""The Moon (8L) of Tsukimi."""
SAKE_CUP: Final[int] = 1 << Card.CHRYSANTHEMUM_SAKE_CUP
"""The Sake cup (9A): an Animal, both viewing yaku, and a Plain under ``yaku.sake_cup``."""
INO_SHIKA_CHO: Final[int] = (
    (1 << Card.PEONY_BUTTERFLIES) | (1 << Card.CLOVER_BOAR) | (1 << Card.MAPLE_DEER)
)
"""Boar, Deer and Butterflies (7A, 10A, 6A): Ino-Shika-Chō."""
NON_RAIN_BRIGHTS: Final[int] = BRIGHTS & ~RAIN_MAN
"""The four Brights of Shiko."""
ANIMALS_NO_SAKE: Final[int] = ANIMALS & ~SAKE_CUP
"""The Animals but the Sake cup."""
DOUBLE_RIBBONS: Final[int] = AKATAN | AOTAN
"""The six ribbons of Akatan and Aotan together."""
HANAMI: Final[int] = CURTAIN | SAKE_CUP
"""Hanami's cards: the Curtain and the Sake cup."""
TSUKIMI: Final[int] = MOON | SAKE_CUP
"""Tsukimi's cards: the Moon and the Sake cup."""
VIEW_CARDS: Final[int] = CURTAIN | MOON
"""The Brights of the viewing yaku."""
WILLOWS: Final[int] = MONTH_MASKS[10]
"""The four cards of November (the willow), which a wild Lightning captures."""

BRIGHT_YAKU: Final[tuple[str, ...]] = ("goko", "shiko", "ame_shiko", "sanko")
"""The Bright yaku: alternatives, of which only the best one scores."""


@dataclass(frozen=True, slots=True)
class YakuCards:
    """A yaku made by collecting ``need`` of the cards ``cards``.

    For Ame-shiko (the Rain Man and three other Brights) ``cards`` is every
    Bright and ``need`` 4, which counts the Brights it needs but not which ones.
    """

    name: str
    cards: int
    need: int


@functools.lru_cache(maxsize=128)
def yaku_cards(rules: Rules, month: int) -> tuple[YakuCards, ...]:
    """The yaku made by collecting cards in play, in scoring order, under ``rules``.

    Every such yaku of the game is listed, whatever its points under ``rules``
    (read those from ``rules.points``); what the rules change is the cards:
    Sanko's pool (``yaku.sanko_with_rainman``), the Kasu pool (the Sake cup
    counts unless ``yaku.sake_cup`` is ``"animal"``), and the month's four cards
    of Tsukifuda and, when ``instant.teshi_collected``, of Teshi. Instant hands
    dealt at the start (Teshi otherwise, Kuttsuki) are not made by collecting.

    Args:
        rules: the active rules.
        month: the round's month, 1 to 12.

    Raises:
        InvalidInputError: if ``month`` is not 1 to 12.

    >>> from koikoi.game.rules import get_rules
    >>> kasu = yaku_cards(get_rules("nintendo"), 1)[10]
    >>> kasu.name, kasu.need, bool(kasu.cards & SAKE_CUP)
    ('kasu', 10, True)
    """
    if not 1 <= month <= 12:
        raise InvalidInputError(f"month must be 1 to 12, not {month!r}")
    y = rules.yaku
    quad = MONTH_MASKS[month - 1]
    rows = [
        YakuCards("goko", BRIGHTS, 5),
        YakuCards("shiko", NON_RAIN_BRIGHTS, 4),
        YakuCards("ame_shiko", BRIGHTS, 4),
        YakuCards("sanko", BRIGHTS if y.sanko_with_rainman else NON_RAIN_BRIGHTS, 3),
        YakuCards("inoshikacho", INO_SHIKA_CHO, 3),
        YakuCards("tane", ANIMALS, 5),
        YakuCards("akatan", AKATAN, 3),
        YakuCards("aotan", AOTAN, 3),
        YakuCards("akatan_aotan", DOUBLE_RIBBONS, 6),
        YakuCards("tanzaku", RIBBONS, 5),
        YakuCards("kasu", PLAINS | (SAKE_CUP if y.sake_cup != "animal" else 0), 10),
        YakuCards("hanami", HANAMI, 2),
        YakuCards("tsukimi", TSUKIMI, 2),
        YakuCards("tsukifuda", quad, 4),
    ]
    if rules.instant.teshi_collected:
        rows.append(YakuCards("teshi", quad, 4))
    return tuple(rows)
