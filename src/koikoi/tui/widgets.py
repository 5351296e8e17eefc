"""Widgets of the table: rows of card chips, card backs, piles, the too-small notice."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, cast

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import RenderResult
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import RichLog, Static

from koikoi.i18n import t, td
from koikoi.tui.cardtext import CHIP_HEIGHT, CHIP_WIDTH, TALL_CHIP_HEIGHT, chip_text

__all__ = [
    "OVER_TABLE_CLASS",
    "CardRow",
    "GameLog",
    "Marker",
    "TooSmall",
    "fit_over_table",
    "localize_bindings",
]

GAP = 1
"""Cells between two chips."""


@dataclass(frozen=True, slots=True)
class Marker:
    """The line under a chip: a short text and its style."""

    text: str = ""
    style: str = ""


@dataclass(slots=True)
class _RowState:
    cards: list[int] = field(default_factory=list)
    markers: dict[int, Marker] = field(default_factory=dict)
    selected: int | None = None
    dimmed: set[int] = field(default_factory=set)


class CardRow(Widget):
    """A row of card chips that wraps onto more lines, with a marker line under each chip.

    Clicking a chip posts :class:`CardRow.CardClicked`. The row draws itself (no
    child widgets), so updating it is cheap and always in step with the game.
    """

    DEFAULT_CSS = """
    CardRow {
        height: auto;
        width: 1fr;
    }
    """

    class CardClicked(Message):
        """A chip was clicked."""

        def __init__(self, row: CardRow, card: int) -> None:
            super().__init__()
            self.row = row
            self.card = card

        @property
        def control(self) -> CardRow:
            return self.row

    def __init__(
        self,
        *,
        empty: str = "",
        marker_line: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._state = _RowState()
        self._empty = empty
        self._marker_line = marker_line
        self._tall = False

    @property
    def tall(self) -> bool:
        """Whether the chips are tall (four lines: the kind in Japanese last)."""
        return self._tall

    @tall.setter
    def tall(self, value: bool) -> None:
        if value != self._tall:
            self._tall = value
            self.refresh(layout=True)

    @property
    def cards(self) -> list[int]:
        return list(self._state.cards)

    @property
    def selected(self) -> int | None:
        return self._state.selected

    def marker(self, card: int) -> Marker:
        return self._state.markers.get(card, Marker())

    def set_cards(
        self,
        cards: list[int],
        *,
        markers: dict[int, Marker] | None = None,
        selected: int | None = None,
        dimmed: set[int] | None = None,
    ) -> None:
        """Show ``cards`` (in this order) with their markers."""
        old_rows = self._rows_for(self.size.width or 80, len(self._state.cards))
        self._state = _RowState(list(cards), dict(markers or {}), selected, set(dimmed or ()))
        new_rows = self._rows_for(self.size.width or 80, len(cards))
        self.refresh(layout=old_rows != new_rows)

    @property
    def _chip_height(self) -> int:
        return self._lines + (1 if self._marker_line else 0)

    @property
    def _lines(self) -> int:
        return TALL_CHIP_HEIGHT if self._tall else CHIP_HEIGHT

    @staticmethod
    def per_line(width: int) -> int:
        return max(1, (width + GAP) // (CHIP_WIDTH + GAP))

    def _rows_for(self, width: int, n: int) -> int:
        if n == 0:
            return 1
        return -(-n // self.per_line(width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        n = len(self._state.cards)
        if n == 0:
            return 1
        return self._rows_for(width, n) * self._chip_height

    def render(self) -> RenderResult:
        state = self._state
        if not state.cards:
            return Text(self._empty, style="dim italic")
        per = self.per_line(self.size.width or 80)
        out = Text(no_wrap=True, overflow="crop")
        for start in range(0, len(state.cards), per):
            chunk = state.cards[start : start + per]
            chips = [
                chip_text(c, dim=c in state.dimmed, tall=self._tall).split("\n") for c in chunk
            ]
            if start:
                out.append("\n")
            for line in range(self._lines):
                if line:
                    out.append("\n")
                for i, chip in enumerate(chips):
                    if i:
                        out.append(" " * GAP)
                    part = chip[line]
                    if chunk[i] == state.selected:
                        part.stylize(Style(reverse=True) if line == 0 else Style(bold=True))
                    out.append_text(part)
            if self._marker_line:
                out.append("\n")
                for i, card in enumerate(chunk):
                    if i:
                        out.append(" " * GAP)
                    marker = state.markers.get(card, Marker())
                    style = marker.style
                    if card == state.selected:
                        style = f"{style} reverse".strip()
                    out.append(marker.text.center(CHIP_WIDTH)[:CHIP_WIDTH], style)
        return out

    def card_at(self, x: int, y: int) -> int | None:
        """The card drawn at cell ``(x, y)`` of the row, if any."""
        per = self.per_line(self.size.width or 80)
        col, within = divmod(x, CHIP_WIDTH + GAP)
        if within >= CHIP_WIDTH or col >= per:
            return None
        index = (y // self._chip_height) * per + col
        if 0 <= index < len(self._state.cards):
            return self._state.cards[index]
        return None

    def on_click(self, event: events.Click) -> None:
        card = self.card_at(event.x, event.y)
        if card is not None:
            event.stop()
            self.post_message(self.CardClicked(self, card))


class GameLog(RichLog):
    """The log of the match: plain lines, each wrapped at spaces to the log's width.

    A :class:`~textual.widgets.RichLog` wraps a line once, when it is written; this log
    keeps its lines (the last ``max_lines``) and writes them again whenever its own
    width changes (the terminal resized, the side panel shown or hidden), so no line
    is ever cut mid-word.
    """

    def __init__(self, *, max_lines: int, id: str | None = None) -> None:
        super().__init__(id=id, wrap=True, markup=False, max_lines=max_lines, min_width=20)
        self.can_focus = False
        self.source: list[str] = []
        """The lines as written (the last ``max_lines``)."""
        self._wrapped_at = 0

    def add(self, line: str) -> None:
        """Add a line at the bottom."""
        self.source.append(line)
        if self.max_lines is not None:
            del self.source[: -self.max_lines]
        self.write(line)

    def on_resize(self, event: events.Resize) -> None:
        """Wrap every line again at the new width (deferred writes are not wrapped yet)."""
        width = self.scrollable_content_region.width
        if not width or width == self._wrapped_at:
            return
        first = self._wrapped_at == 0
        self._wrapped_at = width
        if first and not self.lines:
            return  # nothing written at another width yet
        self.clear()
        for line in self.source:
            self.write(line)


class TooSmall(Static):
    """Covers a screen while the terminal is below 80 x 24 (shown by the app's CSS)."""

    DEFAULT_CSS = """
    TooSmall {
        display: none;
        dock: top;
        width: 100%;
        height: 100%;
        content-align: center middle;
        text-align: center;
        background: $error-darken-3;
        color: $text;
    }
    Screen.-narrow TooSmall, Screen.-short TooSmall {
        display: block;
    }
    """

    def __init__(self) -> None:
        super().__init__(
            t(
                "The terminal is too small for Koi-Koi.\n"
                "Please enlarge it to at least 80 x 24.\n\n"
                "(Ctrl+C: quit, offering to save)"
            ),
            id="too-small",
        )


def localize_bindings(node: DOMNode) -> None:
    """Show ``node``'s key bindings (the footer's descriptions) in the language in use.

    ``BINDINGS`` are made when the module is imported, in English (each description
    marked with :func:`koikoi.i18n.N_`); a node copies them when it is created, so
    its ``__init__`` calls this to translate its copy.
    """
    table = node._bindings.key_to_bindings
    for key, bindings in table.items():
        table[key] = [
            dataclasses.replace(b, description=td(b.description)) if b.description else b
            for b in bindings
        ]


OVER_TABLE_CLASS: Final = "over-table"
"""The class of modal screens drawn over the table, which stays visible around them
(the app's CSS gives these screens a see-through background)."""


class FitsOverTable:
    """A mixin for the panels shown over the lower table: when the screen is mounted
    and at every resize it sizes the panel ``FIT_BOX`` with :func:`fit_over_table`
    (the table stays in view down to ``FIT_ANCHOR``, the panel keeps at least
    ``FIT_LEAST`` rows), then calls :meth:`fitted` with the rows given. Put it first
    among the bases of a ``ModalScreen``."""

    FIT_BOX: ClassVar[str]
    """The selector of the panel that is sized."""
    FIT_ANCHOR: ClassVar[str] = "#hand"
    FIT_LEAST: ClassVar[int] = 7

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        screen = cast("Screen[Any]", self)
        box = screen.query_one(self.FIT_BOX)
        self.fitted(fit_over_table(screen, box, anchor=self.FIT_ANCHOR, least=self.FIT_LEAST))

    def fitted(self, rows: int) -> None:
        """Size what is inside the panel to its ``rows`` (nothing by default)."""


def fit_over_table(screen: Screen[Any], box: Widget, *, anchor: str, least: int) -> int:
    """Size ``box`` (a panel docked at the bottom of a modal ``screen``) so that the
    table below the modal stays visible down to its ``anchor`` widget (``"#hand"``: the
    field and the hand), but with at least ``least`` rows. Returns the rows given.

    Without a table under the modal (e.g. in tests of the dialog alone) the box keeps
    the whole height.
    """
    height = screen.size.height or screen.app.size.height
    rows = height
    stack = screen.app.screen_stack
    under = stack[: stack.index(screen)] if screen in stack else stack
    for below in reversed(under):
        try:
            widget = below.query_one(anchor)
        except NoMatches:
            continue
        rows = height - widget.region.bottom
        break
    rows = max(least, min(rows, height))
    box.styles.max_height = rows
    return rows
