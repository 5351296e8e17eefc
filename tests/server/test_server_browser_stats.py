"""The statistics page in real headless Chromium: a quick game against the AI, then /stats
counts and lists it, draws its charts, fits a phone's width and opens its replay.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from browser_helpers import (
    Page,
    dismiss_round_dialog,
    game_id,
    hub_room,
    mover_at,
    play_plain_move,
    start_ai_game,
)
from server_helpers import ThreadServer
from sqlalchemy import insert

from koikoi.server.players import RatingRow, key_hash


def play_one_round(p: Page, server: ThreadServer, game: str) -> None:
    """Seat 0 plays its first playable card (first capture), and stops when asked."""
    page = p.page
    room = hub_room(server, game)
    deadline = time.monotonic() + 90
    while not room.is_over:
        assert time.monotonic() < deadline, "the game did not end in time"
        if room.match.current != 0:
            time.sleep(0.02)
            continue
        seq = room.seq
        if mover_at(page, room, seq) != 0:
            continue
        dismiss_round_dialog(p, {"round": True})
        play_plain_move(page, room, seq, deadline)


def test_statistics_after_a_game(server: ThreadServer, browser: Any) -> None:
    p = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = p.page
    start_ai_game(p, server, 11, name="Hana")
    page.wait_for_selector("#bottom-hand .card")
    game = game_id(page)
    play_one_round(p, server, game)
    live = server.app.state.hub.rooms[game]
    deadline = time.monotonic() + 20
    while not live.finished_stored:  # the record is stored as the match ends
        assert time.monotonic() < deadline
        time.sleep(0.05)
    room = live.room
    opponent = room.seats[1].name
    mine, theirs = room.match.scores

    page.goto(f"{server.base}/stats")
    page.wait_for_selector("body[data-ready]")
    assert page.input_value("#s-name") == "Hana"
    assert page.locator("#s-content").is_visible()
    tiles = page.locator("#s-totals").inner_text()
    assert "Games\n1" in tiles
    rows = page.locator("#s-games li")
    assert rows.count() == 1
    line = rows.first.inner_text()
    assert f"vs {opponent}" in line and f"{mine}–{theirs}" in line
    result = "Draw" if room.match.winner is None else ("Win" if room.match.winner == 0 else "Loss")
    assert result in line
    # Charts are inline SVG with an accessible name; one bar for the one game.
    assert page.locator("#s-points-chart svg[role=img] rect.bar").count() == 1
    assert page.locator("#s-opponent-chart svg[role=img]").count() == 1
    assert opponent in page.locator("#s-opponent-table").inner_text()
    assert "nintendo" in page.locator("#s-rules-table").inner_text()
    p.shot("20-stats")

    # A phone's width: nothing wider than the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390 px"
    p.shot("21-stats-phone")

    # The replay link opens this game's replay with this browser's device key.
    page.click("#s-games li a.replay-link")
    page.wait_for_selector("#viewer:not([hidden])")
    assert f"#mine={game}" in page.url
    steps = int(page.get_attribute("#r-slider", "max") or "0")
    assert steps >= len(room.match.actions)
    page.keyboard.press("End")
    assert "Round 1 over" in page.locator("#r-events").inner_text()
    p.close()


def test_quick_match_then_the_leaderboard_rates_only_what_counts(
    server: ThreadServer, browser: Any
) -> None:
    pages = {}
    for seat, name in ((0, "Aoi"), (1, "Chie")):
        p = Page(browser, viewport={"width": 390, "height": 844}, reduced_motion="reduce")
        p.page.goto(f"{server.base}/lobby")
        p.page.wait_for_selector("body[data-ready]")
        assert p.page.locator("#lb-table tbody tr").count() >= 8  # the AI levels
        p.page.fill("#q-name", name)
        p.page.select_option("#q-rules", "nintendo")
        p.page.select_option("#q-rounds", "1")
        p.page.click("#q-start")
        if seat == 0:
            p.page.wait_for_function(
                "() => document.getElementById('q-status').textContent.includes('Waiting')"
            )
            assert p.page.locator("#q-cancel").is_visible()
            p.shot("22-lobby-waiting")
        pages[seat] = p
    for p in pages.values():
        p.page.wait_for_selector("#bottom-hand .card")
    game = game_id(pages[0].page)
    assert game_id(pages[1].page) == game
    room = hub_room(server, game)
    assert [s.name for s in room.seats] == ["Aoi", "Chie"] and room.rules.game.rounds == 1

    deadline = time.monotonic() + 90
    while not room.is_over:
        assert time.monotonic() < deadline
        seq = room.seq
        seat = mover_at(pages[0].page, room, seq)
        if seat is None:
            continue
        page = pages[seat].page
        if seat != 0 and mover_at(page, room, seq) is None:
            continue
        dismiss_round_dialog(pages[seat], {"round": True})
        try:
            play_plain_move(page, room, seq, deadline)
        except Exception as exc:  # say what each page believed, to tell a race from a bug
            seen = {
                n: q.page.evaluate(
                    "() => { const G = window.KOIKOI; const v = G.state && G.state.view;"
                    " return {seat: G.seat, role: G.role, pending: G.pending, game: G.game,"
                    " seq: G.state && G.state.seq, current: v && v.current,"
                    " phase: v && v.phase, legal: v && v.legal.length,"
                    " dialogs: [...document.querySelectorAll('dialog[open]')].map(d => d.id)}; }"
                )
                for n, q in pages.items()
            }
            server_side = (room.seq, room.match.current, room.match.phase, room.is_over)
            raise AssertionError(
                f"seat {seat} could not move: pages {seen}, server {server_side}"
            ) from exc
    live = server.app.state.hub.rooms[game]
    while not live.finished_stored:
        assert time.monotonic() < deadline
        time.sleep(0.05)

    # A one-round match is not the preset as it is, and neither player is established:
    # not rated (#29). A provisional rating is shown with "?" in a list of its own.
    store = server.app.state.players.store
    rin = store.ensure_player(key_hash(secrets.token_urlsafe(32)), "Rin")
    with store.engine.begin() as conn:
        conn.execute(
            insert(RatingRow),
            {
                "subject": f"player:{rin.id}",
                "rules": "nintendo",
                "rating": 1620.4,
                "rd": 200.0,
                "volatility": 0.06,
                "games": 3,
                "wins": 3,
                "losses": 0,
                "draws": 0,
                "updated_at": time.time(),
            },
        )
    for seat, p in pages.items():
        page = p.page
        page.goto(f"{server.base}/lobby")
        page.wait_for_selector("body[data-ready]")
        ranked = page.locator("#lb-table").inner_text()
        provisional = page.locator("#lb-provisional")
        assert provisional.is_visible()
        for name in ("Aoi", "Chie"):
            assert name not in ranked and name not in provisional.inner_text()
        assert "Rin" not in ranked
        row = provisional.locator("tbody tr", has_text="Rin")
        cells = row.locator("td").all_inner_texts()
        assert cells[0] == "–" and cells[1] == "1620?" and cells[3] == "3"
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"the lobby is {width} px wide at 390 px"
        if seat == 0:
            p.shot("23-leaderboard")
        p.close()
