"""Cards drawn as coloured text: chips, codes, card backs and capture piles.

Pure functions returning :class:`rich.text.Text` (Rich comes with Textual), so
they can be tested and reused without running an app. A *chip* is a card
drawn in 9 x 3 cells::

    3L    ★      code, kind mark, special mark
    Cherry       month
    Curtain      what the card shows

The background is the month's colour (after its flower); the kind mark is ``★``
Bright, ``◆`` Animal, ``▬`` Ribbon, ``·`` Plain; special cards carry a second
mark: ``◎`` Sake cup, ``☂`` Rain man, ``ϟ`` Lightning, ``✎`` red poetry
ribbon, ``≋`` blue ribbon.

>>> from koikoi.game.cards import Card
>>> chip_lines(Card.WILLOW_RAIN_MAN)
['11L  ★ ☂ ', 'Willow   ', 'Rain man ']
>>> card_caption(Card.CHRYSANTHEMUM_SAKE_CUP)
'9A Chrysanthemum · Sake cup ◎'
"""

from __future__ import annotations

from typing import Final

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from koikoi.game.cards import CODES, KIND_MASKS, KINDS, MONTH_NAMES, Card, Kind, card_list
from koikoi.i18n import N_, language, t, td

__all__ = [
    "CHIP_HEIGHT",
    "CHIP_WIDTH",
    "KIND_JA",
    "KIND_MARKS",
    "MONTH_COLOURS",
    "MONTH_SHORT",
    "SPECIAL_MARKS",
    "TALL_CHIP_HEIGHT",
    "back_text",
    "card_caption",
    "card_code_text",
    "card_short_name",
    "chip_lines",
    "chip_text",
    "codes_text",
    "kind_mark",
    "legend_lines",
    "pile_groups",
    "pile_text",
    "special_mark",
]

CHIP_WIDTH: Final = 9
CHIP_HEIGHT: Final = 3
TALL_CHIP_HEIGHT: Final = 4
"""A tall chip (for a terminal with room to spare) adds the kind in Japanese: 光, タネ,
短冊 or カス."""

KIND_JA: Final[dict[Kind, str]] = {
    Kind.BRIGHT: "光",
    Kind.ANIMAL: "タネ",
    Kind.RIBBON: "短冊",
    Kind.PLAIN: "カス",
}
"""The kinds as the Japanese game calls them (the last line of a tall chip)."""

# (background, foreground) per month, after each month's flower. Every background has
# at least 3:1 contrast with the table and 4.5:1 with its text (tests/tui check both).
MONTH_COLOURS: Final[tuple[tuple[str, str], ...]] = (
    ("#217b40", "#ffffff"),  # 1 pine: green boughs
    ("#ce2545", "#ffffff"),  # 2 plum: red blossoms
    ("#f4b4c6", "#1a1a1a"),  # 3 cherry: pink blossoms
    ("#8457b2", "#ffffff"),  # 4 wisteria: purple
    ("#5a61c8", "#ffffff"),  # 5 iris: indigo
    ("#d33361", "#ffffff"),  # 6 peony: red-pink
    ("#ae4588", "#ffffff"),  # 7 bush clover: magenta
    ("#6e6e6e", "#ffffff"),  # 8 susuki: grey hill under the moon, white grass
    ("#e6b422", "#1a1a1a"),  # 9 chrysanthemum: yellow
    ("#c44d1a", "#ffffff"),  # 10 maple: red-orange leaves
    ("#557359", "#ffffff"),  # 11 willow: grey-green strands
    ("#8d6e36", "#ffffff"),  # 12 paulownia: ochre leaves
)

MONTH_SHORT: Final[tuple[str, ...]] = (
    "Pine", "Plum", "Cherry", "Wisteria", "Iris", "Peony",
    "Clover", "Susuki", "Chrysanth", "Maple", "Willow", "Paulownia",
)  # fmt: skip
"""Month names that fit a chip (at most 9 cells)."""

KIND_MARKS: Final[dict[Kind, str]] = {
    Kind.BRIGHT: "★",
    Kind.ANIMAL: "◆",
    Kind.RIBBON: "▬",
    Kind.PLAIN: "·",
}

SPECIAL_MARKS: Final[dict[int, str]] = {
    Card.CHRYSANTHEMUM_SAKE_CUP: "◎",
    Card.WILLOW_RAIN_MAN: "☂",
    Card.WILLOW_LIGHTNING: "ϟ",
    Card.PINE_RIBBON: "✎",
    Card.PLUM_RIBBON: "✎",
    Card.CHERRY_RIBBON: "✎",
    Card.PEONY_RIBBON: "≋",
    Card.CHRYSANTHEMUM_RIBBON: "≋",
    Card.MAPLE_RIBBON: "≋",
}
"""The second mark of the special cards: Sake cup, Rain man, Lightning, poetry and blue ribbons."""

_SHORT_NAMES: Final[dict[int, str]] = {
    Card.PINE_CRANE: N_("Crane"),
    Card.CHERRY_CURTAIN: N_("Curtain"),
    Card.SUSUKI_MOON: N_("Moon"),
    Card.WILLOW_RAIN_MAN: N_("Rain man"),
    Card.PAULOWNIA_PHOENIX: N_("Phoenix"),
    Card.PLUM_WARBLER: N_("Warbler"),
    Card.WISTERIA_CUCKOO: N_("Cuckoo"),
    Card.IRIS_BRIDGE: N_("Bridge"),
    Card.PEONY_BUTTERFLIES: N_("Butterfly"),
    Card.CLOVER_BOAR: N_("Boar"),
    Card.SUSUKI_GEESE: N_("Geese"),
    Card.CHRYSANTHEMUM_SAKE_CUP: N_("Sake cup"),
    Card.MAPLE_DEER: N_("Deer"),
    Card.WILLOW_SWALLOW: N_("Swallow"),
    Card.WILLOW_LIGHTNING: N_("Lightning"),
    Card.PINE_RIBBON: N_("Poetry"),
    Card.PLUM_RIBBON: N_("Poetry"),
    Card.CHERRY_RIBBON: N_("Poetry"),
    Card.PEONY_RIBBON: N_("Blue rbn"),
    Card.CHRYSANTHEMUM_RIBBON: N_("Blue rbn"),
    Card.MAPLE_RIBBON: N_("Blue rbn"),
}

# Ribbon colours, for the ribbon line of a chip.
_RED_RIBBON: Final = "#ff5a5a"
_BLUE_RIBBON: Final = "#5aa0ff"
BACK_STYLE: Final = Style(color="#e0b060", bgcolor="#5a1010")


def kind_mark(card: int) -> str:
    """The kind mark of a card: ★ Bright, ◆ Animal, ▬ Ribbon, · Plain."""
    return KIND_MARKS[KINDS[card]]


def special_mark(card: int) -> str:
    """The special-card mark of a card, or ``""``."""
    return SPECIAL_MARKS.get(card, "")


def card_short_name(card: int) -> str:
    """What the card shows, in at most 9 cells: ``"Rain man"``, ``"Ribbon"``, ``"plain"``."""
    name = _SHORT_NAMES.get(card)
    if name is not None:
        return td(name)
    return td(N_("Ribbon")) if KINDS[card] is Kind.RIBBON else td(N_("plain"))


def card_caption(card: int) -> str:
    """One line naming a card fully: code, month, what it shows, special mark."""
    c = Card(card)
    mark = special_mark(card)
    if language() != "en":
        # "3L 桜に幕", "1P1 松のカス": the card's name says its month and what it shows
        text = f"{c.code} {td(c.name_en).replace(f' ({c.code})', '')}"
        return f"{text} {mark}" if mark else text
    what = c.name_en.split(" - ", 1)[1]
    if what.startswith("plain ("):
        what = "plain"
    text = f"{c.code} {_month_name(c.month)} · {what}"
    return f"{text} {mark}" if mark else text


def _month_name(month: int) -> str:
    return MONTH_NAMES[month - 1]


def chip_lines(card: int, *, tall: bool = False) -> list[str]:
    """The plain-text lines of a card chip, each exactly :data:`CHIP_WIDTH` cells: three,
    or with ``tall`` four (the kind in Japanese last).

    >>> chip_lines(Card.PINE_CRANE, tall=True)[3]
    '光       '
    """
    code = CODES[card]
    mark = kind_mark(card)
    special = special_mark(card)
    top = f"{code:<4} {mark} {special or ' '}"
    month = MONTH_SHORT[card // 4] if language() == "en" else td(MONTH_NAMES[card // 4])
    name = card_short_name(card)
    lines = [top.ljust(CHIP_WIDTH)[:CHIP_WIDTH], _pad(month), _pad(name)]
    if tall:
        lines.append(_pad(KIND_JA[KINDS[card]]))
    return lines


def _pad(text: str) -> str:
    """``text`` filled with spaces to :data:`CHIP_WIDTH` terminal cells (a Japanese
    character takes two)."""
    return text + " " * max(0, CHIP_WIDTH - cell_len(text))


def _card_style(card: int) -> Style:
    bg, fg = MONTH_COLOURS[card // 4]
    return Style(color=fg, bgcolor=bg)


def chip_text(card: int, *, dim: bool = False, tall: bool = False) -> Text:
    """A card chip as three lines of coloured text, or four with ``tall`` (no trailing
    newline)."""
    style = _card_style(card)
    if dim:
        style = style + Style(dim=True)
    lines = chip_lines(card, tall=tall)
    text = Text()
    top = lines[0]
    text.append(top[:4], style + Style(bold=True))
    text.append(top[4:], style)
    text.append("\n")
    text.append(lines[1], style)
    text.append("\n")
    name_style = style
    if KINDS[card] is Kind.RIBBON:
        colour = _BLUE_RIBBON if special_mark(card) == "≋" else _RED_RIBBON
        name_style = style + Style(color=colour, bold=True, bgcolor="#101010")
    elif card in _SHORT_NAMES:
        name_style = style + Style(bold=True)
    text.append(lines[2], name_style)
    if tall:
        text.append("\n")
        text.append(lines[3], style)
    return text


def card_code_text(card: int) -> Text:
    """A card's code in its month colour, with its special mark (for piles and logs)."""
    bg, fg = MONTH_COLOURS[card // 4]
    label = CODES[card] + special_mark(card)
    return Text(label, style=Style(color=fg, bgcolor=bg, bold=True))


def codes_text(mask: int, *, sep: str = " ") -> Text:
    """The cards of a set as coloured codes, in card order."""
    text = Text()
    for i, card in enumerate(card_list(mask)):
        if i:
            text.append(sep)
        text.append_text(card_code_text(card))
    return text


def back_text(count: int) -> Text:
    """``count`` card backs, e.g. for the opponent's hand."""
    text = Text()
    for i in range(count):
        if i:
            text.append(" ")
        text.append("▒▒", BACK_STYLE)
    return text


def pile_groups(mask: int) -> list[tuple[Kind, int]]:
    """A capture pile grouped by kind, Brights first: ``[(kind, cards), ...]``."""
    order = (Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.PLAIN)
    return [(kind, mask & KIND_MASKS[kind]) for kind in order]


def pile_text(mask: int, *, width: int | None = None, multiline: bool = False) -> Text:
    """A capture pile grouped by kind with counts.

    One line (``★Brights 2: 1L 3L │ ◆Animals 0 │ ...``) or one line per kind
    with ``multiline``. On one line, groups that do not fit ``width`` are cut to
    their counts (Plains first).
    """
    groups = pile_groups(mask)
    if multiline:
        text = Text()
        for i, (kind, cards) in enumerate(groups):
            if i:
                text.append("\n")
            text.append(f"{KIND_MARKS[kind]} {td(kind.label)} {cards.bit_count()}", "bold")
            if cards:
                text.append(": ")
                text.append_text(codes_text(cards))
        return text
    # One line: try full codes, then drop codes from Plains, Ribbons, Animals.
    show = [True, True, True, True]
    for drop in (None, 3, 2, 1, 0):
        if drop is not None:
            show[drop] = False
        text = Text()
        for i, (kind, cards) in enumerate(groups):
            if i:
                text.append(" │ ", "dim")
            text.append(f"{KIND_MARKS[kind]}{td(kind.label)} {cards.bit_count()}", "bold")
            if cards and show[i]:
                text.append(" ")
                text.append_text(codes_text(cards))
        if width is None or text.cell_len <= width:
            return text
    return text


def legend_lines() -> list[str]:
    """The meaning of the marks on the cards, for the help screen."""
    return [
        t("★ Bright (光 hikari, 20)   ◆ Animal (タネ tane, 10)"),
        t("▬ Ribbon (短冊 tanzaku, 5)  · Plain (カス kasu, 1)"),
        t("◎ Sake cup   ☂ Rain man   ϟ Lightning"),
        t("✎ red poetry ribbon (akatan)   ≋ blue ribbon (aotan)"),
    ]
