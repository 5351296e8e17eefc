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

from koikoi.game.cards import parse_card
from koikoi.game.rules import Rules
from koikoi.game.scoring import YAKU_NAMES, YAKU_ORDER
from koikoi.game.tables import NON_RAIN_BRIGHTS, RAIN_MAN, SAKE_CUP, yaku_cards
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
    spoilers = 0
    for code in y.viewing_spoiled_by:
        spoilers |= 1 << parse_card(code)
    made = {row.name: row for row in yaku_cards(rules, month)}
    rows: list[YakuProgress] = []
    for name in YAKU_ORDER:
        pts = points.get(name, 0)
        target = made.get(name)
        if not pts or target is None:
            continue
        if target.need < target.cards.bit_count():  # any `need` of the cards
            row = _count(name, target.cards, target.need, own, taken, pts)
        else:
            row = _fixed(name, target.cards, own, taken, pts)
        if name == "ame_shiko":  # the Rain Man and three other Brights
            have = min((own & NON_RAIN_BRIGHTS).bit_count(), 3) + (1 if own & RAIN_MAN else 0)
            possible = not taken & RAIN_MAN and (NON_RAIN_BRIGHTS & ~taken).bit_count() >= 3
            row = YakuProgress(name, have, 4, pts, possible)
        elif name == "kasu" and y.sake_cup == "both_double_plain" and own & SAKE_CUP:
            have = row.have + 1  # the Sake cup counts as two Plains
            row = YakuProgress(name, have, row.need, pts, row.possible or have >= row.need)
        elif name in ("hanami", "tsukimi") and own & spoilers:
            row = YakuProgress(name, row.have, row.need, pts, False)
        rows.append(row)
    return rows
