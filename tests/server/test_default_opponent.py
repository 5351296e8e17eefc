"""The terminal game and the web game start against the same opponent.

Both take it from :data:`koikoi.features.opponents.DEFAULT_OPPONENT`: the web page
selects the server's ``default_agent`` (``/api/config``), a web game created
without an agent plays it, and the terminal game's new-game screen and
``koikoi play --rounds N`` start with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from server_helpers import room_of
from starlette.testclient import TestClient

from koikoi.features.opponents import DEFAULT_OPPONENT, LEVEL_CHOICES


def test_the_default_is_an_offered_level() -> None:
    assert DEFAULT_OPPONENT in [choice.agent for choice in LEVEL_CHOICES]


def test_the_web_game_defaults_to_the_default_opponent(client: TestClient) -> None:
    assert client.get("/api/config").json()["default_agent"] == DEFAULT_OPPONENT
    r = client.post("/api/games", json={"mode": "ai"})
    assert r.status_code == 200, r.text
    ai = [seat for seat in room_of(client, r.json()["game"]).seats if seat.kind == "ai"]
    assert [seat.agent for seat in ai] == [DEFAULT_OPPONENT]


@pytest.mark.anyio
async def test_the_terminal_game_defaults_to_the_default_opponent(tmp_path: Path) -> None:
    pytest.importorskip("textual")
    from textual.widgets import Select

    from koikoi.tui.app import KoiKoiApp
    from koikoi.tui.screens import GameSettings, NewGameScreen

    assert GameSettings.__dataclass_fields__["opponent"].default == DEFAULT_OPPONENT
    app = KoiKoiApp(records=None, saves=tmp_path / "saves", pace=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(50):
            if isinstance(app.screen, NewGameScreen):
                break
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, NewGameScreen)
        assert screen.query_one("#opponent", Select).value == DEFAULT_OPPONENT
        assert screen.settings().opponent == DEFAULT_OPPONENT


def test_koikoi_play_defaults_to_the_default_opponent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("textual")
    from koikoi.cli import main
    from koikoi.tui.app import KoiKoiApp

    monkeypatch.setenv("KOIKOI_HOME", str(tmp_path))
    started: list[str] = []

    def run(app: KoiKoiApp) -> None:
        assert app.settings is not None
        started.append(app.settings.opponent)

    monkeypatch.setattr(KoiKoiApp, "run", run)
    assert main(["play", "--rounds", "1"]) == 0
    assert started == [DEFAULT_OPPONENT]
