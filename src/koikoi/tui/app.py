"""The terminal game application: ``koikoi play``.

>>> app = KoiKoiApp(records=None)
>>> app.TITLE
'Koi-Koi'
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from koikoi.agents import make_agent
from koikoi.features.opponents import HINT_SPEC, preload_agent
from koikoi.game.errors import KoiKoiError
from koikoi.game.rules import get_rules
from koikoi.i18n import N_, t
from koikoi.tui.controller import GameController
from koikoi.tui.dialogs import QuitDialog
from koikoi.tui.game import GameScreen
from koikoi.tui.saves import SavedGame, latest_save, load_game
from koikoi.tui.screens import DEFAULT_PACE, GameSettings, NewGameScreen
from koikoi.tui.stats import StatsScreen
from koikoi.tui.tutorial import TutorialScreen, new_tutorial_game

__all__ = ["KoiKoiApp", "run_app", "warm_up_ai"]


def _clock_stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def warm_up_ai(advisor: str) -> None:
    """Load what the ``advisor`` agent spec needs before its first hint: with the
    expert, the compiled kernel (compiled on its first use in a process: seconds, more
    on a slow machine). The app runs it in a thread as it opens.

    Raises:
        InvalidInputError: ``advisor`` names no available agent.
    """
    preload_agent(make_agent(advisor))


class KoiKoiApp(App[None]):
    """Koi-Koi against the AI, full screen.

    Args:
        settings: start this match at once (else the new-game screen opens).
        saved: resume this saved match at once.
        save_path: the file ``saved`` came from (overwritten by later saves,
            removed when the match ends).
        records: directory for the records of finished matches (``None``: none kept).
        saves: directory for saves.
        history: the history file finished matches are added to, for the
            statistics (``None``: none kept).
        pace: seconds per step of the opponent's turn (0: instant).
        stamp: makes the time stamp of record names (tests pass a fixed one).
        advisor: the agent spec of hints and koi-koi advice, whatever the opponent
            (default :data:`~koikoi.features.opponents.HINT_SPEC`; tests pass a cheaper one).
        tutorial: start "Learn to play", the guided first round, at once.
        warm_up: what the app runs in a thread as it opens, so that the first hint is
            not slow (default: :func:`warm_up_ai` of ``advisor``); a hint asked before
            it is done says "Preparing the AI… (first time only)" and waits for it
            (tests pass one they finish when they choose).
    """

    TITLE = "Koi-Koi"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-normal"), (110, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]  # noqa: RUF012

    CSS = """
    Screen { background: $surface; }
    Screen.over-table { background: $surface 25%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "request_quit", N_("Quit"), priority=True, show=False),
    ]

    def __init__(
        self,
        *,
        settings: GameSettings | None = None,
        saved: SavedGame | None = None,
        save_path: Path | None = None,
        records: Path | None = None,
        saves: Path | None = None,
        pace: float | None = None,
        stamp: str | None = None,
        advisor: str = HINT_SPEC,
        tutorial: bool = False,
        history: Path | None = None,
        warm_up: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.history = history
        self.warm_up = warm_up
        self.ai_ready = threading.Event()
        """Set when the warm-up is over (done or failed: a hint then loads what it needs
        itself, and says what went wrong)."""
        self.advisor = advisor
        self.tutorial = tutorial
        self.settings = settings
        self.saved = saved
        self.save_path = save_path
        self.records = records
        self.saves = saves
        self.pace = pace
        self.stamp = stamp
        self.game_screen: GameScreen | None = None

    def on_mount(self) -> None:
        self._watch_terminal()
        self.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False)
        if self.saved is not None:
            error = self.resume(self.saved, self.save_path)
            if error:
                self.open_new_game(error)
        elif self.settings is not None:
            error = self.start_game(self.settings)
            if error:
                self.open_new_game(error)
        elif self.tutorial:
            self.start_tutorial()
        else:
            self.open_new_game()

    def _warm_up(self) -> None:
        """Run the warm-up (in a thread), then let the hints go."""
        try:
            if self.warm_up is not None:
                self.warm_up()
            else:
                warm_up_ai(self.advisor)
        finally:
            self.ai_ready.set()

    # ---------------------------------------------------------------- screens

    def open_new_game(self, error: str = "") -> None:
        resume = latest_save(self.saves) if self.saves is not None else None
        defaults = self.settings or GameSettings(
            get_rules("nintendo"), pace=self.pace if self.pace is not None else DEFAULT_PACE
        )
        screen = NewGameScreen(
            defaults=defaults,
            resume=resume,
            on_start=self.start_game,
            on_resume=self.resume_file,
            on_tutorial=self.start_tutorial,
            on_stats=self.open_stats if self.history is not None else None,
        )
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        if error:
            self.notify(error, title=t("Could not start"), severity="error", timeout=8)

    def open_stats(self) -> None:
        """The statistics of the finished matches in the history file."""
        if self.history is not None:
            self.push_screen(StatsScreen(self.history))

    def _stamp(self) -> str:
        return self.stamp if self.stamp is not None else _clock_stamp()

    def _play(self, game: GameController, pace: float, save_path: Path | None) -> None:
        screen = GameScreen(
            game,
            pace=pace,
            records=self.records,
            saves=self.saves,
            save_path=save_path,
            stamp=self._stamp,
            on_done=self._after_game,
            history=self.history,
            ai_ready=self.ai_ready,
        )
        self._show_game(screen)

    def _show_game(self, screen: GameScreen) -> None:
        """Show ``screen`` in place of the screen on top, or over the first one."""
        self.game_screen = screen
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def _after_game(self, choice: str) -> None:
        self.game_screen = None
        if choice == "new":
            self.open_new_game()
        else:
            self.exit()

    def start_tutorial(self) -> None:
        """Start "Learn to play": the guided first round (:mod:`koikoi.tui.tutorial`)."""
        pace = self.pace if self.pace is not None else DEFAULT_PACE
        screen = TutorialScreen(
            new_tutorial_game(advisor=self.advisor),
            pace=pace,
            on_done=self._after_tutorial,
            ai_ready=self.ai_ready,
        )
        self._show_game(screen)

    def _after_tutorial(self, choice: str) -> None:
        self.game_screen = None
        if choice == "again":
            self.start_tutorial()
        elif choice == "new":
            self.open_new_game()
        else:
            self.exit()

    def start_game(self, settings: GameSettings) -> str | None:
        """Start a match; returns an error message instead when it cannot."""
        try:
            game = GameController(
                settings.rules,
                opponent=settings.opponent,
                seed=settings.seed,
                advisor=self.advisor,
            )
        except KoiKoiError as exc:
            return str(exc)
        pace = settings.pace if self.pace is None else self.pace
        self._play(game, pace, None)
        return None

    def resume(self, saved: SavedGame, path: Path | None) -> str | None:
        """Resume a saved match; returns an error message instead when it cannot."""
        try:
            game = GameController.from_saved(saved, advisor=self.advisor)
        except KoiKoiError as exc:
            return t("cannot resume: {error}", error=exc)
        pace = self.pace if self.pace is not None else DEFAULT_PACE
        self._play(game, pace, path)
        self.notify(t("Resumed after {n} moves.", n=len(saved.actions)), timeout=3)
        return None

    def resume_file(self, path: Path) -> str | None:
        try:
            saved = load_game(path)
        except KoiKoiError as exc:
            return str(exc)
        return self.resume(saved, path)

    # ------------------------------------------------------------------ quit

    def _watch_terminal(self) -> None:
        """Notice when the terminal goes away (window closed, connection dropped).

        A hang-up signal, or the terminal no longer answering (checked every
        second: under ``make`` the signal reaches only ``make``), calls
        :meth:`hang_up`. Not in headless runs (tests).
        """
        if self.is_headless:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.hang_up)
        stream = sys.__stdout__
        if stream is None:
            return
        try:
            fd = stream.fileno()
            os.tcgetpgrp(fd)
        except (OSError, ValueError):
            return  # not a terminal: nothing to watch

        def check() -> None:
            try:
                os.tcgetpgrp(fd)
            except OSError:
                self.hang_up()

        self.set_interval(1.0, check)

    def hang_up(self) -> None:
        """The terminal is gone: save an unfinished match (as ``s`` would), then exit."""
        game = self.game_screen
        if game is not None and not game.game.is_over:
            with contextlib.suppress(KoiKoiError, OSError):
                game.save_now()
        self.exit()

    def action_request_quit(self) -> None:
        """Ctrl+C or q: offer to save an unfinished match, then quit."""
        if any(isinstance(s, QuitDialog) for s in self.screen_stack):
            self.exit()
            return
        game = self.game_screen
        # A tutorial is never saved: it starts again from the deal.
        unfinished = (
            game is not None and not game.game.is_over and not isinstance(game, TutorialScreen)
        )

        def answer(choice: str | None) -> None:
            if choice == "save" and game is not None:
                try:
                    path = game.save_now()
                except KoiKoiError as exc:
                    self.notify(str(exc), title=t("Not saved"), severity="error")
                    return
                self.exit(
                    message=t(
                        "Saved to {path}\nResume with: koikoi play --resume {path}", path=path
                    )
                )
            elif choice == "quit":
                if resumed is not None:
                    # The save is older than the match now: resuming it would go back in time.
                    with contextlib.suppress(OSError):
                        resumed.unlink(missing_ok=True)
                self.exit()

        resumed = game.stale_save() if game is not None else None
        self.push_screen(QuitDialog(can_save=unfinished, resumed_from=resumed), answer)


def run_app(app: KoiKoiApp) -> None:
    """Run the app in the terminal."""
    app.run()
