"""How far each player is toward each yaku of the active rules.

Pure functions on capture piles (card sets), for both games' tables and the
terminal game's help screen (the web game gets them in its ``state``
messages). Progress counts the cards a yaku needs (``Inoshikacho 2/3``) and says
whether the yaku is still possible (the opponent has not captured a card it
needs; enough cards of the kind are left).

>>> from koikoi.game.cards import parse_cards
>>> from koikoi.game.rules import get_rules
>>> rows = yaku_progress(get_rules("nintendo"), parse_cards("7A 10A"), 0, month=1)
>>> [row.describe() for row in rows if row.name == "inoshikacho"]
['Inoshikacho 2/3']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from koikoi.game.cards import (
    AKATAN,
    ANIMALS,
    AOTAN,
    BRIGHTS,
    MONTH_MASKS,
    PLAINS,
    RIBBONS,
    Card,
    parse_card,
)
from koikoi.game.rules import Rules
from koikoi.game.scoring import YAKU_NAMES, YAKU_ORDER
from koikoi.i18n import language, td

__all__ = ["YAKU_LABELS", "YakuProgress", "yaku_label", "yaku_progress"]

YAKU_LABELS: Final[dict[str, str]] = {
    "goko": "Goko",
    "shiko": "Shiko",
    "ame_shiko": "Ame-shiko",
    "sanko": "Sanko",
    "inoshikacho": "Inoshikacho",
    "tane": "Tane",
    "akatan": "Akatan",
    "aotan": "Aotan",
    "akatan_aotan": "Aka+Aotan",
    "tanzaku": "Tanzaku",
    "kasu": "Kasu",
    "hanami": "Hanami",
    "tsukimi": "Tsukimi",
    "tsukifuda": "Tsukifuda",
    "teshi": "Teshi",
    "kuttsuki": "Kuttsuki",
}
"""Short romanised yaku names for the table."""


def yaku_label(name: str) -> str:
    """A yaku's short name: :data:`YAKU_LABELS` in English, the Japanese name in Japanese."""
    if language() == "en" or name not in YAKU_NAMES:
        return YAKU_LABELS.get(name, name)
    return td(YAKU_NAMES[name][0])


_RAIN: Final = 1 << Card.WILLOW_RAIN_MAN
_SAKE: Final = 1 << Card.CHRYSANTHEMUM_SAKE_CUP
_NON_RAIN: Final = BRIGHTS & ~_RAIN
_INOSHIKACHO: Final = (
    (1 << Card.PEONY_BUTTERFLIES) | (1 << Card.CLOVER_BOAR) | (1 << Card.MAPLE_DEER)
)
_HANAMI: Final = (1 << Card.CHERRY_CURTAIN) | _SAKE
_TSUKIMI: Final = (1 << Card.SUSUKI_MOON) | _SAKE


@dataclass(frozen=True, slots=True)
class YakuProgress:
    """One yaku: ``have`` of the ``need`` cards, whether it holds and can still be made."""

    name: str
    have: int
    need: int
    points: int
    possible: bool

    @property
    def label(self) -> str:
        return yaku_label(self.name)

    @property
    def done(self) -> bool:
        return self.have >= self.need

    def describe(self) -> str:
        """``"Inoshikacho 2/3"``; a held yaku gets a tick, an impossible one a cross."""
        mark = " ✓" if self.done else ("" if self.possible else " ✗")
        return f"{self.label} {min(self.have, self.need)}/{self.need}{mark}"


def _fixed(name: str, need_mask: int, own: int, taken: int, points: int) -> YakuProgress:
    """A yaku that needs every card of ``need_mask``."""
    need = need_mask.bit_count()
    return YakuProgress(name, (own & need_mask).bit_count(), need, points, not taken & need_mask)


def _count(name: str, pool: int, need: int, own: int, taken: int, points: int) -> YakuProgress:
    """A yaku that needs ``need`` cards out of ``pool``."""
    have = (own & pool).bit_count()
    left = (pool & ~taken).bit_count()
    return YakuProgress(name, have, need, points, left >= need)


def yaku_progress(rules: Rules, own: int, opponent: int, *, month: int) -> list[YakuProgress]:
    """Progress of a capture pile ``own`` toward every yaku the rules score in play.

    Args:
        rules: the active rules (yaku with 0 points are left out).
        own: the player's capture pile.
        opponent: the opponent's capture pile (cards nobody else can get).
        month: the round's month (for tsukifuda and collected teshi).

    Instant hands (teshi, kuttsuki) are left out, except teshi when
    ``instant.teshi_collected`` lets it score in play.
    """
    points = rules.yaku_points()
    y = rules.yaku
    taken = opponent
    rows: list[YakuProgress] = []
    sake_plain = y.sake_cup != "animal"
    spoilers = 0
    for code in y.viewing_spoiled_by:
        spoilers |= 1 << parse_card(code)
    for name in YAKU_ORDER:
        pts = points.get(name, 0)
        if not pts:
            continue
        if name == "goko":
            rows.append(_fixed(name, BRIGHTS, own, taken, pts))
        elif name == "shiko":
            rows.append(_fixed(name, _NON_RAIN, own, taken, pts))
        elif name == "ame_shiko":
            have = min((own & _NON_RAIN).bit_count(), 3) + (1 if own & _RAIN else 0)
            possible = not taken & _RAIN and (_NON_RAIN & ~taken).bit_count() >= 3
            rows.append(YakuProgress(name, have, 4, pts, possible))
        elif name == "sanko":
            pool = BRIGHTS if y.sanko_with_rainman else _NON_RAIN
            rows.append(_count(name, pool, 3, own, taken, pts))
        elif name == "inoshikacho":
            rows.append(_fixed(name, _INOSHIKACHO, own, taken, pts))
        elif name == "tane":
            rows.append(_count(name, ANIMALS, 5, own, taken, pts))
        elif name == "akatan":
            rows.append(_fixed(name, AKATAN, own, taken, pts))
        elif name == "aotan":
            rows.append(_fixed(name, AOTAN, own, taken, pts))
        elif name == "akatan_aotan":
            rows.append(_fixed(name, AKATAN | AOTAN, own, taken, pts))
        elif name == "tanzaku":
            rows.append(_count(name, RIBBONS, 5, own, taken, pts))
        elif name == "kasu":
            pool = PLAINS | (_SAKE if sake_plain else 0)
            extra = 1 if y.sake_cup == "both_double_plain" and own & _SAKE else 0
            row = _count(name, pool, 10, own, taken, pts)
            rows.append(
                YakuProgress(
                    name, row.have + extra, 10, pts, row.possible or row.have + extra >= 10
                )
            )
        elif name in ("hanami", "tsukimi"):
            mask = _HANAMI if name == "hanami" else _TSUKIMI
            row = _fixed(name, mask, own, taken, pts)
            if own & spoilers:
                row = YakuProgress(name, row.have, row.need, pts, False)
            rows.append(row)
        elif name in ("tsukifuda", "teshi"):
            if name == "teshi" and not rules.instant.teshi_collected:
                continue
            rows.append(_fixed(name, MONTH_MASKS[month - 1], own, taken, pts))
    return rows
