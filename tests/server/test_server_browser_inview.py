"""Everything a player needs is in view without scrolling, in real headless Chromium.

At a laptop's 1366x768, a desktop's 1920x1080 and a phone's 390x844, in English and in
Japanese, a whole one-round match against the AI is played through the page; at each
phase (your turn, the hint, the AI's turn, the koi-koi decision, the settlement) the
test checks that the table, both capture piles, the last actions in words, the status,
the hint and the action buttons lie inside the window, and that the page does not
scroll. Screenshots of each phase go to test-artifacts/screenshots/inview/.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from browser_helpers import (
    SHOTS,
    Page,
    capture_options,
    game_id,
    hub_room,
    legal_before,
    simulate,
    start_ai_game,
)
from server_helpers import ThreadServer

from koikoi.game.actions import KOIKOI_ID, STOP_ID, describe_action_id, interchangeable

SIZES = {
    "laptop": {"viewport": {"width": 1366, "height": 768}},
    "desktop": {"viewport": {"width": 1920, "height": 1080}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
LOCALES = {"en": "en-GB", "ja": "ja-JP"}

TABLE = ["#field", "#top-pile", "#bottom-pile", "#bottom-hand", "#status"]
"""In view at every phase of play: the table, both piles, your hand and the status."""
DESKTOP_ONLY = ["#log li:last-child", "#hint-btn", "#progress-btn", "#history-btn", "#rules-btn"]
"""The last action in words and the action buttons, in the side column."""
PHONE_ONLY = ["#log li:last-child", "#tab-hint", "#tab-progress", "#tab-log", "#tab-more"]
"""The last action in words under the status, and the tab bar."""

_BOXES = """(selectors) => selectors.map((s) => {
  const n = document.querySelector(s);
  if (!n) return [s, null];
  const r = n.getBoundingClientRect();
  const style = getComputedStyle(n);
  const shown = r.width > 0 && r.height > 0
    && style.visibility !== 'hidden' && style.display !== 'none';
  return [s, shown ? [r.left, r.top, r.right, r.bottom] : null];
})"""


def out_of_view(page: Any, selectors: list[str]) -> list[str]:
    """The selectors whose element is missing, hidden, or not wholly inside the window
    (a pixel of slack for rounding), each with its box."""
    width, height = page.evaluate("() => [window.innerWidth, window.innerHeight]")
    bad = []
    for selector, box in page.evaluate(_BOXES, selectors):
        if box is None:
            bad.append(f"{selector}: not shown")
            continue
        left, top, right, bottom = box
        if left < -1 or top < -1 or right > width + 1 or bottom > height + 1:
            bad.append(f"{selector}: {[round(v) for v in box]} outside {width}x{height}")
    return bad


def scrolls(page: Any) -> list[int]:
    """How far the page can scroll, across and down (0, 0: it cannot)."""
    extra: list[int] = page.evaluate(
        """() => [document.documentElement.scrollWidth - window.innerWidth,
                  document.documentElement.scrollHeight - window.innerHeight]"""
    )
    return extra


def _seed_with_an_early_decision() -> tuple[int, list[tuple[int, int]]]:
    """A one-round match (the tests' scripted human against the AI) in which the human
    decides koi-koi or stop within its first 20 actions."""
    for seed in range(300):
        _, actions = simulate(seed, 1)
        index = next((i for i, (p, a) in enumerate(actions) if p == 0 and a == KOIKOI_ID), None)
        if index is not None and index < 20:
            return seed, actions
    raise AssertionError("no seed")


class Phases:
    """Plays the scripted match through the page, checking the view at each phase."""

    def __init__(self, p: Page, server: ThreadServer, size: str, lang: str) -> None:
        self.p = p
        self.page = p.page
        self.server = server
        self.size = size
        self.lang = lang
        self.seen: set[str] = set()
        self.problems: list[str] = []

    def check(self, phase: str, extra: list[str] | None = None) -> None:
        """Check the view now, once per phase, and keep a screenshot."""
        if phase in self.seen:
            return
        self.seen.add(phase)
        # What a person sees: the page after its next frame is drawn.
        self.page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        wanted = TABLE + (PHONE_ONLY if self.size == "phone" else DESKTOP_ONLY) + (extra or [])
        for problem in out_of_view(self.page, wanted):
            self.problems.append(f"{phase}: {problem}")
        across, down = scrolls(self.page)
        if across > 0 or down > 0:
            self.problems.append(f"{phase}: the page scrolls by {across}x{down} px")
        self.p.shot(f"{self.size}-{self.lang}-{phase}")

    def dialogs(self) -> bool:
        """Check and close a round result; True when one was open."""
        page = self.page
        if page.locator("#round-dialog[open]").count():
            self.check("settlement", ["#round-dialog", "#round-continue"])
            page.click("#round-continue")
            return True
        return False

    def wait_for(self, selector: str, deadline: float) -> None:
        while self.page.locator(selector).count() == 0:
            if time.monotonic() > deadline:
                self.p.shot(f"{self.size}-{self.lang}-timeout")
                raise TimeoutError(f"the page never showed {selector}")
            if not self.dialogs():
                self.page.wait_for_timeout(40)

    def wait_seq(self, seq: int, deadline: float) -> None:
        while not self.page.evaluate(
            "n => !!window.KOIKOI.state && window.KOIKOI.state.seq >= n", seq
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never reached seq {seq}")
            if not self.dialogs():
                self.page.wait_for_timeout(40)

    def act(self, seed: int, actions: list[tuple[int, int]], index: int, deadline: float) -> None:
        """The human's action ``actions[index]``, made through the page."""
        page = self.page
        action = actions[index][1]
        if action in (KOIKOI_ID, STOP_ID):
            self.wait_for("#koikoi-dialog[open]", deadline)
            self.check("koikoi-decision", ["#koikoi-dialog", "#koikoi-btn", "#stop-btn"])
            page.keyboard.press("k" if action == KOIKOI_ID else "s")
            return
        verb, *args = describe_action_id(action).split()
        options = capture_options(legal_before(1, seed, actions, index), action)
        if options and interchangeable(options):
            if verb == "take":
                return  # the page captures by itself
            args = args[:1]
        if verb == "take":
            target = f'#field button.card.target[data-code="{args[0]}"]'
            self.wait_for(target, deadline)
            self.check("capture-choice", ["#choice-bar"])
            page.click(target)
            return
        card = f'#bottom-hand button.card.playable[data-code="{args[0]}"]'
        self.wait_for(card, deadline)
        self.check("your-turn")
        if "hint" not in self.seen:
            page.keyboard.press("h")
            page.wait_for_selector("#hint-box:not([hidden]) ol li", timeout=120_000)
            self.check("hint", ["#hint-box", "#board .card.hinted"])
        page.click(card)
        if len(args) == 2:
            target = f'#field button.card.target[data-code="{args[1]}"]'
            page.wait_for_selector(target)
            self.check("capture-choice", ["#choice-bar"])
            page.click(target)

    def play(self, seed: int, actions: list[tuple[int, int]]) -> None:
        deadline = time.monotonic() + 240
        for index, (player, _) in enumerate(actions):
            if player == 0:
                self.act(seed, actions, index, deadline)
            elif index > 0 and actions[index - 1][0] == 0:
                self.check("ai-turn")
            self.wait_seq(index + 1, deadline)
        self.wait_for("#over-dialog[open]", deadline)
        self.check("match-over", ["#over-dialog", "#over-close"])


@pytest.mark.parametrize("lang", list(LOCALES))
@pytest.mark.parametrize("size", list(SIZES))
def test_everything_a_player_needs_is_in_view(
    server: ThreadServer, browser: Any, size: str, lang: str
) -> None:
    seed, actions = _seed_with_an_early_decision()
    p = Page(
        browser,
        folder=SHOTS / "inview",
        full_page=False,
        locale=LOCALES[lang],
        reduced_motion="reduce",
        **SIZES[size],
    )
    (SHOTS / "inview").mkdir(parents=True, exist_ok=True)
    start_ai_game(p, server, seed)
    phases = Phases(p, server, size, lang)
    phases.play(seed, actions)
    assert hub_room(server, game_id(p.page)).match.is_over
    assert {"your-turn", "hint", "ai-turn", "koikoi-decision", "settlement"} <= phases.seen
    assert not phases.problems, phases.problems
    if lang == "ja":
        assert p.page.evaluate("document.documentElement.lang") == "ja"
    p.close()


def test_the_hinted_card_stands_out_from_the_other_playable_cards(
    server: ThreadServer, browser: Any
) -> None:
    """The expert's pick gets a ring of its own: its style differs from a playable card's."""
    seed, _ = _seed_with_an_early_decision()
    p = Page(browser, folder=SHOTS, full_page=False, reduced_motion="reduce", **SIZES["laptop"])
    start_ai_game(p, server, seed)
    page = p.page
    page.wait_for_selector("#bottom-hand button.card.playable")
    page.keyboard.press("h")
    page.wait_for_selector("#bottom-hand button.card.hinted", timeout=120_000)
    styles = page.evaluate(
        """() => {
          const hinted = document.querySelector('#bottom-hand button.card.hinted');
          const other = [...document.querySelectorAll('#bottom-hand button.card.playable')]
            .find((n) => !n.classList.contains('hinted'));
          const look = (n) => getComputedStyle(n).boxShadow;
          return [look(hinted), other ? look(other) : null];
        }"""
    )
    assert styles[1] is not None and styles[0] != styles[1], styles
    assert "156, 255, 138" in styles[0]  # the hint's green
    p.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_new_game_form_s_start_button_is_in_view(
    server: ThreadServer, browser: Any, size: str
) -> None:
    """The first screen: Learn to play and Start are in the window without scrolling."""
    p = Page(browser, full_page=False, reduced_motion="reduce", **SIZES[size])
    p.page.goto(f"{server.base}/")
    p.page.wait_for_selector("#agent option", state="attached")
    assert out_of_view(p.page, ["#learn-btn", "#start", "#agent"]) == []
    p.close()
