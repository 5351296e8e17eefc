"""Every web page in Japanese, read by real headless Chromium: no English UI word left.

A browser whose language is Japanese opens the new-game screen, plays a match of one
round against the AI (a koi-koi decision when it comes, the round's settlement, the
match-over box, the rules, keys and history dialogs), then the replay of that game,
the score keeper, the statistics and the lobby. On each screen the visible text and
the accessible names (``aria-label``, ``title``, ``placeholder``) are collected, and
every word in Latin letters must be one of :data:`ALLOWED` (names, codes, rule sets),
else the test names the word, the screen and the text around it.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import re
import time
from typing import Any

from browser_helpers import AI_LEVEL, Page, game_id, hub_room, mover_at, simulate
from server_helpers import ThreadServer

from koikoi.game.actions import KOIKOI_ID
from koikoi.game.engine import Phase
from koikoi.game.rules import PRESET_NAMES

PLAYER = "Hana"
"""The name the test types for its player: a name stays as typed."""

ALLOWED: frozenset[str] = frozenset(
    {
        # rule sets are named by their keys in every language
        *PRESET_NAMES,
        # the game's name, written in Latin letters beside こいこい
        "Koi-Koi",
        "Koi-koi",
        "KoiKoi",
        "koikoi",
        # the language switch offers English by its own name
        "English",
        # names typed by players, and the AI's agent names shown as players
        PLAYER,
        # keys of the keyboard (Enter, Esc, Tab, Space, arrow and page keys)
        "Enter",
        "Esc",
        "Tab",
        "Space",
        "Shift",
        "PageUp",
        "PageDown",
        "Home",
        "End",
        # units and abbreviations used as they are in Japanese
        "AI",
        "Elo",
        "Glicko",
        "JSON",
        "TOML",
        "URL",
        "SVG",
        "vs",
    }
)
"""Latin words a Japanese page may show: names, keys and words Japanese uses as they are."""

_CARD_CODE = re.compile(r"(?<![0-9A-Za-z])(?:1[0-2]|[1-9])(?:L|A|R|P[1-3]?)(?![0-9A-Za-z])")
"""A card code (3L, 8A, 12P3), also right before or after Japanese text."""
_COMMAND = re.compile(r"(?<![\w-])koikoi(?: [a-z]+(?: --[a-z-]+)*)?(?![\w-])|\.json\b|\[[a-z_]+\]")
"""A command line ("koikoi analyze --json"), a file type (".json") and a rules file's
section ("[game]", as the rules dialog lists the options of a house-rules file)."""
_LATIN = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
_KEY = re.compile(r"[(（]\s*[A-Za-z?←→↑↓]\s*[)）]|(?<![0-9A-Za-z'])[A-Z](?![0-9A-Za-z'])")
"""Single capitals: the keys of the keyboard ("(H)", "K") and the score keeper's
players A and B."""
_AGENT_SPEC = re.compile(r"\b[a-z]+(?::[a-z_]+=[\w.]+(?:,[a-z_]+=[\w.]+)*|:\d)\b")
"""An agent spec ("level:2", "mcts:iterations=200") as the player list names the AI."""

_COLLECT = """() => {
  const shown = (n) => !!(n.offsetWidth || n.offsetHeight || n.getClientRects().length);
  const out = [document.body.innerText];
  for (const n of document.querySelectorAll('[aria-label],[title],[placeholder]')) {
    if (!shown(n)) continue;
    for (const a of ['aria-label', 'title', 'placeholder']) {
      const v = n.getAttribute(a);
      if (v) out.push(v);
    }
  }
  out.push(document.title);
  return out.join('\\n');
}"""


def english_words(text: str, extra: frozenset[str] = frozenset()) -> dict[str, str]:
    """The Latin words of ``text`` that are UI text: word → the line it is in."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        clean = _COMMAND.sub(" ", _AGENT_SPEC.sub(" ", line))
        clean = _CARD_CODE.sub(" ", clean)
        clean = _KEY.sub(" ", clean)
        for word in _LATIN.findall(clean):
            if word in ALLOWED or word in extra:
                continue
            found.setdefault(word, line.strip()[:160])
    return found


class Audit:
    """The English words found on each screen."""

    def __init__(self, page: Any, extra: frozenset[str] = frozenset()) -> None:
        self.page = page
        self.extra = extra
        self.found: dict[str, dict[str, str]] = {}
        self.screens: list[str] = []

    def read(self, screen: str) -> None:
        text: str = self.page.evaluate(_COLLECT)
        self.screens.append(screen)
        words = english_words(text, self.extra)
        if words:
            self.found[screen] = words

    def report(self) -> str:
        return "\n".join(
            f"{screen}: {word!r} in {line!r}"
            for screen, words in self.found.items()
            for word, line in sorted(words.items())
        )


def _play_the_round(p: Page, server: ThreadServer, game: str, audit: Audit) -> None:
    """Seat 0 plays its first playable card (first capture), calls koi-koi once, then
    stops; every screen on the way is read."""
    page = p.page
    room = hub_room(server, game)
    deadline = time.monotonic() + 90
    called = False
    read_table = False
    while not room.is_over:
        assert time.monotonic() < deadline, "the game did not end in time"
        if page.locator("#round-dialog[open]").count():
            audit.read("round settlement")
            page.click("#round-continue")
            continue
        if room.match.current != 0:
            time.sleep(0.02)
            continue
        seq = room.seq
        if mover_at(page, room, seq) != 0:
            continue
        if not read_table:
            audit.read("game table")
            read_table = True
        if room.match.phase is Phase.DECIDE:
            page.wait_for_selector("#koikoi-dialog[open]")
            audit.read("koi-koi dialog")
            page.click("#stop-btn" if called else "#koikoi-btn")
            called = True
        elif room.match.phase is Phase.TAKE:
            targets = page.locator("#field button.card.target")
            while room.seq == seq and not targets.count():  # or the page takes by itself
                assert time.monotonic() < deadline
                time.sleep(0.02)
            if room.seq == seq:
                targets.first.click()
        else:
            page.locator("#bottom-hand button.card.playable").first.click()
            if page.locator("#field button.card.target").count():
                audit.read("capture choice")
                page.locator("#field button.card.target").first.click()
        while room.seq == seq and not room.is_over:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def _koikoi_seed() -> int:
    """A seed whose one-round match brings the test's player to a koi-koi decision (the
    player takes its lowest card and capture, as the page's first buttons)."""
    for seed in range(500):
        _, actions = simulate(seed, 1)
        if (0, KOIKOI_ID) in actions:
            return seed
    raise AssertionError("no seed with a koi-koi decision")  # pragma: no cover


def _dialog(page: Any, button: str, dialog: str, audit: Audit, screen: str) -> None:
    page.click(button)
    page.wait_for_selector(f"{dialog}[open]")
    audit.read(screen)
    page.keyboard.press("Escape")
    page.wait_for_selector(f"{dialog}[open]", state="detached")


def test_every_page_in_japanese_shows_no_english_ui_text(
    server: ThreadServer, browser: Any
) -> None:
    p = Page(
        browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce", locale="ja-JP"
    )
    page = p.page
    page.goto(f"{server.base}/#seed={_koikoi_seed()}")
    page.wait_for_selector("#agent option", state="attached")
    assert page.evaluate("document.documentElement.lang") == "ja"
    audit = Audit(page)
    audit.read("new game")
    page.select_option("#agent", AI_LEVEL)
    page.fill("#rounds", "1")
    page.fill("#player-name", PLAYER)
    page.click("#start")
    page.wait_for_selector("#bottom-hand .card")
    game = game_id(page)
    opponent = hub_room(server, game).seats[1].name
    audit.extra = frozenset(_LATIN.findall(_AGENT_SPEC.sub(" ", opponent)))
    _dialog(page, "#rules-btn", "#rules-dialog", audit, "rules dialog")
    _dialog(page, "#keys-btn", "#keys-dialog", audit, "keys dialog")
    _dialog(page, "#history-btn", "#history-dialog", audit, "history dialog")
    _play_the_round(p, server, game, audit)
    live = server.app.state.hub.rooms[game]
    deadline = time.monotonic() + 20
    while not live.finished_stored:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    deadline = time.monotonic() + 20
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline, "the match-over box never opened"
        if page.locator("#round-dialog[open]").count():
            if "round settlement" not in audit.screens:
                audit.read("round settlement")
            page.click("#round-continue")
        page.wait_for_timeout(50)
    audit.read("match over")

    page.goto(f"{server.base}/replay#game={game}")
    page.wait_for_selector("#viewer:not([hidden])")
    audit.read("replay, first step")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    audit.read("replay, a move")
    page.keyboard.press("End")
    page.wait_for_timeout(200)
    audit.read("replay, the settlement")

    page.goto(f"{server.base}/keeper")
    page.wait_for_selector("#k-months .card")
    audit.read("score keeper")

    page.goto(f"{server.base}/stats")
    page.wait_for_selector("body[data-ready]")
    audit.read("statistics")

    page.goto(f"{server.base}/lobby")
    page.wait_for_selector("body[data-ready]")
    audit.read("lobby")
    p.shot("40-japanese-audit-lobby")
    p.close()
    assert {"game table", "koi-koi dialog", "round settlement", "match over"} <= set(
        audit.screens
    ), audit.screens
    assert not audit.found, "English UI text on Japanese pages:\n" + audit.report()


def test_the_audit_flags_english_and_lets_names_and_codes_pass() -> None:
    assert english_words("場札 3L 8A 12P3、ルール nintendo、Hana の得点") == {}
    assert english_words("ヒント (H) · レベル level:2 · mcts:iterations=200") == {}
    assert english_words("2Aを取った。koikoi analyze --json のファイル（.json）[game]") == {}
    found = english_words("山札：24\nStock: 24 cards")
    assert set(found) == {"Stock", "cards"} and found["Stock"] == "Stock: 24 cards"
