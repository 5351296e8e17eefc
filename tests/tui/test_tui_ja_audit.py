"""Every screen of the terminal game in Japanese, read off the terminal: no English UI
word left.

With the language set to Japanese (what ``koikoi play --lang ja`` does), the test
plays a one-round match through the keys (the table, the help, the captures, a hint,
the koi-koi dialog, the round's settlement, the match's end), then opens the
statistics, the replay of the match from there, and the tutorial. Each screen's
rendered lines are read and every word in Latin letters must be a name, a card code
or one of :data:`ALLOWED`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tui_driver import do_action, find_seed, game_screen, greedy_policy, next_prompt, wait_for

from koikoi import i18n
from koikoi.agents import AGENT_KINDS
from koikoi.game.engine import Phase
from koikoi.game.rules import PRESET_NAMES, get_rules
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.replay import ReplayScreen
from koikoi.tui.screens import GameSettings, MatchEndScreen, NewGameScreen
from koikoi.tui.stats import StatsScreen

pytestmark = pytest.mark.anyio

ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)

ALLOWED: frozenset[str] = frozenset(
    {
        *PRESET_NAMES,
        # the game's name in Latin letters
        "Koi-Koi",
        "Koi-koi",
        # keys as the footer names them
        "esc",
        "enter",
        "tab",
        "space",
        "ctrl",
        "shift",
        "f1",
        "f2",
        "pgup",
        "pgdn",
        "home",
        "end",
        # words Japanese interfaces use as they are
        "AI",
        "OK",
        # agents named by their specs (the tutorial's opponent, the test's own)
        *AGENT_KINDS,
        "test-advisor",
    }
)
"""Latin words a Japanese screen may show: rule sets, keys, and the test's AI agent."""

_CARD_CODE = re.compile(r"(?<![0-9A-Za-z])(?:1[0-2]|[1-9])(?:L|A|R|P[1-3]?)(?![0-9A-Za-z])")
_KEY = re.compile(r"(?<![0-9A-Za-z])(?:\^?[A-Za-z]|f\d+|F\d+)(?![0-9A-Za-z])")
"""One letter: a key ("s", "^s") or a player letter; function keys."""
_PATH = re.compile(
    r"\S*/\S+|[\w-]*\.(?:json|jsonl|toml)\b|koikoi [a-z]+(?: [A-Z]+)?(?: --[a-z-]+)*"
)
"""A path, a file name or type (".toml") and a command line ("koikoi replay FILE --tui")."""
_LATIN = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")


def english_words(text: str) -> dict[str, str]:
    """The Latin words of ``text`` that are UI text: word → the line it is in."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        clean = _KEY.sub(" ", _CARD_CODE.sub(" ", _PATH.sub(" ", line)))
        for word in _LATIN.findall(clean):
            if word not in ALLOWED and word.lower() not in ALLOWED:
                found.setdefault(word, line.strip()[:120])
    return found


def screen_text(app: Any) -> str:
    """What the terminal shows now, line by line."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


class Audit:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.found: dict[str, dict[str, str]] = {}
        self.screens: list[str] = []

    def read(self, name: str) -> None:
        self.screens.append(name)
        words = english_words(screen_text(self.app))
        if words:
            self.found[name] = words

    def report(self) -> str:
        return "\n".join(
            f"{screen}: {word!r} in {line!r}"
            for screen, words in self.found.items()
            for word, line in sorted(words.items())
        )


@pytest.fixture(autouse=True)
def _japanese() -> Iterator[None]:
    i18n.set_language("ja")
    yield
    i18n.set_language("en")


async def _modal(pilot: Any, app: Any, key: str, audit: Audit, name: str, close: str) -> None:
    before = app.screen
    await pilot.press(key)
    await wait_for(pilot, lambda: app.screen is not before)
    await pilot.pause()
    audit.read(name)
    await pilot.press(close)
    await wait_for(pilot, lambda: app.screen is before)


async def test_every_terminal_screen_in_japanese_shows_no_english_ui_text(
    tmp_path: Path,
) -> None:
    seed, _ = find_seed(ONE_ROUND, lambda v: v.phase is Phase.DECIDE, koikoi=True)
    history = tmp_path / "history.jsonl"
    app = KoiKoiApp(
        settings=GameSettings(ONE_ROUND, "random", seed, 0.0),
        records=tmp_path / "records",
        saves=tmp_path / "saves",
        pace=0.0,
        stamp="test",
        advisor="test-advisor",
        history=history,
    )
    audit = Audit(app)
    async with app.run_test(size=(100, 32)) as pilot:
        await next_prompt(pilot, app)
        audit.read("table")
        await _modal(pilot, app, "question_mark", audit, "help", "escape")
        await _modal(pilot, app, "c", audit, "captures", "escape")
        hint_before = app.screen
        await pilot.press("h")
        await wait_for(pilot, lambda: app.screen is not hint_before)
        await pilot.pause()
        audit.read("hint")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is hint_before)
        called = False
        for _ in range(200):
            prompt = await next_prompt(pilot, app)
            if prompt == "decide":
                if not called:
                    audit.read("koi-koi dialog")
                await do_action(
                    pilot, app, greedy_policy(game_screen(app).game.view(), koikoi=not called)
                )
                called = True
            elif prompt == "round_end":
                await pilot.pause()
                audit.read("round settlement")
                shown = app.screen
                await pilot.press("enter")
                await wait_for(pilot, lambda shown=shown: app.screen is not shown)
            elif prompt == "match_end":
                break
            else:
                await do_action(pilot, app, greedy_policy(game_screen(app).game.view()))
        await wait_for(pilot, lambda: isinstance(app.screen, MatchEndScreen))
        await pilot.pause()
        audit.read("match end")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.pause()
        audit.read("new game")
        await _modal(pilot, app, "f1", audit, "new game help", "escape")
        await pilot.press("f2")
        await wait_for(pilot, lambda: bool(app.screen.query("#st-totals")))
        assert isinstance(app.screen, StatsScreen)
        await pilot.pause()
        audit.read("statistics")
        await pilot.press("g")
        await pilot.pause()
        audit.read("statistics, the games")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.pause()
        audit.read("replay")
        await pilot.press("end")
        await pilot.pause()
        audit.read("replay, the end")
    tutorial = KoiKoiApp(
        records=tmp_path / "records",
        saves=tmp_path / "saves",
        pace=0,
        stamp="test",
        advisor="test-advisor",
        tutorial=True,
    )
    audit.app = tutorial
    async with tutorial.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: tutorial.game_screen is not None)
        await pilot.pause()
        audit.read("tutorial")
    assert {"table", "koi-koi dialog", "round settlement", "statistics", "replay"} <= set(
        audit.screens
    ), audit.screens
    assert not audit.found, "English UI text on Japanese screens:\n" + audit.report()


def test_the_audit_flags_english_and_lets_keys_and_codes_pass() -> None:
    assert english_words("場札 3L 8A 12P3 · nintendo · ^s 開始 · f1 ヘルプ · esc") == {}
    assert set(english_words("山札 24\nStock 24 cards")) == {"Stock", "cards"}
