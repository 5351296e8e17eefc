"""Friend games and the lobby in headless Chromium: the invite panel over the table
(link, Copy, QR code) until the friend joins, play only once they have, and the
lobby's second player told their opponent's name.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing; no browser
is ever downloaded. Screenshots go to test-artifacts/web/ (gitignored).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx
import pytest
from browser_helpers import ONE_ROUND, Page, game_id, hub_room, play_plain_move, start_ai_game
from server_helpers import ThreadServer

import koikoi.server.hub
from koikoi.game.engine import Match

VIEWPORTS = {
    "laptop": {"viewport": {"width": 1366, "height": 768}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


def first_mover_seed(mover: int) -> int:
    """A seed whose one-round match (nintendo rules) starts with ``mover`` to play."""
    return next(s for s in range(1, 100) if Match(ONE_ROUND, seed=s).current == mover)


def in_window(page: Any, selector: str) -> None:
    """Assert that ``selector``'s box lies inside the window (no scrolling needed)."""
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    assert box is not None, f"{selector} is not shown"
    assert box["width"] > 0 and box["height"] > 0, (selector, box)
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= size["width"], (selector, box, size)
    assert box["y"] + box["height"] <= size["height"], (selector, box, size)


def status(page: Any) -> str:
    text: str = page.locator("#status").inner_text()
    return text


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_the_host_sees_the_invite_first_and_plays_once_the_friend_joined(
    server: ThreadServer, browser: Any, size: str
) -> None:
    host = Page(browser, reduced_motion="reduce", **VIEWPORTS[size])
    page = host.page
    # The host deals: today's page offered the hand before anybody had joined.
    page.goto(f"{server.base}/#seed={first_mover_seed(0)}")
    page.check('input[name="mode"][value="friend"]')
    page.fill("#rounds", "1")
    page.fill("#player-name", "Aiko")
    page.click("#start")
    page.wait_for_selector("#invite-panel:not([hidden])")
    page.wait_for_selector("#invite-qr svg")
    page.wait_for_selector("#bottom-hand .card")
    invite = page.input_value("#invite-link")
    assert invite.startswith(server.base + "/#join=")
    for selector in ("#invite-link", "#copy-invite", "#invite-qr svg"):
        in_window(page, selector)
    # The code is the server's code of exactly this link (inlined, not a picture of it).
    game = game_id(page)
    room = hub_room(server, game)
    token = page.evaluate("g => KK.games()[g].token", game)
    svg = httpx.post(
        f"{server.base}/api/games/{game}/invite-qr",
        json={"token": token, "invite": invite.split("#join=")[1]},
    ).text
    path = page.locator("#invite-qr svg path").last.get_attribute("d")
    assert path and f'd="{path}"' in svg
    assert page.locator("#bottom-hand .card.playable").count() == 0
    assert "Waiting for your friend" in status(page)
    assert page.evaluate("document.activeElement.id") == "copy-invite"
    host.shot(f"friends-invite-{size}", full_page=False)

    # Copy: where the page may not write the clipboard and the old copy command fails
    # too, the link stays selected and the player is told to copy it by hand.
    page.evaluate(
        """() => {
          navigator.clipboard.writeText = () => Promise.reject(new Error("denied"));
          document.execCommand = () => false;
        }"""
    )
    page.click("#copy-invite")
    page.wait_for_selector("#copy-feedback[data-copied='0']")
    assert "by hand" in page.inner_text("#copy-feedback")
    selected = page.evaluate(
        "() => { const i = document.getElementById('invite-link');"
        " return [document.activeElement === i, i.selectionStart, i.selectionEnd]; }"
    )
    assert selected == [True, 0, len(invite)]

    # A reload before the friend has joined shows the panel again, the hand still idle.
    page.reload()
    page.wait_for_selector("#invite-panel:not([hidden])")
    page.wait_for_function("() => !!window.KOIKOI.state")
    assert page.locator("#bottom-hand .card.playable").count() == 0
    assert page.input_value("#invite-link") == invite

    friend = Page(browser, reduced_motion="reduce", **VIEWPORTS["phone"])
    friend.page.goto(invite)
    friend.page.wait_for_selector("#bottom-hand .card")
    assert friend.page.locator("#invite-panel").is_hidden()
    # The host's page learns it without a reload: the panel goes, the hand is playable.
    page.wait_for_selector("#invite-panel", state="hidden")
    page.wait_for_selector("#bottom-hand .card.playable")
    assert "Your turn" in status(page)
    assert room.open_seat is None
    deadline = time.monotonic() + 60
    play_plain_move(page, room, 0, deadline)
    friend.page.wait_for_function("() => window.KOIKOI.state && window.KOIKOI.state.seq >= 1")
    host.close()
    friend.close()


def test_clipboard_copy_says_copied(server: ThreadServer, browser: Any) -> None:
    host = Page(
        browser,
        reduced_motion="reduce",
        permissions=["clipboard-read", "clipboard-write"],
        **VIEWPORTS["laptop"],
    )
    page = host.page
    page.goto(f"{server.base}/#")
    page.check('input[name="mode"][value="friend"]')
    page.click("#start")
    page.wait_for_selector("#invite-panel:not([hidden])")
    page.click("#copy-invite")
    page.wait_for_selector("#copy-feedback[data-copied='1']")
    assert page.inner_text("#copy-feedback") == "Copied."
    assert page.evaluate("navigator.clipboard.readText()") == page.input_value("#invite-link")
    host.close()


def test_an_ai_game_shows_no_invite_and_plays_at_once(server: ThreadServer, browser: Any) -> None:
    p = Page(browser, reduced_motion="reduce", **VIEWPORTS["laptop"])
    start_ai_game(p, server, first_mover_seed(0))
    p.page.wait_for_selector("#bottom-hand .card.playable")
    assert p.page.locator("#invite-panel").is_hidden()
    assert "Your turn" in status(p.page)
    p.close()


def test_the_lobby_s_second_player_is_told_the_first_players_name(
    server: ThreadServer, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first to queue takes seat 0; make that seat deal (the seed of a lobby game
    # is drawn by the hub).
    seed = first_mover_seed(0)
    monkeypatch.setattr(koikoi.server.hub.secrets, "randbelow", lambda n: seed)
    aoi = secrets.token_urlsafe(32)

    def quick(key: str) -> dict[str, Any]:
        r = httpx.post(
            f"{server.base}/api/lobby/quick",
            json={"key": key, "rules": "nintendo", "rounds": 1, "name": "Aoi"},
        )
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    assert quick(aoi)["type"] == "waiting"
    ben = Page(browser, reduced_motion="reduce", **VIEWPORTS["laptop"])
    page = ben.page
    page.goto(f"{server.base}/lobby")
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#q-name", "Ben")
    page.select_option("#q-rules", "nintendo")
    page.select_option("#q-rounds", "1")
    page.click("#q-start")
    page.wait_for_url("**/#game=*")
    page.wait_for_selector("#bottom-hand .card")
    room = hub_room(server, game_id(page))
    assert room.match.current == 0 and room.open_seat == 0
    page.wait_for_function("() => /join/.test(document.getElementById('status').innerText)")
    assert page.locator("#invite-panel").is_hidden()  # no invite link in a lobby match

    # Aoi's next question collects the match: Ben's page names her, header and status.
    claimed = quick(aoi)
    assert claimed["type"] == "matched" and claimed["seat"] == 0
    page.wait_for_function("() => document.getElementById('top-name').innerText === 'Aoi'")
    page.wait_for_function(
        "() => document.getElementById('status').innerText.includes('Aoi')", timeout=5000
    )
    assert status(page) == "Waiting for Aoi…"
    ben.close()
