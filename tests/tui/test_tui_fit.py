"""Nothing is cut at the smallest size, 80x24 (whole names, every button, whole turn
lines), and a large terminal draws the cards larger."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Button, RichLog
from tui_driver import do_action, find_seed, greedy_policy, plain, play_until, wait_for

from koikoi.features.opponents import LEVEL_CHOICES
from koikoi.game.engine import Phase
from koikoi.game.rules import get_rules
from koikoi.tui import controller
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.cardtext import CHIP_HEIGHT, TALL_CHIP_HEIGHT
from koikoi.tui.controller import action_text
from koikoi.tui.dialogs import HintDialog
from koikoi.tui.game import fit_line
from koikoi.tui.screens import GameSettings, NewGameScreen
from koikoi.tui.widgets import CardRow

pytestmark = pytest.mark.anyio

LONGEST = max((choice.level.title for choice in LEVEL_CHOICES), key=len)
"""The longest title of an offered level ("Club player")."""


async def test_the_new_game_buttons_fit_with_a_save_to_resume(tmp_path: Path) -> None:
    (tmp_path / "saves").mkdir()
    (tmp_path / "saves" / "koikoi-save.json").write_text("{}", encoding="utf-8")
    app = KoiKoiApp(
        records=None, saves=tmp_path / "saves", pace=0.0, history=tmp_path / "history.jsonl"
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.pause()
        buttons = {b.id: b.region for b in app.screen.query(Button)}
        assert set(buttons) == {"start", "resume", "learn", "help", "stats", "quit"}
        for region in buttons.values():
            assert region.width > 0 and region.right <= 80, buttons


async def test_the_opponent_is_named_in_full_at_80x24(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The longest level title, through a round and its koi-koi decision, the
    settlement and the end of the match (a cheap opponent wears the title)."""
    monkeypatch.setattr(controller, "opponent_label", lambda spec, agent=None: LONGEST)
    full = f"AI ({LONGEST})"
    rules = get_rules("nintendo").replace(game__rounds=2)
    seed, _ = find_seed(rules, lambda v: v.phase is Phase.DECIDE)
    app = KoiKoiApp(
        settings=GameSettings(rules, "random", seed, 0.0),
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
    )
    seen: set[str] = set()

    def check(prompt: str) -> bool:
        screen = app.game_screen
        assert screen is not None
        if prompt == "play":
            assert full in plain(screen.query_one("#status"))
            assert plain(screen.query_one("#opponent-line")).startswith(full)
            turn = screen.query_one("#turn")
            for line in plain(turn).splitlines():
                assert Text(line).cell_len <= turn.size.width, line
        elif prompt == "decide":
            assert full in plain(app.screen.query_one("#kk-text"))
        elif prompt == "round_end":
            assert f"— {full} " in plain(app.screen.query_one("#re-scores"))
        seen.add(prompt)
        return prompt == "match_end"

    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, greedy_policy, check)
        assert {"play", "decide", "round_end", "match_end"} <= seen


def test_a_turn_line_too_long_drops_the_names_detail() -> None:
    names = ("You", f"AI ({LONGEST})")
    line = f"{names[1]} draws 9A Chrysanthemum · Sake cup ◎: no match, it stays on the field."
    assert fit_line(line, names, 100) == line
    short = fit_line(line, names, 78)
    assert short.startswith("AI draws 9A") and len(short) <= 78


@pytest.mark.parametrize(("size", "tall"), [((80, 24), False), ((120, 40), True)])
async def test_the_cards_use_the_room_of_a_large_terminal(
    tmp_path: Path, size: tuple[int, int], tall: bool
) -> None:
    app = KoiKoiApp(
        settings=GameSettings(get_rules("nintendo"), "random", 4, 0.0),
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
    )
    async with app.run_test(size=size) as pilot:
        await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
        screen = app.game_screen
        assert screen is not None
        hand = screen.query_one("#hand", CardRow)
        assert hand.tall is tall
        chip_rows = -(-len(hand.cards) // hand.per_line(hand.size.width))
        assert hand.size.height == chip_rows * ((TALL_CHIP_HEIGHT if tall else CHIP_HEIGHT) + 1)
        if tall:
            assert "カス" in str(hand.render()) or "タネ" in str(hand.render())


@pytest.mark.parametrize(
    ("size", "resized"),
    [((120, 40), None), ((80, 24), None), ((109, 40), (110, 40)), ((150, 40), (112, 30))],
)
async def test_the_log_wraps_long_lines_and_cuts_no_word(
    tmp_path: Path, size: tuple[int, int], resized: tuple[int, int] | None
) -> None:
    """Every line of the log is shown whole: a line wider than the log is wrapped at
    a space, never cut, also after the terminal changes size (a terminal widened to
    120 columns opens the side panel and narrows the log: its lines used to end
    "...it stays on the fiel")."""
    app = KoiKoiApp(
        settings=GameSettings(get_rules("nintendo"), "random", 4, 0.0),
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
    )
    async with app.run_test(size=size) as pilot:
        screen = None
        for _ in range(4):
            await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
            screen = app.game_screen
            assert screen is not None
            await do_action(pilot, app, greedy_policy(screen.game.view()))
        await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
        if resized is not None:
            await pilot.resize_terminal(*resized)
        await pilot.pause()
        await pilot.pause()
        assert screen is not None
        log = screen.query_one("#log", RichLog)
        width = log.scrollable_content_region.width
        assert width > 0
        shown = [strip.text.rstrip() for strip in log.lines]
        assert any(len(line) > width for line in screen.log_lines), (width, screen.log_lines)
        for line in shown:
            assert Text(line).cell_len <= width, (width, line)
        assert " ".join(shown).split() == " ".join(screen.log_lines).split()


def _shown_lines(body: Widget) -> range:
    """The lines of a scrolling body's content now in view on the screen."""
    top = round(body.scroll_y)
    return range(top, top + body.scrollable_content_region.height)


async def test_every_move_of_a_hint_can_be_seen_at_80x24(tmp_path: Path) -> None:
    """At 80x24 the hint used to show 2 of 7 moves and no way to the others: now the
    moves are in view or come into view with the arrow keys (the field and the hand
    stay in view above the hint)."""
    app = KoiKoiApp(
        settings=GameSettings(get_rules("nintendo"), "random", 4, 0.0),
        records=None,
        saves=tmp_path / "saves",
        pace=0.0,
        advisor="test-advisor",
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "play")
        screen = app.game_screen
        assert screen is not None
        legal = screen.game.view().legal_ids
        assert len(legal) >= 7
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HintDialog))
        await pilot.pause()
        dialog = app.screen
        body = dialog.query_one("#message-body")
        lines = plain(dialog.query_one("#message-text")).splitlines()
        moves = {
            next(i for i, line in enumerate(lines) if f"  {action_text(a)}" in line) for a in legal
        }
        assert len(moves) == len(legal)
        hand = screen.query_one("#hand").region
        box = dialog.query_one("#hint-box").region
        assert box.y >= hand.bottom and box.bottom <= 24
        # The body is on the screen inside the box, at least a few moves tall.
        assert body.region.y >= box.y and body.region.bottom <= box.bottom
        first = set(_shown_lines(body))
        assert len(moves & first) >= 5, (sorted(moves & first), lines)
        if not moves <= first:  # the others are announced, a key away
            assert "↓" in str(dialog.query_one("#hint-box").border_subtitle)
        seen: set[int] = set()
        for _ in range(len(lines)):
            seen |= set(_shown_lines(body))
            await pilot.press("down")
            await pilot.pause()
        assert moves <= seen, (sorted(moves - seen), lines)
        assert plain(dialog.query_one("#hint-head")).count("\n") == 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)


def _shown_text(widget: Widget) -> list[str]:
    """The lines a widget draws now, as text."""
    width, height = widget.size
    return [strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, width, height))]


async def test_the_record_path_is_never_broken_mid_word_at_80x24(tmp_path: Path) -> None:
    """The match-end screen names the record's file whole: on a line of its own, the
    home directory as ~, and folded only after a path separator when still too long."""
    records = tmp_path / "a-rather-long-directory-name" / "with-records-of-finished-matches"
    app = KoiKoiApp(
        settings=GameSettings(get_rules("nintendo").replace(game__rounds=1), "random", 4, 0.0),
        records=records,
        saves=tmp_path / "saves",
        pace=0.0,
        stamp="20260101-120000",
        advisor="test-advisor",
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, greedy_policy, lambda prompt: prompt == "match_end")
        await pilot.pause()
        screen = app.game_screen
        assert screen is not None and screen.record_path is not None
        path = str(screen.record_path)
        assert len(path) > 80  # too long for one line: it must be folded
        shown = [
            line
            for widget in app.screen.query("#me-record, #me-path")
            for line in _shown_text(widget)
            if line.strip()
        ]
        text = "\n".join(line.strip() for line in shown)
        start = text.replace("\n", "").find(path)
        assert start >= 0, shown
        # Every line break inside the path comes right after a separator.
        flat = 0
        for i, char in enumerate(text):
            if char == "\n":
                if start < flat < start + len(path):
                    assert text[i - 1] == "/", shown
            else:
                flat += 1
