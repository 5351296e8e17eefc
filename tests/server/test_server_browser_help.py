"""The web game's help in real headless Chromium: the Rules dialog's yaku table follows
the rules being played; two Plains of one month are captured without a question; the
log's last line names the match's winner, the winner's score first.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from browser_helpers import (
    AI_LEVEL,
    ONE_ROUND,
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
from server_helpers import ThreadServer

from koikoi.features.rules_help import yaku_rows
from koikoi.game.actions import TAKE_BASE, describe_action_id, interchangeable
from koikoi.game.engine import Match
from koikoi.game.rules import get_rules


def _start(p: Page, server: ThreadServer, seed: int, *, preset: str = "nintendo") -> None:
    start_ai_game(p, server, seed, preset=preset)
    p.page.wait_for_selector("#bottom-hand .card")


def _yaku_rows_shown(page: Any) -> list[list[str]]:
    rows: list[list[str]] = page.eval_on_selector_all(
        "#yaku-table tr[data-yaku]",
        "rows => rows.map(r => [r.dataset.yaku, ...[...r.children].map(c => c.textContent)])",
    )
    return rows


@pytest.mark.parametrize("preset", ["nintendo", "leaflet", "modern-hanafuda"])
def test_the_rules_dialog_shows_the_active_rules_yaku(
    server: ThreadServer, browser: Any, preset: str
) -> None:
    p = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = p.page
    _start(p, server, 3, preset=preset)
    page.click("#rules-btn")
    page.wait_for_selector("#rules-dialog[open] #yaku-table")
    caption = page.locator("#yaku-table caption").inner_text()
    assert caption == f"Yaku of the rules '{preset}'"
    rules = get_rules(preset)
    expected = [[r.name, r.english, r.japanese, r.needs, str(r.points)] for r in yaku_rows(rules)]
    assert _yaku_rows_shown(page) == expected
    if preset == "leaflet":
        assert ["goko", "Five Brights", "五光 gokō", "all 5 Brights", "15"] in expected
        assert "hanami" not in [row[0] for row in expected]
    p.shot(f"16-rules-yaku-{preset}")
    page.keyboard.press("Escape")
    p.close()


def test_yaku_table_of_house_rules_follows_their_options(
    server: ThreadServer, browser: Any
) -> None:
    """A house-rules text: extra points, sanko with the Rain man and a new yaku."""
    house = (
        'extends = "nintendo"\n[game]\nrounds = 1\n'
        "[yaku]\nextra = 0\nsanko_with_rainman = true\n[points]\ntsukifuda = 4\n"
    )
    p = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = p.page
    page.goto(f"{server.base}/#seed=3")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    page.click("#house-details summary")
    page.fill("#house-rules", house)
    page.click("#start")
    page.wait_for_selector("#bottom-hand .card")
    page.click("#rules-btn")
    page.wait_for_selector("#rules-dialog[open] #yaku-table")
    rules = hub_room(server, game_id(page)).match.rules
    shown = {row[0]: row for row in _yaku_rows_shown(page)}
    assert shown["sanko"][3] == "any 3 Brights"
    assert shown["tane"][3] == "5 Animals"
    assert shown["tsukifuda"][4] == "4"
    assert list(shown) == [r.name for r in yaku_rows(rules)]
    p.close()


# ------------------------------------------------- two Plains of one month


def _first_move_between_plains() -> tuple[int, int]:
    """A one-round match whose first move is the human's, with a card that matches two
    Plains of one month (and nothing else): the seed and that card's captures' lowest id."""
    for seed in range(5000):
        match = Match(ONE_ROUND, seed=seed)
        if match.is_over or match.current != 0:
            continue
        legal = match.legal_ids()
        for a in legal:
            options = capture_options(legal, a)
            if interchangeable(options):
                return seed, min(options)
    raise AssertionError("no seed")


def test_a_card_matching_two_plains_of_a_month_captures_without_asking(
    server: ThreadServer, browser: Any
) -> None:
    seed, action = _first_move_between_plains()
    code = describe_action_id(action).split()[1]
    p = Page(browser, viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    page = p.page
    _start(p, server, seed)
    room = hub_room(server, game_id(page))
    page.click(f'#bottom-hand button.card.playable[data-code="{code}"]')
    deadline = time.monotonic() + 30
    wait_seq(p, 1, {"round": True}, deadline)
    assert room.match.actions[0] == action  # the lower of the two Plains, no question
    assert page.locator("#field button.card.target").count() == 0
    p.close()


def _drawn_card_between_plains() -> tuple[int, list[tuple[int, int]], int]:
    """A one-round match (the scripted human against the AI of level 2) in which the human
    draws a card matching two Plains of one month: the seed, the actions and that index."""
    for seed in range(5000):
        _, actions = simulate(seed, 1)
        for i, (player, a) in enumerate(actions):
            if (
                player == 0
                and a >= TAKE_BASE
                and interchangeable(capture_options(legal_before(1, seed, actions, i), a))
            ):
                return seed, actions, i
    raise AssertionError("no seed")


def test_a_drawn_card_takes_one_of_two_plains_and_the_log_names_the_winner(
    server: ThreadServer, browser: Any
) -> None:
    seed, actions, take = _drawn_card_between_plains()
    p = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = p.page
    _start(p, server, seed)
    room = hub_room(server, game_id(page))
    shots: dict[str, bool] = {"round": True, "koikoi": True, "choice": True, "take": True}
    deadline = time.monotonic() + 120
    for index, (player, action) in enumerate(actions):
        if player != 0:
            continue
        options = capture_options(legal_before(1, seed, actions, index), action)
        do_action(p, describe_action_id(action), shots, deadline, options)
        wait_seq(p, index + 1, shots, deadline)
        assert room.match.actions[: index + 1] == [a for _, a in actions[: index + 1]]
        if index == take:
            # Taken by the page itself: the choice bar never asked.
            assert "choose" not in page.locator("#choice-bar").inner_text().lower()
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if not dismiss_round_dialog(p, shots):
            page.wait_for_timeout(50)
    scores = room.match.scores
    winner = room.match.winner
    last = page.locator("#log li").last.inner_text()
    if winner is None:
        assert last == f"Match over: a draw, {scores[0]}–{scores[1]}."
    else:
        who = "You win" if winner == 0 else "wins"
        assert last.startswith("Match over: ") and who in last
        assert last.endswith(f" {scores[winner]}–{scores[1 - winner]}.")
    draw = page.evaluate(
        "() => KK.describeEvent({type: 'match_over', player: null, scores: [4, 4]}, () => '')"
    )
    assert draw == "Match over: a draw, 4–4."
    p.close()
