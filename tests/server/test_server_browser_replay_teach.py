"""The replay page teaches (headless Chromium): each step in words, settlements explained,
the mistakes of an analysis marked, in English and Japanese.

The words on the page are checked against :class:`koikoi.features.narrate.Narrator` (the one
source of them). Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import SHOTS
from server_helpers import ThreadServer

from koikoi.features.narrate import Narrator, settled_in
from koikoi.game.actions import describe_action_id, parse_action
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord, ReplayStep, iter_steps
from koikoi.game.rules import get_rules

NAMES = ("Aiko", "Ben")
MISTAKE_AT = 3
"""The action number the test's analysis marks as a mistake."""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[ReplayStep], str]:
    """A finished 2-round record, an analysis marking one move, the steps, the better move."""
    # Seed 4: both rounds end with yaku, one after a koi-koi (a multiplier to explain).
    match = Match(get_rules("nintendo").replace(game__rounds=2), seed=4)
    rng = random.Random(4)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    record = GameRecord.from_match(match, players=list(NAMES))
    steps = list(iter_steps(record))
    actions = [i for i, s in enumerate(steps) if s.kind == "action"]
    at = actions[MISTAKE_AT - 1]
    step, before = steps[at], steps[at - 1]
    assert step.action is not None
    played = parse_action(step.action.action).id
    others = [a for a in before.view(step.action.player).legal_ids if a != played]
    best = describe_action_id(others[0])
    analysis = {
        "agent": "test",
        "decisions": [
            {
                "index": MISTAKE_AT,
                "player": step.action.player,
                "played": step.action.action,
                "best": best,
                "loss": 3.04,
            }
        ],
    }
    folder = tmp_path_factory.mktemp("files")
    record_path = record.save(folder / "game.json")
    analysis_path = folder / "analysis.json"
    analysis_path.write_text(json.dumps(analysis), "utf-8")
    return record_path, analysis_path, steps, best


def _open(page: Any, base: str, record: Path, analysis: Path | None) -> None:
    page.goto(base + "/replay")
    page.wait_for_selector("#r-file")
    if analysis is not None:
        page.set_input_files("#r-analysis", str(analysis))
    page.set_input_files("#r-file", str(record))
    page.wait_for_selector("#viewer:not([hidden])")


def _words(page: Any) -> list[str]:
    return [str(t).strip() for t in page.locator("#r-narration p").all_inner_texts()]


def test_steps_in_words_settlements_and_a_marked_mistake(
    server: ThreadServer, browser: Any, files: tuple[Path, Path, list[ReplayStep], str]
) -> None:
    record, analysis, steps, best = files
    narrator = Narrator(NAMES, "en")
    context = browser.new_context(viewport={"width": 1100, "height": 1000}, reduced_motion="reduce")
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    _open(page, server.base, record, analysis)
    assert _words(page) == narrator.step(steps[0])
    assert page.locator("#r-analysis-note").inner_text() == "The analysis marks 1 mistake."
    for i in (1, 2):
        page.click("#r-next")
        assert _words(page) == narrator.step(steps[i])
        assert page.locator("#r-mistake").is_hidden()
    first = _words(page)[0]
    assert first.startswith(("Aiko plays ", "Ben plays ")) and "; " in first

    # The marked move: its loss and the better move, in words.
    page.click("#r-next-mistake")
    at = [i for i, s in enumerate(steps) if s.kind == "action"][MISTAKE_AT - 1]
    assert page.locator("#r-pos").inner_text() == f"Step {at} of {len(steps) - 1}"
    mark = page.locator("#r-mistake")
    assert mark.is_visible()
    assert mark.inner_text() == f"Mistake: −3.0 points; better: {narrator.action(best)}."
    page.screenshot(path=str(SHOTS / "replay-mistake.png"), full_page=True)

    # Every round-ending step explains its settlement as the live game does.
    ending = [i for i, s in enumerate(steps) if settled_in(s)]
    assert len(ending) == 2
    assert any(settled_in(steps[i])[0].multipliers for i in ending)
    for i in ending:
        page.fill("#r-slider", str(i))
        page.dispatch_event("#r-slider", "input")
        (settlement,) = settled_in(steps[i])
        box = page.locator("#r-settlements")
        round_number = steps[i].round.round_number
        assert box.locator("h3").inner_text() == f"Round {round_number} settled"
        assert box.locator(".yaku-row").count() == len(settlement.yaku)
        assert settlement.winner is not None and settlement.yaku
        assert box.locator(".points").inner_text() == str(settlement.points)
        assert box.locator(".calc tr").count() == len(settlement.multipliers) + 2
        assert _words(page) == narrator.step(steps[i])
    page.screenshot(path=str(SHOTS / "replay-settlement.png"), full_page=True)
    page.keyboard.press("End")
    assert any(w.startswith("The match is over: ") for w in _words(page))
    assert not errors, errors
    context.close()


def test_the_words_follow_the_page_language(
    server: ThreadServer, browser: Any, files: tuple[Path, Path, list[ReplayStep], str]
) -> None:
    record, _, steps, _ = files
    context = browser.new_context(viewport={"width": 390, "height": 844}, reduced_motion="reduce")
    context.add_init_script("localStorage.setItem('koikoi.lang', 'ja')")
    page = context.new_page()
    page.set_default_timeout(15_000)
    _open(page, server.base, record, None)
    page.click("#r-next")
    words = _words(page)
    assert words == Narrator(NAMES, "ja").step(steps[1])
    assert "を出" in words[0]
    assert page.locator("#r-mistake").is_hidden() and page.locator("#r-analysis-note").is_hidden()
    page.screenshot(path=str(SHOTS / "replay-phone-ja.png"), full_page=True)
    context.close()
