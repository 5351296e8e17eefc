"""The table: the screen where a match is played.

Everything drawn here comes from the human's :class:`~koikoi.game.views.PlayerView`
(through :class:`~koikoi.tui.controller.Table` snapshots); the match itself
stays in the :class:`~koikoi.tui.controller.GameController`.

One worker runs the match: it waits for the human's play (a future resolved by
keys or clicks), asks the opponent (in a thread, so a searching AI does not
freeze the screen), and shows each step at the chosen pace. Another, in a
thread, loads what the opponent and the advisor need (the compiled kernel, the
match-equity table) as the screen opens, so the first AI move is not slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from koikoi.agents.base import ActionValue
from koikoi.features.progress import yaku_progress
from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE
from koikoi.game.cards import MONTH_MASKS, MONTH_NAMES, MONTH_NAMES_JA, card_list
from koikoi.game.engine import Event, Phase
from koikoi.game.errors import KoiKoiError
from koikoi.game.tables import LIGHTNING
from koikoi.i18n import N_, language, t, td
from koikoi.tui.cardtext import back_text, card_caption, pile_text
from koikoi.tui.controller import (
    HUMAN,
    OPPONENT,
    GameController,
    Step,
    Table,
    interchangeable,
    narrate,
    plays_by_card,
)
from koikoi.tui.dialogs import (
    ChoiceOption,
    ChooseDialog,
    HintDialog,
    KoiKoiDialog,
    KoiKoiFacts,
    PreparingDialog,
)
from koikoi.tui.history import append_match
from koikoi.tui.progress import progress_line
from koikoi.tui.screens import (
    CapturesScreen,
    HelpScreen,
    MatchEndScreen,
    RoundEndScreen,
    piles_and_progress,
)
from koikoi.tui.widgets import CardRow, GameLog, Marker, TooSmall, localize_bindings

__all__ = ["GameScreen"]

BOARD_EVENTS = frozenset({"play", "draw", "take", "koikoi", "stop"})
TALL_CHIPS_ROWS = 36
"""A wide terminal at least this tall draws the cards as tall chips (the kind in Japanese
added)."""
LOG_LINES = 500
"""Lines the log keeps."""


def _logged(event: Event) -> bool:
    """Whether the log tells ``event``: not a drawn card's two matches (the capture
    chosen next tells the draw again)."""
    return not (event.kind == "draw" and "choice" in event.data)


def _short(name: str) -> str:
    """A name without its parenthesised detail: ``"AI (expert)"`` -> ``"AI"``."""
    return name.split(" (", 1)[0] or name


def fit_line(line: str, names: tuple[str, str], width: int) -> str:
    """A line of the turn report that fits ``width`` cells: the players' names lose
    their parenthesised detail when the line is too long (the status line and the
    opponent's line say it in full).

    >>> fit_line("AI (Club player) draws 9A Chrysanthemum · Sake cup ◎: no match.",
    ...          ("You", "AI (Club player)"), 60)
    'AI draws 9A Chrysanthemum · Sake cup ◎: no match.'
    """
    if Text(line).cell_len <= width:
        return line
    for name in names:
        if _short(name) != name:
            line = line.replace(name, _short(name))
    return line


def status_line(
    *,
    round_text: str,
    months: tuple[str, ...],
    dealers: tuple[str, ...],
    stock: str,
    scores: tuple[str, ...],
    width: int,
) -> Text:
    """The status line, shortened part by part until it fits ``width`` cells: the
    scores (with the opponent's name) come first and are the last to shrink.

    >>> status_line(round_text="Round 1/12", months=("1 Pine 松 matsu", "1 Pine"),
    ...             dealers=("Dealer: You",), stock="Stock 24",
    ...             scores=("You 0 – 0 AI (expert)", "You 0 – 0 AI"), width=72).plain
    'Round 1/12 · You 0 – 0 AI (expert) · 1 Pine · Dealer: You · Stock 24'
    """

    def build(score: str, month: str, dealer: str) -> Text:
        text = Text()
        text.append(round_text, "bold")
        text.append(" · ")
        text.append(score, "bold")
        text.append(f" · {month} · {dealer} · {stock}")
        return text

    candidates = [
        (score, month, dealer) for score in scores for dealer in dealers for month in months
    ]
    for score, month, dealer in candidates:
        text = build(score, month, dealer)
        if text.cell_len <= width:
            return text
    text = build(scores[-1], months[-1], dealers[-1])
    text.truncate(width, overflow="ellipsis")
    return text


class GameScreen(Screen[None]):
    """A match against the AI; ``on_done`` gets ``"new"`` (new game) or ``"quit"`` at its end."""

    DEFAULT_CSS = """
    GameScreen { layout: vertical; }
    #status { height: 1; background: $primary-darken-2; color: $text; padding: 0 1; }
    #body { height: 1fr; }
    #table { width: 1fr; height: 1fr; overflow-y: auto; }
    #side { display: none; width: 40; height: 1fr; border-left: vkey $primary; padding: 0 1; }
    GameScreen.-wide #side { display: block; }
    GameScreen.-wide .compact { display: none; }
    .line { height: 1; }
    #opponent-line { color: $text; }
    #field-label { color: $text-muted; }
    #turn { height: 2; color: $warning; text-style: bold; }
    #log { height: 1fr; min-height: 1; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    GameScreen.-wide #log { min-height: 3; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", N_("Card"), show=False),
        Binding("right", "move(1)", N_("Card"), show=False),
        Binding("enter", "play_selected", N_("Play")),
        Binding("space", "play_selected", show=False),
        Binding("h", "hint", N_("Hint")),
        Binding("c", "captures", N_("Captures")),
        Binding("question_mark", "help", N_("Help")),
        Binding("f1", "help", show=False),
        Binding("s", "save", N_("Save")),
        Binding("q", "app.request_quit", N_("Quit")),
        Binding("plus", "pace(1)", show=False),
        Binding("equals_sign", "pace(1)", show=False),
        Binding("minus", "pace(-1)", show=False),
        *[Binding(str(n), f"pick({n})", show=False) for n in range(1, 10)],
    ]

    PACES = (0.0, 0.3, 0.8, 1.5, 2.5)

    def __init__(
        self,
        game: GameController,
        *,
        pace: float = 0.8,
        records: Path | None = None,
        saves: Path | None = None,
        save_path: Path | None = None,
        stamp: Callable[[], str] | None = None,
        on_done: Callable[[str], None] | None = None,
        history: Path | None = None,
        ai_ready: threading.Event | None = None,
    ) -> None:
        super().__init__()
        localize_bindings(self)
        self.game = game
        self.ai_ready = ai_ready
        """Set when the app's warm-up of the AI (the compiled kernel) is done (None: no
        warm-up to wait for)."""
        self.pace = pace
        self.records = records
        self.history = history
        """The history file a finished match is added to (None: not kept)."""
        self.saves = saves
        self.save_path = save_path
        self.saved_moves = len(game.match.actions) if save_path is not None else -1
        """The moves the save at ``save_path`` holds (-1: none)."""
        self.stamp = stamp
        self.on_done = on_done
        self.selected: int | None = None
        self.state = "starting"
        """What the screen waits for: play, take, decide, opponent, animating,
        round_end, match_end, done."""
        self.record_path: Path | None = None
        self.turn_lines: list[str] = []
        self._table = game.table()
        self._play_future: asyncio.Future[int] | None = None
        self._skip = asyncio.Event()
        self._busy = False

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static("", id="status")
        with Horizontal(id="body"):
            with Vertical(id="table"):
                yield Static("", id="opponent-line", classes="line")
                yield Static("", id="opponent-pile", classes="line compact")
                yield Static("", id="opponent-progress", classes="line compact")
                yield Static("", id="field-label", classes="line")
                yield CardRow(id="field", empty=t("(the field is empty)"))
                yield Static("", id="turn")
                yield CardRow(id="hand", empty=t("(your hand is empty)"))
                yield Static("", id="my-pile", classes="line compact")
                yield Static("", id="my-progress", classes="line compact")
                yield GameLog(id="log", max_lines=LOG_LINES)
            with VerticalScroll(id="side", can_focus=False):
                yield Static("", id="side-text")
        yield Footer()
        yield TooSmall()

    def on_mount(self) -> None:
        for event in self.game.view().history:
            line = narrate(event, self.game.names)
            if line and _logged(event):
                self._log(line)
        self.redraw()
        self.run_worker(self.game.preload, thread=True, group="preload", exit_on_error=False)
        self.run_game()

    # --------------------------------------------------------------- drawing

    def redraw(self, table: Table | None = None) -> None:
        """Draw the table (default: the human's current view)."""
        if table is None:
            table = self.game.table()
        self._table = table
        game = self.game
        names = game.names
        rules = game.rules
        month = table.month
        dealer = names[table.dealer]
        status_width = max(20, self.size.width - 2)
        month_names = (
            (
                f"{month} {MONTH_NAMES[month - 1]} {MONTH_NAMES_JA[month - 1]}",
                f"{month} {MONTH_NAMES[month - 1]}",
            )
            if language() == "en"
            else (t("{month} {name}", month=month, name=td(MONTH_NAMES[month - 1])),)
        )
        self.query_one("#status", Static).update(
            status_line(
                round_text=t(
                    "Round {round}/{rounds}", round=table.round_number, rounds=table.rounds
                ),
                months=(*month_names, t("Month {month}", month=month)),
                dealers=(
                    t("Dealer: {name}", name=dealer),
                    t("Dealer: {name}", name=_short(dealer)),
                ),
                stock=t("Stock {count}", count=table.stock_count),
                scores=(
                    f"{names[0]} {table.match_scores[0]} – "
                    f"{table.match_scores[1]} {names[OPPONENT]}",
                    f"{names[0]} {table.match_scores[0]} – "
                    f"{table.match_scores[1]} {_short(names[OPPONENT])}",
                ),
                width=status_width,
            )
        )

        opp = Text()
        opp.append(f"{names[OPPONENT]} ", "bold")
        opp.append_text(back_text(table.opponent_count))
        opp.append(
            t(
                " {count} in hand · yaku {points}",
                count=table.opponent_count,
                points=table.round_scores[OPPONENT],
            )
        )
        if table.koikoi_calls[OPPONENT]:
            opp.append(t(" · KOI-KOI ×{calls}", calls=table.koikoi_calls[OPPONENT]), "bold red")
        self.query_one("#opponent-line", Static).update(opp)

        width = max(40, (self.query_one("#table").size.width or 80) - 5)
        for player, pile_id, prog_id in (
            (OPPONENT, "#opponent-pile", "#opponent-progress"),
            (HUMAN, "#my-pile", "#my-progress"),
        ):
            label = t("AI") if player == OPPONENT else t("You")
            pile = Text(label + " " * max(1, 4 - cell_len(label)), style="bold")
            pile.append_text(pile_text(table.piles[player], width=width))
            self.query_one(pile_id, Static).update(pile)
            rows = yaku_progress(rules, table.piles[player], table.piles[1 - player], month=month)
            prog = Text("    ")
            if table.round_scores[player]:
                prog.append(
                    t("Yaku {points} pts · ", points=table.round_scores[player]), "bold green"
                )
            if player == HUMAN and table.koikoi_calls[HUMAN]:
                prog.append(t("koi-koi ×{calls} · ", calls=table.koikoi_calls[HUMAN]), "bold red")
            room = width - prog.cell_len - 2
            prog.append(progress_line(rows, width=room))
            self.query_one(prog_id, Static).update(prog)

        field_label = Text(t("── Field ({count}) ", count=table.field.bit_count()), style="dim")
        if table.drawn >= 0:
            field_label.append(
                t("Drawn: {card} — choose a capture", card=card_caption(table.drawn)), "bold"
            )
        elif self.selected is not None and self.state == "play":
            matches = self._matches(self.selected, table)
            if matches:
                field_label.append(
                    t(
                        "{card} captures ▼ {targets}",
                        card=card_caption(self.selected),
                        targets=t(" or ").join(
                            card_caption(c).split(" ")[0] for c in card_list(matches)
                        ),
                    ),
                    "bold",
                )
            else:
                field_label.append(
                    t(
                        "{card}: no match, it would stay on the field",
                        card=card_caption(self.selected).split(" · ")[0],
                    ),
                    "italic",
                )
        self.query_one("#field-label", Static).update(field_label)

        field_markers: dict[int, Marker] = {}
        if table.drawn >= 0:
            for c in card_list(self._matches(table.drawn, table)):
                field_markers[c] = Marker(t("▼ choose"), "bold yellow")
        elif self.selected is not None and self.state == "play":
            for c in card_list(self._matches(self.selected, table)):
                field_markers[c] = Marker(t("▼ match"), "bold yellow")
        self.query_one("#field", CardRow).set_cards(card_list(table.field), markers=field_markers)

        hand = card_list(table.hand)
        plays = plays_by_card(game.view()) if self.state == "play" else {}
        hand_markers: dict[int, Marker] = {}
        dimmed: set[int] = set()
        for i, c in enumerate(hand, 1):
            n = self._matches(c, table).bit_count()
            key = f"[{i}]"
            if n:
                hand_markers[c] = Marker(f"{key} ▲{n}", "bold green")
            else:
                hand_markers[c] = Marker(key, "dim")
            if plays and c not in plays:
                dimmed.add(c)
        if self.selected not in hand:
            self.selected = None
        tall = self.has_class("-wide") and self.size.height >= TALL_CHIPS_ROWS
        for row in self.query(CardRow):
            row.tall = tall
        self.query_one("#hand", CardRow).set_cards(
            hand, markers=hand_markers, selected=self.selected, dimmed=dimmed
        )
        turn_widget = self.query_one("#turn", Static)
        width = turn_widget.size.width or max(20, self.size.width)
        lines = [fit_line(line, names, width) for line in self.turn_lines[-2:]]
        turn = Text("\n".join(lines), no_wrap=True, overflow="ellipsis")
        turn_widget.update(turn)
        if self.has_class("-wide"):
            self.query_one("#side-text", Static).update(
                piles_and_progress(game, table.piles, table.month, only_started=True)
            )

    def on_resize(self) -> None:
        self.redraw(self._table)

    @property
    def log_lines(self) -> list[str]:
        """The log's lines as written (the log wraps them again when its width changes)."""
        return self.query_one("#log", GameLog).source

    def _log(self, line: str) -> None:
        self.query_one("#log", GameLog).add(line)

    def _matches(self, card: int, table: Table) -> int:
        if self.game.rules.play.wild_lightning and card == LIGHTNING:
            return table.field
        return table.field & MONTH_MASKS[card // 4]

    def say(self, line: str, *, turn: bool = True, replace: bool = False) -> None:
        """Add a line to the log (and to the two-line turn report, replacing its last
        line with ``replace``)."""
        self._log(line)
        if turn:
            if replace and self.turn_lines:
                self.turn_lines[-1] = line
            else:
                self.turn_lines.append(line)
            self.turn_lines = self.turn_lines[-2:]

    # ------------------------------------------------------------- the match

    @work(exclusive=True, group="game")
    async def run_game(self) -> None:
        """Play the match to its end, then show the result."""
        game = self.game
        try:
            if not game.match.actions:  # rounds that ended at the deal (instant hands)
                for result in list(game.results):
                    self.state = "round_end"
                    await self.app.push_screen_wait(RoundEndScreen(result, game))
            while not game.is_over:
                self.redraw()
                self._skip.clear()
                view = game.view()
                if not view.legal_ids and game.human_to_act:
                    raise KoiKoiError(
                        t(
                            "the match is stuck in round {round}: no legal action",
                            round=view.round_number,
                        )
                    )
                if game.human_to_act:
                    if view.phase is Phase.PLAY:
                        action = await self._wait_for_play()
                    elif view.phase is Phase.TAKE:
                        action = await self._choose_take()
                    else:
                        action = await self._decide()
                else:
                    self.state = "opponent"
                    self.query_one("#field-label", Static).update(
                        Text(t("── {name} is thinking…", name=game.names[OPPONENT]), style="italic")
                    )
                    if self.pace > 0:
                        await self._sleep(self.pace / 2)
                    action = await asyncio.to_thread(game.choose_opponent_action)
                step = game.apply(action)
                await self._show(step)
            await self._finish()
        except KoiKoiError as exc:  # an agent or save problem: say so, keep the app alive
            self.state = "done"
            self.say(t("Error: {error}", error=exc))
            self.app.notify(str(exc), title=t("Error"), severity="error", timeout=10)

    async def _wait_for_play(self) -> int:
        self.state = "play"
        loop = asyncio.get_running_loop()
        self._play_future = loop.create_future()
        hand = card_list(self.game.view().hand)
        if self.selected is None and hand:
            plays = plays_by_card(self.game.view())
            table = self._table
            self.selected = next(
                (c for c in hand if c in plays and self._matches(c, table)),
                next((c for c in hand if c in plays), hand[0]),
            )
        self.redraw()
        try:
            return await self._play_future
        finally:
            self._play_future = None

    async def _choose_take(self) -> int:
        self.state = "take"
        view = self.game.view()
        if interchangeable(view.legal_ids):
            return min(view.legal_ids)  # two Plains of a month: no choice to ask
        self.redraw()
        options = [
            ChoiceOption(a, t("Capture {card}", card=card_caption(a - TAKE_BASE)), a - TAKE_BASE)
            for a in view.legal_ids
        ]
        result = await self.app.push_screen_wait(
            ChooseDialog(
                t("The drawn card matches two field cards"),
                t("You drew {card}. Which card does it capture?", card=card_caption(view.drawn)),
                options,
                cancellable=False,
            )
        )
        return int(result if result is not None else options[0].action_id)

    def koikoi_facts(self) -> KoiKoiFacts:
        game = self.game
        view = game.view()
        stop = game.stop_preview()
        return KoiKoiFacts(
            rules=game.rules,
            yaku=game.current_yaku(HUMAN),
            stop=stop,
            stop_text=game.explain(stop),
            opponent=game.names[OPPONENT],
            opponent_calls=view.koikoi_calls[OPPONENT],
            own_calls=view.koikoi_calls[HUMAN],
            opponent_score=view.round_scores[OPPONENT],
            hand_counts=view.hand_counts,
            stock_count=view.stock_count,
            round_number=view.round_number,
            rounds=view.rounds,
            match_scores=view.match_scores,
            dealer=view.dealer,
        )

    async def _decide(self) -> int:
        self.state = "decide"
        self.redraw()
        dialog = KoiKoiDialog(
            self.koikoi_facts(), self.advice_when_ready, preparing=lambda: not self.ai_is_ready()
        )
        choice: int = await self.app.push_screen_wait(dialog)
        return choice

    async def _sleep(self, seconds: float) -> None:
        if seconds <= 0 or self._skip.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._skip.wait(), timeout=seconds)

    async def _show(self, step: Step) -> None:
        """Show a step event by event at the pace, then any finished rounds."""
        self.state = "animating"
        game = self.game
        table = self._table
        if step.events and step.events[0].kind == "play":  # a new turn
            self.turn_lines = []
        rest = list(step.events)
        first = True
        while rest:
            event = rest.pop(0)
            if event.kind == "round_over":
                line = narrate(event, game.names)
                if line:
                    self.say(line, turn=False)
                break
            if event.kind in BOARD_EVENTS and not first:
                await self._sleep(self.pace)
            first = False
            table = table.after(event)
            line = narrate(event, game.names)
            if line and not _logged(event):
                # "draws 9P1: it matches 9A and 9P2": for the turn report only; the log
                # gets the capture that follows ("draws 9P1 and captures 9A"), once.
                self.turn_lines = [*self.turn_lines, line][-2:]
            elif line:
                self.say(line, replace=event.kind == "take")
            self.selected = None if event.kind == "play" and step.player == HUMAN else self.selected
            self.redraw(table)
        if step.player == OPPONENT and step.events and self.pace > 0:
            await self._sleep(self.pace / 2)
        for n, result in enumerate(step.results):
            self.state = "round_end"
            last = game.is_over and n == len(step.results) - 1
            await self.app.push_screen_wait(RoundEndScreen(result, game, last=last))
            self.turn_lines = []
        for event in rest:
            line = narrate(event, game.names)
            if line:
                self.say(line, turn=False)
        self.redraw()

    async def _finish(self) -> None:
        game = self.game
        self.state = "match_end"
        record = t("The record of this match could not be saved.")
        if self.records is not None:
            try:
                stamp = self.stamp() if self.stamp is not None else ""
                self.record_path = game.save_record(self.records, stamp=stamp)
                record = t("Record saved (koikoi replay FILE --tui):")
            except (KoiKoiError, OSError) as exc:
                record = t("The record could not be saved: {error}", error=exc)
        else:
            record = t("Records are off for this game.")
        if self.history is not None:
            try:
                append_match(
                    self.history,
                    game.match,
                    opponent=game.opponent_spec,
                    seat=HUMAN,
                    record_file=self.record_path,
                )
            except (KoiKoiError, OSError) as exc:
                record += "\n" + t("The statistics could not be updated: {error}", error=str(exc))
        if self.save_path is not None:
            self.save_path.unlink(missing_ok=True)
        line = narrate(game.match.events[-1], game.names) if game.match.events else None
        if line:
            self.say(line, turn=False)
        choice = await self.app.push_screen_wait(
            MatchEndScreen(game, record, path=self.record_path)
        )
        self.state = "done"
        if self.on_done is not None:
            self.on_done(choice)

    # ------------------------------------------------------------- the human

    def _play(self, card: int, target: int | None = None) -> None:
        """The human plays ``card`` (onto ``target`` when given)."""
        if self.state != "play" or self._play_future is None or self._play_future.done():
            return
        plays = plays_by_card(self.game.view())
        options = plays.get(card)
        if not options:
            if card in card_list(self.game.view().hand):
                self.app.bell()
                self.notify(t("The rules say you must play a card that matches the field."))
            return
        if target is not None:
            wanted = PLAY_TARGET_BASE + 48 * card + target
            if wanted in options:
                self._play_future.set_result(wanted)
                return
            plain = [a for a in options if a == card]
            if len(options) == 1 and plain:
                self._play_future.set_result(card)
                return
        if len(options) == 1:
            self._play_future.set_result(options[0])
            return
        if interchangeable(options):
            # Two Plains of one month: either capture is the same, nothing to ask.
            wanted = PLAY_TARGET_BASE + 48 * card + target if target is not None else -1
            self._play_future.set_result(wanted if wanted in options else min(options))
            return
        choices: list[ChoiceOption] = []
        for a in options:
            if PLAY_TARGET_BASE <= a < DISCARD_BASE:
                field_card = (a - PLAY_TARGET_BASE) % 48
                choices.append(
                    ChoiceOption(a, t("Capture {card}", card=card_caption(field_card)), field_card)
                )
            elif a >= DISCARD_BASE:
                choices.append(ChoiceOption(a, t("Lay it on the field without capturing"), -1))
            else:
                what = self._matches(card, self._table)
                label = (
                    t(
                        "Capture {card}",
                        card=" ".join(card_caption(c).split(" ")[0] for c in card_list(what)),
                    )
                    if what
                    else t("Lay it on the field")
                )
                choices.append(ChoiceOption(a, label, -1))

        targets = sum(1 for c in choices if c.card >= 0)
        if targets == 2 and len(choices) == 2:
            prompt = t("It can capture either of two field cards. Which one?")
        elif targets >= 2:
            prompt = t("Which field card does it capture?")
        else:
            prompt = t("How do you play it?")

        def chosen(action: int | None) -> None:
            future = self._play_future
            if action is not None and future is not None and not future.done():
                future.set_result(action)

        self.app.push_screen(
            ChooseDialog(
                t("Play {card}", card=card_caption(card)),
                prompt,
                choices,
            ),
            chosen,
        )

    def action_move(self, delta: int) -> None:
        hand = card_list(self._table.hand)
        if not hand or self.state != "play":
            return
        if self.selected not in hand:
            self.selected = hand[0]
        else:
            i = hand.index(self.selected)
            self.selected = hand[(i + delta) % len(hand)]
        self.redraw()

    def action_pick(self, n: int) -> None:
        hand = card_list(self._table.hand)
        if self.state != "play" or not 1 <= n <= len(hand):
            return
        card = hand[n - 1]
        if self.selected == card:
            self._play(card)
        else:
            self.selected = card
            self.redraw()

    def action_play_selected(self) -> None:
        if self.state in ("animating", "opponent"):
            self._skip.set()
            return
        if self.selected is not None:
            self._play(self.selected)

    @on(CardRow.CardClicked, "#hand")
    def _hand_clicked(self, event: CardRow.CardClicked) -> None:
        if self.state != "play":
            return
        if self.selected == event.card:
            self._play(event.card)
        else:
            self.selected = event.card
            self.redraw()

    @on(CardRow.CardClicked, "#field")
    def _field_clicked(self, event: CardRow.CardClicked) -> None:
        if self.state != "play" or self.selected is None:
            return
        if self._matches(self.selected, self._table) >> event.card & 1:
            self._play(self.selected, event.card)

    def action_pace(self, delta: int) -> None:
        paces = self.PACES
        i = min(range(len(paces)), key=lambda k: abs(paces[k] - self.pace))
        self.pace = paces[max(0, min(len(paces) - 1, i + delta))]
        self.notify(t("Opponent pace: {seconds} s per step", seconds=f"{self.pace:g}"), timeout=2)

    def action_hint(self) -> None:
        if self.state != "play":
            self.notify(t("Hints are given on your turn to play."), timeout=3)
            return
        self._hint()

    def ai_is_ready(self) -> bool:
        """Whether the advisor is ready: the app's warm-up (the compiled kernel) and this
        match's own loading are done, so a hint takes only its search."""
        warm = self.ai_ready is None or self.ai_ready.is_set()
        return warm and self.game.loaded("advisor")

    def advice_when_ready(self) -> dict[int, ActionValue]:
        """The advisor's values (:meth:`GameController.advice`) once the warm-up is
        done; blocks: run it in a thread."""
        if self.ai_ready is not None:
            self.ai_ready.wait()
        return self.game.advice()

    @work(exclusive=True, group="hint")
    async def _hint(self) -> None:
        view = self.game.view()
        preparing: PreparingDialog | None = None
        if self.ai_is_ready():
            self.notify(t("The expert is thinking about your hand…"), timeout=2)
        else:
            # The first time in this process: say so rather than freeze for seconds.
            preparing = PreparingDialog()
            self.app.push_screen(preparing)
            if self.ai_ready is not None:
                await asyncio.to_thread(self.ai_ready.wait)
            if preparing.cancelled:
                return
            preparing.thinking()
        try:
            values = await asyncio.to_thread(self.game.advice)
        except KoiKoiError as exc:
            self.notify(t("No hint: {error}", error=exc), severity="error", timeout=6)
            values = None
        if preparing is not None:
            if preparing.cancelled:
                return
            preparing.dismiss(None)
        if values is None:
            return
        if self.state != "play" or self.game.view() != view:
            return  # played meanwhile: the hint is about a position that is gone
        await self.app.push_screen_wait(HintDialog(values, list(view.legal_ids), field=view.field))

    def action_captures(self) -> None:
        self.app.push_screen(CapturesScreen(self.game))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.game.rules))

    def save_now(self) -> Path | None:
        """Save the match (unless it is over); returns the file."""
        if self.game.is_over:
            return None
        path = self.save_path
        if path is None:
            directory = self.saves if self.saves is not None else Path.cwd()
            path = directory / f"koikoi-save-seed{self.game.seed}.json"
        self.save_path = self.game.save(path)
        self.saved_moves = len(self.game.match.actions)
        return self.save_path

    def stale_save(self) -> Path | None:
        """The save this match came from or was saved to, if the match has moved on
        since (resuming it would go back in time)."""
        if self.save_path is None or self.game.is_over:
            return None
        return self.save_path if self.saved_moves != len(self.game.match.actions) else None

    def action_save(self) -> None:
        try:
            path = self.save_now()
        except KoiKoiError as exc:
            self.notify(str(exc), title=t("Not saved"), severity="error")
            return
        if path is None:
            self.notify(t("The match is over: its record is saved instead."))
        else:
            self.notify(t("Saved to {path}", path=path), title=t("Saved"), timeout=4)
