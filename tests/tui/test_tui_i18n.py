"""The terminal game in Japanese: ``koikoi play --lang ja`` (or ``$KOIKOI_LANG``, or the
locale) draws the table, the key bindings and the log in Japanese."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tui_driver import next_prompt, wait_for

from koikoi import i18n
from koikoi.cli import main
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.game import GameScreen
from koikoi.tui.screens import NewGameScreen

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _english_afterwards() -> Iterator[None]:
    yield
    i18n.set_language("en")


def _text(widget: Any) -> str:
    return str(widget.render())


def _footer_keys(screen: Any) -> list[str]:
    """What the footer shows: the descriptions of the screen's active key bindings."""
    return [a.binding.description for a in screen.active_bindings.values() if a.binding.show]


async def test_play_lang_ja_draws_the_table_in_japanese(
    launched: list[KoiKoiApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOIKOI_LANG", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    argv = ["play", "--lang", "ja", "--opponent", "random", "--seed", "3", "--rounds", "1"]
    assert main([*argv, "--pace", "0", "--records", str(tmp_path)]) == 0
    assert i18n.language() == "ja"
    (app,) = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        screen = app.screen
        assert isinstance(screen, GameScreen)
        status = _text(screen.query_one("#status"))
        assert "第1/1回" in status and "山札" in status, status
        assert "場札" in _text(screen.query_one("#field-label"))
        assert "出す" in _footer_keys(screen) and "ヒント" in _footer_keys(screen)
        log = "\n".join(screen.log_lines)
        assert "第1回" in log and "Round" not in log, log
        # the chips: month and card in Japanese, still 9 cells wide
        assert "Pine" not in screen.query_one("#hand").render_line(1).text


async def test_the_locale_or_koikoi_lang_chooses_japanese(
    launched: list[KoiKoiApp], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOIKOI_LANG", raising=False)
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    assert main(["play", "--records", str(tmp_path)]) == 0
    assert i18n.language() == "ja"
    (app,) = launched
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        assert "新しいゲーム" in _text(app.screen.query_one("#ng-title"))
    # $KOIKOI_LANG beats the locale, --lang beats both
    monkeypatch.setenv("KOIKOI_LANG", "en")
    assert main(["play", "--records", str(tmp_path)]) == 0
    assert i18n.language() == "en"
    assert main(["--lang", "ja", "play", "--records", str(tmp_path)]) == 0
    assert i18n.language() == "ja"


def test_an_unknown_koikoi_lang_is_refused(
    launched: list[KoiKoiApp], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOIKOI_LANG", "fr")
    assert main(["play"]) == 2
    assert "'fr'" in capsys.readouterr().err and not launched
