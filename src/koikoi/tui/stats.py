"""The statistics screen: your finished matches, their figures, and a replay of each.

Reached from the new-game screen (``F2`` or the Statistics button). It reads the
history file (:mod:`koikoi.tui.history`) and shows, from
:func:`koikoi.features.stats.summarize`: games, wins, losses and draws, points, yaku
made, koi-koi calls and how many succeeded, in total and by rule set and by
opponent; and the list of finished matches, newest first, where ``Enter``
replays the chosen one in the replay viewer (:mod:`koikoi.tui.replay`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich import box
from rich.table import Table as RichTable
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from koikoi.features.names import shown_name
from koikoi.features.progress import yaku_label
from koikoi.features.stats import (
    GameLine,
    Tally,
    format_percent,
    format_signed,
    totals_lines,
)
from koikoi.game.errors import KoiKoiError
from koikoi.i18n import N_, t, tn
from koikoi.tui.history import FinishedGame, History, read_history, summary
from koikoi.tui.replay import ReplayScreen, load_steps
from koikoi.tui.widgets import TooSmall, localize_bindings

__all__ = [
    "HistoryReplayScreen",
    "StatsScreen",
    "finished_at",
    "result_word",
    "tally_table",
    "totals_text",
]


def result_word(result: str) -> str:
    """``"win"`` → ``"Won"`` (in the chosen language)."""
    if result == "win":
        return t("Won")
    if result == "loss":
        return t("Lost")
    return t("Drawn")


def finished_at(stamp: str) -> str:
    """An ISO 8601 time (UTC) as local ``YYYY-MM-DD HH:MM``; other text unchanged."""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if when.tzinfo is not None:
        when = when.astimezone()
    return when.strftime("%Y-%m-%d %H:%M")


def _koikoi_cell(tally: Tally) -> str:
    if not tally.koikoi_calls:
        return "0"
    rate = format_percent(tally.koikoi_success_rate)
    return f"{tally.koikoi_successes}/{tally.koikoi_calls} ({rate})"


def tally_table(title: str, rows: Sequence[tuple[str, Tally]]) -> RichTable:
    """One row per rule set or opponent: games, results, points, koi-koi success."""
    table = RichTable(
        title=title,
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        expand=False,
    )
    table.add_column(t("Name"), overflow="fold", min_width=8)
    table.add_column(t("Games"), justify="right", no_wrap=True)
    table.add_column(t("W-L-D"), justify="right", no_wrap=True)
    table.add_column(t("Win%"), justify="right", no_wrap=True)
    table.add_column(t("Net"), justify="right", no_wrap=True)
    table.add_column(t("Pts/rd"), justify="right", no_wrap=True)
    table.add_column(t("Koi-koi"), justify="right", no_wrap=True)
    for name, tally in rows:
        table.add_row(
            name,
            str(tally.games),
            f"{tally.wins}-{tally.losses}-{tally.draws}",
            format_percent(tally.win_rate),
            f"{tally.net_points:+d}",
            format_signed(tally.points_per_round, 2),
            _koikoi_cell(tally),
        )
    return table


def _totals_text(total: Tally) -> Text:
    games, results, points, koikoi = totals_lines(total)
    text = Text()
    text.append(games, "bold")
    text.append(": " + results)
    text.append("\n")
    text.append(points)
    text.append("\n")
    text.append(koikoi)
    return text


def _yaku_text(total: Tally) -> Text:
    text = Text()
    text.append(t("Yaku made"), "bold")
    if not total.yaku:
        text.append("\n" + t("none yet"), "dim")
        return text
    text.append("\n")
    text.append(", ".join(f"{yaku_label(name)} ×{times}" for name, times in total.yaku))
    return text


def totals_text(total: Tally) -> Text:
    """The totals over every game, then the yaku made, most first."""
    text = _totals_text(total)
    text.append("\n\n")
    text.append_text(_yaku_text(total))
    return text


class HistoryReplayScreen(ReplayScreen):
    """The replay viewer over the statistics: ``q`` or ``Esc`` goes back to them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "back", N_("Back")),
        Binding("escape", "back", show=False),
    ]

    def action_back(self) -> None:
        self.dismiss(None)


class StatsScreen(Screen[None]):
    """Statistics over the history file and the list of finished matches."""

    DEFAULT_CSS = """
    StatsScreen { layout: vertical; }
    #st-title { height: 1; text-style: bold; color: $accent; padding: 0 1; }
    #st-problems { height: auto; color: $warning; padding: 0 1; }
    #st-problems.-none { display: none; }
    StatsScreen TabbedContent { height: 1fr; }
    StatsScreen TabPane { padding: 0 1; }
    #st-summary-scroll { height: 1fr; }
    #st-totals { height: auto; }
    #st-tables { height: auto; layout: vertical; }
    #st-tables Static { height: auto; margin-top: 1; }
    #st-note { height: auto; margin-top: 1; }
    #st-games { height: 1fr; }
    #st-games-help { height: 1; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", N_("Back")),
        Binding("q", "close", show=False),
        Binding("s", "show_tab('st-summary')", N_("Summary")),
        Binding("g", "show_tab('st-list')", N_("Games")),
        Binding("r", "replay", N_("Replay")),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        localize_bindings(self)
        self.path = path
        self.history = History(path)
        self.error = ""
        try:
            self.history = read_history(path)
        except KoiKoiError as exc:
            self.error = str(exc)
        self.stats = summary(self.history)

    # ------------------------------------------------------------------ layout

    def title_line(self) -> str:
        games = self.stats.total.games
        return t("Statistics") + " — " + tn("{n} finished match", "{n} finished matches", games)

    def problems_line(self) -> str:
        if self.error:
            return self.error
        problems = self.history.problems
        if not problems:
            return ""
        return tn(
            "{n} line of {file} could not be read and is left out: {first}",
            "{n} lines of {file} could not be read and are left out; the first: {first}",
            len(problems),
            file=self.path.name,
            first=problems[0],
        )

    def compose(self) -> ComposeResult:
        yield Static(self.title_line(), id="st-title")
        problems = self.problems_line()
        yield Static(problems, id="st-problems", classes="" if problems else "-none")
        with TabbedContent(initial="st-summary"):
            with TabPane(t("Summary"), id="st-summary"), VerticalScroll(id="st-summary-scroll"):
                yield from self._summary()
            with TabPane(t("Games"), id="st-list"):
                yield self._games_table()
                yield Static(t("Enter or r: replay the chosen match"), id="st-games-help")
        yield Footer()
        yield TooSmall()

    def _summary(self) -> ComposeResult:
        kept = t("The history is kept in {path}.", path=str(self.path))
        if not self.stats.games:
            empty = t("No finished matches yet: play a match to the end and it is counted here.")
            yield Static(empty + "\n" + kept, id="st-totals")
            return
        yield Static(totals_text(self.stats.total), id="st-totals")
        with Vertical(id="st-tables"):
            yield Static(tally_table(t("By rule set"), self.stats.by_rules), id="st-by-rules")
            yield Static(
                tally_table(
                    t("By opponent"),
                    tuple((shown_name(n), tally) for n, tally in self.stats.by_opponent),
                ),
                id="st-by-opponent",
            )
        note = t("Net: your points less your opponent's. Koi-koi: calls that succeeded / calls.")
        yield Static(Text(note + "\n" + kept, "dim"), id="st-note")

    def _games_table(self) -> DataTable[str]:
        table: DataTable[str] = DataTable(id="st-games", cursor_type="row", zebra_stripes=True)
        table.add_column(t("Finished"), key="finished")
        table.add_column(t("Opponent"), key="opponent")
        table.add_column(t("Rules"), key="rules")
        table.add_column(t("Result"), key="result")
        table.add_column(t("Score"), key="score")
        table.add_column(t("Rounds"), key="rounds")
        table.add_column(t("Koi-koi"), key="koikoi")
        for game, line in self.rows():
            table.add_row(
                finished_at(game.finished),
                shown_name(line.opponent),
                line.rules,
                result_word(line.result),
                f"{line.score[0]}-{line.score[1]}",
                str(line.rounds),
                f"{line.koikoi_successes}/{line.koikoi_calls}" if line.koikoi_calls else "0",
                key=str(game.line),
            )
        return table

    def rows(self) -> list[tuple[FinishedGame, GameLine]]:
        """Each finished match with its figures, newest first."""
        pairs = list(zip(self.history.games, self.stats.games, strict=True))
        return pairs[::-1]

    # ----------------------------------------------------------------- actions

    def action_close(self) -> None:
        self.dismiss(None)

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "st-list":
            self.query_one("#st-games", DataTable).focus()

    def chosen(self) -> FinishedGame | None:
        """The match under the cursor of the games list, if any."""
        rows = self.rows()
        table = self.query_one("#st-games", DataTable)
        if not rows or not 0 <= table.cursor_row < len(rows):
            return None
        return rows[table.cursor_row][0]

    def action_replay(self) -> None:
        if self.query_one(TabbedContent).active != "st-list":
            self.action_show_tab("st-list")
            return
        game = self.chosen()
        if game is not None:
            self.replay(game)

    @on(DataTable.RowSelected, "#st-games")
    def _selected(self, event: DataTable.RowSelected) -> None:
        game = self.chosen()
        if game is not None:
            self.replay(game)

    def replay(self, game: FinishedGame) -> None:
        """Open the replay viewer on one finished match (back to this screen after)."""
        try:
            steps = load_steps(game.record)
        except KoiKoiError as exc:
            self.notify(
                t("This match cannot be replayed: {error}", error=str(exc)),
                severity="error",
                timeout=8,
            )
            return
        self.app.push_screen(HistoryReplayScreen(game.record, steps))
