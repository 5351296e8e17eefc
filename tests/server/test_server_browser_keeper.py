"""The match score keeper (/keeper) in headless Chromium on a phone (390x844).

A 3-round match kept one-handed: who won, the winner's cards, the koi-koi calls;
the totals come from POST /api/keeper (koikoi.features.keeper) and are checked against a
:class:`koikoi.features.keeper.ScoreSheet` built here. Undo, a refused round and a reload
are part of it. Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

from typing import Any

from browser_helpers import SHOTS
from server_helpers import ThreadServer

from koikoi.features.keeper import RoundEntry, ScoreSheet
from koikoi.game.cards import parse_cards
from koikoi.game.rules import get_rules

PHONE = {"width": 390, "height": 844}


def _text(page: Any, selector: str) -> str:
    return str(page.locator(selector).inner_text()).strip()


def _totals(page: Any) -> tuple[int, int]:
    return int(_text(page, "#k-total-A")), int(_text(page, "#k-total-B"))


def _wait_totals(page: Any, totals: tuple[int, int]) -> None:
    page.wait_for_function(
        "([a, b]) => document.getElementById('k-total-A').textContent === String(a)"
        " && document.getElementById('k-total-B').textContent === String(b)",
        arg=list(totals),
    )


def _in_view(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (selector, box)
    return dict(box)


def _enter(page: Any, winner: str, cards: str, calls: dict[str, int]) -> None:
    """Tap one round in: the winner, the cards, the koi-koi calls."""
    page.click(f"#k-win-{winner}")
    for code in cards.split():
        page.click(f'.keeper-month button[data-code="{code}"]')
        # While tapping, the totals and the round's points stay on screen.
        _in_view(page, "#k-board")
    for player, n in calls.items():
        for _ in range(n):
            page.click(f"#k-kk-{player}-plus")


def test_a_three_round_match_on_a_phone(server: ThreadServer, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, reduced_motion="reduce", has_touch=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.base + "/keeper")
    page.wait_for_selector('.keeper-month button[data-code="3L"]')
    page.wait_for_function("() => document.getElementById('k-where').textContent.includes('1')")

    # The match: names, rules, 3 rounds.
    page.fill("#k-name-a", "Aiko")
    page.dispatch_event("#k-name-a", "change")
    page.fill("#k-name-b", "Ben")
    page.dispatch_event("#k-name-b", "change")
    page.select_option("#k-rules", "nintendo")
    page.check('input[name="k-rounds"][value="3"]')
    page.wait_for_function("() => document.getElementById('k-where').textContent.includes('of 3')")
    assert _text(page, "#k-win-A") == "Aiko won"

    # The buttons the thumb uses sit in the lower half and are big enough to tap.
    for selector in ("#k-win-A", "#k-win-B", "#k-win-nobody", "#k-kk-A-plus", "#k-add", "#k-undo"):
        box = _in_view(page, selector)
        assert box["y"] >= PHONE["height"] / 2, selector
        assert box["height"] >= 44 and box["width"] >= 44, selector

    rules = get_rules("nintendo")
    sheet = ScoreSheet(rules, rounds=3, first_dealer=0, names=("Aiko", "Ben"))
    rounds = [
        ("A", "3L 8L 9A", {}),  # Flower and Moon viewing
        ("B", "1R 2R 3R 4R", {"A": 1, "B": 1}),  # red poems after koi-koi calls
    ]
    for number, (winner, cards, calls) in enumerate(rounds, start=1):
        _enter(page, winner, cards, calls)
        entry = RoundEntry(
            "AB".index(winner),
            parse_cards(cards),
            (calls.get("A", 0), calls.get("B", 0)),
        )
        points = sheet.settle(entry).points
        page.wait_for_function(
            "(p) => document.getElementById('k-points').textContent === String(p)", arg=points
        )
        name = ("Aiko", "Ben")["AB".index(winner)]
        assert _text(page, "#k-pending-line") == f"Round {number}: {name} scores {points} points."
        assert page.locator("#k-result .yaku-row").count() == len(sheet.settle(entry).yaku)
        if number == 2:
            page.screenshot(path=str(SHOTS / "keeper-phone-entering.png"))
        page.click("#k-add")
        sheet = sheet.add(entry)
        _wait_totals(page, sheet.totals)
        assert page.locator("#k-history > li").count() == number
        assert page.locator('.keeper-month button[aria-pressed="true"]').count() == 0
        assert _text(page, "#k-kk-A") == "0"

    # Undo takes round 2 back into the editor; adding it again restores the totals.
    page.click("#k-undo")
    _wait_totals(page, sheet.undo().totals)
    assert page.locator("#k-history > li").count() == 1
    assert page.get_attribute('.keeper-month button[data-code="2R"]', "aria-pressed") == "true"
    assert _text(page, "#k-kk-A") == "1" and _text(page, "#k-kk-B") == "1"
    page.click("#k-add")
    _wait_totals(page, sheet.totals)

    # A reload keeps the match.
    page.reload()
    page.wait_for_selector('.keeper-month button[data-code="3L"]')
    _wait_totals(page, sheet.totals)
    assert page.locator("#k-history > li").count() == 2
    assert "Round 3 of 3" in _text(page, "#k-where")

    # A round the rules refuse (a winner without yaku) is not added and changes nothing.
    _enter(page, "B", "1P1", {})
    page.wait_for_function(
        "() => document.getElementById('k-pending-line').textContent.startsWith(\"Ben's cards\")"
    )
    assert "score no yaku" in _text(page, "#k-pending-line")
    page.click("#k-add")
    page.wait_for_function("() => document.getElementById('k-error').textContent !== ''")
    assert "no yaku" in _text(page, "#k-error")
    assert _totals(page) == sheet.totals
    assert page.locator("#k-history > li").count() == 2

    # Nobody wins round 3: under these rules nobody scores, and the match is over.
    page.click("#k-win-nobody")
    page.wait_for_function(
        "() => document.getElementById('k-pending-line').textContent === 'Round 3: nobody scores.'"
    )
    page.click("#k-add")
    sheet = sheet.add(RoundEntry(None))
    assert sheet.is_over
    page.wait_for_function("() => document.getElementById('k-add').disabled")
    _wait_totals(page, sheet.totals)
    leader = sheet.leader
    assert leader is not None
    a, b = sheet.totals[leader], sheet.totals[1 - leader]
    expected = f"{('Aiko', 'Ben')[leader]} wins the match, {a} to {b}."
    assert _text(page, "#k-pending-line") == expected
    assert _text(page, ".keeper-final") == expected
    page.screenshot(path=str(SHOTS / "keeper-phone-match-over.png"), full_page=True)
    assert not errors, errors
    context.close()
