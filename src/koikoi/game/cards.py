"""The 48 Hanafuda cards, their codes, and fast card sets.

A card is a :class:`Card` (an ``IntEnum`` 0..47, ordered by month then by the
order of docs/rules.md). A *card set* is a plain ``int`` used as a 48-bit mask:
bit ``c`` is set when card ``c`` is in the set. Masks make captures, matches
and yaku checks a handful of integer operations.

>>> parse_card("1l")
Card.PINE_CRANE
>>> parse_card("rainman").code
'11L'
>>> format_cards(parse_cards("3L 9A"))
'3L 9A'
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import Final

from koikoi.game.errors import InvalidInputError

__all__ = [
    "AKATAN",
    "ALL_CARDS",
    "ANIMALS",
    "AOTAN",
    "BRIGHTS",
    "FULL_DECK",
    "KIND_MASKS",
    "MONTH_MASKS",
    "PLAINS",
    "RIBBONS",
    "Card",
    "Kind",
    "card_list",
    "cards_of",
    "format_cards",
    "mask_of",
    "month_mask",
    "parse_card",
    "parse_cards",
]


class Kind(enum.IntEnum):
    """Card kind, ordered as in the first-dealer draw (Bright beats Animal ...)."""

    BRIGHT = 3
    ANIMAL = 2
    RIBBON = 1
    PLAIN = 0

    @property
    def letter(self) -> str:
        """The code letter: L, A, R or P."""
        return "PRAL"[self.value]

    @property
    def label(self) -> str:
        """English name of the kind, plural (as used for capture-pile groups)."""
        return ("Plains", "Ribbons", "Animals", "Brights")[self.value]


class Card(enum.IntEnum):
    """One of the 48 cards. ``Card.PINE_CRANE.code == "1L"``."""

    PINE_CRANE = 0
    PINE_RIBBON = 1
    PINE_PLAIN_1 = 2
    PINE_PLAIN_2 = 3
    PLUM_WARBLER = 4
    PLUM_RIBBON = 5
    PLUM_PLAIN_1 = 6
    PLUM_PLAIN_2 = 7
    CHERRY_CURTAIN = 8
    CHERRY_RIBBON = 9
    CHERRY_PLAIN_1 = 10
    CHERRY_PLAIN_2 = 11
    WISTERIA_CUCKOO = 12
    WISTERIA_RIBBON = 13
    WISTERIA_PLAIN_1 = 14
    WISTERIA_PLAIN_2 = 15
    IRIS_BRIDGE = 16
    IRIS_RIBBON = 17
    IRIS_PLAIN_1 = 18
    IRIS_PLAIN_2 = 19
    PEONY_BUTTERFLIES = 20
    PEONY_RIBBON = 21
    PEONY_PLAIN_1 = 22
    PEONY_PLAIN_2 = 23
    CLOVER_BOAR = 24
    CLOVER_RIBBON = 25
    CLOVER_PLAIN_1 = 26
    CLOVER_PLAIN_2 = 27
    SUSUKI_MOON = 28
    SUSUKI_GEESE = 29
    SUSUKI_PLAIN_1 = 30
    SUSUKI_PLAIN_2 = 31
    CHRYSANTHEMUM_SAKE_CUP = 32
    CHRYSANTHEMUM_RIBBON = 33
    CHRYSANTHEMUM_PLAIN_1 = 34
    CHRYSANTHEMUM_PLAIN_2 = 35
    MAPLE_DEER = 36
    MAPLE_RIBBON = 37
    MAPLE_PLAIN_1 = 38
    MAPLE_PLAIN_2 = 39
    WILLOW_RAIN_MAN = 40
    WILLOW_SWALLOW = 41
    WILLOW_RIBBON = 42
    WILLOW_LIGHTNING = 43
    PAULOWNIA_PHOENIX = 44
    PAULOWNIA_PLAIN_1 = 45
    PAULOWNIA_PLAIN_2 = 46
    PAULOWNIA_PLAIN_3 = 47

    def __repr__(self) -> str:
        return f"Card.{self.name}"

    def __str__(self) -> str:
        return CODES[self]

    @property
    def code(self) -> str:
        """The project's card code, e.g. ``"11L"``."""
        return CODES[self]

    @property
    def month(self) -> int:
        """Month 1..12."""
        return MONTHS[self]

    @property
    def kind(self) -> Kind:
        """Bright, Animal, Ribbon or Plain (the Lightning 11P is a Plain)."""
        return KINDS[self]

    @property
    def bit(self) -> int:
        """This card as a one-card set."""
        return 1 << self.value

    @property
    def name_en(self) -> str:
        """English name, e.g. ``"Pine - Crane"``."""
        return ENGLISH_NAMES[self]


# Codes in card order. Plains of a month carry a number when there are several.
CODES: Final[tuple[str, ...]] = (
    "1L", "1R", "1P1", "1P2",
    "2A", "2R", "2P1", "2P2",
    "3L", "3R", "3P1", "3P2",
    "4A", "4R", "4P1", "4P2",
    "5A", "5R", "5P1", "5P2",
    "6A", "6R", "6P1", "6P2",
    "7A", "7R", "7P1", "7P2",
    "8L", "8A", "8P1", "8P2",
    "9A", "9R", "9P1", "9P2",
    "10A", "10R", "10P1", "10P2",
    "11L", "11A", "11R", "11P",
    "12L", "12P1", "12P2", "12P3",
)  # fmt: skip

MONTHS: Final[tuple[int, ...]] = tuple(i // 4 + 1 for i in range(48))

_KIND_BY_LETTER: Final = {"L": Kind.BRIGHT, "A": Kind.ANIMAL, "R": Kind.RIBBON, "P": Kind.PLAIN}
KINDS: Final[tuple[Kind, ...]] = tuple(
    _KIND_BY_LETTER[code[len(str(MONTHS[i]))]] for i, code in enumerate(CODES)
)

MONTH_NAMES: Final[tuple[str, ...]] = (
    "Pine", "Plum", "Cherry", "Wisteria", "Iris", "Peony",
    "Bush clover", "Susuki grass", "Chrysanthemum", "Maple", "Willow", "Paulownia",
)  # fmt: skip
MONTH_NAMES_JA: Final[tuple[str, ...]] = (
    "松 matsu", "梅 ume", "桜 sakura", "藤 fuji", "菖蒲 ayame", "牡丹 botan",
    "萩 hagi", "芒 susuki", "菊 kiku", "紅葉 momiji", "柳 yanagi", "桐 kiri",
)  # fmt: skip

# Names accepted by the parser besides the codes (docs/rules.md).
CARD_NAMES: Final[dict[str, Card]] = {
    "crane": Card.PINE_CRANE,
    "curtain": Card.CHERRY_CURTAIN,
    "moon": Card.SUSUKI_MOON,
    "rainman": Card.WILLOW_RAIN_MAN,
    "phoenix": Card.PAULOWNIA_PHOENIX,
    "warbler": Card.PLUM_WARBLER,
    "cuckoo": Card.WISTERIA_CUCKOO,
    "bridge": Card.IRIS_BRIDGE,
    "butterflies": Card.PEONY_BUTTERFLIES,
    "boar": Card.CLOVER_BOAR,
    "geese": Card.SUSUKI_GEESE,
    "sake": Card.CHRYSANTHEMUM_SAKE_CUP,
    "deer": Card.MAPLE_DEER,
    "swallow": Card.WILLOW_SWALLOW,
    "lightning": Card.WILLOW_LIGHTNING,
}

_SPECIAL_NAMES: Final[dict[int, str]] = {
    0: "Crane",
    1: "red poetry ribbon",
    4: "Bush warbler",
    5: "red poetry ribbon",
    8: "Curtain",
    9: "red poetry ribbon",
    12: "Cuckoo",
    13: "plain red ribbon",
    16: "Eight-plank bridge",
    17: "plain red ribbon",
    20: "Butterflies",
    21: "blue ribbon",
    24: "Boar",
    25: "plain red ribbon",
    28: "Moon",
    29: "Geese",
    32: "Sake cup",
    33: "blue ribbon",
    36: "Deer",
    37: "blue ribbon",
    40: "Rain man",
    41: "Swallow",
    42: "plain red ribbon",
    43: "Lightning",
    44: "Phoenix",
}


def _english(i: int) -> str:
    month = MONTH_NAMES[i // 4]
    special = _SPECIAL_NAMES.get(i)
    if special is not None:
        return f"{month} - {special}"
    return f"{month} - plain ({CODES[i]})"


ENGLISH_NAMES: Final[tuple[str, ...]] = tuple(_english(i) for i in range(48))

ALL_CARDS: Final[tuple[Card, ...]] = tuple(Card)
FULL_DECK: Final[int] = (1 << 48) - 1
MONTH_MASKS: Final[tuple[int, ...]] = tuple(0b1111 << (4 * m) for m in range(12))
"""``MONTH_MASKS[m - 1]`` is the set of the four cards of month ``m``."""


def _kind_mask(kind: Kind) -> int:
    return sum(1 << i for i in range(48) if KINDS[i] is kind)


BRIGHTS: Final[int] = _kind_mask(Kind.BRIGHT)
ANIMALS: Final[int] = _kind_mask(Kind.ANIMAL)
RIBBONS: Final[int] = _kind_mask(Kind.RIBBON)
PLAINS: Final[int] = _kind_mask(Kind.PLAIN)
KIND_MASKS: Final[dict[Kind, int]] = {
    Kind.BRIGHT: BRIGHTS,
    Kind.ANIMAL: ANIMALS,
    Kind.RIBBON: RIBBONS,
    Kind.PLAIN: PLAINS,
}
AKATAN: Final[int] = (1 << 1) | (1 << 5) | (1 << 9)
AOTAN: Final[int] = (1 << 21) | (1 << 33) | (1 << 37)

_LOOKUP: Final[dict[str, Card]] = {code.lower(): Card(i) for i, code in enumerate(CODES)}
_LOOKUP.update(CARD_NAMES)
_LOOKUP.update({name.lower(): card for name, card in Card.__members__.items()})


def month_mask(month: int) -> int:
    """The set of the four cards of ``month`` (1..12)."""
    return MONTH_MASKS[month - 1]


def parse_card(token: str) -> Card:
    """Parse one card code or name, case-insensitively.

    Raises:
        InvalidInputError: naming the token and what is accepted.

    >>> parse_card("11p")
    Card.WILLOW_LIGHTNING
    """
    card = _LOOKUP.get(token.strip().lower())
    if card is None:
        raise InvalidInputError(
            f"unknown card {token!r}: expected a code such as 1L, 9A, 11P, 12P3 "
            f"(month 1-12, kind L/A/R/P) or a name ({', '.join(CARD_NAMES)})"
        )
    return card


def parse_cards(text: str | Iterable[str]) -> int:
    """Parse cards separated by spaces or commas into a card set.

    Raises:
        InvalidInputError: on an unknown token or a card given twice.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    result = 0
    for token in tokens:
        card = parse_card(token)
        if result >> card & 1:
            raise InvalidInputError(f"card {card.code} given twice")
        result |= 1 << card
    return result


def mask_of(cards: Iterable[int]) -> int:
    """The card set holding ``cards``."""
    result = 0
    for card in cards:
        result |= 1 << card
    return result


def cards_of(mask: int) -> Iterator[Card]:
    """The cards of a set, in card order."""
    while mask:
        low = mask & -mask
        yield Card(low.bit_length() - 1)
        mask ^= low


def card_list(mask: int) -> list[int]:
    """The card indices of a set as plain ints, in card order (fast path)."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def format_cards(mask: int) -> str:
    """Codes of a set, space-separated, in card order."""
    return " ".join(CODES[c] for c in card_list(mask))
