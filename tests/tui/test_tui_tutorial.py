""" "Learn to play" in the terminal, driven through a Textual pilot: each explanation
at its moment in the coach panel, the coach's pick selected, the round played to
its settlement, then played again, left and started from the new-game screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button
from tui_driver import card_of, plain, wait_for, waiting

from koikoi.cli import main
from koikoi.features.tutorial import (
    TUTORIAL_OPPONENT,
    TUTORIAL_SEED,
    Tip,
    lessons,
    prompt,
    suggestion,
)
from koikoi.game.actions import PLAY_TARGET_BASE, STOP_ID, TAKE_BASE
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.dialogs import ChooseDialog, QuitDialog
from koikoi.tui.screens import NewGameScreen, RoundEndScreen
from koikoi.tui.tutorial import CoachPanel, TutorialScreen, new_tutorial_game

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"


def expected_moments() -> list[tuple[Tip, int | None]]:
    """The guided round as the terminal game plays it when the newcomer follows the
    coach: each lesson (action None) and each prompt with the coach's pick."""
    game = new_tutorial_game(advisor="test-advisor")
    out: list[tuple[Tip, int | None]] = []
    shown: set[str] = set()
    while True:
        for tip in lessons(game.view()):
            if tip.key not in shown:
                shown.add(tip.key)
                out.append((tip, None))
        if game.is_over:
            return out
        if game.human_to_act:
            view = game.view()
            action = suggestion(view)
            tip = prompt(view)
            assert action is not None and tip is not None
            out.append((tip, action))
            game.apply(action)
        else:
            game.step_opponent()


def app_for(tmp_path: Path, **kwargs: Any) -> KoiKoiApp:
    return KoiKoiApp(
        records=tmp_path / "records",
        saves=tmp_path / "saves",
        pace=0,
        stamp="test",
        advisor="test-advisor",
        **kwargs,
    )


def tutorial(app: KoiKoiApp) -> TutorialScreen:
    screen = app.game_screen
    assert isinstance(screen, TutorialScreen)
    return screen


def panel_text(app: KoiKoiApp) -> str:
    return plain(tutorial(app).query_one(CoachPanel))


def shot(app: KoiKoiApp, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    app.save_screenshot(str(SHOTS / f"tutorial-terminal-{name}.svg"))


async def play_the_round(pilot: Any, app: KoiKoiApp, *, shots: bool = False) -> None:
    """Follow the coach from the welcome to the end: Enter after each explanation,
    the coach's pick at each move, and check every text at its moment."""
    screen = tutorial(app)
    game = screen.game
    for tip, action in expected_moments():
        if action is None:
            if tip.place == "finish":
                await wait_for(pilot, lambda: screen.state == "match_end")
            else:
                await wait_for(
                    pilot,
                    lambda tip=tip: screen.state == "coach" and screen.panel.tip == tip,
                )
            text = panel_text(app)
            assert " ".join(tip.text("en").split()) in " ".join(text.split())
            for code in tip.cards:
                assert code in text  # the cards it points at are named
            if shots and tip.key in ("welcome", "pile", "yaku", "settlement", "finish"):
                shot(app, tip.key)
            if tip.place != "finish":
                await pilot.press("enter")
                if tip.place == "settlement":
                    # The settlement screen follows the explanation.
                    await wait_for(pilot, lambda: isinstance(app.screen, RoundEndScreen))
                    await pilot.press("enter")
            continue
        await wait_for(pilot, lambda: waiting(app) in ("play", "take", "decide"))
        assert screen.panel.tip == tip
        before = len(game.match.actions)
        if waiting(app) == "decide":
            assert action == STOP_ID
            if shots:
                shot(app, "decide")
            await pilot.press("s")
        else:
            # The coach's pick is selected: Enter plays it.
            assert screen.selected == card_of(action)
            if shots and tip.key == "play_match":
                shot(app, "play-match")
            await pilot.press("enter")
            if PLAY_TARGET_BASE <= action < TAKE_BASE:
                await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
                dialog = app.screen
                assert isinstance(dialog, ChooseDialog)
                ids = [o.action_id for o in dialog.options]
                await pilot.press(str(ids.index(action) + 1))
        await wait_for(pilot, lambda before=before: len(game.match.actions) > before)
        assert game.match.actions[before] == action


async def test_the_guided_round_in_the_terminal(tmp_path: Path) -> None:
    app = app_for(tmp_path, tutorial=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.game_screen, TutorialScreen))
        first = tutorial(app)
        assert first.game.seed == TUTORIAL_SEED
        assert first.game.opponent_spec == TUTORIAL_OPPONENT
        await play_the_round(pilot, app, shots=True)
        assert first.game.match.scores[0] == 5  # the red poetry ribbons, stopped at once
        assert "r to play the tutorial again" in panel_text(app)
        # Play it again: a new screen, the welcome again.
        await pilot.press("r")
        await wait_for(pilot, lambda: app.game_screen not in (None, first))
        again = tutorial(app)
        assert not again.game.match.actions
        await wait_for(pilot, lambda: again.panel.tip is not None)
        assert again.panel.tip is not None and again.panel.tip.key == "welcome"
    # Nothing was recorded or saved: the tutorial is not a match to keep.
    assert not (tmp_path / "records").exists() and not (tmp_path / "saves").exists()


async def test_leave_the_tutorial_and_start_it_from_the_new_game_screen(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.click("#learn")
        await wait_for(pilot, lambda: isinstance(app.game_screen, TutorialScreen))
        screen = tutorial(app)
        await wait_for(pilot, lambda: screen.state == "coach")
        assert screen.panel.tip is not None and screen.panel.tip.key == "welcome"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: screen.panel.tip is not None and screen.panel.tip.key == "months"
        )
        # Quitting offers no save: a tutorial starts again from the deal.
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog))
        assert not app.screen.query("#save")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, QuitDialog))
        await pilot.press("escape")  # leave the tutorial
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        assert app.game_screen is None
        assert app.screen.query_one("#learn", Button)
        await pilot.click("#learn")
        await wait_for(pilot, lambda: isinstance(app.game_screen, TutorialScreen))
        await wait_for(pilot, lambda: tutorial(app).panel.tip is not None)
        assert tutorial(app).panel.tip.key == "welcome"  # type: ignore[union-attr]


async def test_enter_at_the_end_of_the_tutorial_leaves_it(tmp_path: Path) -> None:
    """Enter on the last panel goes to the new-game screen (never a silent restart);
    starting over is r alone."""
    app = app_for(tmp_path, tutorial=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.game_screen, TutorialScreen))
        first = tutorial(app)
        await play_the_round(pilot, app)
        assert first.state == "match_end"
        text = " ".join(panel_text(app).split())
        assert "Enter" in text and "r to play the tutorial again" in text
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        assert app.game_screen is None
        assert not any(isinstance(s, TutorialScreen) for s in app.screen_stack)


def test_play_tutorial_starts_the_guided_round(monkeypatch: pytest.MonkeyPatch) -> None:
    apps: list[KoiKoiApp] = []
    monkeypatch.setattr(KoiKoiApp, "run", lambda self, *a, **k: apps.append(self))
    assert main(["play", "--tutorial", "--pace", "0"]) == 0
    (app,) = apps
    assert app.tutorial and app.settings is None and app.saved is None


@pytest.mark.parametrize("extra", [["--seed", "3"], ["--rules", "leaflet"], ["--resume", "x"]])
def test_play_tutorial_takes_no_match_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    apps: list[KoiKoiApp] = []
    monkeypatch.setattr(KoiKoiApp, "run", lambda self, *a, **k: apps.append(self))
    assert main(["play", "--tutorial", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error: ") and "--tutorial plays the guided round" in err
    assert not apps


def test_play_tutorial_keeps_the_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """``koikoi play --tutorial`` then Esc: the new-game screen offers the statistics, as
    after a plain ``koikoi play`` (the app was built without the history file)."""
    apps: list[KoiKoiApp] = []
    monkeypatch.setattr(KoiKoiApp, "run", lambda self, *a, **k: apps.append(self))
    assert main(["play", "--tutorial"]) == 0
    assert main(["play"]) == 0
    tutorial_app, plain_app = apps
    assert tutorial_app.history is not None
    assert tutorial_app.history == plain_app.history


async def test_leaving_the_tutorial_offers_the_statistics(tmp_path: Path) -> None:
    """Esc out of the tutorial: the new-game screen has its Statistics button, and F2
    opens the statistics."""
    from koikoi.tui.stats import StatsScreen

    app = app_for(tmp_path, tutorial=True, history=tmp_path / "history.jsonl")
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.game_screen, TutorialScreen))
        await wait_for(pilot, lambda: tutorial(app).state == "coach")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        assert app.screen.query_one("#stats", Button)
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))


async def test_no_statistics_key_without_a_history(tmp_path: Path) -> None:
    """Without a history file the footer does not offer F2 (it would do nothing)."""
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        screen = app.screen
        assert not screen.query("#stats")
        offered = {key for key, b in screen.active_bindings.items() if b.binding.show}
        assert "f1" in offered and "f2" not in offered
