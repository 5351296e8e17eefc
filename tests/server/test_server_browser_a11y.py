"""Accessibility of the web game in real headless Chromium: axe-core on every page in
English and Japanese (no serious or critical violation), a name for every card, and a
whole round played with the keyboard alone.

axe-core is the pinned npm release that ``scripts/fetch-axe.py`` fetches (its integrity
checked) into ``.cache/axe-core/``; ``make test`` runs it first, and the tests here run it
themselves when the file is missing. They skip when it cannot be had (no network on a
machine that never fetched it). axe's code is never part of the repository. Skipped
when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from browser_helpers import (
    AI_LEVEL,
    Page,
    capture_options,
    do_action,
    game_id,
    hub_room,
    legal_before,
    simulate,
)
from server_helpers import ROOT, ThreadServer

from koikoi import i18n
from koikoi.game.actions import KOIKOI_ID, describe_action_id
from koikoi.game.cards import CODES, MONTH_NAMES, MONTH_NAMES_JA, parse_card
from koikoi.game.engine import Match, Phase
from koikoi.game.rules import get_rules

LANGS = ["en", "ja"]
SERIOUS = ("serious", "critical")
TABLE_KNOWN: dict[str, str] = {}
"""Violations axe finds on the game table that these tests let pass: rule id -> why.
Empty: keep it so."""
DESKTOP = {"viewport": {"width": 1280, "height": 900}, "reduced_motion": "reduce"}


def _fetch_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_axe", ROOT / "scripts" / "fetch-axe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def axe_js() -> Path:
    """The path of axe.min.js, fetched once if missing; the tests skip when it cannot be."""
    fetch_axe = _fetch_script()
    try:
        path: Path = fetch_axe.fetch()
    except OSError as error:  # no network and no cached copy
        pytest.skip(f"axe-core is not cached and cannot be fetched: {error}")
    return path


def lang_page(browser: Any, lang: str, **options: Any) -> Page:
    """A page whose browser asks for ``lang`` (the pages follow the browser's language).
    The page's Content-Security-Policy is bypassed so that axe's script can be added."""
    merged = {**DESKTOP, "bypass_csp": True, **options}
    return Page(browser, locale="ja-JP" if lang == "ja" else "en-US", **merged)


def axe(
    page: Any,
    axe_js: Path,
    *,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    ignore: dict[str, str] | None = None,
) -> list[str]:
    """The serious and critical violations axe-core finds on ``page`` (within ``include``
    but outside ``exclude``, CSS selectors; rules of ``ignore`` left out), one line each:
    the rule, its impact, the elements and axe's advice."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe_js))
    context: dict[str, list[list[str]]] = {}
    if include:
        context["include"] = [[s] for s in include]
    if exclude:
        context["exclude"] = [[s] for s in exclude]
    results = page.evaluate(
        """async (context) => {
          const r = await window.axe.run(Object.keys(context).length ? context : document,
                                         { resultTypes: ["violations"] });
          return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary) }));
        }""",
        context,
    )
    ignore = ignore or {}
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: {' | '.join(v['nodes'][:4])}"
        for v in results
        if v["impact"] in SERIOUS and v["id"] not in ignore
    ]


def check(p: Page, axe_js: Path, where: str, **options: Any) -> list[str]:
    """:func:`axe` on the page of ``p``, each finding prefixed with ``where``."""
    return [f"{where}: {v}" for v in axe(p.page, axe_js, **options)]


# ----------------------------------------------------------------- the pages


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_passes_axe(server: ThreadServer, browser: Any, axe_js: Path, lang: str) -> None:
    """Home, keeper, replay, statistics, lobby, the tutorial and the 404 page."""
    p = lang_page(browser, lang)
    page = p.page
    found: list[str] = []
    page.goto(f"{server.base}/")
    page.wait_for_selector("#agent option", state="attached")
    assert page.evaluate("document.documentElement.lang") == lang
    found += check(p, axe_js, "home")
    page.click("#house-details summary")
    found += check(p, axe_js, "home, house rules open")
    for path, ready in (
        ("/keeper", ".keeper-month button"),
        ("/replay", "#r-file"),
        ("/stats", "body[data-ready]"),
        ("/lobby", "#lb-rules option"),
    ):
        page.goto(server.base + path)
        page.wait_for_selector(ready, state="attached")
        found += check(p, axe_js, path)
    p.allow = "404 (Not Found)"  # the page at an unknown address is itself a 404
    page.goto(f"{server.base}/nope")
    page.wait_for_selector("main a[href='/']")
    found += check(p, axe_js, "404")
    page.goto(f"{server.base}/")
    page.click("#learn-btn")
    page.wait_for_selector(".coach:not([hidden])", state="attached")
    found += check(p, axe_js, "tutorial", exclude=["#game"])
    assert not found, "\n".join(found)
    p.close()


def _decision_seed() -> int:
    """A seed of two rounds in which the test's human decides koi-koi in round 1."""
    rules = get_rules("nintendo").replace(game__rounds=2)
    for seed in range(2000):
        _, actions = simulate(seed, 2)
        replay = Match(rules, seed=seed)
        for player, action in actions:
            if replay.phase is Phase.DECIDE and player == 0 and replay.round_number == 1:
                return seed
            replay.apply(action)
    raise AssertionError("no seed with a koi-koi decision in round 1")


@pytest.mark.parametrize("lang", LANGS)
def test_a_game_passes_axe_and_names_every_card(
    server: ThreadServer, browser: Any, axe_js: Path, lang: str
) -> None:
    """The table during play, the koi-koi dialog, the round result, the match over,
    then the statistics and the replay of that game; every card has a name."""
    seed = _decision_seed()
    _, expected = simulate(seed, 2)
    p = lang_page(browser, lang)
    page = p.page
    page.goto(f"{server.base}/#seed={seed}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    page.fill("#rounds", "2")
    page.click("#start")
    page.wait_for_selector("#bottom-hand button.card.playable")
    game = game_id(page)
    found = check(p, axe_js, "table", ignore=TABLE_KNOWN)
    _assert_cards_named(page, lang)
    # The hint shown, and the yaku progress dialog.
    page.keyboard.press("h")
    page.wait_for_selector("#hint-box:not([hidden]) ol li", timeout=120_000)
    found += check(p, axe_js, "table with a hint", ignore=TABLE_KNOWN)
    page.keyboard.press("y")
    page.wait_for_selector("#progress-dialog[open] .progress-row")
    found += check(p, axe_js, "yaku progress dialog", ignore=TABLE_KNOWN)
    page.keyboard.press("Escape")

    seen: set[str] = set()
    deadline = time.monotonic() + 150

    def dialogs() -> None:
        for name in ("koikoi", "round", "over"):
            if name not in seen and page.locator(f"#{name}-dialog[open]").count():
                seen.add(name)
                found.extend(check(p, axe_js, f"{name} dialog", ignore=TABLE_KNOWN))

    shots = {"round": True, "koikoi": True, "choice": True, "take": True}
    for index, (player, action) in enumerate(expected):
        if player != 0:
            continue
        if action == KOIKOI_ID or describe_action_id(action) == "stop":
            page.wait_for_selector("#koikoi-dialog[open]")
            dialogs()
            page.click("#koikoi-btn" if action == KOIKOI_ID else "#stop-btn")
        else:
            while page.locator("#round-dialog[open]").count():
                dialogs()
                page.click("#round-continue")
            options = capture_options(legal_before(2, seed, expected, index), action)
            do_action(p, describe_action_id(action), shots, deadline, options)
        _wait_seq_noting(p, index + 1, deadline, dialogs)
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if page.locator("#round-dialog[open]").count():
            dialogs()
            page.click("#round-continue")
        page.wait_for_timeout(50)
    dialogs()
    assert seen == {"koikoi", "round", "over"}, seen

    page.goto(f"{server.base}/stats")
    page.wait_for_selector("#s-content:not([hidden])")
    found += check(p, axe_js, "/stats with a game")
    page.goto(f"{server.base}/replay#game={game}")
    page.wait_for_selector("#viewer:not([hidden])")
    page.click("#r-next")
    found += check(p, axe_js, "/replay of a game")
    assert not found, "\n".join(found)
    p.close()


def _wait_seq_noting(p: Page, seq: int, deadline: float, dialogs: Any) -> None:
    """Wait for state ``seq`` like :func:`wait_seq`, checking a round result before it is
    closed."""
    page = p.page
    while not page.evaluate("n => !!window.KOIKOI.state && window.KOIKOI.state.seq >= n", seq):
        assert time.monotonic() < deadline, f"the page never reached seq {seq}"
        if page.locator("#round-dialog[open]").count():
            dialogs()
            page.click("#round-continue")
        else:
            page.wait_for_timeout(40)


def _assert_cards_named(page: Any, lang: str) -> None:
    """Every face-up card on the table has an accessible name with its name in ``lang``
    and its code; every face-down card says so."""
    cards = page.evaluate(
        """() => [...document.querySelectorAll('#game .card')].map((n) => ({
             code: n.dataset.code || null, back: n.classList.contains('back'),
             role: n.getAttribute('role') || n.tagName.toLowerCase(),
             name: (n.getAttribute('aria-label') || '').trim(),
             imgAlt: [...n.querySelectorAll('img')].map((i) => i.getAttribute('alt')) }))"""
    )
    assert len(cards) >= 8 + 8 + 8, cards  # two hands and the field at least
    for card in cards:
        assert card["role"] in ("button", "img"), card
        assert all(alt == "" for alt in card["imgAlt"]), card  # the image is decoration
        if card["back"]:
            assert card["name"] == i18n.translate("face-down card", lang), card
            continue
        assert card["code"] in CODES, card
        assert card["code"] in card["name"], card
        month = parse_card(card["code"]).month
        names = MONTH_NAMES if lang == "en" else MONTH_NAMES_JA
        assert names[month - 1].split()[0] in card["name"], (card, names[month - 1])


def test_the_check_finds_a_violation(server: ThreadServer, browser: Any, axe_js: Path) -> None:
    """The harness itself: an image with no text alternative is reported, a rule of
    ``ignore`` is not."""
    p = lang_page(browser, "en")
    page = p.page
    page.goto(f"{server.base}/keeper")
    page.wait_for_selector(".keeper-month button")
    page.evaluate(
        "() => { const i = document.createElement('img'); i.src = '/cards/1L.svg';"
        " i.id = 'no-alt'; document.querySelector('main').append(i); }"
    )
    found = axe(page, axe_js)
    assert len(found) == 1 and found[0].startswith("image-alt (critical)") and "#no-alt" in found[0]
    assert axe(page, axe_js, ignore={"image-alt": "the test's own image"}) == []
    assert axe(page, axe_js, exclude=["#no-alt"]) == []
    p.close()


# ----------------------------------------------------------------- the keyboard

_TURN = """() => {
  const G = window.KOIKOI, s = G.state;
  if (!s || G.running || G.pending || s.over || s.view.current !== G.seat) return null;
  const active = document.activeElement;
  return { seq: s.seq, phase: s.view.phase,
           onTarget: !!(active && active.matches('#field button.card.target')),
           targets: document.querySelectorAll('#field button.card.target').length,
           playable: [...document.querySelectorAll('#bottom-hand button.card')]
                       .findIndex((n) => n.classList.contains('playable')) };
}"""


def test_a_whole_match_is_played_with_the_keyboard_alone(
    server: ThreadServer, browser: Any
) -> None:
    """From Start to the match-over dialog with keys only: Tab and Enter to start, a digit
    to play a hand card, Enter on the focused field card to capture it, Tab to reach a
    field card the drawn card captures, S in the koi-koi dialog, Enter to close a round's
    result. No click, no tap."""
    seed = _decision_seed()
    p = lang_page(browser, "en")
    page = p.page
    page.goto(f"{server.base}/#seed={seed}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)  # the form's fields are filled as a setting
    page.fill("#rounds", "2")
    for _ in range(60):
        if page.evaluate("() => document.activeElement && document.activeElement.id") == "start":
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("Tab never reaches the Start button")
    page.keyboard.press("Enter")
    page.wait_for_selector("#bottom-hand .card")
    used: dict[str, int] = {}
    deadline = time.monotonic() + 150
    last: tuple[int, str] | None = None

    def press(key: str, why: str) -> None:
        page.keyboard.press(key)
        used[why] = used.get(why, 0) + 1

    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline, f"the match did not end by keyboard ({used})"
        if page.locator("#koikoi-dialog[open]").count():
            press("s", "stop")
            page.wait_for_selector("#koikoi-dialog:not([open])", state="attached")
            continue
        if page.locator("#round-dialog[open]").count():
            assert page.evaluate("() => document.activeElement.id") == "round-continue"
            press("Enter", "round result")
            page.wait_for_selector("#round-dialog:not([open])", state="attached")
            continue
        turn = page.evaluate(_TURN)
        if turn is None:
            page.wait_for_timeout(40)
            continue
        if turn["onTarget"]:
            press("Enter", "capture")
        elif turn["targets"]:
            press("Tab", "tab to a field card")
        elif turn["phase"] == "play" and (turn["seq"], "play") != last:
            assert turn["playable"] >= 0
            press(str(turn["playable"] + 1), "play")
            last = (turn["seq"], "play")
        else:
            page.wait_for_timeout(40)
            continue
        page.wait_for_timeout(40)
    assert used.get("play", 0) >= 8 and used.get("stop", 0) >= 1, used
    assert used.get("round result", 0) >= 1, used
    room = hub_room(server, game_id(page))
    assert room.is_over
    p.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_phone_table_and_its_drawers_pass_axe(
    server: ThreadServer, browser: Any, axe_js: Path, lang: str
) -> None:
    """At 390x844: the one-screen table, then the More and the Log drawers open."""
    p = lang_page(
        browser,
        lang,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
    )
    page = p.page
    page.goto(f"{server.base}/#seed={_decision_seed()}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    page.click("#start")
    page.wait_for_selector("#bottom-hand button.card.playable")
    found = check(p, axe_js, "phone table", ignore=TABLE_KNOWN)
    for tab in ("more", "log"):
        page.click(f"#tab-{tab}")
        assert page.get_attribute(f"#tab-{tab}", "aria-expanded") == "true"
        found += check(p, axe_js, f"phone {tab} drawer", ignore=TABLE_KNOWN)
        page.keyboard.press("Escape")
        assert page.get_attribute(f"#tab-{tab}", "aria-expanded") == "false"
    assert not found, "\n".join(found)
    p.close()
