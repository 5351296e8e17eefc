"""Small bugs of the web pages (issue #28), in real headless Chromium: the replay page's
upload errors, the statistics chart's axes, the tutorial's coach panel at the round end
and the phone match-over table's headers.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import Page
from server_helpers import ThreadServer

from koikoi import i18n
from koikoi.game.actions import PLAY_TARGET_BASE, TAKE_BASE
from koikoi.game.cards import CODES
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules

DESKTOP = {"viewport": {"width": 1280, "height": 900}, "reduced_motion": "reduce"}


def lang_page(browser: Any, lang: str, **options: Any) -> Page:
    """A page whose browser asks for ``lang`` (the pages follow the browser's language)."""
    return Page(browser, locale="ja-JP" if lang == "ja" else "en-US", **{**DESKTOP, **options})


# ------------------------------------------------------------ replay uploads


@pytest.fixture(scope="module")
def record_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished one-round record (random moves, seed 4)."""
    match = Match(get_rules("nintendo").replace(game__rounds=1), seed=4)
    rng = random.Random(4)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    path: Path = GameRecord.from_match(match, players=["Aiko", "Ben"]).save(
        tmp_path_factory.mktemp("files") / "game.json"
    )
    return path


def _file(name: str, content: bytes) -> dict[str, Any]:
    return {"name": name, "mimeType": "application/json", "buffer": content}


def _error_after(page: Any) -> str:
    page.wait_for_function("() => document.getElementById('r-error').textContent !== ''")
    text: str = page.locator("#r-error").inner_text()
    return text


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_replay_upload_errors_name_the_file_and_what_is_expected(
    server: ThreadServer, browser: Any, record_file: Path, lang: str
) -> None:
    def tr(message: str, **params: object) -> str:
        return i18n.translate(message, lang, **params)

    p = lang_page(browser, lang)
    page = p.page
    page.goto(server.base + "/replay")
    page.wait_for_selector("#r-file")

    page.set_input_files("#r-file", _file("empty.json", b""))
    error = _error_after(page)
    assert error == tr(
        'The record file {file} is empty. Choose a game record: the .json file of "Download '
        'record" or of koikoi.',
        file="empty.json",
    )
    assert "JSON input" not in error

    page.reload()
    page.wait_for_selector("#r-file")
    page.set_input_files("#r-file", _file("notes.json", b"round 1: I won"))
    assert _error_after(page) == tr(
        'The record file {file} is not a game record (it is not JSON). Choose the .json file of "'
        'Download record" or of koikoi.',
        file="notes.json",
    )

    # An empty analysis is named as the analysis, not as the record.
    page.reload()
    page.wait_for_selector("#r-file")
    page.set_input_files("#r-analysis", _file("analysis.json", b"  \n"))
    assert _error_after(page) == tr(
        "Choose the record file too: an analysis marks the mistakes of a record."
    )
    page.set_input_files("#r-file", str(record_file))
    page.wait_for_function(
        "() => document.getElementById('r-error').textContent.includes('analysis.json')"
    )
    assert page.locator("#r-error").inner_text() == tr(
        "The analysis file {file} is empty. Choose the file that koikoi analyze --json wrote "
        "for this record, or no analysis.",
        file="analysis.json",
    )
    assert page.locator("#viewer").is_hidden()

    # With no analysis, the record plays.
    page.reload()
    page.wait_for_selector("#r-file")
    page.set_input_files("#r-file", str(record_file))
    page.wait_for_selector("#viewer:not([hidden])")
    assert page.locator("#r-error").inner_text() == ""
    p.close()


# ------------------------------------------------------------ the stats chart


def _tally(games: int, net: int) -> dict[str, Any]:
    return {
        "games": games, "wins": 0, "losses": games, "draws": 0, "win_rate": 0.0,
        "net_points": net, "points_per_round": net / max(games, 1), "rounds_won": 0,
        "rounds": games, "koikoi_calls": 0, "koikoi_successes": 0,
        "koikoi_success_rate": None, "yaku": {},
    }  # fmt: skip


def _game(i: int, net: int) -> dict[str, Any]:
    result = "win" if net > 0 else "loss" if net < 0 else "draw"
    return {
        "game_id": f"g{i}", "finished_at": 1_700_000_000 + i, "created": "",
        "score": [30, 30 - net], "opponent": "AI (Novice)", "rules": "nintendo",
        "result": result, "rounds": 1, "net_points": net,
    }  # fmt: skip


def _summary(nets: list[int]) -> dict[str, Any]:
    """What ``/api/players/stats`` answers for a player whose games ended with ``nets``."""
    games = [_game(i, n) for i, n in enumerate(nets)]
    total = _tally(len(nets), sum(nets))
    return {
        "name": "Hana",
        "summary": {
            "total": total,
            "games": games,
            "by_opponent": [{**total, "name": "AI (Novice)"}],
            "by_rules": [{**total, "name": "nintendo"}],
        },
    }


def _chart_labels(page: Any, server: ThreadServer, nets: list[int]) -> tuple[list[str], list[str]]:
    """The y-axis labels (top to bottom) and the x-axis labels of the points chart."""
    page.unroute("**/api/players/stats")
    page.route(
        "**/api/players/stats",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(_summary(nets))
        ),
    )
    page.goto(server.base + "/stats")
    page.wait_for_selector("body[data-ready] #s-points-chart svg")
    labels = page.eval_on_selector_all(
        "#s-points-chart .chart-axis-label",
        "nodes => nodes.map(n => [n.textContent, n.getBoundingClientRect().top])",
    )
    ys = sorted((top, text) for text, top in labels if not text.startswith("game"))
    xs = [text for text, _ in labels if text.startswith("game")]
    return [text for _, text in ys], xs


def test_the_points_chart_axes_fit_one_game_and_losses_only(
    server: ThreadServer, browser: Any
) -> None:
    p = lang_page(browser, "en")
    page = p.page
    # One lost game: one "game 1" under the bar; the axis tops out at 0, not "+1".
    assert _chart_labels(page, server, [-3]) == (["0", "-3"], ["game 1"])
    # One drawn game: only the 0 line.
    assert _chart_labels(page, server, [0]) == (["0"], ["game 1"])
    # Only gains: the axis starts at 0.
    assert _chart_labels(page, server, [2, 5]) == (["+7", "0"], ["game 1", "game 2"])
    # Only losses, several games.
    assert _chart_labels(page, server, [-1, -4, 0]) == (["0", "-5"], ["game 1", "game 3"])
    # Both signs: the best and the worst of the games and the running total.
    assert _chart_labels(page, server, [2, -6, 3]) == (["+3", "0", "-6"], ["game 1", "game 3"])
    p.close()


# ------------------------------------------------------------ the tutorial's round end


def test_the_coach_panel_leaves_the_koikoi_prompt_when_the_round_ends(
    server: ThreadServer, browser: Any
) -> None:
    """Follow the coach up to the round's result: the panel then speaks of the result,
    no longer of the koi-koi decision made before it."""
    from test_server_browser_tutorial import expected_round

    moments, _ = expected_round()
    p = lang_page(browser, "en")
    page = p.page
    page.goto(server.base + "/")
    page.click("#learn-btn")
    page.wait_for_selector("#coach-text")
    decided = None
    for kind, tip, action in moments:
        assert tip is not None
        if kind == "lesson" and tip.place == "settlement":
            page.wait_for_selector("#round-dialog[open] .coach-note")
            break
        if kind == "lesson":
            if tip.place == "table":
                page.wait_for_selector(f'#coach-text[data-key="{tip.key}"]')
                page.click("#coach .coach-next")
            continue
        assert action is not None
        if tip.place == "decide":
            page.wait_for_selector("#koikoi-dialog[open] .coach-note")
            decided = tip.text("en")
            assert page.locator("#coach-text").inner_text() == decided
            page.click("#stop-btn")
            continue
        page.wait_for_selector(f'#coach-text[data-key="{tip.key}"]')
        page.click(f'#bottom-hand button.card.playable[data-code="{tip.cards[0]}"]')
        if PLAY_TARGET_BASE <= action < TAKE_BASE:
            target = CODES[(action - PLAY_TARGET_BASE) % 48]
            page.click(f'#field button.card.target[data-code="{target}"]')
    assert decided is not None, "the guided round has no koi-koi decision"
    coach = page.locator("#coach-text").inner_text()
    assert coach != decided
    assert coach == i18n.translate(
        "The round is over: the dialog shows how it was scored. Press Continue when you have "
        "read it.",
        "en",
    )
    p.close()


# ------------------------------------------------------------ the phone match-over table

INSTANT_SEED = 246
"""A one-round match that is over at the deal (an instant hand): the match-over dialog
opens at once."""


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_phone_match_over_table_keeps_its_headers_whole(
    server: ThreadServer, browser: Any, lang: str
) -> None:
    assert Match(get_rules("nintendo").replace(game__rounds=1), seed=INSTANT_SEED).is_over
    p = lang_page(
        browser, lang, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = p.page
    page.goto(f"{server.base}/#seed={INSTANT_SEED}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", "level:1")  # "AI (Novice)", the name that broke
    page.select_option("#rules", "nintendo")
    page.fill("#rounds", "1")
    page.click("#start")
    page.wait_for_selector("#over-dialog[open] .history-table th")
    # Each header is on one line: its text's boxes share one top.
    lines = page.eval_on_selector_all(
        "#over-dialog .history-table th",
        """nodes => nodes.map((th) => {
             const range = document.createRange();
             range.selectNodeContents(th);
             const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
             return [th.textContent, tops.size];
           })""",
    )
    assert len(lines) == 5
    assert all(n == 1 for _, n in lines), lines
    # Nothing leaves the dialog.
    assert page.evaluate(
        "() => { const d = document.getElementById('over-dialog');"
        " return d.scrollWidth <= d.clientWidth + 1; }"
    )
    p.close()
