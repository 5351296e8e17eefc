"""The terminal replay viewer: ``koikoi replay FILE --tui``.

Steps through a game record forwards and backwards, deal by deal and action
by action, with both hands face up (a record is reviewed with full
information). The record is checked as it is replayed
(:func:`koikoi.game.record.iter_steps`); a record that does not replay is an error
before the screen opens.

Each step is told in words by :class:`koikoi.features.narrate.Narrator` (the same words
as the web replay page), each settlement explained, and, with an analysis of
the record (``--analysis``, or one the record carries), the mistakes marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from koikoi.features.names import record_names
from koikoi.features.narrate import Mistake, Narrator, settled_in
from koikoi.game.cards import CODES, MONTH_NAMES, MONTH_NAMES_JA, card_list
from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord, ReplayStep, iter_steps
from koikoi.i18n import N_, language, t, td
from koikoi.tui.cardtext import pile_text
from koikoi.tui.widgets import CardRow, TooSmall, localize_bindings

__all__ = ["ReplayApp", "ReplayScreen", "load_steps", "run_replay", "step_text"]


def load_steps(record: GameRecord) -> list[ReplayStep]:
    """Every step of the record, checked.

    Raises:
        RecordError: where the record does not replay.
    """
    steps = list(iter_steps(record))
    if not steps:  # pragma: no cover - iter_steps always yields the first deal
        raise RecordError("the record has no steps")
    return steps


def _names(record: GameRecord) -> tuple[str, str]:
    """The players' names in the language in use, told apart when equal."""
    a, b = record_names(record)
    return (a, b)


def step_text(step: ReplayStep, names: tuple[str, str], mistake: Mistake | None = None) -> Text:
    """What a step did, in words, with any mistake marked and any settlement explained."""
    narrator = Narrator(names)
    text = Text()
    lines: list[tuple[str, str]] = []
    if step.action is not None:
        # English keeps the action's notation ("play 3L"); other languages say it in words
        action = (
            step.action.action if narrator.lang == "en" else narrator.action(step.action.action)
        )
        lines.append((f"{names[step.action.player]}: {action}", "bold"))
    if mistake is not None:
        lines.append((narrator.mistake(mistake), "bold red"))
    lines.extend((line, "") for line in narrator.step(step))
    for settlement in settled_in(step):
        lines.extend((line, "green") for line in narrator.settlement(settlement))
    for i, (line, style) in enumerate(lines):
        if i:
            text.append("\n")
        text.append(line, style)
    return text


def _action_numbers(steps: Sequence[ReplayStep]) -> list[int]:
    """For each step, the number of its action in the record (1-based; 0 for a deal)."""
    out = []
    number = 0
    for step in steps:
        if step.kind == "action":
            number += 1
        out.append(number if step.kind == "action" else 0)
    return out


class ReplayScreen(Screen[None]):
    """One record, one step at a time."""

    DEFAULT_CSS = """
    ReplayScreen { layout: vertical; }
    #rp-status { height: 1; background: $primary-darken-2; padding: 0 1; }
    .rp-line { height: 1; }
    .rp-label { height: 1; color: $text-muted; }
    #rp-step { height: 1fr; border-top: hkey $primary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", N_("Next")),
        Binding("left", "step(-1)", N_("Back")),
        Binding("space", "step(1)", show=False),
        Binding("n", "step(1)", show=False),
        Binding("p", "step(-1)", show=False),
        Binding("backspace", "step(-1)", show=False),
        Binding("pagedown", "deal(1)", N_("Next deal")),
        Binding("pageup", "deal(-1)", N_("Prev deal")),
        Binding("right_square_bracket", "deal(1)", show=False),
        Binding("left_square_bracket", "deal(-1)", show=False),
        Binding("m", "mistake(1)", show=False),
        Binding("M", "mistake(-1)", show=False),
        Binding("home", "jump(0)", N_("Start")),
        Binding("end", "jump(-1)", N_("End")),
        Binding("q", "app.quit", N_("Quit")),
        Binding("escape", "app.quit", show=False),
    ]

    def __init__(
        self,
        record: GameRecord,
        steps: Sequence[ReplayStep],
        mistakes: Mapping[int, Mistake] | None = None,
    ) -> None:
        super().__init__()
        localize_bindings(self)
        self.record = record
        self.steps = list(steps)
        self.index = 0
        self.mistakes = dict(mistakes or {})
        self.numbers = _action_numbers(self.steps)

    def compose(self) -> ComposeResult:
        yield Static("", id="rp-status")
        yield Static("", id="rp-p1-label", classes="rp-label")
        yield CardRow(id="rp-hand1", empty=t("(empty hand)"), marker_line=False)
        yield Static("", id="rp-pile1", classes="rp-line")
        yield Static("", id="rp-field-label", classes="rp-label")
        yield CardRow(id="rp-field", empty=t("(the field is empty)"), marker_line=False)
        yield Static("", id="rp-p0-label", classes="rp-label")
        yield CardRow(id="rp-hand0", empty=t("(empty hand)"), marker_line=False)
        yield Static("", id="rp-pile0", classes="rp-line")
        with VerticalScroll(id="rp-step", can_focus=False):
            yield Static("", id="rp-step-text")
        yield Footer()
        yield TooSmall()

    def on_mount(self) -> None:
        self.show()

    @property
    def step(self) -> ReplayStep:
        return self.steps[self.index]

    def show(self) -> None:
        """Draw the current step."""
        step = self.step
        names = _names(self.record)
        views = (step.view(0), step.view(1))
        v = views[0]
        status = Text()
        status.append(
            t("Replay {step}/{steps}", step=self.index, steps=len(self.steps) - 1), "bold"
        )
        month = (
            f"{MONTH_NAMES[v.month - 1]} {MONTH_NAMES_JA[v.month - 1].split()[0]}"
            if language() == "en"
            else td(MONTH_NAMES[v.month - 1])
        )
        status.append(
            t(
                " · Round {round}/{rounds} · {month} {name} · Dealer {dealer} · Stock {stock}",
                round=v.round_number,
                rounds=v.rounds,
                month=v.month,
                name=month,
                dealer=names[v.dealer],
                stock=v.stock_count,
            )
        )
        status.append(f" · {step.match_scores[0]} – {step.match_scores[1]}", "bold")
        self.query_one("#rp-status", Static).update(status)
        width = max(40, (self.size.width or 80) - 6)
        for p in (0, 1):
            turn = t(" ◀ to act") if not v.is_over and v.current == p else ""
            self.query_one(f"#rp-p{p}-label", Static).update(
                t(
                    "{name} — hand {hand}, yaku {points}, koi-koi ×{calls}",
                    name=names[p],
                    hand=views[p].hand.bit_count(),
                    points=v.round_scores[p],
                    calls=v.koikoi_calls[p],
                )
                + turn
            )
            self.query_one(f"#rp-hand{p}", CardRow).set_cards(card_list(views[p].hand))
            self.query_one(f"#rp-pile{p}", Static).update(pile_text(v.piles[p], width=width))
        label = t("Field ({count})", count=v.field.bit_count())
        if v.drawn >= 0:
            label += t(" · drawn card waiting for a choice: {card}", card=CODES[v.drawn])
        self.query_one("#rp-field-label", Static).update(label)
        self.query_one("#rp-field", CardRow).set_cards(card_list(v.field))
        mistake = self.mistakes.get(self.numbers[self.index])
        self.query_one("#rp-step-text", Static).update(step_text(step, names, mistake))

    def action_step(self, delta: int) -> None:
        new = max(0, min(len(self.steps) - 1, self.index + delta))
        if new == self.index:
            self.app.bell()
            return
        self.index = new
        self.show()

    def action_deal(self, delta: int) -> None:
        deals = [s.index for s in self.steps if s.kind == "deal"]
        if delta > 0:
            later = [i for i in deals if i > self.index]
            target = later[0] if later else len(self.steps) - 1
        else:
            earlier = [i for i in deals if i < self.index]
            target = earlier[-1] if earlier else 0
        self.index = target
        self.show()

    def action_mistake(self, delta: int) -> None:
        """Go to the next (``1``) or previous (``-1``) marked mistake."""
        i = self.index + delta
        while 0 <= i < len(self.steps):
            if self.numbers[i] in self.mistakes:
                self.index = i
                self.show()
                return
            i += delta
        self.app.bell()

    def action_jump(self, where: int) -> None:
        self.index = where if where >= 0 else len(self.steps) - 1
        self.show()


class ReplayApp(App[None]):
    """The replay viewer application."""

    TITLE = "Koi-Koi replay"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-normal")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]  # noqa: RUF012
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", N_("Quit"), priority=True, show=False),
    ]

    def __init__(
        self,
        record: GameRecord,
        steps: Sequence[ReplayStep] | None = None,
        mistakes: Mapping[int, Mistake] | None = None,
    ) -> None:
        super().__init__()
        self.record = record
        self.steps = list(steps) if steps is not None else load_steps(record)
        self.mistakes = dict(mistakes or {})

    def on_mount(self) -> None:
        self.push_screen(ReplayScreen(self.record, self.steps, self.mistakes))


def run_replay(record: GameRecord, mistakes: Mapping[int, Mistake] | None = None) -> int:
    """Open the replay viewer on ``record``; returns the exit status.

    Args:
        record: the game record.
        mistakes: the mistakes to mark, by action number
            (:func:`koikoi.features.narrate.mistakes_from_analysis`).

    Raises:
        RecordError: if the record does not replay (before the screen opens).
    """
    app = ReplayApp(record, load_steps(record), mistakes)
    app.run()
    return int(app.return_code or 0)
