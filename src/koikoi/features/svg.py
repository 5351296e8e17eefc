"""Card art as SVG: pure functions returning strings.

Every card is drawn in code from a few flat traditional colours with bold
outlines: the month's background and plant, then what the card's kind adds (a
Bright's feature, an Animal, a ribbon strip). A small corner mark gives the
month number and the kind letter (L, A, R, P) for players who do not yet know
the deck. Output is deterministic: the same call always returns the same
string, and the only ids are the sprite symbol ids derived from the card codes.

>>> svg = card_svg("9A", width=60)
>>> svg.startswith("<svg")
True
>>> symbol_id("11P")
'card-11P'
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from html import escape
from typing import Final

from koikoi.game.cards import AKATAN, AOTAN, CODES, MONTH_NAMES_JA, Card, Kind, parse_card
from koikoi.game.errors import InvalidInputError

__all__ = [
    "BACK_ID",
    "VIEW_HEIGHT",
    "VIEW_WIDTH",
    "card_back_svg",
    "card_svg",
    "card_symbol",
    "card_title",
    "ribbon_style",
    "sprite_sheet",
    "symbol_id",
]

VIEW_WIDTH: Final = 100
"""Width of every card in its own user units (the ``viewBox``)."""
VIEW_HEIGHT: Final = 160
"""Height of every card in its own user units: the 2 : 3.2 of a real card."""
BACK_ID: Final = "card-back"
"""The sprite symbol id of the card back."""

_VIEWBOX: Final = f"0 0 {VIEW_WIDTH} {VIEW_HEIGHT}"
_SVG_NS: Final = "http://www.w3.org/2000/svg"

# Flat traditional colours.
INK: Final = "#211"
PAPER: Final = "#f7efdb"
WHITE: Final = "#fffef6"
RED: Final = "#d32"
DARK_RED: Final = "#8f1712"
PINK: Final = "#f6c3cf"
YELLOW: Final = "#fc2"
ORANGE: Final = "#ea7b1e"
GREEN: Final = "#484"
DARK_GREEN: Final = "#1d5a2b"
LEAF: Final = "#8cc43c"
BLUE: Final = "#2452b3"
SKY_BLUE: Final = "#7fb2e5"
PURPLE: Final = "#74419f"
LILAC: Final = "#b891e0"
BARK: Final = "#3a281c"
NIGHT: Final = "#2b2f3c"
GREY: Final = "#767676"

_KIND_JA: Final = {Kind.BRIGHT: "光", Kind.ANIMAL: "タネ", Kind.RIBBON: "短冊", Kind.PLAIN: "カス"}
_KIND_EN: Final = {
    Kind.BRIGHT: "Bright",
    Kind.ANIMAL: "Animal",
    Kind.RIBBON: "Ribbon",
    Kind.PLAIN: "Plain",
}
_KIND_MARK: Final = {  # (background, letter colour) of the corner mark
    Kind.BRIGHT: (YELLOW, INK),
    Kind.ANIMAL: (GREEN, WHITE),
    Kind.RIBBON: (RED, WHITE),
    Kind.PLAIN: (GREY, WHITE),
}
_NAMES_JA: Final = {
    Card.PINE_CRANE: "松に鶴",
    Card.CHERRY_CURTAIN: "桜に幕",
    Card.SUSUKI_MOON: "芒に月",
    Card.WILLOW_RAIN_MAN: "柳に小野道風",
    Card.PAULOWNIA_PHOENIX: "桐に鳳凰",
    Card.PLUM_WARBLER: "梅に鶯",
    Card.WISTERIA_CUCKOO: "藤に不如帰",
    Card.IRIS_BRIDGE: "菖蒲に八橋",
    Card.PEONY_BUTTERFLIES: "牡丹に蝶",
    Card.CLOVER_BOAR: "萩に猪",
    Card.SUSUKI_GEESE: "芒に雁",
    Card.CHRYSANTHEMUM_SAKE_CUP: "菊に盃",
    Card.MAPLE_DEER: "紅葉に鹿",
    Card.WILLOW_SWALLOW: "柳に燕",
    Card.WILLOW_LIGHTNING: "柳のカス",
}


# ---------------------------------------------------------------------------
# Public API


def _card(card: int | str) -> Card:
    if isinstance(card, str):
        return parse_card(card)
    try:
        if isinstance(card, bool):
            raise TypeError
        number = operator.index(card)
    except TypeError:
        raise InvalidInputError(
            f"not a card: {card!r} (expected a card code or a number 0-47)"
        ) from None
    if not 0 <= number < len(CODES):
        raise InvalidInputError(f"card number {number} out of range 0-47")
    return Card(number)


def symbol_id(card: int | str) -> str:
    """The sprite symbol id of a card: ``"card-"`` and its code.

    >>> symbol_id(0)
    'card-1L'
    """
    return f"card-{_card(card).code}"


def card_title(card: int | str) -> str:
    """The accessible title of a card: English name, code, Japanese names, kind.

    >>> card_title("9A")
    'Chrysanthemum - Sake cup (9A) · 菊に盃 · month 9, 菊 kiku · タネ Animal'
    """
    c = _card(card)
    parts = [c.name_en if c.code in c.name_en else f"{c.name_en} ({c.code})"]
    if c in _NAMES_JA:
        parts.append(_NAMES_JA[c])
    parts.append(f"month {c.month}, {MONTH_NAMES_JA[c.month - 1]}")
    parts.append(f"{_KIND_JA[c.kind]} {_KIND_EN[c.kind]}")
    return " · ".join(parts)


def ribbon_style(card: int | str) -> str | None:
    """``"poetry"`` (red with writing), ``"blue"``, ``"red"`` (plain), or None.

    >>> ribbon_style("2R"), ribbon_style("9R"), ribbon_style("11R"), ribbon_style("9A")
    ('poetry', 'blue', 'red', None)
    """
    c = _card(card)
    if c.kind is not Kind.RIBBON:
        return None
    if AKATAN >> c & 1:
        return "poetry"
    if AOTAN >> c & 1:
        return "blue"
    return "red"


def card_svg(
    card: int | str, *, width: int = 120, title: bool = True, mark_kind: bool = True
) -> str:
    """One card as a complete standalone SVG document.

    Args:
        card: a :class:`~koikoi.game.cards.Card`, its number 0..47, or a code or name
            that :func:`~koikoi.game.cards.parse_card` accepts.
        width: width in pixels; the height follows the card's 2 : 3.2 shape.
        title: include a ``<title>`` (English and Japanese names) for accessibility.
        mark_kind: draw the corner mark (month number and kind letter).

    Raises:
        InvalidInputError: on an unknown card or a width below 1.

    >>> card_svg("1L", width=60)[:63]
    '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="96" '
    """
    c = _card(card)
    height = _height(width)
    head = _title(c) if title else ""
    return (
        f'<svg xmlns="{_SVG_NS}" width="{width}" height="{height}" viewBox="{_VIEWBOX}" '
        f'role="img" class="card card-{c.code}">{head}{_card_body(c, mark_kind)}</svg>'
    )


def card_back_svg(*, width: int = 120) -> str:
    """The card back (dark red with a black border) as a standalone SVG document.

    Raises:
        InvalidInputError: on a width below 1.
    """
    height = _height(width)
    return (
        f'<svg xmlns="{_SVG_NS}" width="{width}" height="{height}" viewBox="{_VIEWBOX}" '
        f'role="img" class="card card-back"><title>Card back</title>{_back_body()}</svg>'
    )


def card_symbol(card: int | str, *, mark_kind: bool = True) -> str:
    """The card as a ``<symbol id="card-1L" viewBox=...>`` fragment for a sprite sheet."""
    c = _card(card)
    return (
        f'<symbol id="card-{c.code}" viewBox="{_VIEWBOX}">'
        f"{_title(c)}{_card_body(c, mark_kind)}</symbol>"
    )


def sprite_sheet(*, mark_kind: bool = True) -> str:
    """One SVG document holding the 48 card symbols and ``card-back``.

    Use a card with ``<svg viewBox="0 0 100 160"><use href="cards.svg#card-3L"/></svg>``.
    """
    symbols = "".join(card_symbol(c, mark_kind=mark_kind) for c in Card)
    back = (
        f'<symbol id="{BACK_ID}" viewBox="{_VIEWBOX}">'
        f"<title>Card back</title>{_back_body()}</symbol>"
    )
    return f'<svg xmlns="{_SVG_NS}">{symbols}{back}</svg>'


def _height(width: int) -> int:
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise InvalidInputError(f"card width must be a positive integer, got {width!r}")
    return round(width * VIEW_HEIGHT / VIEW_WIDTH)


def _title(c: Card) -> str:
    return f"<title>{escape(card_title(c), quote=False)}</title>"


# ---------------------------------------------------------------------------
# Drawing primitives. Coordinates are in the 100 x 160 card space.


def _f(x: float) -> str:
    """A number with at most one decimal, no trailing zeros, no leading zero."""
    return _t(round(x * 10))


def _t(n: int) -> str:
    """A number given in tenths."""
    if n % 10 == 0:
        return str(n // 10)
    s = f"{n / 10:.1f}"
    return "-" + s[2:] if s.startswith("-0.") else s[1:] if s.startswith("0.") else s


def _join(values: Iterable[str]) -> str:
    """Numbers of path data: a space between them except before a minus sign."""
    out = ""
    for v in values:
        out += v if not out or v.startswith("-") else " " + v
    return out


class _Pen:
    """Builds compact path data: an absolute move, then relative commands.

    Positions are kept in rounded tenths so that relative steps add up exactly.
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.x = self.y = 0
        self.x0 = self.y0 = 0

    def _rel(self, x: float, y: float) -> tuple[str, str]:
        nx, ny = round(x * 10), round(y * 10)
        dx, dy = nx - self.x, ny - self.y
        self.x, self.y = nx, ny
        return _t(dx), _t(dy)

    def move(self, x: float, y: float) -> _Pen:
        self.x, self.y = round(x * 10), round(y * 10)
        self.x0, self.y0 = self.x, self.y
        self.parts.append("M" + _join((_t(self.x), _t(self.y))))
        return self

    def line(self, x: float, y: float) -> _Pen:
        self.parts.append("l" + _join(self._rel(x, y)))
        return self

    def quad(self, cx: float, cy: float, x: float, y: float) -> _Pen:
        ox, oy = self.x, self.y
        c = (_t(round(cx * 10) - ox), _t(round(cy * 10) - oy))
        self.parts.append("q" + _join((*c, *self._rel(x, y))))
        return self

    def arc(
        self, rx: float, ry: float, deg: float, large: int, sweep: int, x: float, y: float
    ) -> _Pen:
        head = (_f(rx), _f(ry), _f(deg), str(large), str(sweep))
        self.parts.append("a" + _join((*head, *self._rel(x, y))))
        return self

    def close(self) -> _Pen:
        self.parts.append("z")
        self.x, self.y = self.x0, self.y0
        return self

    def __str__(self) -> str:
        # A repeated command letter may be left out ("l1 2l3 4" is "l1 2 3 4").
        out = ""
        prev = ""
        for part in self.parts:
            cmd, nums = part[0], part[1:]
            if cmd == prev and cmd in "lqa":
                out += nums if nums.startswith("-") else " " + nums
            else:
                out += part
            prev = cmd
        return out


def _a(fill: str | None, stroke: str | None, sw: float | None, extra: str) -> str:
    out = ""
    if fill is not None:
        out += f' fill="{fill}"'
    if stroke is not None:
        out += f' stroke="{stroke}"'
    if sw is not None:
        out += f' stroke-width="{_f(sw)}"'
    return out + extra


def _path(
    d: str,
    fill: str | None = "none",
    stroke: str | None = None,
    sw: float | None = None,
    extra: str = "",
) -> str:
    return f'<path d="{d}"{_a(fill, stroke, sw, extra)}/>'


def _circle(
    x: float,
    y: float,
    r: float,
    fill: str | None,
    stroke: str | None = None,
    sw: float | None = None,
) -> str:
    return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}"{_a(fill, stroke, sw, "")}/>'


def _g(content: str, transform: str = "", extra: str = "") -> str:
    tf = f' transform="{transform}"' if transform else ""
    return f"<g{tf}{extra}>{content}</g>"


def _at(x: float, y: float, scale: float = 1.0, rotate: float = 0.0) -> str:
    tf = f"translate({_f(x)} {_f(y)})"
    if rotate:
        tf += f" rotate({_f(rotate)})"
    if scale != 1.0:
        tf += f" scale({scale:g})"
    return tf


_MIRROR: Final = f"matrix(-1 0 0 1 {VIEW_WIDTH} 0)"


def _pts(points: Iterable[tuple[float, float]], close: bool = True) -> str:
    """Path data for a polyline or polygon."""
    pen = _Pen()
    for i, (x, y) in enumerate(points):
        if i == 0:
            pen.move(x, y)
        else:
            pen.line(x, y)
    if close:
        pen.close()
    return str(pen)


def _polar(cx: float, cy: float, r: float, deg: float) -> tuple[float, float]:
    rad = math.radians(deg)
    return cx + r * math.cos(rad), cy + r * math.sin(rad)


def _circles_d(centres: Iterable[tuple[float, float, float]]) -> str:
    """Path data for several circles ``(x, y, r)`` (one element, many dots)."""
    out = []
    for x, y, r in centres:
        rr = _f(r)
        out.append(
            f"M{_join((_f(x - r), _f(y)))}a{rr} {rr} 0 1 0 {_f(2 * r)} 0"
            f"a{rr} {rr} 0 1 0{_f(-2 * r)} 0"
        )
    return "".join(out)


def _ellipses_d(items: Iterable[tuple[float, float, float, float, float]]) -> str:
    """Path data for rotated ellipses ``(x, y, rx, ry, angle)`` in one element."""
    pen = _Pen()
    for x, y, rx, ry, ang in items:
        x1, y1 = _polar(x, y, rx, ang)
        x2, y2 = _polar(x, y, -rx, ang)
        pen.move(x1, y1).arc(rx, ry, ang, 1, 0, x2, y2).arc(rx, ry, ang, 1, 0, x1, y1).close()
    return str(pen)


def _dots(spots: Iterable[tuple[float, float]], colour: str, r: float) -> str:
    """Round dots of radius ``r``: zero-length strokes with round caps."""
    d = "".join(f"M{_join((_f(x), _f(y)))}h0" for x, y in spots)
    return _path(d, "none", colour, 2 * r)


def _dabs_d(items: Iterable[tuple[float, float, float, float]]) -> str:
    """Short straight strokes ``(x, y, length, angle)`` centred on ``(x, y)``."""
    out = []
    for x, y, ln, ang in items:
        x0, y0 = _polar(x, y, -ln / 2, ang)
        dx, dy = _polar(0, 0, ln, ang)
        out.append(f"M{_join((_f(x0), _f(y0)))}l{_join((_f(dx), _f(dy)))}")
    return "".join(out)


def _dabs(
    items: Iterable[tuple[float, float, float, float]], colour: str, w: float, outline: bool = True
) -> str:
    """Leaves and petals as round-capped strokes, with or without a bold outline."""
    d = _dabs_d(items)
    return (_path(d, "none", INK, w + 2.4) if outline else "") + _path(d, "none", colour, w)


def _branch(d: str, w: float, colour: str = BARK) -> str:
    """A stroked line with a bold outline: a branch, a stem, a neck."""
    return _path(d, "none", INK, w + 2.4) + _path(d, "none", colour, w)


def _leaf_d(x: float, y: float, length: float, width: float, deg: float) -> str:
    """A pointed leaf from ``(x, y)`` pointing at angle ``deg``."""
    tx, ty = _polar(x, y, length, deg)
    c1x, c1y = _polar(x, y, length * 0.5, deg - math.degrees(math.atan2(width, length * 0.5)))
    c2x, c2y = _polar(x, y, length * 0.5, deg + math.degrees(math.atan2(width, length * 0.5)))
    return (
        f"M{_f(x)} {_f(y)}Q{_f(c1x)} {_f(c1y)} {_f(tx)} {_f(ty)}"
        f"Q{_f(c2x)} {_f(c2y)} {_f(x)} {_f(y)}Z"
    )


def _scallop_d(
    x: float, y: float, r: float, n: int, bulge: float = 1.15, start: float = -90, large: int = 0
) -> str:
    """A closed outline of ``n`` round bumps on a circle: petals, clouds."""
    pts = [_polar(x, y, r, start + 360 * k / n) for k in range(n + 1)]
    chord = r * math.sin(math.pi / n) * bulge
    pen = _Pen().move(*pts[0])
    for px, py in pts[1:]:
        pen.arc(chord, chord, 0, large, 1, px, py)
    return str(pen.close())


def _star_d(x: float, y: float, r_out: float, r_in: float, n: int, start: float = -90) -> str:
    pts = []
    for k in range(2 * n):
        r = r_out if k % 2 == 0 else r_in
        pts.append(_polar(x, y, r, start + 180 * k / n))
    return _pts(pts)


# ---------------------------------------------------------------------------
# Card frame, corner mark, back


def _card_body(c: Card, mark_kind: bool) -> str:
    art = _MONTH_ART[c.month - 1](c)
    # The art is clipped to the face by a nested viewport (no clipPath ids),
    # then the black card edge is drawn over it.
    face = (
        '<svg x="3" y="3" width="94" height="154" viewBox="3 3 94 154">'
        f'<g stroke="{INK}" stroke-width="1.2" stroke-linejoin="round" stroke-linecap="round">'
        f"{art}</g></svg>"
    )
    edge = (
        '<rect x="1.5" y="1.5" width="97" height="157" rx="4" '
        f'fill="none" stroke="{INK}" stroke-width="3"/>'
    )
    mark = _mark(c) if mark_kind else ""
    return face + edge + mark


def _mark(c: Card) -> str:
    num = str(c.month)
    bg, fg = _KIND_MARK[c.kind]
    wn = 4.5 + 9.5 * len(num)
    wl = 13.0
    x, y, h = 5.5, 5.5, 18.0
    base = _f(y + h - 3.6)
    return (
        '<g class="mark" font-family="sans-serif" font-weight="bold" font-size="14" '
        'text-anchor="middle">'
        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(wn + wl)}" height="{_f(h)}" rx="2.5" '
        f'fill="{bg}" stroke="{INK}" stroke-width="1.4"/>'
        f'<rect x="{_f(x + 0.7)}" y="{_f(y + 0.7)}" width="{_f(wn - 0.7)}" '
        f'height="{_f(h - 1.4)}" rx="1.8" fill="{WHITE}"/>'
        f'<text x="{_f(x + wn / 2)}" y="{base}" fill="{INK}">{num}</text>'
        f'<text x="{_f(x + wn + wl / 2)}" y="{base}" fill="{fg}">{c.kind.letter}</text></g>'
    )


def _back_body() -> str:
    diamonds = []
    for row in range(9):
        for col in range(5):
            cx = 14 + col * 18 + (9 if row % 2 else 0)
            cy = 16 + row * 16
            if cx > 90:
                continue
            diamonds.append(f"M{cx} {cy - 6}l6 6-6 6-6-6z")
    return (
        f'<rect width="100" height="160" rx="5" fill="{INK}"/>'
        f'<rect x="6" y="6" width="88" height="148" rx="3" fill="{DARK_RED}"/>'
        f"{_path(''.join(diamonds), '#a92118')}"
        '<rect x="9" y="9" width="82" height="142" rx="2" fill="none" stroke="#c8a04a" '
        'stroke-width="1"/>'
        f"{_circle(50, 80, 15, DARK_RED, '#c8a04a', 1.5)}"
        f"{_path(_star_d(50, 80, 9, 3.5, 4, -45), '#c8a04a')}"
    )


# ---------------------------------------------------------------------------
# Ribbons

_WRITING: Final = {
    # Stylised brush strokes (not real text): two lines of the poems.
    "a": "M-5-34h9M-1-38q2 8-2 13M4-31q-9 0-8 5 3 3 6-3 5-2 4 3-2 3-5 2"
    "M-4-19q4-3 8 0M0-22v9M-5-9q5 1 6-3M4-8l1 4"
    "M-3 2q6-3 6 2t-6 3M-3 11h7M0 9v6q0 3 4 3",
    "b": "M-5-35q6-3 9-1l-7 8h8q-3 6-8 8M3-22l1 5"
    "M-3-12q6-2 8 0M0-16v9q0 3-4 3M-5 4v8q1 4 7 0M2-2l1 4",
}


def _ribbon(
    style: str,
    x: float = 50,
    y: float = 80,
    deg: float = -8,
    length: float = 96,
    writing: str = "a",
) -> str:
    """A tanzaku strip: red with writing (poetry), blue, or plain red."""
    fill, line = (BLUE, SKY_BLUE) if style == "blue" else (RED, "#f39a8d")
    h = length / 2
    strip = _path(f"M-9 {_f(-h)}h18v{_f(length)}h-18z", fill, extra=' class="strip"')
    inner = _path(f"M-6.5 {_f(-h + 3)}h13v{_f(length - 6)}h-13z", "none", line, 0.9)
    top = _path(f"M-9 {_f(-h + 6)}h18", "none", INK, 1)
    text = ""
    if style == "poetry":
        text = _path(_WRITING[writing], "none", INK, 2, ' class="writing"')
    return _g(strip + inner + top + text, _at(x, y, rotate=deg), f' class="ribbon ribbon-{style}"')


def _ribbon_for(c: Card, **where: float) -> str:
    style = ribbon_style(c) or "red"
    writing = "b" if c == Card.CHERRY_RIBBON else "a"
    return _ribbon(style, writing=writing, **where)


def _bg(colour: str) -> str:
    return f'<rect width="100" height="160" fill="{colour}"/>'


def _variant(c: Card) -> int:
    """0 for the first card of a kind in its month, 1 for the second plain, ..."""
    code = c.code
    return int(code[-1]) - 1 if code[-2] == "P" else 0


def _mirror_if(flag: bool, content: str) -> str:
    return _g(content, _MIRROR) if flag else content


# ---------------------------------------------------------------------------
# 1 Pine


def _pine_clump(x: float, y: float, s: float = 1.0) -> str:
    return _g(
        _path("M-16 2C-15-8-8-13 0-13S15-8 16 2Q0 6-16 2Z", GREEN)
        + _path("M-12-3L0 1-9-8M-4-11L0 1 1-11M6-10L0 1 10-6M13-2L0 1", "none", DARK_GREEN),
        _at(x, y, s),
    )


def _pine_tree() -> str:
    return (
        _branch("M40 160C44 136 28 124 38 104C46 86 64 84 58 62", 8)
        + _branch("M38 106Q22 100 14 90M56 74Q72 72 82 60M58 64Q50 50 38 44M44 94Q58 96 70 98", 3.5)
        + _pine_clump(14, 92, 0.9)
        + _pine_clump(82, 62, 0.9)
        + _pine_clump(38, 46, 1.0)
        + _pine_clump(60, 64, 1.15)
        + _pine_clump(70, 100, 1.0)
        + _pine_clump(32, 122, 0.85)
    )


def _pine(c: Card) -> str:
    if c == Card.PINE_CRANE:
        sun = (
            _circle(62, 46, 30, YELLOW)
            + _circle(62, 46, 26.5, RED, INK, 1.5)
            + _circle(62, 46, 20, "#e5472f", "none")
        )
        pine = (
            _path("M3 160V147C26 138 56 150 97 141V160Z", GREEN)
            + _branch("M10 160C14 146 8 136 20 122", 7)
            + _pine_clump(20, 124, 1.0)
            + _pine_clump(10, 142, 0.9)
            + _pine_clump(86, 148, 0.9)
        )
        crane = (
            _path("M52 126L49 150h-5M58 126L61 150h5", "none", INK, 1.8)
            + _path("M38 110C40 96 62 94 72 102C80 108 80 122 70 127C60 132 44 128 38 110Z", WHITE)
            + _path("M68 121C76 124 86 122 90 114C82 114 78 112 73 106Z", INK)
            + _path("M46 106C56 100 70 104 75 116C64 122 52 118 46 106Z", "#dddad0")
            + _path("M53 110Q63 107 71 115M56 116Q64 113 71 119", "none", GREY, 0.9)
            + _branch("M44 110C36 96 31 86 37 74", 3.6, INK)
            + _circle(38, 71, 4.6, WHITE)
            + _circle(38.6, 68.2, 2.3, RED, "none")
            + _path("M34 70L22 74L34 73.5Z", "#d8bd6a", INK, 0.8)
            + _circle(37, 70.5, 0.9, INK, "none")
        )
        return _bg(PAPER) + sun + pine + crane
    sky = _path("M3 3H97V34C84 40 72 32 60 37S36 40 24 35S8 36 3 38Z", RED)
    ground = _path("M3 160V146C20 140 40 148 60 143S88 142 97 145V160Z", RED)
    body = _bg(PAPER) + sky + ground
    if c == Card.PINE_RIBBON:
        return body + _pine_tree() + _ribbon_for(c, x=52, y=86, deg=-6)
    return body + _mirror_if(_variant(c) == 1, _pine_tree())


# ---------------------------------------------------------------------------
# 2 Plum


def _blossoms(spots: Iterable[tuple[float, float, float]], petal: str, centre: str) -> str:
    """Five-petal blossoms ``(x, y, r)``: petals in one path, centres in another."""
    petals = ""
    hearts = []
    for x, y, r in spots:
        petals += _scallop_d(x, y, r * 0.62, 5, 1.15, -54, large=1)
        hearts.append((x, y))
    return _path(petals, petal) + _dots(hearts, centre, 1.6)


def _plum_tree() -> str:
    return (
        _branch("M14 160L24 128L16 104L38 76L32 50L50 26L46 4", 6, BARK)
        + _branch("M24 128L52 118L74 126M38 76L62 66L80 44M32 50L14 34", 3.5, BARK)
        + _blossoms(
            [
                (50, 26, 8),
                (62, 66, 8),
                (80, 44, 7),
                (14, 34, 7),
                (74, 126, 8),
                (50, 117, 7),
                (38, 78, 7),
                (22, 106, 7),
                (33, 52, 6),
            ],
            RED,
            YELLOW,
        )
        + _path(_circles_d([(44, 8, 2.5), (88, 36, 2.5), (84, 128, 2.5), (8, 30, 2.3)]), RED)
    )


def _plum(c: Card) -> str:
    body = _bg(PAPER) + _path("M3 160V132C24 126 44 136 64 130S90 128 97 131V160Z", PINK)
    if c == Card.PLUM_WARBLER:
        olive = "#8a9a2e"
        bird = _g(
            _path("M8 0L25-6L23 1L11 7Z", "#5f6f1c")
            + _path("M-12-3C-10-13 6-13 12-3C14 5 4 10-4 9C-10 8-13 3-12-3Z", olive)
            + _path("M-11 2C-6 9 4 9 10 3C4 6-4 6-11 2Z", "#cdd36e", "none")
            + _path("M-2-6C4-10 12-7 15 0C8 2 2 0-2-6Z", "#5f6f1c")
            + _path("M2-5Q8-6 12-1M1-2Q7-2 10 1", "none", "#cdd36e", 0.8)
            + _circle(-10, -9, 6.5, olive)
            + _path("M-15.5-10L-21-8L-15.5-6.5Z", INK, INK, 0.6)
            + _circle(-11.5, -10, 2, WHITE, INK, 0.7)
            + _dots([(-11.7, -10)], INK, 1)
            + _path("M-3 9l-1 4M3 8l1 4", "none", INK, 1.4),
            _at(60, 107, 1.45),
        )
        return body + _plum_tree() + bird
    if c == Card.PLUM_RIBBON:
        return body + _plum_tree() + _ribbon_for(c, x=56, y=90, deg=-8)
    return body + _mirror_if(_variant(c) == 1, _plum_tree())


# ---------------------------------------------------------------------------
# 3 Cherry


def _cherry_blossoms(spots: Iterable[tuple[float, float, float]]) -> str:
    petals = []
    hearts = []
    for x, y, r in spots:
        pen = _Pen().move(x, y)
        for k in range(5):
            ang = -90 + 72 * k
            lx, ly = _polar(x, y, r, ang - 15)
            nx, ny = _polar(x, y, r * 0.8, ang)
            rx, ry = _polar(x, y, r, ang + 15)
            c1x, c1y = _polar(x, y, r * 1.05, ang - 38)
            c2x, c2y = _polar(x, y, r * 1.05, ang + 38)
            pen.quad(c1x, c1y, lx, ly).line(nx, ny).line(rx, ry).quad(c2x, c2y, x, y).close()
        d = str(pen)
        petals.append(d)
        hearts.append((x, y, r * 0.22))
    return _path("".join(petals), WHITE) + _path(_circles_d(hearts), RED, "none")


def _mist(y: float, x0: float, x1: float, h: float = 10) -> str:
    r = h / 2
    arc = f"a{_f(r)} {_f(r)} 0 0 1 0"
    return f"M{_f(x0 + r)} {_f(y)}H{_f(x1 - r)}{arc} {_f(h)}H{_f(x0 + r)}{arc}{_f(-h)}z"


_CHERRY_SPOTS: Final = [
    (20, 30, 9),
    (40, 22, 9),
    (62, 30, 9),
    (82, 20, 8),
    (30, 50, 8),
    (52, 48, 9),
    (76, 46, 8),
    (14, 70, 8),
    (66, 66, 7),
]


def _cherry(c: Card) -> str:
    body = _bg(PAPER)
    tree = _branch("M72 160C66 130 80 112 64 90C56 78 40 70 30 52M64 90C72 80 80 70 76 48", 6, BARK)
    if c == Card.CHERRY_CURTAIN:
        pole = _path("M3 62H97", "none", INK, 4)
        stripes = []
        n = 10
        sw = 94 / n
        for i in range(n):
            x0 = 3 + i * sw
            x1 = x0 + sw
            ys = [
                136 + 10 * math.sin(math.pi * ((x - 3) % 47) / 47) for x in (x0, (x0 + x1) / 2, x1)
            ]
            pts = [(x0, 63), (x1, 63), (x1, ys[2]), ((x0 + x1) / 2, ys[1]), (x0, ys[0])]
            stripes.append((pts, RED if i % 2 == 0 else WHITE))
        cloth = "".join(_path(_pts(p), col, "none") for p, col in stripes)
        edge_pts = [(3.0, 63.0), (97.0, 63.0)]
        edge_pts += [
            (x, 136 + 10 * math.sin(math.pi * ((x - 3) % 47) / 47)) for x in range(97, 2, -4)
        ]
        outline = _path(_pts(edge_pts), "none", INK, 1.4)
        band = _path("M3 63H97V75H3Z", "#3b2455") + _dots(
            [(20, 69), (40, 69), (60, 69), (80, 69)], YELLOW, 2.2
        )
        rope = _path("M3 66Q26 74 50 66T97 66", "none", YELLOW, 2) + _path(
            _circles_d([(14, 69, 2), (50, 66, 2), (86, 69, 2)]), YELLOW
        )
        crest = _circle(50, 100, 13, WHITE, INK, 1.4) + _g(
            _cherry_blossoms([(0, 0, 9)]).replace(WHITE, PINK), _at(50, 100)
        )
        blossoms = _cherry_blossoms(_CHERRY_SPOTS[:8])
        return body + tree + blossoms + pole + cloth + outline + band + rope + crest
    mist = _path(_mist(84, 3, 62) + _mist(112, 40, 97) + _mist(140, 3, 70), RED)
    flowers = tree + _cherry_blossoms(_CHERRY_SPOTS)
    if c == Card.CHERRY_RIBBON:
        return body + mist + flowers + _ribbon_for(c, x=46, y=92, deg=-10, length=92)
    return body + mist + _mirror_if(_variant(c) == 1, flowers)


# ---------------------------------------------------------------------------
# 4 Wisteria


def _raceme(x: float, top: float, length: float, width: float = 14, sway: float = 3) -> str:
    """A hanging cluster of flowers: a bumpy cone, purple with lilac buds."""
    n = max(4, round(length / 9))
    left = []
    right = []
    for i in range(n + 1):
        t = i / n
        w = width / 2 * (1 - t) ** 0.8
        cx = x + sway * math.sin(t * math.pi)
        yy = top + length * t
        left.append((cx - w, yy))
        right.append((cx + w, yy))
    pen = _Pen().move(*left[0])
    for px, py in left[1:]:
        pen.arc(4, 4, 0, 0, 0, px, py)
    for px, py in reversed(right[:-1]):
        pen.arc(4, 4, 0, 0, 0, px, py)
    buds = [
        (x + sway * math.sin(i / n * math.pi) + (2 if i % 2 else -2), top + length * i / n + 2)
        for i in range(n - 1)
    ]
    return _path(str(pen.close()), PURPLE) + _dots(buds, LILAC, 1.6)


def _wisteria_top() -> str:
    leaves = "".join(
        _leaf_d(x, y, ln, 4, a)
        for x, y, ln, a in [
            (20, 14, 14, 150),
            (30, 16, 13, 60),
            (56, 13, 14, 120),
            (64, 12, 14, 30),
            (82, 14, 13, 140),
            (90, 15, 12, 50),
        ]
    )
    return _branch("M3 14Q30 24 56 12T97 16", 4.5) + _path(leaves, GREEN)


def _wisteria(c: Card) -> str:
    body = _bg(PAPER)
    if c == Card.WISTERIA_CUCKOO:
        moon = _path("M80 38a20 20 0 1 1-26 26a16 16 0 1 0 26-26z", YELLOW)
        slate = "#45485f"
        bird = _g(
            _path("M-4-3C-2-14 8-24 26-28C20-18 16-10 8-3Z", "#2c2e40")
            + _path("M0-6Q8-16 20-23M4-4Q10-10 16-13", "none", SKY_BLUE, 1)
            + _path("M-17 0C-10-7 6-6 14-2L30-7L27 0L31 5L14 4C6 8-8 6-17 0Z", slate)
            + _path("M-13 2Q0 7 12 3", "none", WHITE, 1.6)
            + _path("M-2 0C4 8 14 14 26 16C20 8 14 2 8-1Z", slate)
            + _circle(-16, -1, 5, slate)
            + _path("M-20.5-2L-26 0L-20.5 1Z", YELLOW, INK, 0.7)
            + _circle(-17, -2, 1.8, RED, INK, 0.6),
            _at(62, 104, 1.45, -12),
        )
        return (
            body
            + moon
            + _wisteria_top()
            + _raceme(14, 14, 70)
            + _raceme(32, 18, 92, 13)
            + _raceme(50, 14, 40, 11)
            + bird
        )
    plants = (
        _wisteria_top()
        + _raceme(16, 16, 80)
        + _raceme(40, 18, 108)
        + _raceme(64, 14, 86)
        + _raceme(86, 16, 60, 12)
    )
    ground = _path("M3 160V140C30 132 60 144 97 136V160Z", "#c6b7e0")
    if c == Card.WISTERIA_RIBBON:
        return (
            body
            + ground
            + _wisteria_top()
            + _raceme(18, 16, 76)
            + _raceme(78, 14, 84)
            + _ribbon_for(c, x=48, y=92, deg=8, length=90)
        )
    return body + ground + _mirror_if(_variant(c) == 1, plants)


# ---------------------------------------------------------------------------
# 5 Iris


def _iris_flower(x: float, y: float, s: float = 1.0) -> str:
    return _g(
        _path("M0 2C-5-4-4-12 0-17C4-12 5-4 0 2Z", "#8b5cc9")
        + _path("M0 0C-6 2-14 6-14 14C-8 15-3 9 0 0ZM0 0C6 2 14 6 14 14C8 15 3 9 0 0Z", PURPLE)
        + _path("M-4 4L-9 10M4 4L9 10", "none", YELLOW, 1.8)
        + _path("M-3 2Q0 8 3 2Z", GREEN),
        _at(x, y, s),
    )


def _blade(x0: float, tx: float, ty: float, w: float = 4) -> str:
    mx = (x0 + tx) / 2
    my = (160 + ty) / 2
    return (
        f"M{_f(x0 - w)} 160Q{_f(mx - w)} {_f(my)} {_f(tx)} {_f(ty)}"
        f"Q{_f(mx + w)} {_f(my)} {_f(x0 + w)} 160Z"
    )


def _iris_clump(flowers: Iterable[tuple[float, float, float]]) -> str:
    blades = "".join(
        _blade(x0, tx, ty, w)
        for x0, tx, ty, w in [
            (20, 8, 40, 4),
            (28, 30, 60, 4),
            (36, 52, 36, 4),
            (58, 76, 54, 4),
            (66, 92, 30, 4),
            (48, 40, 80, 3.5),
            (74, 62, 90, 3.5),
        ]
    )
    stems = "".join(f"M{_f(x)} {_f(y + 6)}L{_f(x + 4)} 160" for x, y, _ in flowers)
    return (
        _path(stems, "none", DARK_GREEN, 2.2)
        + _path(blades, GREEN)
        + "".join(_iris_flower(x, y, s) for x, y, s in flowers)
    )


def _walkway(x0: float, y0: float, x1: float, y1: float, w: float, planks: int) -> str:
    """One straight run of the eight-plank bridge, with its posts."""
    ang = math.atan2(y1 - y0, x1 - x0)
    nx, ny = -math.sin(ang) * w / 2, math.cos(ang) * w / 2
    if ny < 0:
        nx, ny = -nx, -ny
    deck = _pts([(x0 - nx, y0 - ny), (x1 - nx, y1 - ny), (x1 + nx, y1 + ny), (x0 + nx, y0 + ny)])
    lines = ""
    posts = ""
    for i in range(1, planks):
        px, py = x0 + (x1 - x0) * i / planks, y0 + (y1 - y0) * i / planks
        lines += f"M{_f(px - nx)} {_f(py - ny)}L{_f(px + nx)} {_f(py + ny)}"
        if i % 3 == 1:
            posts += f"M{_f(px + nx)} {_f(py + ny)}v{_f(w * 1.4)}"
    return (
        _path(posts, "none", INK, 2.6)
        + _path(deck, "#c28a48")
        + _path(lines, "none", "#6b4423", 1)
        + _path(f"M{_f(x0 + nx)} {_f(y0 + ny)}L{_f(x1 + nx)} {_f(y1 + ny)}", "none", INK, 2)
    )


def _iris(c: Card) -> str:
    body = _bg(PAPER)
    water = _path("M3 160V128C30 122 60 134 97 124V160Z", SKY_BLUE)
    if c == Card.IRIS_BRIDGE:
        planks = _walkway(64, 104, 10, 78, 10, 7) + _walkway(-4, 132, 74, 102, 13, 8)
        ripples = _path(
            "M8 150q5-3 10 0t10 0M62 136q5-3 10 0t10 0M44 154q5-3 10 0t10 0", "none", WHITE, 1.2
        )
        flowers = _iris_clump([(20, 36, 1.3), (52, 28, 1.4), (82, 40, 1.2)])
        return body + water + flowers + ripples + planks
    flowers = _iris_clump([(18, 38, 1.3), (48, 24, 1.4), (78, 36, 1.3), (66, 80, 1.1)])
    if c == Card.IRIS_RIBBON:
        return (
            body
            + water
            + _iris_clump([(18, 38, 1.3), (82, 30, 1.3)])
            + _ribbon_for(c, x=50, y=88, deg=-6)
        )
    return body + water + _mirror_if(_variant(c) == 1, flowers)


# ---------------------------------------------------------------------------
# 6 Peony


def _peony_flower(x: float, y: float, r: float) -> str:
    return (
        _path(_scallop_d(x, y, r, 9, 1.25), RED)
        + _path(_scallop_d(x, y + r * 0.08, r * 0.68, 7, 1.3, -70), RED)
        + _path(_scallop_d(x, y + r * 0.12, r * 0.38, 5, 1.4), "#e8493b")
        + _circle(x, y + r * 0.12, r * 0.14, YELLOW, "none")
    )


def _peony_leaves(spots: Iterable[tuple[float, float, float, float]]) -> str:
    shape = "M0 0C-8-4-14-14-10-24L-5-18L-2-30L3-20L9-26C14-14 8-4 0 0Z"
    return "".join(
        _g(_path(shape, DARK_GREEN) + _path("M0 0L-1-22", "none", LEAF, 0.8), _at(x, y, s, a))
        for x, y, s, a in spots
    )


_PEONY_LEAVES: Final = [
    (14, 150, 1.4, -30), (40, 158, 1.3, 10), (66, 156, 1.4, 35), (90, 150, 1.3, 60),
    (28, 124, 1.1, -60), (78, 120, 1.1, 70),
]  # fmt: skip


def _butterfly(x: float, y: float, s: float, wing: str, spot: str, deg: float) -> str:
    return _g(
        _path("M0 0C-6-12-18-14-18-6C-18 0-8 2 0 0ZM0 0C6-12 18-14 18-6C18 0 8 2 0 0Z", wing)
        + _path("M0 0C-4 4-12 10-10 14C-6 14-2 8 0 0ZM0 0C4 4 12 10 10 14C6 14 2 8 0 0Z", spot)
        + _path(
            "M-18-6C-18-12-12-14-8-12C-12-10-14-6-18-6ZM18-6C18-12 12-14 8-12C12-10 14-6 18-6Z", INK
        )
        + _path(_circles_d([(-10, -6, 2.2), (10, -6, 2.2)]), spot, "none")
        + _dots([(-15, -10), (15, -10), (-8, 11), (8, 11)], WHITE, 0.9)
        + _path("M0-5V6M0-5L-3-11M0-5L3-11", "none", INK, 1.6),
        _at(x, y, s, deg),
    )


def _peony(c: Card) -> str:
    body = _bg(PAPER)
    leaves = _peony_leaves(_PEONY_LEAVES)
    if c == Card.PEONY_BUTTERFLIES:
        return (
            body
            + leaves
            + _peony_flower(50, 110, 26)
            + _butterfly(28, 46, 1.4, BLUE, YELLOW, -15)
            + _butterfly(72, 64, 1.2, PURPLE, RED, 20)
        )
    if c == Card.PEONY_RIBBON:
        flowers = _peony_flower(34, 118, 22) + _peony_flower(76, 48, 18)
        return body + leaves + flowers + _ribbon_for(c, x=54, y=82, deg=-8)
    plant = (
        leaves + _peony_flower(48, 98, 28) + _peony_flower(24, 40, 14) + _peony_flower(78, 30, 12)
    )
    return body + _mirror_if(_variant(c) == 1, plant)


# ---------------------------------------------------------------------------
# 7 Bush clover

_Pt = tuple[float, float]


def _clover_sprays(sprays: Iterable[tuple[_Pt, _Pt, _Pt, int]]) -> str:
    stems = ""
    flowers: list[tuple[float, float, float, float]] = []
    leaves: list[tuple[float, float, float, float]] = []
    for (x0, y0), (x1, y1), (x2, y2), n in sprays:
        stems += f"M{_f(x0)} {_f(y0)}Q{_f(x1)} {_f(y1)} {_f(x2)} {_f(y2)}"
        for i in range(1, n + 1):
            t = i / (n + 0.3)
            bx = (1 - t) ** 2 * x0 + 2 * (1 - t) * t * x1 + t * t * x2
            by = (1 - t) ** 2 * y0 + 2 * (1 - t) * t * y1 + t * t * y2
            dx = 2 * (1 - t) * (x1 - x0) + 2 * t * (x2 - x1)
            dy = 2 * (1 - t) * (y1 - y0) + 2 * t * (y2 - y1)
            ang = math.degrees(math.atan2(dy, dx))
            side = 1 if i % 2 else -1
            fx, fy = _polar(bx, by, 4.2, ang + 90 * side)
            flowers.append((fx, fy, 2.6, ang + 55 * side))
            lx, ly = _polar(bx, by, 4, ang - 90 * side)
            leaves.append((lx, ly, 3, ang - 45 * side))
    return _branch(stems, 1.4, BARK) + _dabs(leaves, GREEN, 3.4) + _dabs(flowers, RED, 3.6)


_CLOVER: Final[list[tuple[_Pt, _Pt, _Pt, int]]] = [
    ((8, 160), (14, 40), (92, 24), 11),
    ((24, 160), (40, 80), (96, 84), 9),
    ((6, 120), (10, 70), (44, 52), 5),
]


def _clover(c: Card) -> str:
    body = _bg(PAPER) + _path("M3 160V136C30 128 60 140 97 130V160Z", "#e9a08c")
    if c == Card.CLOVER_BOAR:
        brown = "#5d3b20"
        boar = _g(
            _path("M-10-20L-6-27L-2-21L2-28L6-21L10-27L14-20L18-25L20-17Z", brown)
            + _branch("M-20 12L-26 24M-12 14L-14 26M14 12L10 24M22 10L26 22", 3, brown)
            + _path(
                "M-28 2C-28-12-14-22 4-22C22-22 34-12 34 2C34 12 24 16 10 16H-16"
                "C-26 16-28 10-28 2Z",
                brown,
            )
            + _path("M-22-12C-8-22 16-22 30-8C16-16-6-16-22-12Z", "#35210f", "none")
            + _path("M-22 10C-8 14 14 14 28 8C20 14 2 14-14 14Z", "#8a5a32", "none")
            + _path("M-8-16l-2 5M0-17l-1 5M8-17l0 5M16-14l1 5", "none", "#8a5a32", 1)
            + _path("M-26-6L-40 2L-39 9L-26 10Z", brown)
            + _path("M-36 6Q-40-1-33-2Q-36 2-33 6Z", WHITE)
            + _path("M-18-15L-14-24L-10-15Z", brown)
            + _circle(-24, -5, 1.7, WHITE, INK, 0.6)
            + _path("M34-2Q40-4 40 2", "none", INK, 1.6),
            _at(54, 112, 1.15),
        )
        return body + _clover_sprays(_CLOVER[:2]) + boar
    if c == Card.CLOVER_RIBBON:
        return body + _clover_sprays(_CLOVER) + _ribbon_for(c, x=54, y=88, deg=-6)
    return body + _mirror_if(_variant(c) == 1, _clover_sprays(_CLOVER))


# ---------------------------------------------------------------------------
# 8 Susuki grass


def _susuki_hill(top: float = 86) -> str:
    hill = _path(
        f"M3 160V{_f(top + 12)}C22 {_f(top)} 40 {_f(top - 6)} 56 {_f(top - 4)}"
        f"C76 {_f(top - 2)} 90 {_f(top + 8)} 97 {_f(top + 14)}V160Z",
        INK,
    )
    rows = "".join(
        f"M3 {_f(top + 26 + 18 * i)}Q30 {_f(top + 10 + 18 * i)} 56 {_f(top + 16 + 18 * i)}"
        f"T97 {_f(top + 26 + 18 * i)}"
        for i in range(4)
    )
    blades = ""
    heads: list[tuple[float, float, float, float]] = []
    for i, x in enumerate(range(8, 97, 9)):
        tip_y = top - 18 - (i * 7) % 22
        tx = x + 6 + (i % 3) * 2
        blades += f"M{x} 158Q{x - 2} {_f(tip_y + 40)} {_f(tx)} {_f(tip_y)}"
        heads.append((tx + 1, tip_y + 4, 5, -70))
    return (
        hill
        + _path(rows, "none", WHITE, 1.2)
        + _path(blades, "none", WHITE, 1.3)
        + _dabs(heads, WHITE, 2.6, outline=False)
    )


def _goose(x: float, y: float, s: float) -> str:
    return _g(
        _path(
            "M-12 0Q-4-3 6-1L16-5L13 1Q2 5-12 0ZM-2-1Q1-13 12-18Q9-7 5-1ZM-12 0L-19-3L-12-1Z", INK
        )
        + _path("M0-2Q3-10 9-14Q7-7 4-2Z", "#667", "none")
        + _dots([(-10, -0.6)], WHITE, 0.8),
        _at(x, y, s),
    )


def _susuki(c: Card) -> str:
    body = _bg(RED)
    if c == Card.SUSUKI_MOON:
        moon = _circle(50, 58, 32, YELLOW) + _circle(50, 58, 28.5, "#fff4d2", INK, 1.5)
        return body + moon + _susuki_hill(96)
    if c == Card.SUSUKI_GEESE:
        geese = _goose(30, 34, 1.4) + _goose(58, 50, 1.2) + _goose(80, 30, 1.1)
        return body + geese + _susuki_hill(92)
    return body + _mirror_if(_variant(c) == 1, _susuki_hill(74))


# ---------------------------------------------------------------------------
# 9 Chrysanthemum


def _mum(x: float, y: float, r: float, colour: str) -> str:
    return (
        _path(_star_d(x, y, r, r * 0.6, 14), colour)
        + _circle(x, y, r * 0.42, ORANGE if colour == YELLOW else YELLOW)
        + _dots([_polar(x, y, r * 0.22, a) for a in range(0, 360, 60)], colour, 0.9)
    )


def _mum_plant(flowers: list[tuple[float, float, float, str]]) -> str:
    stems = "".join(
        f"M{_f(x)} {_f(y)}Q{_f(x + 8)} {_f((y + 160) / 2)} {_f(x - 4)} 160"
        for x, y, _, _ in flowers
    )
    leaves = "".join(
        _scallop_d(x + 9, y + r + 12, 7, 5) + _scallop_d(x - 8, y + r + 20, 6, 5)
        for x, y, r, _ in flowers
    )
    return (
        _path(stems, "none", DARK_GREEN, 2.2)
        + _path(leaves, GREEN)
        + "".join(_mum(x, y, r, col) for x, y, r, col in flowers)
    )


_KOTOBUKI: Final = (
    # A brush-drawn 寿 (long life) in strokes, in a 20 x 20 box.
    "M5 3H15M4 7H16M2 11H18M10 1V11Q9 16 3 19M3 14H17M14 11V19Q14 21 11 20M7 16l2 2"
)


def _chrysanthemum(c: Card) -> str:
    body = _bg(PAPER)
    flowers: list[tuple[float, float, float, str]] = [
        (26, 36, 16, YELLOW), (70, 28, 13, RED), (78, 74, 14, YELLOW), (24, 90, 12, RED),
    ]  # fmt: skip
    if c == Card.CHRYSANTHEMUM_SAKE_CUP:
        cup = _g(
            _path("M8 21L11 30H-11L-8 21Z", RED)
            + _path("M-27 0C-25 15-12 23 0 23S25 15 27 0Z", RED)
            + _path(_ellipses_d([(0, 0, 27, 7, 0)]), RED)
            + _path(_ellipses_d([(0, 0.6, 23, 4.6, 0)]), DARK_RED, YELLOW, 1.4)
            + _path("M-9.6 26H9.6M-24 8Q0 22 24 8", "none", YELLOW, 1.4)
            + _g(_path(_KOTOBUKI, "none", YELLOW, 2.2), "translate(-8 3.5) scale(.8)"),
            _at(50, 104, 1.35),
        )
        return body + _mum_plant(flowers[:3]) + cup
    if c == Card.CHRYSANTHEMUM_RIBBON:
        return body + _mum_plant(flowers) + _ribbon_for(c, x=50, y=86, deg=-8)
    more = [*flowers, (50, 128, 12, YELLOW)]
    return body + _mirror_if(_variant(c) == 1, _mum_plant(more))


# ---------------------------------------------------------------------------
# 10 Maple


def _maple_leaf_d(x: float, y: float, r: float, deg: float) -> str:
    up = -90 + deg
    pts: list[tuple[float, float]] = [_polar(x, y, r * 0.15, up + 180)]
    lobes = [(-105, 0.7), (-55, 0.92), (0, 1.0), (55, 0.92), (105, 0.7)]
    for i, (a, ln) in enumerate(lobes):
        pts.append(_polar(x, y, r * ln * 0.62, up + a - 14))
        pts.append(_polar(x, y, r * ln, up + a))
        pts.append(_polar(x, y, r * ln * 0.62, up + a + 14))
        if i < len(lobes) - 1:
            pts.append(_polar(x, y, r * 0.38, up + (a + lobes[i + 1][0]) / 2))
    sx, sy = _polar(x, y, r * 0.55, up + 180)
    return _pts(pts) + f"M{_f(x)} {_f(y)}L{_f(sx)} {_f(sy)}"


def _maple_branch(leaves: Iterable[tuple[float, float, float, float, str]]) -> str:
    by_colour: dict[str, str] = {}
    for x, y, r, a, col in leaves:
        by_colour[col] = by_colour.get(col, "") + _maple_leaf_d(x, y, r, a)
    return _branch(
        "M97 18Q70 28 56 50T26 100M70 30Q76 48 72 62M56 50Q40 44 30 30", 3.2, BARK
    ) + "".join(_path(d, col) for col, d in by_colour.items())


_MAPLE_LEAVES: Final[list[tuple[float, float, float, float, str]]] = [
    (30, 28, 12, -20, RED), (52, 20, 11, 10, RED), (80, 40, 11, 30, YELLOW), (72, 66, 12, 10, RED),
    (44, 58, 12, -10, RED), (20, 62, 11, -30, ORANGE), (26, 104, 12, -20, RED),
    (58, 86, 11, 20, RED),
    (86, 90, 10, 40, RED),
]  # fmt: skip


def _maple(c: Card) -> str:
    body = _bg(PAPER)
    if c == Card.MAPLE_DEER:
        deer_c = "#b5692b"
        deer = _g(
            _branch("M-16 6L-19 28M-9 8L-7 28M12 6L9 28M19 4L23 26", 3, deer_c)
            + _path(
                "M-22 0C-22-10-10-14 4-14C16-14 25-10 25-2C25 6 16 8 4 8H-14C-20 8-22 6-22 0Z",
                deer_c,
            )
            + _path("M-23-2L-19-28L-9-30L-11-6Z", deer_c)
            + _path("M-18-34C-14-38-4-36 2-31L3-28L-3-26C-9-26-15-28-18-34Z", deer_c)
            + _path("M-14-35L-18-48M-16-42L-22-45M-11-35L-8-50M-9-44L-3-48", "none", BARK, 2)
            + _path("M-20-32L-27-36L-21-29Z", deer_c)
            + _path("M25-4Q29-6 28 0Z", WHITE)
            + _path("M-18 4Q4 10 20 4Q10 8 4 8H-14Z", "#f3e2c4", "none")
            + _path("M-22-4L-20-24L-17-8Z", "#f3e2c4", "none")
            + _path(
                _circles_d(
                    [(-6, -6, 1.6), (4, -8, 1.6), (14, -5, 1.6), (-2, 1, 1.4), (10, 1, 1.4)]
                ),
                WHITE,
                "none",
            )
            + _circle(-4, -30, 1.2, INK, "none"),
            _at(52, 118, 1.2),
        )
        return body + _maple_branch(_MAPLE_LEAVES[:6]) + deer
    if c == Card.MAPLE_RIBBON:
        return body + _maple_branch(_MAPLE_LEAVES) + _ribbon_for(c, x=52, y=92, deg=6)
    return body + _mirror_if(_variant(c) == 1, _maple_branch(_MAPLE_LEAVES))


# ---------------------------------------------------------------------------
# 11 Willow


def _willow(strands: Iterable[tuple[float, float, float, float, float]], colour: str = LEAF) -> str:
    """Hanging strands ``(x0, y0, x1, y1, bend)`` with narrow leaves along them."""
    d = ""
    leaves: list[tuple[float, float, float, float]] = []
    for x0, y0, x1, y1, bend in strands:
        cx, cy = (x0 + x1) / 2 + bend, (y0 + y1) / 2
        d += f"M{_f(x0)} {_f(y0)}Q{_f(cx)} {_f(cy)} {_f(x1)} {_f(y1)}"
        n = max(3, int(abs(y1 - y0) / 9))
        for i in range(1, n + 1):
            t = i / (n + 0.5)
            bx = (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t * t * x1
            by = (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t * t * y1
            dx = 2 * (1 - t) * (cx - x0) + 2 * t * (x1 - cx)
            dy = 2 * (1 - t) * (cy - y0) + 2 * t * (y1 - cy)
            ang = math.degrees(math.atan2(dy, dx)) + (28 if i % 2 else -28)
            lx, ly = _polar(bx, by, 3.5, ang)
            leaves.append((lx, ly, 5, ang))
    return _path(d, "none", colour, 1.4) + _dabs(leaves, colour, 2.6, outline=False)


def _rain() -> str:
    d = "".join(f"M{(i * 37) % 92 + 5} {(i * 53) % 148 + 6}l-3 9" for i in range(22))
    return _path(d, "none", "#a9b6cc", 0.8)


_STRANDS: Final[list[tuple[float, float, float, float, float]]] = [
    (14, 3, 8, 120, -6), (30, 3, 26, 140, 8), (48, 3, 44, 100, -8), (64, 3, 62, 146, 6),
    (80, 3, 84, 110, -6), (92, 3, 96, 76, 4),
]  # fmt: skip


def _willow_card(c: Card) -> str:
    if c == Card.WILLOW_LIGHTNING:
        cloud = _path(
            "M3 3H97V60C88 68 80 54 70 62C62 70 52 56 42 64C32 72 22 58 12 66L3 70Z"
            "M3 160V132C14 126 22 138 34 132C44 126 54 140 66 134C78 128 88 140 97 134V160Z",
            INK,
        )
        curls = _path(
            "M20 30a6 6 0 1 1 6 6M50 22a7 7 0 1 1 7 7M78 38a6 6 0 1 1 6 6"
            "M40 150a6 6 0 1 1 6-6M80 148a5 5 0 1 1 5-5",
            "none",
            RED,
            1.6,
        )
        bolt = _path("M66 56L50 90H60L44 124L76 82H64L76 56Z", YELLOW)
        tails = _Pen()
        for a in (-90, 30, 150):
            tails.move(*_polar(0, 0, 6.2, a)).arc(6.2, 6.2, 0, 0, 1, *_polar(0, 0, 6.2, a + 110))
        drum = _g(
            _circle(0, 0, 15, RED, INK, 1.6)
            + _circle(0, 0, 11, YELLOW, INK, 1)
            + _path(str(tails), "none", INK, 2.2)
            + _dots([_polar(0, 0, 4.2, a) for a in (-90, 30, 150)], INK, 2.7)
            + _dots([_polar(0, 0, 13, a) for a in range(0, 360, 45)], INK, 1.1),
            _at(28, 100, 1.05),
        )
        return _bg(RED) + _willow(_STRANDS[:2], GREEN) + cloud + curls + bolt + drum
    body = _bg(NIGHT) + _rain()
    if c == Card.WILLOW_RAIN_MAN:
        stream = _path("M3 160V138C20 132 40 142 60 136S88 134 97 138V160Z", BLUE) + _path(
            "M8 146q6-4 12 0t12 0M50 144q6-4 12 0t12 0M30 154q6-4 12 0t12 0", "none", WHITE, 1.2
        )
        umbrella = _g(
            _path("M57 42L53 118", "none", INK, 1.8)
            + _path("M20 64Q56 18 94 64Q76 58 57 64Q38 58 20 64Z", YELLOW)
            + _path(
                "M57 42L20 64M57 42L38 61M57 42L57 64M57 42L76 61M57 42L94 64", "none", INK, 0.9
            ),
            "rotate(-10 57 64)",
        )
        man = (
            _path("M42 74C36 96 34 118 38 138H72C74 118 70 96 64 74Z", BLUE)
            + _path("M46 76L54 96L60 76Z", RED)
            + _path("M40 114Q54 120 70 114", "none", WHITE, 1.2)
            + _dots([(47, 104), (63, 102), (55, 128), (44, 128), (66, 126), (60, 110)], YELLOW, 1.5)
            + _path("M38 138L34 143H46L48 138ZM62 138L64 143H76L72 138Z", INK)
            + _circle(54, 72, 6.5, "#f2d2a8")
            + _path("M48 68Q54 60 60 68L57 60H51Z", INK)
            + _g(_path("M57 64L56 100", "none", INK, 2), "rotate(-10 57 64)")
            + _path("M44 92Q50 86 58 87L59 94Q50 94 45 101Z", BLUE)
            + _circle(60, 90, 2.8, "#f2d2a8")
        )
        frog = _g(
            _branch("M-6 3L-13 12l-3 1M6 3L13 12l3 1M-6-4L-10-11M6-4L10-11", 2.2, LEAF)
            + _path("M-8 0C-8-7 8-7 8 0C8 7-8 7-8 0Z", LEAF)
            + _path(_circles_d([(-3, -4, 1.2), (3, -4, 1.2)]), INK, "none"),
            _at(20, 126, 1.3, -20),
        )
        return body + _willow(_STRANDS[:1] + _STRANDS[-2:]) + stream + umbrella + man + frog
    if c == Card.WILLOW_SWALLOW:
        swallow = _g(
            _path("M4 2L26 16L17 8L28 12L8-2Z", "#1f2a5c")
            + _path("M-2-2C-14-12-24-26-22-40C-14-28-4-16 6 -6Z", "#1f2a5c")
            + _path("M-14 0C-10-8 4-8 10 0C4 8-10 8-14 0Z", WHITE)
            + _path("M-14 0C-10-8 2-8 8-4C0-2-8-1-14 0Z", "#1f2a5c")
            + _path("M-14 0L-21 1L-14 3Z", INK)
            + _path("M-14 0Q-12 4-8 4Q-10 1-8-2Z", RED, "none")
            + _circle(-10, -2, 1, WHITE, "none")
            + _path("M2-2C-2 10 4 22 16 30C14 18 10 8 8-2Z", "#1f2a5c"),
            _at(50, 86, 1.4, 25),
        )
        return body + _willow(_STRANDS) + swallow
    if c == Card.WILLOW_RIBBON:
        return body + _willow(_STRANDS) + _ribbon_for(c, x=50, y=84, deg=-8)
    raise AssertionError(c)  # pragma: no cover - the four willow cards are above


# ---------------------------------------------------------------------------
# 12 Paulownia


def _kiri_leaf(
    x: float, y: float, s: float, deg: float, colour: str = GREEN, vein: str = DARK_GREEN
) -> str:
    return _g(
        _path(
            "M0 0C-14 0-28-10-28-26C-28-38-18-44-8-42L0-52L8-42C18-44 28-38 28-26C28-10 14 0 0 0Z",
            colour,
        )
        + _path("M0 2V-46M0-14L-18-26M0-14L18-26M0-28L-14-38M0-28L14-38", "none", vein, 1.1),
        _at(x, y, s, deg),
    )


def _kiri_flowers(x: float, y: float, s: float = 1.0) -> str:
    """The paulownia crest: three flower spikes of 5, 7 and 5 tiers in a fan."""
    stalks = ""
    buds: list[tuple[float, float, float, float, float]] = []
    for deg, n in ((-30, 5), (0, 7), (30, 5)):
        tx, ty = _polar(0, 0, 12 + 6 * n, deg - 90)
        stalks += f"M0 0L{_f(tx)} {_f(ty)}"
        for i in range(n):
            bx, by = _polar(0, 0, 14 + 6 * i, deg - 90)
            spread = 4.6 * (1 - i / (n + 2))
            for side in (-1, 1):
                ox, oy = _polar(bx, by, spread, deg + (0 if side > 0 else 180))
                buds.append((ox, oy, 3.6, 2.4, deg - 90 + side * 60))
        buds.append((tx, ty + 1, 3, 2.2, deg - 90))
    return _g(
        _path(stalks, "none", "#8a6a1c", 2)
        + _path(_ellipses_d(buds), PURPLE)
        + _dots([(bx, by) for bx, by, *_ in buds[::2]], LILAC, 1.1),
        _at(x, y, s),
    )


_KIRI_LEAF: Final = "#213826"


def _kiri_plant(flowers_y: float = 94) -> str:
    return (
        _kiri_flowers(54, flowers_y, 1.15)
        + _kiri_leaf(80, 150, 1.05, 35, _KIRI_LEAF, GREEN)
        + _kiri_leaf(30, 158, 1.3, -20, _KIRI_LEAF, GREEN)
    )


def _paulownia(c: Card) -> str:
    body = _bg(PAPER)
    if c == Card.PAULOWNIA_PHOENIX:
        sky = _path("M3 3H97V92C70 102 30 86 3 98Z", RED)
        bird = _g(
            _path("M8 4C30 10 44 30 40 62C34 42 24 26 6 10Z", GREEN)
            + _path("M8 6C24 20 30 44 18 68C18 46 14 30 4 12Z", YELLOW)
            + _path("M6 2C36 0 52 14 56 38C44 24 30 14 6 8Z", "#3a6fd0")
            + _path("M6 8C16 26 16 48 2 70C6 50 6 30 2 14Z", PURPLE)
            + _path(
                _circles_d([(40, 58, 3.4), (19, 63, 3.4), (54, 34, 3.4), (2, 70, 3)]), RED, INK, 1
            )
            + _dots([(40, 58), (19, 63), (54, 34), (2, 70)], YELLOW, 1.2)
            + _path(
                "M-2-6C2-28 18-46 40-52C34-40 34-30 24-20C34-22 40-20 46-16C32-6 18-2 4 2Z", YELLOW
            )
            + _path("M4-10C12-24 22-36 34-46M8-6C18-16 28-22 40-18", "none", RED, 2)
            + _path("M-12-2C-10-10 2-12 10-6C14 0 10 8 0 8C-8 8-12 4-12-2Z", RED)
            + _branch("M-8-4C-16-12-18-22-12-30", 4.5, GREEN)
            + _path("M-12-36L-10-46L-6-38L-2-44L-6-34Z", RED)
            + _circle(-12, -32, 5, GREEN)
            + _path("M-16-33L-23-31L-16-29Z", YELLOW, INK, 0.8)
            + _path("M-14-29Q-16-23-11-24Z", RED)
            + _circle(-12.5, -33, 1.2, WHITE, "none"),
            _at(46, 74, 1.1),
        )
        leaves = _kiri_leaf(18, 166, 1.1, -30, _KIRI_LEAF, GREEN) + _kiri_leaf(
            84, 166, 1.1, 30, _KIRI_LEAF, GREEN
        )
        return body + sky + leaves + bird
    if _variant(c) == 2:
        band = _path("M3 118H97V160H3Z", YELLOW) + _path("M3 123H97M3 153H97", "none", INK, 0.8)
        return body + _kiri_plant(86) + band
    return body + _mirror_if(_variant(c) == 1, _kiri_plant())


_MONTH_ART: Final[tuple[Callable[[Card], str], ...]] = (
    _pine,
    _plum,
    _cherry,
    _wisteria,
    _iris,
    _peony,
    _clover,
    _susuki,
    _chrysanthemum,
    _maple,
    _willow_card,
    _paulownia,
)
