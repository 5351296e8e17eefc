""" "Learn to play" in real headless Chromium: the guided round played to its end.

Each explanation must appear at its moment (the coach's texts come from
koikoi.features.tutorial, rendered here in English for comparison), point at its cards,
never show a hidden card, and leave the cards it talks about uncovered, on a
desktop window (1280 x 800) and a phone (390 x 844). Leaving and restarting the
tutorial work. Screenshots go to test-artifacts/screenshots/ (gitignored).

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing.
"""

from __future__ import annotations

import re
import time
from typing import Any

from browser_helpers import SHOTS, Page, game_id
from server_helpers import ThreadServer

from koikoi.agents import make_agent
from koikoi.features.tutorial import (
    TUTORIAL_OPPONENT,
    TUTORIAL_SEAT,
    TUTORIAL_SEED,
    Tip,
    lessons,
    new_tutorial_match,
    prompt,
    suggestion,
)
from koikoi.game.actions import PLAY_TARGET_BASE, STOP_ID, TAKE_BASE
from koikoi.game.cards import CODES
from koikoi.game.engine import Match
from koikoi.game.views import view_of
from koikoi.server.rooms import ai_rng

DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}


def tutorial_page(browser: Any, name: str, **options: Any) -> Page:
    """A page with reduced motion; its screenshots are test-artifacts/screenshots/
    tutorial-<name>-*.png, the window only."""
    return Page(
        browser,
        folder=SHOTS,
        prefix=f"tutorial-{name}-",
        full_page=False,
        reduced_motion="reduce",
        **options,
    )


# ------------------------------------------------------------ the expected round


def expected_round() -> tuple[list[tuple[str, Tip | None, int | None]], Match]:
    """The guided round as the server plays it when the newcomer follows the coach:
    a list of moments (``"lesson"``, tip, None) and (``"move"``, prompt, action)."""
    match = new_tutorial_match()
    opponent = make_agent(TUTORIAL_OPPONENT)
    out: list[tuple[str, Tip | None, int | None]] = []
    shown: set[str] = set()

    def new_lessons() -> None:
        for tip in lessons(view_of(match, TUTORIAL_SEAT)):
            if tip.key not in shown:
                shown.add(tip.key)
                out.append(("lesson", tip, None))

    while not match.is_over:
        new_lessons()
        if match.current == TUTORIAL_SEAT:
            view = view_of(match, TUTORIAL_SEAT)
            action = suggestion(view)
            assert action is not None
            out.append(("move", prompt(view), action))
        else:
            view = view_of(match, 1 - TUTORIAL_SEAT, with_history=True)
            action = opponent.act(view, ai_rng(TUTORIAL_SEED, len(match.actions)))
        match.apply(action)
    new_lessons()
    return out, match


# ---------------------------------------------------------------- page helpers


def hidden_now(server: ThreadServer, game: str) -> set[str]:
    """The cards the newcomer may not see: the opponent's hand and the stock."""
    rnd = server.app.state.hub.rooms[game].room.match.round
    mask = rnd.hands[1 - TUTORIAL_SEAT]
    for c in rnd.stock:
        mask |= 1 << c
    return {CODES[i] for i in range(48) if mask >> i & 1}


def coach_codes(page: Any) -> set[str]:
    """Every card code the coach shows, names or highlights."""
    texts: list[str] = page.evaluate(
        """() => {
          const out = [];
          for (const n of document.querySelectorAll('.coach-mark')) out.push(n.dataset.code || '');
          for (const n of document.querySelectorAll('#coach, .coach-note')) out.push(n.innerText);
          return out;
        }"""
    )
    found: set[str] = set()
    for text in texts:
        found.update(w for w in re.split(r"[\s/.,;:()!?'\"\[\]]+", text) if w in CODES)
    return found


def overlaps(page: Any) -> list[str]:
    """The cards of the field and of the hand that the coach panel covers."""
    result: list[str] = page.evaluate(
        """() => {
          const coach = document.getElementById('coach');
          if (!coach) return [];
          const c = coach.getBoundingClientRect();
          const out = [];
          const cards = '#field .card, #bottom-hand .card, #bottom-pile .card';
          for (const n of document.querySelectorAll(cards)) {
            const r = n.getBoundingClientRect();
            if (r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom) {
              out.push(n.dataset.code);
            }
          }
          return out;
        }"""
    )
    return result


def check_table(p: Page, server: ThreadServer, game: str) -> None:
    page = p.page
    assert not (coach_codes(page) & hidden_now(server, game))
    assert overlaps(page) == []
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"]


def wait_text(p: Page, tip: Tip) -> None:
    page = p.page
    page.wait_for_selector(f'#coach-text[data-key="{tip.key}"]')
    assert page.locator("#coach-text").inner_text() == tip.text("en")
    for code in tip.cards:
        assert page.locator(f'.card.coach-mark[data-code="{code}"]').count() >= 1, (tip.key, code)


def play_through(p: Page, server: ThreadServer, *, touch: bool, shots: set[str]) -> Match:
    """Follow the coach from the welcome to the end of the round; returns the match."""
    page = p.page
    moments, final = expected_round()
    game = game_id(page)
    room = server.app.state.hub.rooms[game].room
    for kind, tip, action in moments:
        if kind == "lesson":
            assert tip is not None
            if tip.place == "settlement":
                page.wait_for_selector("#round-dialog[open] .coach-note")
                note = page.locator("#round-dialog .coach-note").inner_text()
                assert tip.text("en") in note
                check_table(p, server, game)
                p.shot("07-settlement")
                page.click("#round-continue")
                continue
            if tip.place == "finish":
                page.wait_for_selector("#over-dialog[open] .coach-note")
                assert tip.text("en") in page.locator("#over-dialog .coach-note").inner_text()
                p.shot("08-finish")
                continue
            wait_text(p, tip)
            check_table(p, server, game)
            if tip.key in ("welcome", "pile", "yaku") and tip.key not in shots:
                shots.add(tip.key)
                p.shot({"welcome": "01-welcome", "pile": "03-pile", "yaku": "05-yaku"}[tip.key])
            if touch:
                page.tap("#coach .coach-next")
            else:
                # Keyboard: Next has the focus.
                assert page.evaluate(
                    "() => document.activeElement.classList.contains('coach-next')"
                )
                page.keyboard.press("Enter")
            continue
        assert tip is not None and action is not None
        seq = len(room.match.actions)
        if tip.place == "decide":
            page.wait_for_selector("#koikoi-dialog[open] .coach-note")
            note = page.locator("#koikoi-dialog .coach-note").inner_text()
            assert tip.text("en") in note
            assert action == STOP_ID
            assert page.locator("#stop-btn.coach-mark").count() == 1
            p.shot("06-koikoi-decision")
            page.keyboard.press("s")
        else:
            wait_text(p, tip)
            check_table(p, server, game)
            name = {"play_match": "02-play-match", "play_pick": "04-play-pick"}.get(tip.key)
            if name:
                p.shot(name)
            card = tip.cards[0]
            selector = f'#bottom-hand button.card.playable[data-code="{card}"]'
            if touch:
                page.tap(selector)  # the first tap shows what the card captures
                if action >= PLAY_TARGET_BASE:
                    target = CODES[(action - PLAY_TARGET_BASE) % 48]
                    page.tap(f'#field button.card.target[data-code="{target}"]')
                else:
                    page.tap(selector)
            elif action >= PLAY_TARGET_BASE and action < TAKE_BASE:
                assert page.evaluate(
                    "(c) => document.activeElement.dataset.code === c", card
                )  # the prompt's card has the focus
                page.keyboard.press("Enter")
                target = CODES[(action - PLAY_TARGET_BASE) % 48]
                page.click(f'#field button.card.target[data-code="{target}"]')
            else:
                assert page.evaluate("(c) => document.activeElement.dataset.code === c", card)
                page.keyboard.press("Enter")
        deadline = time.monotonic() + 15
        while len(room.match.actions) <= seq:
            assert time.monotonic() < deadline, f"the page did not play {tip.key}"
            page.wait_for_timeout(30)
        assert room.match.actions[seq] == action
    assert room.match.actions == final.actions
    return final


def start_tutorial(p: Page, server: ThreadServer, *, touch: bool) -> None:
    """From the home screen (its screenshot: 00-home), click or tap "Learn to play" until
    the coach shows."""
    page = p.page
    page.goto(server.base + "/")
    page.wait_for_selector("#learn-btn")
    p.shot("00-home")
    (page.tap if touch else page.click)("#learn-btn")
    page.wait_for_selector("#coach")


def learn_to_the_second_lesson(page: Any) -> None:
    """Open the tutorial from the home screen and go past the welcome to the months."""
    page.click("#learn-btn")
    page.wait_for_selector('#coach-text[data-key="welcome"]')
    page.keyboard.press("Enter")
    page.wait_for_selector('#coach-text[data-key="months"]')


def start_over(page: Any, button: str) -> str:
    """Click ``button`` of a tutorial; a new game with the welcome must follow: its id."""
    before = game_id(page)
    page.click(button)
    page.wait_for_function("(g) => !location.hash.includes(g)", arg=before)
    page.wait_for_selector('#coach-text[data-key="welcome"]')
    return game_id(page)


# ------------------------------------------------------------------------ tests


def test_the_guided_round_on_a_desktop_by_keyboard(server: ThreadServer, browser: Any) -> None:
    p = tutorial_page(browser, "desktop", **DESKTOP)
    page = p.page
    start_tutorial(p, server, touch=False)
    first = game_id(page)
    final = play_through(p, server, touch=False, shots=set())
    assert final.scores[TUTORIAL_SEAT] > 0
    # Play it again from the end: a new game, the welcome again.
    second = start_over(page, "#over-dialog .coach-again")
    assert second != first
    assert list(page.evaluate("() => Object.keys(JSON.parse(localStorage['koikoi.games']))")) == [
        second
    ]
    p.close()


def test_the_guided_round_on_a_phone_by_touch(server: ThreadServer, browser: Any) -> None:
    p = tutorial_page(browser, "phone", **PHONE)
    start_tutorial(p, server, touch=True)
    play_through(p, server, touch=True, shots=set())
    p.close()


def test_leave_the_tutorial_and_start_it_again(server: ThreadServer, browser: Any) -> None:
    p = tutorial_page(browser, "leave", **DESKTOP)
    page = p.page
    page.goto(server.base + "/")
    learn_to_the_second_lesson(page)
    page.click("#coach .coach-leave")
    page.wait_for_selector("#home:not([hidden])")
    assert page.locator("#coach").count() == 0
    # The unfinished tutorial is not offered as a game to resume.
    assert "No games yet." in page.locator("#games-list").inner_text()
    learn_to_the_second_lesson(page)
    # A reload does not repeat what was explained.
    page.reload()
    page.wait_for_selector('#coach-text[data-key="months"]')
    # Start over from the panel.
    start_over(page, "#coach .coach-restart")
    # A game that is not a tutorial has no coach.
    page.goto(server.base + "/#")
    page.wait_for_selector("#home:not([hidden])")
    page.check('input[name="mode"][value="friend"]')
    page.click("#start")
    page.wait_for_selector("#bottom-hand .card")
    assert page.locator("#coach").count() == 0
    p.close()


def test_the_coach_speaks_japanese(server: ThreadServer, browser: Any) -> None:
    p = tutorial_page(browser, "japanese", **PHONE)
    page = p.page
    page.add_init_script("localStorage.setItem('koikoi.lang', 'ja')")
    page.goto(server.base + "/")
    page.wait_for_function(
        "() => document.getElementById('learn-btn').textContent === '遊び方を学ぶ'"
    )
    page.tap("#learn-btn")
    moments, _ = expected_round()
    welcome = moments[0][1]
    assert welcome is not None and welcome.key == "welcome"
    page.wait_for_selector('#coach-text[data-key="welcome"]')
    assert page.locator("#coach-text").inner_text() == welcome.text("ja")
    assert page.locator("#coach .coach-next").inner_text() == "次へ"
    p.shot("01-welcome")
    p.close()
