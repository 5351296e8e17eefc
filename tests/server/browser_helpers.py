"""Shared helpers of the browser tests: Chromium, a page that collects console errors,
starting a game against the AI, and a scripted human who plays through the page.

Importing this module skips the importing test module when /usr/bin/chromium (Debian's
package) or Playwright is missing; no browser is ever downloaded. The ``server`` and
``browser`` fixtures are in conftest.py. Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from server_helpers import ROOT, ThreadServer

from koikoi.agents import make_agent
from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
    interchangeable,
)
from koikoi.game.engine import Match, Phase
from koikoi.game.rules import get_rules
from koikoi.game.views import view_of
from koikoi.server.rooms import ai_rng

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts" / "web"
"""Screenshots of the main screens."""
SHOTS = ROOT / "test-artifacts" / "screenshots"
"""Screenshots of the tutorial, the table, the keeper and the replay page."""
AI_LEVEL = "level:2"
"""The AI of these tests: plays like greedy, deterministic given its generator."""
ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)

PACE_SCRIPT = """
try {
  if (location.protocol.startsWith("http") && !localStorage.getItem("koikoi.pace")) {
    localStorage.setItem("koikoi.pace", %s);
  }
} catch (_) {}
"""
"""Run before each document's scripts: the opponent's pace, unless one is stored."""

if not CHROMIUM.exists():
    pytest.skip("/usr/bin/chromium is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


class Page:
    """A page in a context of its own, with its console errors collected (CSP violations
    show up there); :meth:`close` fails the test on any error but ``allow``.

    Args:
        browser: The Playwright browser.
        allow: Text of console errors the test expects.
        folder: Where :meth:`shot` saves.
        prefix: Put before each screenshot's name.
        full_page: Whether screenshots show the whole page rather than the window.
        pace: The opponent's pace the page starts with (``koikoi.pace`` in
            localStorage, unless the page already stored one): ``"instant"`` by default,
            so that whole games play fast; ``None`` leaves the page's own default.
        **options: For ``browser.new_context`` (viewport, locale, reduced_motion ...).
    """

    def __init__(
        self,
        browser: Any,
        *,
        allow: str | None = None,
        folder: Path = ARTIFACTS,
        prefix: str = "",
        full_page: bool = True,
        pace: str | None = "instant",
        **options: Any,
    ) -> None:
        self.allow = allow
        self.folder = folder
        self.prefix = prefix
        self.full_page = full_page
        self.context = browser.new_context(**options)
        if pace is not None:
            self.context.add_init_script(PACE_SCRIPT % json.dumps(pace))
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on(
            "console",
            lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None,
        )

    def shot(self, name: str, *, full_page: bool | None = None) -> None:
        """Save a screenshot as ``<folder>/<prefix><name>.png``."""
        full = self.full_page if full_page is None else full_page
        self.page.screenshot(path=str(self.folder / f"{self.prefix}{name}.png"), full_page=full)

    def close(self) -> None:
        errors = [e for e in self.errors if not (self.allow and self.allow in e)]
        assert not errors, errors
        self.context.close()


def hub_room(server: ThreadServer, game: str) -> Any:
    return server.app.state.hub.rooms[game].room


def game_id(page: Any) -> str:
    match = re.search(r"game=([A-Za-z0-9_-]+)", page.url)
    assert match, page.url
    return match.group(1)


def start_ai_game(
    p: Page,
    server: ThreadServer,
    seed: int,
    rounds: int = 1,
    *,
    preset: str | None = None,
    name: str | None = None,
) -> None:
    """Start a seeded game against :data:`AI_LEVEL` from the home screen (``preset``: the
    rule set to choose, ``name``: the player's name); returns once Start is clicked."""
    page = p.page
    page.goto(f"{server.base}/#seed={seed}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    if preset is not None:
        page.select_option("#rules", preset)
    page.fill("#rounds", str(rounds))
    if name is not None:
        page.fill("#player-name", name)
    page.click("#start")


# --------------------------------------------------------- the scripted human


def card_of(action_id: int) -> int:
    if action_id < PLAY_TARGET_BASE:
        return action_id
    if action_id < DISCARD_BASE:
        return (action_id - PLAY_TARGET_BASE) // 48
    return action_id - DISCARD_BASE


def human_choice(match: Match, called: bool) -> int:
    """The test's human: the lowest playable card, its lowest target; koi-koi once, then stop."""
    legal = match.legal_ids()
    if match.phase is Phase.DECIDE:
        return KOIKOI_ID if not called else STOP_ID
    if match.phase is Phase.TAKE:
        return min(legal)
    card = min(card_of(i) for i in legal)
    return min(i for i in legal if card_of(i) == card and i < DISCARD_BASE)


def capture_options(legal: list[int], action: int) -> list[int]:
    """The captures the page could offer for ``action``: every take of a drawn card, or
    the targets of the played card (empty for a plain play)."""
    if action >= TAKE_BASE:
        return [a for a in legal if a >= TAKE_BASE]
    if PLAY_TARGET_BASE <= action < DISCARD_BASE:
        card = card_of(action)
        return [a for a in legal if PLAY_TARGET_BASE <= a < DISCARD_BASE and card_of(a) == card]
    return []


def legal_before(
    rules_rounds: int, seed: int, actions: list[tuple[int, int]], index: int
) -> list[int]:
    """The legal actions before ``actions[index]`` of the match ``simulate`` plays."""
    match = Match(get_rules("nintendo").replace(game__rounds=rules_rounds), seed=seed)
    for _, a in actions[:index]:
        match.apply(a)
    return match.legal_ids()


def simulate(seed: int, rounds: int) -> tuple[Match, list[tuple[int, int]]]:
    """The whole match as the server will play it: human seat 0, the AI of level 2 (it
    plays like greedy, on the server's event loop) seat 1."""
    match = Match(get_rules("nintendo").replace(game__rounds=rounds), seed=seed)
    agent = make_agent(AI_LEVEL)
    out: list[tuple[int, int]] = []
    called = False
    while not match.is_over:
        p = match.current
        if p == 0:
            a = human_choice(match, called)
            called = called or a == KOIKOI_ID
        else:
            a = agent.act(view_of(match, p), ai_rng(seed, len(match.actions)))
        out.append((p, a))
        match.apply(a)
    return match, out


def dismiss_round_dialog(p: Page, shots: dict[str, bool]) -> bool:
    page = p.page
    if page.locator("#round-dialog[open]").count():
        if not shots.get("round"):
            p.shot("04-round-result")
            shots["round"] = True
        body = page.locator("#round-body").inner_text()
        assert "Why:" in body
        page.click("#round-continue")
        return True
    return False


def wait_seq(p: Page, seq: int, shots: dict[str, bool], deadline: float) -> None:
    """Wait until the page has drawn state ``seq`` (closing round results on the way)."""
    while not p.page.evaluate("n => !!window.KOIKOI.state && window.KOIKOI.state.seq >= n", seq):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page never reached seq {seq}")
        if not dismiss_round_dialog(p, shots):
            p.page.wait_for_timeout(40)


def do_action(
    p: Page, text: str, shots: dict[str, bool], deadline: float, options: list[int] | None = None
) -> None:
    """Perform one action through the page, as a person would. ``options``: the captures
    the action chose from (:func:`capture_options`); between Plains of one month the
    page asks nothing: it takes one of them by itself, or when the card is played."""
    page = p.page
    verb, *args = text.split()
    if options and interchangeable(options):
        if verb == "take":
            return  # the page captures without asking; the caller waits for the state
        args = args[:1]  # a click on the hand card plays it
    if verb in ("koikoi", "stop"):
        selector = "#koikoi-dialog[open]"
    elif verb == "take":
        selector = f'#field button.card.target[data-code="{args[0]}"]'
    else:
        selector = f'#bottom-hand button.card.playable[data-code="{args[0]}"]'
    while page.locator(selector).count() == 0:
        if time.monotonic() > deadline:
            p.shot("timeout")
            raise TimeoutError(f"page never offered {text!r}")
        if not dismiss_round_dialog(p, shots):
            page.wait_for_timeout(40)
    if verb in ("koikoi", "stop"):
        dialog = page.locator("#koikoi-dialog")
        assert "Stopping now scores" in dialog.inner_text()
        assert dialog.locator(".yaku-row").count() >= 1
        if not shots.get("koikoi"):
            p.shot("03-koikoi-dialog")
            shots["koikoi"] = True
        page.keyboard.press("k" if verb == "koikoi" else "s")
    elif verb == "take":
        bar = page.locator("#choice-bar").inner_text()
        assert "choose" in bar.lower()
        if not shots.get("take"):
            p.shot("02b-drawn-card-choice")
            shots["take"] = True
        page.click(selector)
    elif len(args) == 2:
        page.click(selector)
        target = f'#field button.card.target[data-code="{args[1]}"]'
        page.wait_for_selector(target)
        assert page.locator("#field button.card.target").count() == 2  # the two matches
        if not shots.get("choice"):
            p.shot("02-two-match-choice")
            shots["choice"] = True
        page.click(target)
    else:
        # Keyboard play: focus the card and press Enter.
        page.focus(selector)
        page.keyboard.press("Enter")


def mover_at(page: Any, room: Any, seq: int) -> int | None:
    """The player to move at ``seq`` as the page's own state of that seq says, once the
    page has drawn it; ``None`` when the game moved on meanwhile (look again).

    Reading ``room.match.current`` and ``room.seq`` one after the other is not enough:
    the server's thread applies actions at any moment, and a page resolves a capture
    between two interchangeable Plains by itself, so the two reads may belong to
    different moves (the page of the other seat was then asked to play).
    """
    page.wait_for_function(
        "n => !!window.KOIKOI.state && window.KOIKOI.state.seq >= n && !window.KOIKOI.running",
        arg=seq,
    )
    got = page.evaluate("() => [window.KOIKOI.state.seq, window.KOIKOI.state.view.current]")
    if got[0] != seq or room.seq != seq:
        return None
    return int(got[1])


def play_plain_move(page: Any, room: Any, seq: int, deadline: float) -> None:
    """The player to move makes the plainest move through ``page``: stop when asked, else
    the first offered capture, else the first playable card (and its first target); then
    wait until the server has applied it (``seq``: the room's sequence number before)."""
    if room.match.phase is Phase.DECIDE:
        page.wait_for_selector("#koikoi-dialog[open]")
        page.click("#stop-btn")
    elif room.match.phase is Phase.TAKE:
        # The page takes by itself when both targets are interchangeable Plains.
        targets = page.locator("#field button.card.target")
        while room.seq == seq and not targets.count():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        if room.seq == seq:
            targets.first.click()
    else:
        page.locator("#bottom-hand button.card.playable").first.click()
        if page.locator("#field button.card.target").count():
            page.locator("#field button.card.target").first.click()
    while room.seq == seq:
        assert time.monotonic() < deadline
        time.sleep(0.02)
