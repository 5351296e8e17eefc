"""Snapshots of the main screens at 80x24 and 120x40.

Deterministic: fixed seeds (found by :func:`find_seed` on the engine alone), the
"random" opponent with its seeded generator, pace 0, no records (no paths or
clock on screen). Regenerate with ``pytest tests/tui --snapshot-update`` after a
deliberate change of the screens and look at the SVGs before committing them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tui_driver import find_seed, greedy_policy, next_prompt, play_until, wait_for

from koikoi import i18n
from koikoi.game.engine import Phase
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.controller import GameController, interchangeable, plays_by_card
from koikoi.tui.dialogs import ChooseDialog, HintDialog, KoiKoiDialog
from koikoi.tui.history import append_game
from koikoi.tui.replay import ReplayApp
from koikoi.tui.screens import GameSettings, HelpScreen, NewGameScreen

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)

Compare = Callable[..., bool]
RunBefore = Callable[[Any], Awaitable[None]]


def game_app(seed: int, tmp_path: Path, rules: Any = ONE_ROUND) -> KoiKoiApp:
    return KoiKoiApp(
        settings=GameSettings(rules, "random", seed, 0.0),
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        stamp="snapshot",
        advisor="test-advisor",
    )


def to_prompt(app: KoiKoiApp, *, stop: Callable[[str], bool], human_actions: int = 0) -> RunBefore:
    """Play greedily through the UI to a prompt after ``human_actions`` human actions."""

    async def run_before(pilot: Any) -> None:
        count = {"n": 0}

        def policy(view: Any) -> int:
            count["n"] += 1
            return greedy_policy(view)

        def done(prompt: str) -> bool:
            return stop(prompt) and (
                prompt not in ("play", "take", "decide") or count["n"] >= human_actions
            )

        await play_until(pilot, app, policy, done)
        await pilot.pause()

    return run_before


def mid_round(view: Any) -> bool:
    """Past the eighth move, both players with captures."""
    return len(view.history) > 8 and bool(view.piles[0] and view.piles[1])


def app_at(tmp_path: Path, want: Callable[[Any], Any], prompt: str) -> tuple[KoiKoiApp, RunBefore]:
    """A one-round game from the first seed whose play reaches a position where ``want``
    holds, and a ``run_before`` that plays the human's moves up to it, then to ``prompt``."""
    seed, n = find_seed(ONE_ROUND, want)
    app = game_app(seed, tmp_path)
    return app, to_prompt(app, stop=lambda p: p == prompt, human_actions=n)


@pytest.mark.parametrize("size", SIZES)
def test_new_game_screen(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = KoiKoiApp(
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
        history=tmp_path / "history.jsonl",
    )

    async def run_before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_table(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app, run_before = app_at(tmp_path, mid_round, "play")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def assert_table_visible(app: KoiKoiApp, box: str) -> None:
    """The dialog ``box`` leaves the field and the hand (with its markers) in view."""
    table = app.game_screen
    assert table is not None
    dialog = app.screen.query_one(box).region
    for row in ("#field", "#hand"):
        region = table.query_one(row).region
        assert region.height > 0 and region.bottom <= dialog.y, (row, region, dialog)


@pytest.mark.parametrize("size", SIZES)
def test_two_match_choice(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    def choice(ids: list[int]) -> bool:  # two captures that differ (not two Plains)
        return len(ids) > 1 and not interchangeable(ids)

    app, reach = app_at(tmp_path, lambda v: any(map(choice, plays_by_card(v).values())), "play")

    async def run_before(pilot: Any) -> None:
        await reach(pilot)
        game = app.game_screen.game  # type: ignore[union-attr]
        view = game.view()
        card = next(c for c, ids in plays_by_card(view).items() if choice(ids))
        key = str(sorted(c for c in range(48) if view.hand >> c & 1).index(card) + 1)
        await pilot.press(key, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        await pilot.pause()
        assert_table_visible(app, "#choose-box")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_koikoi_decision(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app, reach = app_at(tmp_path, lambda v: v.phase is Phase.DECIDE, "decide")

    async def run_before(pilot: Any) -> None:
        await reach(pilot)
        assert isinstance(app.screen, KoiKoiDialog)
        assert_table_visible(app, "#kk-dialog")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_round_end(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    seed, _ = find_seed(ONE_ROUND, lambda v: v.phase is Phase.DECIDE)
    app = game_app(seed, tmp_path)
    run_before = to_prompt(app, stop=lambda p: p == "round_end")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_match_end(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    rules = get_rules("nintendo").replace(game__rounds=3)
    app = game_app(5, tmp_path, rules)
    run_before = to_prompt(app, stop=lambda p: p == "match_end")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_hint(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app, reach = app_at(tmp_path, mid_round, "play")

    async def run_before(pilot: Any) -> None:
        await reach(pilot)
        await pilot.press("h")
        await wait_for(pilot, lambda: bool(app.screen.query("#message-text")))
        assert isinstance(app.screen, HintDialog)
        app.clear_notifications()  # "thinking…" shows only when the hint is slow
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_statistics(
    snap_compare: Compare, tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)  # the screen names the file: the same name every run
    path = Path("history.jsonl")
    for day, (rules, seed, name) in enumerate(
        [(ONE_ROUND, 3, "Expert"), (get_rules("nintendo").replace(game__rounds=3), 4, "Casual")], 1
    ):
        game = GameController(rules, opponent="random", seed=seed)
        while not game.is_over:
            game.apply(
                greedy_policy(game.view(), koikoi=seed % 2 == 0)
                if game.human_to_act
                else game.choose_opponent_action()
            )
        record = GameRecord.from_match(game.match, players=["You", f"AI ({name})"], created="x")
        append_game(path, record, opponent="expert", finished=f"2026-01-0{day}T12:00:00Z")
    app = KoiKoiApp(records=None, saves=tmp_path / "saves", pace=0.0, history=path)

    async def run_before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.press("f2")
        await wait_for(pilot, lambda: bool(app.screen.query("#st-totals")))
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare: Compare, tmp_path: Path, size: tuple[int, int]) -> None:
    app = game_app(4, tmp_path)

    async def run_before(pilot: Any) -> None:
        await next_prompt(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_captures(snap_compare: Compare, tmp_path: Path) -> None:
    app, reach = app_at(tmp_path, lambda v: v.piles[0].bit_count() >= 6, "play")

    async def run_before(pilot: Any) -> None:
        await reach(pilot)
        await pilot.press("c")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_too_small(snap_compare: Compare, tmp_path: Path) -> None:
    app = game_app(4, tmp_path)

    async def run_before(pilot: Any) -> None:
        await wait_for(pilot, lambda: app.game_screen is not None)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(60, 20), run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_replay(snap_compare: Compare, size: tuple[int, int]) -> None:
    seed, _ = find_seed(ONE_ROUND, lambda v: v.phase is Phase.DECIDE)
    game = GameController(ONE_ROUND, opponent="random", seed=seed)
    while not game.is_over:
        game.apply(
            greedy_policy(game.view()) if game.human_to_act else game.choose_opponent_action()
        )
    record = GameRecord.from_match(game.match, players=list(game.names), created="2024-01-01")
    app = ReplayApp(record)
    assert snap_compare(app, terminal_size=size, press=["right"] * 6)


@pytest.fixture
def japanese() -> Iterator[None]:
    """The screens in Japanese (double-width text) for one test."""
    i18n.set_language("ja")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("size", SIZES)
def test_table_japanese(
    snap_compare: Compare, tmp_path: Path, size: tuple[int, int], japanese: None
) -> None:
    app, run_before = app_at(tmp_path, mid_round, "play")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_koikoi_decision_japanese(snap_compare: Compare, tmp_path: Path, japanese: None) -> None:
    app, run_before = app_at(tmp_path, lambda v: v.phase is Phase.DECIDE, "decide")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_new_game_screen_japanese(snap_compare: Compare, tmp_path: Path, japanese: None) -> None:
    app = KoiKoiApp(records=None, saves=tmp_path / "saves", pace=0.0, advisor="test-advisor")

    async def run_before(pilot: Any) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
