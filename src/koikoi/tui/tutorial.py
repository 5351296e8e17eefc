""" "Learn to play" in the terminal: the guided first round with a coach panel.

:class:`TutorialScreen` is the ordinary table (:class:`~koikoi.tui.game.GameScreen`)
playing the tutorial's match (:mod:`koikoi.features.tutorial`: its fixed deal, rules and
opponent), with a coach panel between the field and your hand in place of the
log. What the coach says comes from :func:`koikoi.features.tutorial.coach` on your own
view: each explanation at its moment (Enter for the next one; the game waits
meanwhile), then what to do now, with the coach's pick selected in your hand
and the cards it points at marked on the field and named in the panel. Esc
leaves the tutorial for the new-game screen; r starts it again. On the last panel
Enter also goes to the new-game screen: only r starts over, never Enter.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Static

from koikoi.features.tutorial import (
    TUTORIAL_OPPONENT,
    TUTORIAL_SEAT,
    TUTORIAL_SEED,
    Tip,
    coach,
    suggestion,
    tutorial_rules,
)
from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE
from koikoi.game.cards import parse_card
from koikoi.i18n import t
from koikoi.tui.cardtext import card_caption
from koikoi.tui.controller import HUMAN, GameController, Step, Table
from koikoi.tui.game import GameScreen
from koikoi.tui.screens import RoundEndScreen
from koikoi.tui.widgets import CardRow, Marker

__all__ = ["CoachPanel", "TutorialScreen", "new_tutorial_game"]

COACH_STYLE = "bold magenta"
"""The style of what the coach points at."""


def new_tutorial_game(*, advisor: str) -> GameController:
    """The tutorial's match behind the screen (the newcomer is the human, player 0).

    Args:
        advisor: the agent spec of hints (as for any match).
    """
    if TUTORIAL_SEAT != HUMAN:  # pragma: no cover - both are player 0
        raise ValueError("the terminal game seats the newcomer as player 0")
    return GameController(
        tutorial_rules(), opponent=TUTORIAL_OPPONENT, seed=TUTORIAL_SEED, advisor=advisor
    )


class CoachPanel(Static):
    """What the coach says now: the text, the cards it points at, the keys."""

    DEFAULT_CSS = """
    CoachPanel {
        height: auto;
        border: round magenta;
        border-title-color: magenta;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        margin: 0 1 0 0;
    }
    """

    def __init__(self) -> None:
        super().__init__("", id="coach")
        self.tip: Tip | None = None
        self.border_title = t("Learn to play")

    def show(self, tip: Tip | None, *, waiting: bool, finished: bool = False) -> None:
        """Show ``tip`` (None: the opponent is playing); ``waiting``: Enter goes on."""
        self.tip = tip
        text = Text()
        if tip is None:
            text.append(t("Your opponent is playing…"), "italic")
        else:
            text.append(tip.text())
            if tip.cards:
                text.append("\n")
                text.append(t("Look at:"), "dim")
                for code in tip.cards:
                    text.append(" ")
                    text.append(f"▸ {card_caption(int(parse_card(code)))}", COACH_STYLE)
        if finished:
            text.append("\n")
            text.append(
                t(
                    "Press Enter (or Esc) for the new-game screen and a real game, "
                    "or r to play the tutorial again."
                ),
                "bold",
            )
        self.update(text)
        if finished:
            self.border_subtitle = t("Enter: new game · r: play it again")
        elif waiting:
            self.border_subtitle = t("Enter: next · Esc: leave · r: start over")
        else:
            self.border_subtitle = t("Esc: leave · r: start over")


class TutorialScreen(GameScreen):
    """The guided round: the table, the coach panel, and keys to leave or start over.

    Args:
        game: the tutorial's match (:func:`new_tutorial_game`).
        pace: seconds per step of the opponent's turn.
        on_done: gets ``"again"`` (play it again), ``"new"`` (the new-game screen)
            or ``"quit"``.
        ai_ready: set when the app's warm-up of the AI is done (see
            :class:`~koikoi.tui.game.GameScreen`).
    """

    DEFAULT_CSS = """
    TutorialScreen #log { display: none; }
    TutorialScreen #turn { height: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave tutorial"),
        Binding("r", "again", "Start over"),
        Binding("s", "save", show=False),
    ]

    def __init__(
        self,
        game: GameController,
        *,
        pace: float = 0.8,
        on_done: Callable[[str], None] | None = None,
        ai_ready: threading.Event | None = None,
    ) -> None:
        super().__init__(
            game, pace=pace, records=None, saves=None, on_done=on_done, ai_ready=ai_ready
        )
        self.seen: set[str] = set()
        """The keys of the explanations already shown."""
        self.prompt: Tip | None = None
        self._next: asyncio.Future[None] | None = None
        self._choice: asyncio.Future[str] | None = None
        self._left = False

    def on_mount(self) -> None:
        self.query_one("#table").mount(CoachPanel(), after="#field")
        super().on_mount()

    @property
    def panel(self) -> CoachPanel:
        return self.query_one(CoachPanel)

    # ---------------------------------------------------------------- coaching

    async def coach_now(self) -> None:
        """Show the explanations not shown yet, one by one (each waits for Enter),
        then what to do now."""
        tips = coach(self.game.view())
        for tip in tips:
            if not tip.wait or tip.key in self.seen or tip.place == "finish":
                continue
            self.seen.add(tip.key)
            await self._explain(tip)
        self.prompt = next((tip for tip in tips if not tip.wait), None)
        if not self.game.is_over:
            self.panel.show(self.prompt, waiting=False)
            self.redraw(self._table)

    async def _explain(self, tip: Tip) -> None:
        state = self.state
        self.state = "coach"
        self.panel.show(tip, waiting=True)
        self.redraw(self._table)
        self._next = asyncio.get_running_loop().create_future()
        try:
            await self._next
        finally:
            self._next = None
            self.state = state

    def action_next(self) -> None:
        if self._next is not None and not self._next.done():
            self._next.set_result(None)

    def action_play_selected(self) -> None:
        if self.state == "coach":
            self.action_next()
        elif self._choice is not None:
            # The last panel: Enter leaves for the new-game screen; only r starts over.
            self._finish_with("new")
        else:
            super().action_play_selected()

    def redraw(self, table: Table | None = None) -> None:
        super().redraw(table)
        if not self.is_mounted or not self.query(CoachPanel):
            return
        tip = self.panel.tip
        if tip is None:
            return
        # Mark the field cards the coach points at (beside the usual match markers).
        row = self.query_one("#field", CardRow)
        wanted = {int(parse_card(code)) for code in tip.cards}
        markers = {c: row.marker(c) for c in row.cards}
        changed = False
        for c in row.cards:
            if c in wanted and not markers[c].text:
                markers[c] = Marker(t("▲ look"), COACH_STYLE)
                changed = True
        if changed:
            row.set_cards(row.cards, markers=markers)

    # ------------------------------------------------------- the moments of play

    async def _wait_for_play(self) -> int:
        await self.coach_now()
        pick = suggestion(self.game.view())
        if pick is not None and pick < TAKE_BASE:
            if pick >= DISCARD_BASE:
                self.selected = pick - DISCARD_BASE
            elif pick >= PLAY_TARGET_BASE:
                self.selected = (pick - PLAY_TARGET_BASE) // 48
            else:
                self.selected = pick
        return await super()._wait_for_play()

    async def _choose_take(self) -> int:
        await self.coach_now()
        return await super()._choose_take()

    async def _decide(self) -> int:
        await self.coach_now()
        return await super()._decide()

    async def _show(self, step: Step) -> None:
        # The step's events, then its explanations, then the round's settlement.
        await super()._show(replace(step, results=()))
        if self._left:
            return
        await self.coach_now()
        if not step.results:
            return
        for n, result in enumerate(step.results):
            self.state = "round_end"
            last = self.game.is_over and n == len(step.results) - 1
            await self.app.push_screen_wait(RoundEndScreen(result, self.game, last=last))
        self.turn_lines = []
        self.redraw()

    async def _finish(self) -> None:
        """The end of the guided round: the last word, then play again or leave."""
        self.state = "match_end"
        finish = next((tip for tip in coach(self.game.view()) if tip.key == "finish"), None)
        self.panel.show(finish, waiting=False, finished=True)
        self._choice = asyncio.get_running_loop().create_future()
        choice = await self._choice
        self.state = "done"
        if self.on_done is not None:
            self.on_done(choice)

    def _finish_with(self, choice: str) -> None:
        if self._choice is not None and not self._choice.done():
            self._choice.set_result(choice)

    # -------------------------------------------------------------------- keys

    def action_leave(self) -> None:
        """Leave the tutorial for the new-game screen."""
        self._leave("new")

    def action_again(self) -> None:
        """Start the tutorial again from the deal."""
        self._leave("again")

    def _leave(self, choice: str) -> None:
        if self._choice is not None:
            self._finish_with(choice)
            return
        self._left = True
        self.state = "done"
        self.workers.cancel_group(self, "game")
        if self.on_done is not None:
            self.on_done(choice)

    def action_save(self) -> None:
        self.notify(t("The tutorial is not saved: it starts again from the deal."), timeout=3)

    def save_now(self) -> None:
        """Nothing: a tutorial is never saved."""
        return None

    def stale_save(self) -> None:
        return None
