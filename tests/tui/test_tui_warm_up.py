"""The AI is warmed up in a thread as the app opens (the kernel compiles on its first
use in a process), and a hint or the koi-koi advice asked before it is ready says
"Preparing the AI… (first time only)" instead of freezing. The tests hold the
warm-up (an injected function waiting on an event) and finish it when they choose."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tui_driver import find_seed, greedy_policy, next_prompt, plain, play_until, wait_for

from koikoi.game.engine import Phase
from koikoi.game.rules import get_rules
from koikoi.tui import app as app_module
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.dialogs import HintDialog, KoiKoiDialog, PreparingDialog
from koikoi.tui.game import GameScreen
from koikoi.tui.screens import GameSettings, NewGameScreen

pytestmark = pytest.mark.anyio

PREPARING = "Preparing the AI… (first time only)"
REAL_WARM_UP = app_module.warm_up_ai
"""The app's own warm-up (the conftest replaces it with nothing in the other tests)."""


class HeldWarmUp:
    """A warm-up that starts, then waits until the test lets it finish."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> None:
        self.started.set()
        self.release.wait()


def app_with(tmp_path: Path, warm_up: HeldWarmUp, **kwargs: Any) -> KoiKoiApp:
    return KoiKoiApp(
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
        warm_up=warm_up,
        **kwargs,
    )


async def test_the_warm_up_starts_when_the_app_opens(tmp_path: Path) -> None:
    warm_up = HeldWarmUp()
    app = app_with(tmp_path, warm_up)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
            await wait_for(pilot, warm_up.started.is_set)
            assert not app.ai_ready.is_set()
            warm_up.release.set()
            await wait_for(pilot, app.ai_ready.is_set)
    finally:
        warm_up.release.set()


async def test_a_hint_asked_while_warming_up_says_so_then_comes(tmp_path: Path) -> None:
    warm_up = HeldWarmUp()
    settings = GameSettings(get_rules("nintendo"), "random", 4, 0.0)
    app = app_with(tmp_path, warm_up, settings=settings)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
            screen = app.game_screen
            assert isinstance(screen, GameScreen)
            await wait_for(pilot, warm_up.started.is_set)
            assert not screen.ai_is_ready()
            await pilot.press("h")
            await wait_for(pilot, lambda: isinstance(app.screen, PreparingDialog))
            assert plain(app.screen.query_one("#preparing-text")) == PREPARING
            # The field and the hand stay in view above it.
            box = app.screen.query_one("#preparing-box").region
            assert box.y >= screen.query_one("#hand").region.bottom
            await pilot.pause()
            assert isinstance(app.screen, PreparingDialog)  # still waiting, no hint yet
            warm_up.release.set()
            await wait_for(pilot, lambda: isinstance(app.screen, HintDialog))
            assert screen.ai_is_ready()
            assert not any(isinstance(s, PreparingDialog) for s in app.screen_stack)
    finally:
        warm_up.release.set()


async def test_a_hint_given_up_while_warming_up_is_not_shown(tmp_path: Path) -> None:
    warm_up = HeldWarmUp()
    settings = GameSettings(get_rules("nintendo"), "random", 4, 0.0)
    app = app_with(tmp_path, warm_up, settings=settings)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
            screen = app.game_screen
            await pilot.press("h")
            await wait_for(pilot, lambda: isinstance(app.screen, PreparingDialog))
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            warm_up.release.set()
            await wait_for(pilot, app.ai_ready.is_set)
            for _ in range(5):
                await pilot.pause()
            assert app.screen is screen  # no hint pops up afterwards
            await pilot.press("h")  # now ready: the hint at once
            await wait_for(pilot, lambda: isinstance(app.screen, HintDialog))
    finally:
        warm_up.release.set()


async def test_ask_the_ai_while_warming_up_says_so_then_advises(tmp_path: Path) -> None:
    warm_up = HeldWarmUp()
    rules = get_rules("nintendo").replace(game__rounds=1)
    seed, _ = find_seed(rules, lambda v: v.phase is Phase.DECIDE)
    app = app_with(tmp_path, warm_up, settings=GameSettings(rules, "random", seed, 0.0))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "decide")
            dialog = app.screen
            assert isinstance(dialog, KoiKoiDialog)
            await pilot.press("a")
            await pilot.pause()
            assert plain(dialog.query_one("#kk-advice")) == PREPARING
            assert dialog.advice is None
            warm_up.release.set()
            await wait_for(pilot, lambda: dialog.advice is not None)
            assert "The expert's advice:" in plain(dialog.query_one("#kk-advice"))
            assert await next_prompt(pilot, app) == "decide"
    finally:
        warm_up.release.set()


def test_the_default_warm_up_loads_the_advisor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an injected warm-up the app loads its advisor (the expert: the kernel)."""
    loaded: list[object] = []
    monkeypatch.setattr(app_module, "preload_agent", lambda agent, rules=None: loaded.append(agent))
    REAL_WARM_UP("test-advisor")
    (agent,) = loaded
    assert getattr(agent, "name", None) == "advisor"
