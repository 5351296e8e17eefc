"""Every moment felt (issue #28): the opponent's turn told in words and paced, banners
and sounds for a yaku, a koi-koi call and a stop, the expert's advice in the koi-koi
dialog, and the Settings dialog (static/moments.js).

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import (
    Page,
    capture_options,
    dismiss_round_dialog,
    do_action,
    game_id,
    hub_room,
    legal_before,
    simulate,
    start_ai_game,
    wait_seq,
)
from server_helpers import EXPERT_HINTS, ThreadServer

from koikoi.game.actions import KOIKOI_ID, STOP_ID, describe_action_id
from koikoi.game.cards import CODES
from koikoi.game.scoring import YAKU_NAMES
from koikoi.server.app import create_app

PACE_SEED = 48
"""A one-round match the AI leads: its first turn comes before the human's first move."""
MOMENTS_SEED = 4
"""Two rounds: the human makes a yaku, calls koi-koi, then stops; in round 2 the AI makes
a yaku and stops (the scripted human of :func:`browser_helpers.simulate`)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    """The web game with the expert's hints (they carry the chance to win the match)."""
    db = tmp_path_factory.mktemp("moments") / "browser.db"
    with ThreadServer(create_app(f"sqlite:///{db}", config=EXPERT_HINTS)) as srv:
        yield srv


RECORDER = """
window.__moments = { statuses: [], banners: [], sounds: [] };
document.addEventListener("DOMContentLoaded", () => {
  const rec = window.__moments;
  const look = () => {
    const status = document.getElementById("status");
    const text = status ? status.textContent : "";
    const playable = !!document.querySelector("#bottom-hand button.card.playable");
    const last = rec.statuses[rec.statuses.length - 1];
    if (!last || last.text !== text || last.playable !== playable) {
      rec.statuses.push({ text, playable });
    }
    const banner = document.getElementById("moment-banner");
    if (banner && !banner.hidden) {
      const part = (name) => {
        const n = banner.querySelector(name);
        return n ? n.textContent : "";
      };
      const entry = {
        kind: banner.dataset.kind, title: part(".moment-title"), sub: part(".moment-sub"),
      };
      const prev = rec.banners[rec.banners.length - 1];
      if (!prev || prev.title !== entry.title || prev.sub !== entry.sub) rec.banners.push(entry);
    }
  };
  new MutationObserver(look).observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ["class", "hidden"],
  });
  document.addEventListener("koikoi:sound", (e) => rec.sounds.push(e.detail.name));
});
"""
"""Records, at each change of the page, the status line's text with whether the hand is
playable, each banner shown, and each sound made."""


def recorded(p: Page) -> dict[str, list[Any]]:
    data: dict[str, list[Any]] = p.page.evaluate("() => window.__moments")
    return data


def opponent_sentences(page: Any, opponent: str) -> list[str]:
    """The game log's lines about the opponent's steps, in order."""
    lines: list[str] = page.locator("#log li").all_inner_texts()
    starts = (f"{opponent} played", f"{opponent} drew")
    return [line for line in lines if line.startswith(starts)]


def test_the_opponents_turn_is_told_step_by_step_before_the_human_plays(
    server: ThreadServer, browser: Any
) -> None:
    """At the default pace each step of the AI's turn (the card played and what it took,
    the card drawn and what it took) is the status line's sentence, one after the
    other, before the hand can be played."""
    match, actions = simulate(PACE_SEED, 1)
    assert actions[0][0] == 1  # the AI leads
    p = Page(browser, pace=None, viewport={"width": 1366, "height": 768})
    p.context.add_init_script(RECORDER)
    page = p.page
    start_ai_game(p, server, PACE_SEED)
    page.wait_for_selector("#bottom-hand button.card.playable")
    assert page.evaluate("() => KKMoments.pace()") == "normal"
    opponent = page.locator("#top-info .name").inner_text()
    steps = opponent_sentences(page, opponent)
    first_play = next(e for e in match.events if e.kind == "play")
    assert first_play.player == 1 and first_play.card is not None
    # The AI's first turn: its play, then its draw (and nothing of the human's yet).
    assert len(steps) == 2, steps
    assert f"({CODES[first_play.card]})" in steps[0] and " played " in steps[0]
    assert " drew " in steps[1]
    statuses = recorded(p)["statuses"]
    first_playable = next(i for i, s in enumerate(statuses) if s["playable"])
    shown = [s["text"] for s in statuses[:first_playable]]
    assert [s for s in shown if s in steps] == steps, shown  # each told, in order
    assert statuses[first_playable]["text"].startswith("Your turn")
    p.close()


def test_the_settings_are_remembered(server: ThreadServer, browser: Any) -> None:
    """Pace, sound and card badges: chosen in the Settings dialog, kept after a reload;
    the header's sound toggle is the same setting."""
    p = Page(browser, viewport={"width": 1366, "height": 768})
    page = p.page
    start_ai_game(p, server, PACE_SEED)
    page.wait_for_selector("#bottom-hand .card")
    assert page.evaluate("() => document.documentElement.dataset.badges") == "off"
    page.click("#settings-btn")
    dialog = page.locator("#settings-dialog")
    assert dialog.evaluate("d => d.open")
    assert page.locator('input[name="pace"][value="instant"]').is_checked()  # the helper's
    page.check('input[name="pace"][value="slow"]')
    page.uncheck("#settings-sound")
    page.check("#settings-badges")
    assert page.locator("#sound-toggle").inner_text() == "Sound: off"
    assert page.evaluate("() => document.documentElement.dataset.badges") == "on"
    dialog.locator(".close-dialog").click()
    assert not dialog.evaluate("d => d.open")
    page.reload()
    page.wait_for_selector("#bottom-hand .card")
    assert page.evaluate("() => localStorage.getItem('koikoi.pace')") == "slow"
    assert page.evaluate("() => KKMoments.stepMs()") == 1600
    assert page.evaluate("() => document.documentElement.dataset.badges") == "on"
    page.click("#sound-toggle")  # the header's toggle: on again
    page.click("#settings-btn")
    assert page.locator('input[name="pace"][value="slow"]').is_checked()
    assert page.locator("#settings-sound").is_checked()
    assert page.locator("#settings-badges").is_checked()
    page.keyboard.press("Escape")
    p.close()


def _rects_overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_banners_for_yaku_koikoi_and_stop_and_advice_in_the_dialog(
    server: ThreadServer, browser: Any
) -> None:
    """A two-round match: the human's yaku, koi-koi call and stop and the AI's yaku and
    stop each get a banner (read out by the live region, with a sound) that takes
    neither the focus nor the dialog's buttons; Ask the AI (key A) in the koi-koi dialog
    shows the expert's koi-koi and stop rows with the chance to win the match."""
    match, expected = simulate(MOMENTS_SEED, 2)
    mine = [a for pl, a in expected if pl == 0]
    assert KOIKOI_ID in mine and STOP_ID in mine
    p = Page(browser, viewport={"width": 1366, "height": 768})
    p.context.add_init_script(RECORDER)
    page = p.page
    start_ai_game(p, server, MOMENTS_SEED, rounds=2)
    page.wait_for_selector("#bottom-hand .card")
    room = hub_room(server, game_id(page))
    assert room.seed == MOMENTS_SEED
    opponent = page.locator("#top-info .name").inner_text()
    shots: dict[str, bool] = {"koikoi": True, "choice": True, "take": True, "round": True}
    deadline = time.monotonic() + 120
    advised = False
    for index, (player, action) in enumerate(expected):
        if player != 0:
            continue
        wait_seq(p, index, shots, deadline)
        text = describe_action_id(action)
        if action in (KOIKOI_ID, STOP_ID) and not advised:
            advised = True
            page.wait_for_selector("#koikoi-dialog[open]")
            # The yaku's banner shows above the dialog, off its buttons, without the focus.
            banner = page.locator("#moment-banner")
            assert banner.evaluate("b => b.matches(':popover-open')")
            assert banner.get_attribute("data-kind") == "yaku"
            assert page.evaluate("() => document.activeElement.id") == "stop-btn"
            box = banner.bounding_box()
            assert box is not None
            for selector in ("#koikoi-dialog .dialog-buttons", "#bottom-hand"):
                other = page.locator(selector).bounding_box()
                assert other is not None and not _rects_overlap(box, other), selector
            assert (
                page.evaluate(
                    "() => getComputedStyle(document.getElementById('moment-banner')).animationName"
                )
                == "kk-banner-in"
            )
            page.keyboard.press("a")
            rows = page.locator("#koikoi-advice li")
            rows.nth(1).wait_for(timeout=120_000)  # the first search may compile the kernel
            assert rows.count() == 2
            assert {r.get_attribute("data-action") for r in rows.all()} == {"koikoi", "stop"}
            for row in rows.all_inner_texts():
                assert re.search(r"[+-]\d+\.\d points · \d+% match win", row), row
            advice = page.locator("#koikoi-advice").inner_text()
            assert "The expert would" in advice
        do_action(
            p,
            text,
            shots,
            deadline,
            capture_options(legal_before(2, MOMENTS_SEED, expected, index), action),
        )
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if not dismiss_round_dialog(p, shots):
            page.wait_for_timeout(50)
    assert room.match.actions == [a for _, a in expected]
    banners = recorded(p)["banners"]
    first, second = match.settlements
    assert first.winner == 0 and second.winner == 1

    # The human's yaku (Plains, then one more Plain after koi-koi), call and stop; the
    # AI's yaku and stop: each named, with its points.
    def title(yaku: Any) -> str:
        english, japanese = YAKU_NAMES[yaku[0].name]
        assert len(yaku) == 1, yaku
        return f"{english}! {japanese.split()[0]}"

    assert [y.name for y in first.yaku] == ["kasu"]  # 10 Plains (1 point), then 11
    assert [(b["kind"], b["title"], b["sub"]) for b in banners] == [
        ("yaku", title(first.yaku), "You made a yaku: 1 point"),
        ("koikoi", "You call koi-koi! こいこい", ""),
        ("yaku", title(first.yaku), f"You made a yaku: {first.base} points"),
        ("stop", f"You stop: {first.points} points", ""),
        ("yaku", title(second.yaku), f"{opponent} made a yaku: {second.base} points"),
        ("stop", f"{opponent} stops: {second.points} points", ""),
    ], banners
    live = page.locator("#moment-live")
    assert live.get_attribute("aria-live") == "polite"
    assert f"{opponent} stops" in live.inner_text()
    sounds = recorded(p)["sounds"]
    assert {"yaku", "koikoi", "stop"} <= set(sounds), sounds
    p.close()


def test_a_banner_does_not_move_with_reduced_motion(server: ThreadServer, browser: Any) -> None:
    """With prefers-reduced-motion the banner still appears, with no animation."""
    p = Page(browser, reduced_motion="reduce", viewport={"width": 1366, "height": 768})
    page = p.page
    start_ai_game(p, server, PACE_SEED)
    page.wait_for_selector("#bottom-hand .card")
    page.evaluate(
        "() => KKMoments.moment({type: 'koikoi', player: 1, calls: 1}, {who: 'AI', mine: false})"
    )
    banner = page.locator("#moment-banner")
    banner.wait_for()
    assert banner.inner_text().startswith("AI calls koi-koi!")
    assert (
        page.evaluate(
            "() => getComputedStyle(document.getElementById('moment-banner')).animationName"
        )
        == "none"
    )
    p.close()
