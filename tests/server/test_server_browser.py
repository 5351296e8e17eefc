"""The web game in real headless Chromium (Playwright) against uvicorn on 127.0.0.1.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing; no
browser is ever downloaded. Screenshots of the main screens go to
test-artifacts/web/ (gitignored).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from browser_helpers import (
    AI_LEVEL,
    ONE_ROUND,
    Page,
    capture_options,
    card_of,
    dismiss_round_dialog,
    do_action,
    game_id,
    hub_room,
    human_choice,
    legal_before,
    play_plain_move,
    simulate,
    start_ai_game,
    wait_seq,
)
from server_helpers import ThreadServer

from koikoi.agents import make_agent
from koikoi.game.actions import KOIKOI_ID, STOP_ID, describe_action_id, interchangeable
from koikoi.game.cards import CODES
from koikoi.game.engine import Match, Phase
from koikoi.game.views import view_of
from koikoi.server.rooms import ai_rng


def find_seed(rounds: int) -> tuple[int, list[tuple[int, int]], Match]:
    """A seed whose match makes the human choose between two matches and decide koi-koi."""
    for seed in range(5000):
        match, actions = simulate(seed, rounds)
        mine = [describe_action_id(a) for p, a in actions if p == 0]
        if "koikoi" not in mine:
            continue
        # Real choices: not between two Plains of one month (the page takes one itself).
        asked = [
            describe_action_id(a)
            for i, (p, a) in enumerate(actions)
            if p == 0
            and len(options := capture_options(legal_before(rounds, seed, actions, i), a)) >= 2
            and not interchangeable(options)
        ]
        two_match = any(t.startswith("play") for t in asked)
        if two_match and any(t.startswith("take") for t in asked):
            return seed, actions, match
    raise AssertionError("no seed with a two-match choice and a koi-koi decision")


def dom_codes(page: Any, deal: int) -> set[str]:
    """Every card code the page shows or names, outside log lines of other deals."""
    texts: list[str] = page.evaluate(
        """(deal) => {
          const out = [];
          for (const n of document.querySelectorAll('[data-code]')) {
            if (!n.closest('#log') ) out.push(n.dataset.code);
          }
          for (const n of document.querySelectorAll('img')) out.push(n.getAttribute('src'));
          for (const n of document.querySelectorAll('[aria-label],[title]')) {
            if (n.closest('#log')) continue;
            out.push(n.getAttribute('aria-label') || '', n.getAttribute('title') || '');
          }
          const clone = document.body.cloneNode(true);
          for (const li of clone.querySelectorAll('#log li')) {
            if (li.dataset.deal !== String(deal)) li.remove();
          }
          out.push(clone.innerText);
          return out;
        }""",
        deal,
    )
    found: set[str] = set()
    for text in texts:
        for word in re.split(r"[\s/.,;:()'\"\[\]]+", text or ""):
            if word in CODES:
                found.add(word)
    return found


def hidden_now(server: ThreadServer, game: str, seat: int | None) -> set[str]:
    rnd = hub_room(server, game).match.round
    mask = 0
    for c in rnd.stock:
        mask |= 1 << c
    mask |= rnd.hands[0] | rnd.hands[1] if seat is None else rnd.hands[1 - seat]
    return {CODES[i] for i in range(48) if mask >> i & 1}


# --------------------------------------------------------------------- tests


def test_play_the_ai_through_the_page(server: ThreadServer, browser: Any) -> None:
    """Two complete rounds against the AI of level 2, with a two-match choice, a drawn-card
    choice, a koi-koi decision, keyboard play and a reload in the middle."""
    seed, expected, final = find_seed(rounds=2)
    p = Page(browser, viewport={"width": 1280, "height": 900})
    page = p.page
    page.goto(f"{server.base}/#seed={seed}")
    page.wait_for_selector("#agent option", state="attached")
    # The levels are offered, the expert first chosen, each described.
    assert page.locator("#agent").input_value() == "expert"
    assert "Level 8:" in page.locator("#agent-desc").inner_text()
    assert page.locator("#agent option").count() == 8
    p.shot("01-home")
    page.select_option("#agent", AI_LEVEL)
    assert "Level 2:" in page.locator("#agent-desc").inner_text()
    page.fill("#rounds", "2")
    page.click("#start")
    page.wait_for_selector("#bottom-hand .card")
    game = game_id(page)
    room = hub_room(server, game)
    assert room.seed == seed
    shots: dict[str, bool] = {}
    deadline = time.monotonic() + 120
    human_actions = [(i, a) for i, (pl, a) in enumerate(expected) if pl == 0]
    for n, (index, action) in enumerate(human_actions):
        if n == 0:
            p.shot("02a-game-board")
            page.wait_for_selector("#bottom-hand button.card.playable")
            page.keyboard.press("h")  # a hint from the expert, whatever the opponent
            page.wait_for_selector("#hint-box:not([hidden]) ol li")
            hint = page.locator("#hint-box").inner_text()
            assert "Hint from the expert" in hint and " points" in hint
            assert page.locator(".card.hinted").count() >= 1
        if n == 3:
            page.reload()
            page.wait_for_selector("#bottom-hand .card")
            assert "Connecting" not in page.locator("#status").inner_text()
        options = capture_options(legal_before(2, seed, expected, index), action)
        do_action(p, describe_action_id(action), shots, deadline, options)
        # The server applied exactly the expected prefix of the match.
        wait_seq(p, index + 1, shots, deadline)
        assert room.match.actions[: index + 1] == [a for _, a in expected[: index + 1]]
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if not dismiss_round_dialog(p, shots):
            page.wait_for_timeout(50)
    assert room.match.actions == [a for _, a in expected]
    assert room.match.scores == final.scores
    over = page.locator("#over-dialog").inner_text()
    high, low = max(final.scores), min(final.scores)
    assert "Match over" in over and f"{high}–{low}" in over  # the winner's score first
    p.shot("05-match-over")
    assert shots.get("choice") and shots.get("koikoi") and shots.get("take") and shots.get("round")

    # History, the record download and the replay page.
    page.click("#over-close")
    page.click("#history-btn")
    assert page.locator("#history-body .history-table tr").count() == 1 + 2
    p.shot("06-history")
    page.locator("#history-dialog .close-dialog").click()
    page.reload()  # a finished game shows its result again
    page.wait_for_selector("#over-dialog[open]")
    with page.expect_download() as info:
        page.click("#download-btn")
    record_path = info.value.path()
    assert '"format": "koikoi-record"' in Path(record_path).read_text()
    page.goto(f"{server.base}/replay#game={game}")
    page.wait_for_selector("#viewer:not([hidden])")
    steps = int(page.get_attribute("#r-slider", "max") or "0")
    assert steps >= len(expected)
    page.click("#r-next")
    page.keyboard.press("ArrowRight")
    assert page.locator("#r-pos").inner_text() == f"Step 2 of {steps}"
    assert page.locator("#r-hand-0 .card").count() + page.locator("#r-hand-1 .card").count() > 0
    p.shot("07-replay")
    page.keyboard.press("End")
    events = page.locator("#r-events").inner_text()
    assert "Round 2 over" in events and "undefined" not in events
    p.close()


def test_friends_play_by_invite_link_and_a_spectator_sees_no_hidden_card(
    server: ThreadServer, browser: Any
) -> None:
    a = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    # A seeded deal: the same round every run, long enough for the checks below.
    a.page.goto(server.base + "/#seed=3")
    a.page.check('input[name="mode"][value="friend"]')
    a.page.fill("#rounds", "1")
    a.page.fill("#player-name", "Aiko")
    a.page.click("#start")
    a.page.wait_for_selector("#invite-panel:not([hidden])")
    invite = a.page.input_value("#invite-link")
    watch = a.page.input_value("#watch-link")
    assert invite.startswith(server.base + "/#join=") and watch.startswith(server.base + "/#watch=")
    game = game_id(a.page)
    a.shot("08-friend-invite")

    b = Page(
        browser,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
    )
    b.page.goto(invite)
    b.page.wait_for_selector("#bottom-hand .card")
    assert "join=" not in b.page.url  # the invite leaves the address bar
    assert game_id(b.page) == game
    a.page.wait_for_selector("#invite-panel[hidden]", state="attached")

    third = Page(browser, allow="status of 409")
    third.page.goto(invite)
    third.page.wait_for_selector("#message:not([hidden])")
    assert "already used" in third.page.locator("#message-text").inner_text()
    third.close()

    spec = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    spec.page.goto(watch)
    spec.page.wait_for_selector("#top-hand .card")
    assert spec.page.locator("#hint-btn").is_hidden()
    # One naming rule: the friend, who gave no name, is "Guest 2" (by seat) to the host
    # and to the spectator alike; the host is "Aiko" to all.
    a.page.wait_for_function("() => document.querySelector('#top-name').textContent === 'Guest 2'")
    spec.page.wait_for_function("() => !!document.querySelector('#top-name')")
    assert spec.page.inner_text("#top-name") == a.page.inner_text("#top-name") == "Guest 2"
    assert spec.page.inner_text("#bottom-name") == b.page.inner_text("#top-name") == "Aiko"

    room = hub_room(server, game)
    pages = {0: a, 1: b}
    checks = 0
    deadline = time.monotonic() + 90
    while not room.is_over:
        assert time.monotonic() < deadline
        seat = room.match.current
        p = pages[seat]
        page = p.page
        seq = room.seq
        page.wait_for_function("n => window.KOIKOI.state && window.KOIKOI.state.seq === n", arg=seq)
        spec.page.wait_for_function(
            "n => window.KOIKOI.state && window.KOIKOI.state.seq === n", arg=seq
        )
        if page.locator("#round-dialog[open]").count():
            page.click("#round-continue")
        # Nothing moves now: compare each page with what the engine hides from it.
        deal = len(room.match.deals) - 1
        for who, viewer in ((None, spec), (0, a), (1, b)):
            viewer.page.wait_for_function(
                "n => !!window.KOIKOI.state && window.KOIKOI.state.seq === n"
                " && !window.KOIKOI.running",
                arg=seq,
            )
            shown = dom_codes(viewer.page, deal)
            leaked = shown & hidden_now(server, game, who)
            assert not leaked, f"{'spectator' if who is None else f'seat {who}'} shows {leaked}"
            checks += 1
        assert spec.page.locator("#bottom-hand [data-code], #top-hand [data-code]").count() == 0
        if checks == 3:
            spec.shot("09-spectator")
            b.shot("10-phone-board")
        play_plain_move(page, room, seq, deadline)
    for p in (a, b, spec):
        while not p.page.locator("#over-dialog[open]").count():
            assert time.monotonic() < deadline
            if not dismiss_round_dialog(p, {"round": True}):
                p.page.wait_for_timeout(40)
    scores = f"{max(room.match.scores)}–{min(room.match.scores)}"  # the winner's first
    assert scores in a.page.locator("#over-title").inner_text()
    assert scores in b.page.locator("#over-title").inner_text()
    assert checks > 20
    b.shot("11-phone-match-over")
    for p in (a, b, spec):
        p.close()


def test_score_keeper_known_example(server: ThreadServer, browser: Any) -> None:
    p = Page(browser, viewport={"width": 1280, "height": 1000})
    page = p.page
    page.goto(server.base + "/keeper")
    page.wait_for_selector('.keeper-month button[data-code="3L"]')
    page.select_option("#k-rules", "nintendo")
    for code in ("3L", "8L", "9A"):
        page.click(f'.keeper-month button[data-code="{code}"]')
    page.wait_for_function("() => document.getElementById('k-base').textContent === '10'")
    assert page.locator("#k-points").inner_text() == "20"  # seven or more: x2
    result = page.locator("#k-result").inner_text()
    assert "Flower viewing" in result and "Moon viewing" in result
    assert page.get_attribute('.keeper-month button[data-code="9A"]', "aria-pressed") == "true"
    p.shot("12-score-keeper")
    page.select_option("#k-rules", "leaflet")
    page.wait_for_function("() => document.getElementById('k-base').textContent === '0'")
    page.select_option("#k-rules", "koikoi-japan")
    page.wait_for_function("() => document.getElementById('k-base').textContent === '2'")
    p.close()


def test_cards_have_english_and_japanese_labels(server: ThreadServer, browser: Any) -> None:
    p = Page(browser, reduced_motion="reduce")
    page = p.page
    page.goto(server.base + "/keeper")
    label = page.get_attribute('.keeper-month button[data-code="1L"]', "aria-label") or ""
    assert "Pine - Crane" in label and "松に鶴" in label and "松 matsu" in label
    label = page.get_attribute('.keeper-month button[data-code="11P"]', "aria-label") or ""
    assert "Willow - Lightning" in label and "柳" in label
    p.close()


# ------------------------------------------------- issue #13: what players saw


def _two_match_seed() -> int:
    """A one-round match whose first move is the human's, with a card matching two."""
    for seed in range(5000):
        match = Match(ONE_ROUND, seed=seed)
        if match.is_over or match.current != 0:
            continue
        legal = match.legal_ids()
        if any(
            len(options := capture_options(legal, a)) >= 2 and not interchangeable(options)
            for a in legal
        ):
            return seed
    raise AssertionError("no seed")


def _opacities(page: Any, selector: str) -> list[float]:
    values: list[str] = page.eval_on_selector_all(
        selector, "nodes => nodes.map(n => getComputedStyle(n).opacity)"
    )
    return [float(v) for v in values]


def test_the_field_is_bright_hand_cards_show_their_matches_and_the_hand_stays_in_view(
    server: ThreadServer, browser: Any
) -> None:
    seed = _two_match_seed()
    match = Match(ONE_ROUND, seed=seed)
    legal = match.legal_ids()
    two = next(
        card_of(a)
        for a in legal
        if len(options := capture_options(legal, a)) >= 2 and not interchangeable(options)
    )
    p = Page(browser, viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    page = p.page
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand button.card.playable")
    # The field is at full brightness while nothing is to be chosen.
    assert set(_opacities(page, "#field .card")) == {1.0}

    # Hovering a hand card outlines the field cards of its month, and only those.
    code = CODES[two]
    month = code.rstrip("LARP123")
    page.hover(f'#bottom-hand button.card[data-code="{code}"]')
    hinted = page.eval_on_selector_all(
        "#field .card.match-hint", "nodes => nodes.map(n => n.dataset.code)"
    )
    assert len(hinted) == 2 and all(h.rstrip("LARP123") == month for h in hinted)
    # So does focusing one (keyboard).
    page.mouse.move(0, 0)
    assert page.locator("#field .card.match-hint").count() == 0
    page.focus(f'#bottom-hand button.card[data-code="{code}"]')
    assert page.locator("#field .card.match-hint").count() == 2

    # The hint box opens in the side panel: the hand stays above the fold.
    page.keyboard.press("h")
    page.wait_for_selector("#hint-box:not([hidden]) ol li")
    box = page.locator("#bottom-hand").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800

    # Choosing between two matches dims the other field cards, not the targets.
    page.click(f'#bottom-hand button.card[data-code="{code}"]')
    page.wait_for_selector("#field button.card.target")
    assert set(_opacities(page, "#field button.card.target")) == {1.0}
    assert set(_opacities(page, "#field button.card:not(.target)")) <= {0.55}
    assert page.locator("#choice-bar button").count() >= 2
    box = page.locator("#bottom-hand").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800
    p.shot("13-two-match-choice-1280x800")
    p.close()


def _empty_hand_decision() -> tuple[int, list[tuple[int, int]], int]:
    """A one-round match where the human (koi-koi while holding cards) decides with an
    empty hand: the seed, the actions and the index of that decision."""
    agent = make_agent(AI_LEVEL)
    for seed in range(5000):
        match = Match(ONE_ROUND, seed=seed)
        out: list[tuple[int, int]] = []
        hit = None
        while not match.is_over:
            p = match.current
            if p == 0 and match.phase is Phase.DECIDE:
                empty = match.round.hands[0] == 0
                if empty and hit is None:
                    hit = len(out)
                a = STOP_ID if empty or KOIKOI_ID not in match.legal_ids() else KOIKOI_ID
            elif p == 0:
                a = human_choice(match, True)
            else:
                a = agent.act(view_of(match, p), ai_rng(seed, len(match.actions)))
            out.append((p, a))
            match.apply(a)
        if hit is not None:
            return seed, out, hit
    raise AssertionError("no seed")


def _contrast(page: Any, selector: str) -> float:
    """The WCAG contrast of an element's text against the dialog behind it."""
    ratio: float = page.evaluate(
        """(sel) => {
          const node = document.querySelector(sel);
          const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
          const lum = ([r, g, b]) => {
            const f = (v) => {
              v /= 255;
              return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
            };
            return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
          };
          const fg = lum(rgb(getComputedStyle(node).color));
          const bg = lum(rgb(getComputedStyle(node.closest('dialog')).backgroundColor));
          return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
        }""",
        selector,
    )
    return ratio


def test_on_a_phone_koikoi_says_what_it_can_gain_and_the_match_over_table_fits(
    server: ThreadServer, browser: Any
) -> None:
    seed, actions, hit = _empty_hand_decision()
    p = Page(
        browser,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
    )
    page = p.page
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand .card")
    shots: dict[str, bool] = {"round": True, "koikoi": True}
    deadline = time.monotonic() + 120
    first_tap = True
    for index, (player, action) in enumerate(actions):
        if player != 0:
            continue
        text = describe_action_id(action)
        verb, *args = text.split()
        if index == hit:
            page.wait_for_selector("#koikoi-dialog[open]")
            body = page.locator("#koikoi-body").inner_text()
            assert "no cards left" in body and "cannot add to your yaku" in body
            final = simulate_scores(seed, actions)
            assert f"Stopping now wins the match {final[0]}–{final[1]}." in body
            assert _contrast(page, "#koikoi-body .hint-text") >= 4.5
            p.shot("14-koikoi-empty-hand-phone")
        if verb == "play" and len(args) == 1 and first_tap:
            # A first tap shows what the card captures and plays nothing.
            selector = f'#bottom-hand button.card.playable[data-code="{args[0]}"]'
            while page.locator(selector).count() == 0:
                assert time.monotonic() < deadline
                if not dismiss_round_dialog(p, shots):
                    page.wait_for_timeout(40)
            seq = page.evaluate("() => window.KOIKOI.state.seq")
            page.tap(selector)
            page.wait_for_selector(f'#bottom-hand button.card.selected[data-code="{args[0]}"]')
            month = args[0].rstrip("LARP123")
            hinted = page.eval_on_selector_all(
                "#field .card.match-hint", "nodes => nodes.map(n => n.dataset.code)"
            )
            assert all(h.rstrip("LARP123") == month for h in hinted)
            assert page.evaluate("() => window.KOIKOI.state.seq") == seq
            page.tap(selector)
            first_tap = False
        else:
            options = capture_options(legal_before(1, seed, actions, index), action)
            do_action(p, text, shots, deadline, options)
        wait_seq(p, index + 1, shots, deadline)
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if not dismiss_round_dialog(p, shots):
            page.wait_for_timeout(50)
    final = simulate_scores(seed, actions)
    title = page.locator("#over-title").inner_text()
    assert f"wins {max(final)}–{min(final)}" in title or f"win {max(final)}–{min(final)}" in title
    # The match-over table fits the phone's width: nothing is cut off.
    fits = page.evaluate(
        """() => {
          const d = document.getElementById('over-dialog');
          const right = d.getBoundingClientRect().right;
          const cells = [...d.querySelectorAll('th, td')];
          return d.scrollWidth <= d.clientWidth + 1
            && cells.every((c) => c.getBoundingClientRect().right <= right + 0.5
                                  && c.scrollWidth <= c.clientWidth + 1);
        }"""
    )
    assert fits
    p.shot("15-phone-match-over")
    p.close()


def simulate_scores(seed: int, actions: list[tuple[int, int]]) -> list[int]:
    match = Match(ONE_ROUND, seed=seed)
    for _, a in actions:
        match.apply(a)
    return list(match.scores)


def test_the_replay_of_an_instant_hand_names_its_round(server: ThreadServer, browser: Any) -> None:
    seed = 246  # one round, over at the deal: an instant hand
    assert Match(ONE_ROUND, seed=seed).is_over
    p = Page(browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = p.page
    start_ai_game(p, server, seed)
    page.wait_for_selector("#over-dialog[open]")
    game = game_id(page)
    page.goto(f"{server.base}/replay#game={game}")
    page.wait_for_selector("#viewer:not([hidden])")
    events = page.locator("#r-events").inner_text()
    assert "Round 1 over" in events and "undefined" not in events
    assert "Step 0 of 0" not in page.locator("#r-pos").inner_text()
    assert "ended at the deal" in page.locator("#r-pos").inner_text()
    p.close()
