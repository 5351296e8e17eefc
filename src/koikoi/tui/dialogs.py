"""Modal dialogs: a choice between cards, koi-koi or stop, quitting, hints, messages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from koikoi.agents.base import ActionValue
from koikoi.features.narrate import Narrator
from koikoi.features.opponents import format_value, ranked
from koikoi.game.actions import KOIKOI_ID, PLAY_TARGET_BASE, STOP_ID
from koikoi.game.cards import MONTH_MASKS, format_cards
from koikoi.game.engine import is_bust, match_winner
from koikoi.game.errors import KoiKoiError
from koikoi.game.rules import Rules
from koikoi.game.scoring import Settlement, YakuResult
from koikoi.i18n import N_, t, tn
from koikoi.tui.cardtext import card_caption, card_code_text
from koikoi.tui.controller import action_text
from koikoi.tui.widgets import OVER_TABLE_CLASS, FitsOverTable, TooSmall, localize_bindings

__all__ = [
    "ChoiceOption",
    "ChooseDialog",
    "HintDialog",
    "KoiKoiDialog",
    "KoiKoiFacts",
    "MessageDialog",
    "PreparingDialog",
    "QuitDialog",
    "advice_lines",
    "bonus_note",
    "match_after_stop",
    "points",
    "preparing_text",
]

DIALOG_CSS = """
.dialog {
    width: 76;
    max-width: 100%;
    height: auto;
    max-height: 100%;
    border: thick $accent;
    background: $panel;
    padding: 0 1;
}
.dialog-title {
    text-style: bold;
    width: 1fr;
    content-align: center middle;
    color: $accent;
}
.dialog-buttons {
    height: auto;
    align-horizontal: center;
    margin-top: 1;
}
.dialog-buttons Button {
    margin: 0 1;
    min-width: 12;
}
.over-table-box {
    width: 100%;
    max-width: 100;
    height: auto;
    border: thick $accent;
    background: $panel;
    padding: 0 1;
}
.over-table-box .dialog-buttons {
    margin-top: 0;
    height: 1;
}
"""


def _narrator() -> Narrator:
    """Yaku and multiplier lines in the language in use (no names needed)."""
    return Narrator(("", ""))


@dataclass(frozen=True, slots=True)
class ChoiceOption:
    """One choice: the action id it stands for, its label and the card to draw (or -1)."""

    action_id: int
    label: str
    card: int = -1


class ChooseDialog(FitsOverTable, ModalScreen[int | None]):
    """Choose one of a few actions, e.g. which of two matching field cards to capture.

    A panel at the bottom of the screen: the table (field and hand) stays in view
    above it. Keys ``1``..``9`` pick an option; ``escape`` cancels when ``cancellable``.
    """

    FIT_BOX = "#choose-box"

    DEFAULT_CSS = (
        DIALOG_CSS
        + """
    ChooseDialog { align: center bottom; }
    ChooseDialog .choice-card { height: 1; width: auto; margin: 0 1 0 0; }
    ChooseDialog .choice-row { height: 1; }
    ChooseDialog .choice-row Button { width: 1fr; }
    ChooseDialog #choices { height: auto; }
    """
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", N_("Cancel")),
        *[Binding(str(n), f"choose({n})", show=False) for n in range(1, 10)],
    ]

    def __init__(
        self, title: str, prompt: str, options: Sequence[ChoiceOption], *, cancellable: bool = True
    ) -> None:
        super().__init__(classes=OVER_TABLE_CLASS)
        localize_bindings(self)
        self.title_text = title
        self.prompt = prompt
        self.options = list(options)
        self.cancellable = cancellable

    def compose(self) -> ComposeResult:
        with Vertical(classes="over-table-box", id="choose-box"):
            yield Static(self.title_text, classes="dialog-title")
            yield Static(self.prompt, id="choose-prompt")
            with VerticalScroll(id="choices", can_focus=False):
                for n, option in enumerate(self.options, 1):
                    with Horizontal(classes="choice-row"):
                        if option.card >= 0:
                            yield Static(card_code_text(option.card), classes="choice-card")
                        yield Button(f"{n}. {option.label}", id=f"choice-{n}", compact=True)
            if self.cancellable:
                with Horizontal(classes="dialog-buttons"):
                    yield Button(t("Cancel (Esc)"), id="cancel", variant="default", compact=True)
        yield TooSmall()

    def fitted(self, rows: int) -> None:
        fixed = 2 + 1 + self.query_one("#choose-prompt").size.height + int(self.cancellable)
        self.query_one("#choices").styles.max_height = max(1, rows - fixed)

    def action_choose(self, n: int) -> None:
        if 1 <= n <= len(self.options):
            self.dismiss(self.options[n - 1].action_id)

    def action_cancel(self) -> None:
        if self.cancellable:
            self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id == "cancel":
            self.action_cancel()
        elif button_id.startswith("choice-"):
            self.action_choose(int(button_id.removeprefix("choice-")))


def points(n: int) -> str:
    """``"1 point"``, ``"2 points"``.

    >>> points(1), points(0)
    ('1 point', '0 points')
    """
    return tn("{n} point", "{n} points", n)


def bonus_note(rules: Rules, opponent: str) -> str:
    """What koi-koi risks and earns under the rules' ``koikoi.bonus``."""
    bonus = rules.koikoi.bonus
    double = t(" Seven points or more are doubled.") if rules.koikoi.seven_double else ""
    if bonus == "opponent_x2":
        return t(
            "Koi-koi: play on for more. If {opponent} then stops first, you score nothing "
            "and its points are doubled.{double}",
            opponent=opponent,
            double=double,
        )
    if bonus == "challenge_x2":
        return t(
            "Koi-koi: play on; if you improve and then stop, your points are doubled. "
            "If {opponent} stops first, you score nothing and its points are doubled.{double}",
            opponent=opponent,
            double=double,
        )
    if bonus == "ladder":
        return t(
            "Koi-koi: each call adds to your score when you finally stop (+1, +2, +3, "
            "then x(calls - 2)). If {opponent} stops first, you score nothing.{double}",
            opponent=opponent,
            double=double,
        )
    return t(
        "Koi-koi: play on for more. If {opponent} stops first, you score nothing.{double}",
        opponent=opponent,
        double=double,
    )


def _outcome(action_id: int, field: int) -> str:
    """What a plain play would capture from ``field`` (for hints)."""
    if action_id >= PLAY_TARGET_BASE:
        return ""
    matches = field & MONTH_MASKS[action_id // 4]
    if not matches:
        return t(" (stays on the field)")
    return t(" (takes {cards})", cards=format_cards(matches))


def advice_lines(
    values: dict[int, ActionValue], legal: Sequence[int], *, field: int | None = None
) -> list[str]:
    """The advisor's values of the legal actions, best first by what it maximises, each
    with its units: ``"+1.2 points · 62% match win  play 3L ... ← best"``.

    With ``field``, a plain play says what it would capture.
    """
    rows = ranked(values, legal)
    if not rows:
        return [t("The AI gave no values for these actions.")]
    width = max(len(format_value(v)) for _, v in rows)
    out = []
    for i, (action_id, value) in enumerate(rows):
        best = t("  ← best") if i == 0 else ""
        outcome = _outcome(action_id, field) if field is not None else ""
        out.append(f"{format_value(value):>{width}}  {action_text(action_id)}{outcome}{best}")
    return out


@dataclass(frozen=True, slots=True)
class KoiKoiFacts:
    """What the koi-koi dialog shows."""

    rules: Rules
    yaku: YakuResult
    stop: Settlement
    stop_text: str
    opponent: str
    opponent_calls: int
    own_calls: int
    opponent_score: int
    hand_counts: tuple[int, int]
    stock_count: int
    round_number: int = 1
    rounds: int = 0
    """The match's rounds; 0: unknown (no word on the match)."""
    match_scores: tuple[int, int] = (0, 0)
    dealer: int = 0


def match_after_stop(facts: KoiKoiFacts) -> str | None:
    """What stopping now means for the match, when it ends the match: in the last round,
    or when the payment would leave a player with nothing (``game.start_points``).

    ``"Stopping now wins the match 39–35."``, ``"... loses the match 35–30 to AI."``,
    ``"... ends the match in a draw, 30–30."``; None when the match goes on.
    """
    game = facts.rules.game
    deltas = facts.stop.deltas
    mine = facts.match_scores[0] + deltas[0]
    theirs = facts.match_scores[1] + deltas[1]
    if not is_bust(game, (mine, theirs)) and (
        facts.rounds <= 0 or facts.round_number < facts.rounds
    ):
        return None
    winner = match_winner(game, (mine, theirs), facts.dealer)
    if winner is None:
        return t("Stopping now ends the match in a draw, {score}.", score=_pair(mine, theirs))
    if winner == 0:
        return t("Stopping now wins the match {score}.", score=_pair(mine, theirs))
    return t(
        "Stopping now loses the match {score} to {who}.",
        score=_pair(theirs, mine),
        who=facts.opponent,
    )


def _pair(first: int, second: int) -> str:
    """``39–35``; with a score below zero (zero-sum stakes) ``36 to −1``."""
    if first >= 0 and second >= 0:
        return f"{first}–{second}"
    return t("{a} to {b}", a=first, b=second).replace("-", "−")


class KoiKoiDialog(FitsOverTable, ModalScreen[int]):
    """Koi-koi (play on) or stop: the yaku held, what stopping scores now, the AI's advice.

    A panel at the bottom of the screen: the table (field and hand) stays in view.
    """

    FIT_BOX = "#kk-dialog"
    FIT_LEAST = 8

    DEFAULT_CSS = (
        DIALOG_CSS
        + """
    KoiKoiDialog { align: center bottom; }
    KoiKoiDialog #kk-body { height: auto; }
    KoiKoiDialog #kk-advice { color: $text-muted; height: auto; display: none; }
    KoiKoiDialog #kk-advice.-shown { display: block; }
    """
    )

    AUTO_FOCUS = None  # Enter must not call koi-koi by accident: k, s or a mouse click.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k", "koikoi", N_("Koi-koi")),
        Binding("s", "stop", N_("Stop")),
        Binding("a", "advice", N_("Ask the AI")),
    ]

    def __init__(
        self,
        facts: KoiKoiFacts,
        advise: Callable[[], dict[int, ActionValue]] | None = None,
        *,
        preparing: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(classes=OVER_TABLE_CLASS)
        localize_bindings(self)
        self.facts = facts
        self.advise = advise
        self.preparing = preparing
        """Whether the AI is still being prepared (its first use in this process: the
        advice then takes longer, and says so)."""
        self.advice: list[str] | None = None

    def body_text(self) -> Text:
        f = self.facts
        text = Text()
        text.append(
            t("Stop now and you score {points}", points=points(f.stop.points)), "bold green"
        )
        steps = " · ".join(_narrator().multiplier(m) for m in f.stop.multipliers)
        text.append(
            t(" (base {base}{steps}).", base=f.stop.base, steps=" · " + steps if steps else "")
            + "\n"
        )
        ending = match_after_stop(f)
        if ending:
            text.append(ending + "\n", "bold")
        if f.hand_counts[0] == 0:
            text.append(
                t(
                    "You have no cards left to play: koi-koi cannot add to your yaku, "
                    "it can only let your opponent score."
                )
                + "\n",
                "bold",
            )
        text.append(t("Your yaku: "), "bold")
        text.append("; ".join(_narrator().yaku(y) for y in f.yaku.yaku))
        text.append(t(". Total {total}.", total=f.yaku.total) + "\n")

        def times(n: int) -> str:
            return t("never") if n == 0 else (t("once") if n == 1 else t("{n} times", n=n))

        text.append(
            t(
                "{opponent}: yaku {points}, called koi-koi {their_calls}. "
                "You called koi-koi {your_calls}.",
                opponent=f.opponent,
                points=f.opponent_score,
                their_calls=times(f.opponent_calls),
                your_calls=times(f.own_calls),
            )
            + "\n"
            + t(
                "Cards left: you {yours}, {opponent} {theirs}, stock {stock}.",
                yours=f.hand_counts[0],
                opponent=f.opponent,
                theirs=f.hand_counts[1],
                stock=f.stock_count,
            )
            + "\n"
        )
        text.append(bonus_note(f.rules, f.opponent), "italic")
        return text

    def compose(self) -> ComposeResult:
        with Vertical(classes="over-table-box", id="kk-dialog"):
            yield Static(t("Koi-koi or stop?  (こいこい / 勝負)"), classes="dialog-title")
            with VerticalScroll(id="kk-body"):
                yield Static(self.body_text(), id="kk-text")
                yield Static("", id="kk-advice")
            with Horizontal(classes="dialog-buttons"):
                yield Button(t("Koi-koi (k)"), id="koikoi", variant="warning", compact=True)
                yield Button(t("Stop (s)"), id="stop", variant="success", compact=True)
                yield Button(t("Ask the AI (a)"), id="advice", variant="default", compact=True)
        yield TooSmall()

    def fitted(self, rows: int) -> None:
        self.query_one("#kk-body").styles.max_height = max(2, rows - 4)

    def action_koikoi(self) -> None:
        self.dismiss(KOIKOI_ID)

    def action_stop(self) -> None:
        self.dismiss(STOP_ID)

    def action_advice(self) -> None:
        advice = self.query_one("#kk-advice", Static)
        advice.add_class("-shown")
        if self.advise is None:
            self.advice = [t("No advice in this game.")]
            advice.update(self.advice[0])
            return
        if self.preparing is not None and self.preparing():
            advice.update(preparing_text())
        else:
            advice.update(t("The expert is thinking…"))
        self.run_worker(self._advise(), exclusive=True, group="advice")

    async def _advise(self) -> None:
        if self.advise is None:  # pragma: no cover - checked by the caller
            return
        try:
            values = await asyncio.to_thread(self.advise)
        except KoiKoiError as exc:
            self.advice = [t("No advice: {error}", error=exc)]
            self.query_one("#kk-advice", Static).update(self.advice[0])
            return
        self.advice = advice_lines(values, [KOIKOI_ID, STOP_ID])
        lines = [t("The expert's advice:"), *self.advice]
        best = ranked(values, [KOIKOI_ID, STOP_ID])
        if len(best) == 2:
            lines.append(
                t("The expert would call koi-koi.")
                if best[0][0] == KOIKOI_ID
                else t("The expert would stop.")
            )
        self.query_one("#kk-advice", Static).update("\n".join(lines))
        self.query_one("#kk-body").scroll_end(animate=False)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "koikoi":
            self.action_koikoi()
        elif event.button.id == "stop":
            self.action_stop()
        elif event.button.id == "advice":
            self.action_advice()


class QuitDialog(ModalScreen[str]):
    """Leaving a game: ``"save"`` (save and quit), ``"quit"`` or ``"cancel"``.

    ``resumed_from``: an earlier save of the match that the match has moved on from,
    which quitting without saving deletes (resuming it later would go back in time),
    and says so.
    """

    DEFAULT_CSS = (
        DIALOG_CSS
        + """
    QuitDialog { align: center middle; }
    QuitDialog .dialog { width: 60; }
    """
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose('cancel')", N_("Cancel")),
        Binding("s", "choose('save')", N_("Save and quit")),
        Binding("y", "choose('save')", show=False),
        Binding("q", "choose('quit')", N_("Quit without saving")),
    ]

    def __init__(self, can_save: bool = True, *, resumed_from: Path | None = None) -> None:
        super().__init__()
        localize_bindings(self)
        self.can_save = can_save
        self.resumed_from = resumed_from

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(t("Leave the game?"), classes="dialog-title")
            if self.can_save:
                text = t("The match is not over. Save it to resume later (koikoi play --resume)?")
                if self.resumed_from is not None:
                    text += "\n" + t(
                        "Quitting without saving deletes the earlier save "
                        "{name}: the match has moved on since.",
                        name=self.resumed_from.name,
                    )
                yield Static(text, id="quit-text")
            with Horizontal(classes="dialog-buttons"):
                if self.can_save:
                    yield Button(t("Save and quit (s)"), id="save", variant="success")
                yield Button(t("Quit (q)"), id="quit", variant="error")
                yield Button(t("Cancel (Esc)"), id="cancel")
        yield TooSmall()

    def action_choose(self, what: str) -> None:
        if what == "save" and not self.can_save:
            return
        self.dismiss(what)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_choose(event.button.id or "cancel")


class MessageDialog(ModalScreen[None]):
    """A title and some text; any of Enter, Escape or Space closes it."""

    DEFAULT_CSS = (
        DIALOG_CSS
        + """
    MessageDialog { align: center middle; }
    MessageDialog #message-body { height: auto; max-height: 18; }
    """
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", N_("Close")),
        Binding("enter", "close", show=False),
        Binding("space", "close", show=False),
        Binding("h", "close", show=False),
    ]

    def __init__(self, title: str, body: str | Text) -> None:
        super().__init__()
        localize_bindings(self)
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            with VerticalScroll(id="message-body"):
                yield Static(self.body, id="message-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(t("OK (Enter)"), id="ok", variant="primary")
        yield TooSmall()

    def action_close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


def preparing_text() -> str:
    """What a player who asks the AI before it is ready is told."""
    return t("Preparing the AI… (first time only)")


class PreparingDialog(FitsOverTable, ModalScreen[None]):
    """Said while a hint waits for the AI to be ready (the compiled kernel loads the
    first time it is used in a process: seconds): over the lower table, the field and
    the hand in view. ``Esc`` gives up the hint; :meth:`thinking` says the AI is at work.
    """

    FIT_BOX = "#preparing-box"
    FIT_LEAST = 3

    DEFAULT_CSS = (
        DIALOG_CSS
        + """
    PreparingDialog { align: center bottom; }
    PreparingDialog #preparing-box {
        border-title-color: $accent;
        border-title-style: bold;
        border-title-align: center;
        border-subtitle-color: $text-muted;
        border-subtitle-align: right;
    }
    """
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", N_("Cancel")),
    ]

    def __init__(self) -> None:
        super().__init__(classes=OVER_TABLE_CLASS)
        localize_bindings(self)
        self.cancelled = False
        """Whether the player gave up waiting."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="over-table-box", id="preparing-box") as box:
            box.border_title = t("Hint")
            box.border_subtitle = t("Esc: cancel")
            yield Static(preparing_text(), id="preparing-text")
        yield TooSmall()

    def thinking(self) -> None:
        """The AI is ready and thinking about the position."""
        self.query_one("#preparing-text", Static).update(t("The expert is thinking…"))

    def action_cancel(self) -> None:
        self.cancelled = True
        self.dismiss(None)


class HintDialog(FitsOverTable, MessageDialog):
    """The expert's value of each legal play, best first (whatever the opponent), over
    the lower table: the field and the hand stay in view.

    Compact, to show as many moves as the rows below the hand allow (at 80x24 five):
    the title in the border, what the numbers mean in one line, then the moves in a
    list that has the focus, so ``↑`` ``↓`` (``PgUp`` ``PgDn``) bring the others into
    view; the border says so when some are out of view. ``Enter`` or ``Esc`` closes.
    """

    FIT_BOX = "#hint-box"

    DEFAULT_CSS = """
    HintDialog { align: center bottom; }
    HintDialog #hint-box {
        border-title-color: $accent;
        border-title-style: bold;
        border-title-align: center;
        border-subtitle-color: $text-muted;
        border-subtitle-align: right;
    }
    HintDialog #hint-head { height: 1; color: $text-muted; text-overflow: ellipsis; }
    HintDialog #message-body { height: auto; max-height: 100%; scrollbar-size-vertical: 1; }
    HintDialog #message-text { width: 1fr; }
    """

    def __init__(
        self,
        values: dict[int, ActionValue],
        legal: Sequence[int],
        *,
        field: int | None = None,
    ) -> None:
        lines = advice_lines(values, legal, field=field)
        match = any(v.equity is not None for v in values.values())
        self.head = (
            t("Best first: your expected net points this round · chance to win the match")
            if match
            else t("Best first: your expected net points this round")
        )
        super().__init__(t("Hint"), "\n".join(lines))
        self.add_class(OVER_TABLE_CLASS)
        self.values = values
        self.moves = len(lines)

    def compose(self) -> ComposeResult:
        with Vertical(classes="over-table-box", id="hint-box") as box:
            box.border_title = self.title_text
            yield Static(self.head, id="hint-head")
            with VerticalScroll(id="message-body"):
                yield Static(
                    Text(self.body) if isinstance(self.body, str) else self.body, id="message-text"
                )
        yield TooSmall()

    def on_mount(self) -> None:
        self.query_one("#message-body").focus()

    def fitted(self, rows: int) -> None:
        body = self.query_one("#message-body")
        room = max(1, rows - 3)  # the two border lines, the head
        body.styles.max_height = room
        keys = t("Enter: close")
        if self.moves > room:
            keys = t("↑↓ more moves · {keys}", keys=keys)
        self.query_one("#hint-box").border_subtitle = keys


def card_options(action_ids: Sequence[int], cards: Sequence[int]) -> list[ChoiceOption]:
    """Options for a choice, one per action, each showing its card."""
    return [
        ChoiceOption(a, card_caption(c) if c >= 0 else action_text(a), c)
        for a, c in zip(action_ids, cards, strict=True)
    ]
