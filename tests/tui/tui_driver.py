"""Drive the terminal game like a player: keys and clicks through a Textual pilot."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from koikoi.agents.base import ActionValue, GreedyAgent
from koikoi.game.actions import DISCARD_BASE, KOIKOI_ID, PLAY_TARGET_BASE, STOP_ID
from koikoi.game.cards import card_list
from koikoi.game.engine import Phase
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.controller import GameController, interchangeable
from koikoi.tui.dialogs import ChooseDialog, KoiKoiDialog
from koikoi.tui.game import GameScreen
from koikoi.tui.screens import MatchEndScreen, RoundEndScreen

Policy = Callable[[PlayerView], int]


class AdvisingAgent:
    """A cheap, deterministic advisor or opponent with ``evaluate_detail`` (registered
    as ``"test-advisor"`` by the tests' conftest): plays its first legal action, values
    each action by its id; in a match of several rounds its match-win chances rank the
    actions in another order than its points."""

    name = "advisor"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        return view.legal_ids[0]

    def evaluate(self, view: PlayerView, rng: random.Random | None) -> dict[int, float]:
        return {a: float(a % 7) - 2.0 for a in view.legal_ids}

    def evaluate_detail(
        self, view: PlayerView, rng: random.Random | None
    ) -> dict[int, ActionValue]:
        match = view.rounds > 1
        return {
            a: ActionValue(points=p, equity=(a % 5) / 5 + 0.1 if match else None)
            for a, p in self.evaluate(view, rng).items()
        }


def greedy_policy(view: PlayerView, *, koikoi: bool = False) -> int:
    """Deterministic greedy play: the biggest capture, ties to the lowest id."""
    ids = view.legal_ids
    if KOIKOI_ID in ids:
        return KOIKOI_ID if koikoi else STOP_ID
    return max(ids, key=lambda a: (GreedyAgent._value(view, a), -a))


def card_of(action_id: int) -> int:
    if action_id < PLAY_TARGET_BASE:
        return action_id
    if action_id < DISCARD_BASE:
        return (action_id - PLAY_TARGET_BASE) // 48
    return action_id - DISCARD_BASE


async def wait_for(pilot: Any, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Let the app run until ``predicate()`` holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {predicate}")
        await pilot.pause(0.005)


def game_screen(app: KoiKoiApp) -> GameScreen:
    screen = app.game_screen
    assert screen is not None
    return screen


def waiting(app: KoiKoiApp) -> str:
    """What the UI waits for from the human: play, take, decide, round_end, match_end,
    or "" while the game is busy."""
    top = app.screen
    if isinstance(top, RoundEndScreen):
        return "round_end"
    if isinstance(top, MatchEndScreen):
        return "match_end"
    if isinstance(top, KoiKoiDialog):
        return "decide"
    screen = app.game_screen
    if screen is None:
        return ""
    if isinstance(top, ChooseDialog) and screen.state == "take":
        return "take"
    if top is screen and screen.state == "play" and screen._play_future is not None:
        return "play"
    return ""


async def next_prompt(pilot: Any, app: KoiKoiApp, timeout: float = 20.0) -> str:
    await wait_for(pilot, lambda: waiting(app) != "", timeout)
    return waiting(app)


async def do_action(pilot: Any, app: KoiKoiApp, action_id: int) -> None:
    """Play ``action_id`` for the human through keys, as a player would."""
    state = waiting(app)
    game = game_screen(app).game
    before = len(game.match.actions)
    if state == "decide":
        await pilot.press("k" if action_id == KOIKOI_ID else "s")
    elif state == "take":
        dialog = app.screen
        assert isinstance(dialog, ChooseDialog)
        ids = [o.action_id for o in dialog.options]
        await pilot.press(str(ids.index(action_id) + 1))
    elif state == "play":
        screen = game_screen(app)
        card = card_of(action_id)
        hand = card_list(game.view().hand)
        key = str(hand.index(card) + 1)
        if screen.selected != card:
            await pilot.press(key)
        await pilot.press(key)
        await pilot.pause()
        if len(game.match.actions) == before and isinstance(app.screen, ChooseDialog):
            ids = [o.action_id for o in app.screen.options]
            await pilot.press(str(ids.index(action_id) + 1))
    else:
        raise AssertionError(f"cannot act now ({state!r})")
    await wait_for(pilot, lambda: len(game.match.actions) > before)
    assert game.match.actions[before] == action_id


async def play_until(
    pilot: Any,
    app: KoiKoiApp,
    policy: Policy,
    stop: Callable[[str], bool],
    *,
    limit: int = 2000,
) -> str:
    """Answer every prompt with ``policy`` (round ends with Enter) until ``stop(prompt)``."""
    for _ in range(limit):
        prompt = await next_prompt(pilot, app)
        if stop(prompt):
            return prompt
        if prompt == "round_end":
            shown = app.screen
            await pilot.press("enter")
            await wait_for(pilot, lambda shown=shown: app.screen is not shown)
        elif prompt == "match_end":
            return prompt
        else:
            view = game_screen(app).game.view()
            await do_action(pilot, app, policy(view))
    raise AssertionError("too many prompts")


def phase_of(app: KoiKoiApp) -> Phase:
    return game_screen(app).game.view().phase


def find_seed(
    rules: Rules,
    want: Callable[[PlayerView], bool],
    *,
    opponent: str = "random",
    koikoi: bool = False,
    seeds: range = range(1000),
) -> tuple[int, int]:
    """The first seed whose match, played by :func:`greedy_policy` against ``opponent``,
    reaches a human view with ``want(view)``; returns ``(seed, human actions before it)``
    (the actions the screen asks for: see :func:`asked`).

    Played on the controller alone (no screen), so it is fast; the pilot tests then
    play the same actions through the UI and meet the same situation.
    """
    for seed in seeds:
        game = GameController(rules, opponent=opponent, seed=seed, advisor="test-advisor")
        n = 0
        while not game.is_over:
            if game.human_to_act:
                view = game.view()
                if want(view):
                    return seed, n
                game.apply(greedy_policy(view, koikoi=koikoi))
                n += asked(view)
            else:
                game.step_opponent()
    raise AssertionError("no seed gives the situation")


def asked(view: PlayerView) -> bool:
    """Whether the screen asks the human for this action: not for a drawn card's
    capture of one of two interchangeable Plains (taken at once)."""
    return not (view.phase is Phase.TAKE and interchangeable(view.legal_ids))


def reach(
    rules: Rules, seed: int, n: int, *, opponent: str = "random", koikoi: bool = False
) -> GameController:
    """A controller after ``n`` human actions by :func:`greedy_policy`, at the human's turn."""
    game = GameController(rules, opponent=opponent, seed=seed, advisor="test-advisor")
    done = 0
    while True:
        if game.human_to_act:
            view = game.view()
            if done == n and asked(view):
                return game
            game.apply(greedy_policy(view, koikoi=koikoi))
            done += asked(view)
        else:
            game.step_opponent()


__all__ = [
    "AdvisingAgent",
    "card_of",
    "do_action",
    "find_seed",
    "game_screen",
    "greedy_policy",
    "make_app",
    "next_prompt",
    "notifications",
    "phase_of",
    "plain",
    "play_until",
    "reach",
    "wait_for",
    "waiting",
]


def plain(widget: Any, width: int = 200) -> str:
    """The text a Static shows (its content rendered without styles)."""
    from rich.console import Console
    from rich.text import Text

    content = widget.content
    if isinstance(content, str):
        return content
    if isinstance(content, Text):
        return content.plain
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(content)
    return console.export_text()


def notifications(app: KoiKoiApp) -> list[str]:
    """The messages of the notifications on show."""
    return [n.message for n in app._notifications]


def make_app(
    rules: Rules,
    seed: int,
    tmp: Path,
    *,
    opponent: str = "random",
    pace: float = 0.0,
    advisor: str = "test-advisor",
) -> KoiKoiApp:
    """An app that starts a match at once, with files under ``tmp`` (hints from the
    cheap test advisor unless told otherwise)."""
    from koikoi.tui.screens import GameSettings

    return KoiKoiApp(
        settings=GameSettings(rules, opponent, seed, pace),
        records=tmp / "records",
        saves=tmp / "saves",
        pace=pace,
        stamp="test",
        advisor=advisor,
    )
