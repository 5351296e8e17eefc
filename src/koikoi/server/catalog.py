"""Names and card art the web client needs, from the core modules (no I/O).

:func:`card_catalog` lists the 48 cards with their English and Japanese names
(``koikoi.game.cards.ENGLISH_NAMES``, ``MONTH_NAMES_JA``) and an accessible label.
:func:`card_image` returns one card's SVG from :mod:`koikoi.features.svg` (the
same art as everywhere else), with or without its code badge (the corner mark:
month number and kind letter); :func:`sprite_sheet` the same for all 49 symbols.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from koikoi.features import svg
from koikoi.features.rules_help import YAKU_NEEDS, YAKU_NEEDS_WHEN
from koikoi.game.cards import CODES, ENGLISH_NAMES, KINDS, MONTH_NAMES, MONTH_NAMES_JA, MONTHS, Kind
from koikoi.game.scoring import YAKU_NAMES, YAKU_ORDER

__all__ = [
    "CARD_NAMES_JA",
    "KIND_NAMES",
    "card_catalog",
    "card_image",
    "card_label",
    "yaku_catalog",
]

KIND_NAMES: Final[dict[Kind, tuple[str, str]]] = {
    Kind.BRIGHT: ("Bright", "光 hikari"),
    Kind.ANIMAL: ("Animal", "タネ tane"),
    Kind.RIBBON: ("Ribbon", "短冊 tanzaku"),
    Kind.PLAIN: ("Plain", "カス kasu"),
}

# Japanese names of the named cards.
CARD_NAMES_JA: Final[dict[str, str]] = {
    "1L": "松に鶴",
    "3L": "桜に幕",
    "8L": "芒に月",
    "11L": "柳に小野道風",
    "12L": "桐に鳳凰",
    "2A": "梅に鶯",
    "4A": "藤に不如帰",
    "5A": "菖蒲に八橋",
    "6A": "牡丹に蝶",
    "7A": "萩に猪",
    "8A": "芒に雁",
    "9A": "菊に盃",
    "10A": "紅葉に鹿",
    "11A": "柳に燕",
    "11P": "柳のカス",
}

_CODE_RE: Final = re.compile(r"(1[0-2]|[1-9])[LARP][1-3]?")


def card_label(index: int) -> str:
    """Accessible name: English, then Japanese.

    E.g. ``Pine - Crane · 松に鶴 · 松 matsu · Bright 光 hikari (1L)``.
    """
    code = CODES[index]
    kind_en, kind_ja = KIND_NAMES[KINDS[index]]
    parts = [ENGLISH_NAMES[index]]
    if code in CARD_NAMES_JA:
        parts.append(CARD_NAMES_JA[code])
    parts.append(MONTH_NAMES_JA[MONTHS[index] - 1])
    parts.append(f"{kind_en} {kind_ja}")
    return f"{' · '.join(parts)} ({code})"


@functools.cache
def card_catalog() -> list[dict[str, Any]]:
    """The 48 cards in card order, with names and labels for the client."""
    out = []
    for i, code in enumerate(CODES):
        month = MONTHS[i]
        kind_en, kind_ja = KIND_NAMES[KINDS[i]]
        out.append(
            {
                "index": i,
                "code": code,
                "month": month,
                "kind": KINDS[i].letter,
                "kind_en": kind_en,
                "kind_ja": kind_ja,
                "name_en": ENGLISH_NAMES[i],
                "name_ja": CARD_NAMES_JA.get(code, ""),
                "month_en": MONTH_NAMES[month - 1],
                "month_ja": MONTH_NAMES_JA[month - 1],
                "label": card_label(i),
            }
        )
    return out


def yaku_catalog() -> dict[str, list[str]]:
    """Yaku key -> [English, Japanese, what it needs], in display order.

    What it needs is :data:`koikoi.features.rules_help.YAKU_NEEDS`, where ``{extra}``
    stands for ``yaku.extra`` (the page drops the bracket when it is 0). A yaku
    of :data:`~koikoi.features.rules_help.YAKU_NEEDS_WHEN` has two more entries: the
    true/false option (``"yaku.sanko_with_rainman"``) and what it needs when that
    option is true.
    """
    return {
        key: [*YAKU_NAMES[key], YAKU_NEEDS[key], *YAKU_NEEDS_WHEN.get(key, ())]
        for key in YAKU_ORDER
    }


def art_source() -> str:
    """Where the card art comes from (:mod:`koikoi.features.svg`)."""
    return "koikoi.features.svg"


@functools.lru_cache(maxsize=128)
def card_image(name: str, width: int = 100, *, badge: bool = True) -> str | None:
    """SVG text of card ``name`` (a card code as in CODES, or ``"back"``); None if unknown.

    Args:
        name: a card code (``"9A"``) or ``"back"``.
        width: width in pixels.
        badge: draw the code badge (month number and kind letter) in the corner.
    """
    if name == "back":
        return svg.card_back_svg(width=width)
    if not _CODE_RE.fullmatch(name) or name not in CODES:
        return None
    return svg.card_svg(name, width=width, mark_kind=badge)


@functools.cache
def sprite_sheet(*, badge: bool = True) -> str:
    """The 48 card symbols (``card-1L`` ...) and ``card-back`` in one SVG document.

    Args:
        badge: draw each card's code badge (month number and kind letter).
    """
    return svg.sprite_sheet(mark_kind=badge)
