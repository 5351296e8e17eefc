"""The turn clock of a lobby match in headless Chromium: the countdown on the badge of
the seat to move, and the match-over dialog of a forfeit in both languages.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing; no browser
is ever downloaded.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx
import pytest
from browser_helpers import ONE_ROUND, Page, game_id, hub_room
from server_helpers import ThreadServer

import koikoi.server.hub
from koikoi.game.engine import Match


@pytest.mark.parametrize(
    ("lang", "title"),
    [
        ("en", "Aoi ran out of time: You win by forfeit."),
        ("ja", "Aoiの持ち時間が切れました：あなたの勝ち（時間切れ）。"),
    ],
)
def test_the_clock_counts_down_and_a_forfeit_ends_the_match(
    server: ThreadServer, browser: Any, monkeypatch: pytest.MonkeyPatch, lang: str, title: str
) -> None:
    seed = next(s for s in range(1, 100) if Match(ONE_ROUND, seed=s).current == 0)
    monkeypatch.setattr(koikoi.server.hub.secrets, "randbelow", lambda n: seed)
    aoi, ben = secrets.token_urlsafe(32), secrets.token_urlsafe(32)

    def quick(key: str, name: str) -> dict[str, Any]:
        r = httpx.post(
            f"{server.base}/api/lobby/quick",
            json={"key": key, "rules": "nintendo", "rounds": 1, "name": name},
        )
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    assert quick(aoi, "Aoi")["type"] == "waiting"
    matched = quick(ben, "Ben")
    assert matched["type"] == "matched" and matched["seat"] == 1
    assert quick(aoi, "Aoi")["seat"] == 0  # Aoi (seat 0) is to move, and never does
    hub = server.app.state.hub
    room = hub_room(server, matched["game"])
    assert room.clock_seat == 0
    page = Page(browser, reduced_motion="reduce", locale=lang)
    p = page.page
    try:
        p.goto(f"{server.base}/")
        p.wait_for_function("() => typeof KK !== 'undefined' && KK.config")
        p.evaluate(
            "([game, token, lang]) => { KK.saveGame(game, { token, seat: 1, mode: 'friend' });"
            " localStorage.setItem('koikoi.lang', lang); }",
            [matched["game"], matched["token"], lang],
        )
        p.goto(f"{server.base}/?again=1#game={matched['game']}")
        p.wait_for_selector("#top-info .badge.clock")
        assert game_id(p) == matched["game"]
        assert p.locator("#bottom-info .badge.clock").count() == 0  # not Ben's clock
        text = p.locator("#top-info .badge.clock").inner_text()
        assert ":" in text
        assert "low" not in (p.locator("#top-info .badge.clock").get_attribute("class") or "")
        # Time passes on the server (its clock, injected): Aoi's runs out.
        monkeypatch.setattr(hub, "now", lambda: time.time() + 10_000)
        p.wait_for_selector("#over-dialog[open]", timeout=10_000)
        assert p.locator("#over-title").inner_text() == title
        assert p.locator("#top-info .badge.clock").count() == 0
        assert room.is_over and room.winner == 1
    finally:
        page.close()
