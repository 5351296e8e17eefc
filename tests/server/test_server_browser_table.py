"""The web game's table in headless Chromium: capture piles by kind with counts, the
yaku-progress panel, animations and reduced motion, sound effects, and a phone's width.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing; no browser
is ever downloaded. Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from browser_helpers import (
    ONE_ROUND,
    SHOTS,
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

from koikoi.game.actions import describe_action_id
from koikoi.game.cards import CODES, KIND_MASKS, KINDS, Kind
from koikoi.game.engine import Match, Phase
from koikoi.game.views import view_of
from koikoi.server.rooms import progress_of

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
PHONE_OPTIONS: dict[str, Any] = {"viewport": PHONE, "is_mobile": True, "has_touch": True}
KIND_LETTERS = {"L": Kind.BRIGHT, "A": Kind.ANIMAL, "R": Kind.RIBBON, "P": Kind.PLAIN}


def table_page(browser: Any, **options: Any) -> Page:
    """A page whose screenshots go to test-artifacts/screenshots/, the window only."""
    return Page(browser, folder=SHOTS, full_page=False, **options)


def play_to(p: Page, seed: int, actions: list[tuple[int, int]], stop: int) -> None:
    """Play the human's actions of ``actions`` (the match ``simulate`` plays) through the
    page until ``stop`` actions are applied and drawn."""
    shots = {"round": True, "koikoi": True, "take": True, "choice": True}
    deadline = time.monotonic() + 90
    for index, (player, action) in enumerate(actions[:stop]):
        if player == 0:
            options = capture_options(legal_before(1, seed, actions, index), action)
            do_action(p, describe_action_id(action), shots, deadline, options)
        wait_seq(p, index + 1, shots, deadline)


def desktop_page_at(
    browser: Any,
    server: ThreadServer,
    seed: int,
    actions: list[tuple[int, int]],
    stop: int,
    *,
    shown: str,
) -> Page:
    """A desktop page of a game against the AI with ``seed``, once it shows ``shown``,
    played to ``stop`` actions (:func:`play_to`) with the human to play."""
    p = table_page(browser, viewport=DESKTOP, reduced_motion="reduce")
    start_ai_game(p, server, seed)
    p.page.wait_for_selector(shown)
    play_to(p, seed, actions, stop)
    p.page.wait_for_selector("#bottom-hand button.card.playable")
    return p


def overflow(page: Any) -> int:
    """How far the page is wider than the window (0: no horizontal overflow)."""
    extra: int = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    return extra


# ------------------------------------------------------------------- the piles


def _pile_counts(page: Any, slot: str) -> dict[str, int]:
    counts: dict[str, int] = page.evaluate(
        """(slot) => Object.fromEntries([...document.querySelectorAll(`#${slot}-pile .pile-group`)]
             .map((g) => [g.dataset.kind, Number(g.querySelector('.count').textContent)]))""",
        slot,
    )
    return counts


def _engine_counts(pile: int) -> dict[str, int]:
    return {k: (pile & KIND_MASKS[kind]).bit_count() for k, kind in KIND_LETTERS.items()}


def _seed_with_early_captures() -> tuple[int, list[tuple[int, int]], int]:
    """A one-round match where both players have captured within the first turns: the
    seed, the actions, and how many are applied then (the human to play)."""
    for seed in range(400):
        _, actions = simulate(seed, 1)
        replay = Match(ONE_ROUND, seed=seed)
        for index, (_, action) in enumerate(actions):
            rnd = replay.round
            if index > 12:
                break
            if (
                rnd.piles[0]
                and rnd.piles[1]
                and replay.current == 0
                and replay.phase is Phase.PLAY
                and len({KINDS[c] for c in range(48) if (rnd.piles[0] | rnd.piles[1]) >> c & 1})
                >= 2
            ):
                return seed, actions, index
            replay.apply(action)
    raise AssertionError("no seed")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_both_capture_piles_show_the_four_kinds_with_counts_in_view(
    server: ThreadServer, browser: Any, size: str
) -> None:
    options: dict[str, Any] = {"viewport": DESKTOP} if size == "desktop" else dict(PHONE_OPTIONS)
    p = table_page(browser, reduced_motion="reduce", **options)
    page = p.page
    seed, actions, stop = _seed_with_early_captures()
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand .card")
    # At the deal: every kind is there with 0, for both players.
    for slot in ("top", "bottom"):
        assert _pile_counts(page, slot) == {"L": 0, "A": 0, "R": 0, "P": 0}
    play_to(p, seed, actions, stop)
    page.wait_for_selector("#bottom-hand button.card.playable")
    rnd = hub_room(server, game_id(page)).match.round
    assert _pile_counts(page, "bottom") == _engine_counts(rnd.piles[0])
    assert _pile_counts(page, "top") == _engine_counts(rnd.piles[1])
    assert sum(_pile_counts(page, "top").values()) > 0
    # The groups are in order, each names its kind, and all of them are in view
    # without scrolling, the opponent's too.
    page.evaluate("() => window.scrollTo(0, 0)")
    groups = page.evaluate(
        """() => [...document.querySelectorAll('.pile .pile-group')].map((g) => {
             const r = g.querySelector('.kind').getBoundingClientRect();
             return {kind: g.dataset.kind, label: g.getAttribute('aria-label'),
                     text: g.querySelector('.kind').textContent,
                     top: r.top, bottom: r.bottom, left: r.left, right: r.right};
           })"""
    )
    assert [g["kind"] for g in groups] == ["L", "A", "R", "P"] * 2
    for g, ja in zip(groups, ["光", "タネ", "短冊", "カス"] * 2, strict=True):
        assert ja in g["text"] and ja in g["label"]
        assert g["top"] >= 0 and g["bottom"] <= options["viewport"]["height"], g
        assert g["left"] >= 0 and g["right"] <= options["viewport"]["width"], g
    assert "Brights" in groups[0]["label"] and "Plains" in groups[3]["label"]
    p.shot(f"game-{size}")
    p.shot(f"game-{size}-full", full_page=True)
    p.close()


# ------------------------------------------------------------- yaku progress


def _seed_with_an_impossible_yaku() -> tuple[int, list[tuple[int, int]], int, str]:
    """A one-round match where, early on with the human to play, a yaku became
    impossible for the human while the opponent holds cards toward one."""
    for seed in range(400):
        _, actions = simulate(seed, 1)
        replay = Match(ONE_ROUND, seed=seed)
        for index, (_, action) in enumerate(actions[:14]):
            if replay.current == 0 and replay.phase is Phase.PLAY:
                rows = progress_of(view_of(replay, 0))
                gone = [r["name"] for r in rows[0] if not r["possible"] and r["have"] > 0]
                if gone and any(r["have"] for r in rows[1]):
                    return seed, actions, index, gone[0]
            replay.apply(action)
    raise AssertionError("no seed")


def test_the_progress_panel_shows_both_players_and_strikes_an_impossible_yaku(
    server: ThreadServer, browser: Any
) -> None:
    seed, actions, stop, gone = _seed_with_an_impossible_yaku()
    p = desktop_page_at(browser, server, seed, actions, stop, shown="#bottom-hand .card")
    page = p.page
    # The full progress is on demand: the Yaku button (or Y) opens it.
    assert not page.locator("#progress-dialog[open]").count()
    page.keyboard.press("y")
    page.wait_for_selector("#progress-dialog[open] #progress .progress-row")
    match = hub_room(server, game_id(page)).match
    expected = progress_of(view_of(match, 0))
    for slot, seat in (("bottom", 0), ("top", 1)):
        shown = page.evaluate(
            """(slot) => Object.fromEntries([...document.querySelectorAll(
                 `#progress [data-slot=${slot}] .progress-row`)].map((r) => [r.dataset.yaku, {
                   have: r.querySelector('.have').textContent,
                   cls: r.className,
                   why: (r.querySelector('.why') || {}).textContent || '',
                   pips: r.querySelectorAll('.pip.on').length,
                   strike: getComputedStyle(r.querySelector('.yaku-label')).textDecorationLine,
                 }]))""",
            slot,
        )
        assert set(shown) == {r["name"] for r in expected[seat]}
        for row in expected[seat]:
            got = shown[row["name"]]
            assert got["have"] == f"{row['have']}/{row['need']}"
            assert got["pips"] == row["have"]
            if not row["possible"]:
                assert "impossible" in got["cls"] and got["why"] == "no longer possible"
                assert got["strike"] == "line-through"
            else:
                assert "impossible" not in got["cls"] and got["strike"] == "none"
    # The impossible yaku of the human, greyed: listed after those still possible.
    names = page.eval_on_selector_all(
        "#progress [data-slot=bottom] .progress-row", "rows => rows.map((r) => r.dataset.yaku)"
    )
    possible = [r["name"] for r in expected[0] if r["possible"]]
    assert names.index(gone) > max(names.index(n) for n in possible)
    opacity = page.eval_on_selector(
        f'#progress [data-slot=bottom] [data-yaku="{gone}"]', "r => getComputedStyle(r).opacity"
    )
    assert float(opacity) < 1
    # The one-line summary beside each pile names the leading yaku under way.
    line = page.locator("#top-progress").inner_text()
    assert line and "/" in line
    p.shot("progress-panel-desktop")
    p.close()


# ----------------------------------------------------------------- animations

_SAMPLER = """() => {
  window.__anim = 0;
  const tick = () => {
    const running = document.getAnimations().filter((a) => a.playState === 'running').length;
    window.__anim = Math.max(window.__anim, running);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  setInterval(tick, 10);
}"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_moves_animate_unless_reduced_motion_is_asked_for(
    server: ThreadServer, browser: Any, motion: str
) -> None:
    seed, actions, stop = _seed_with_early_captures()
    p = table_page(browser, viewport=DESKTOP, reduced_motion=motion)
    page = p.page
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand button.card.playable")
    page.evaluate(_SAMPLER)
    play_to(p, seed, actions, stop)
    page.wait_for_selector("#bottom-hand button.card.playable")
    seen = page.evaluate("() => window.__anim")
    if motion == "reduce":
        assert seen == 0  # nothing moves: cards jump to their places
    else:
        assert seen > 0  # plays, captures and draws slide (FLIP transitions)
    # Either way the page is ready for the next move once the state is drawn.
    assert page.evaluate("() => window.KOIKOI.running") is False
    p.close()


# ---------------------------------------------------------------------- sound

_AUDIO_STUB = """(() => {
  window.__audio = { contexts: 0, notes: 0, noises: 0 };
  const param = () => ({ setValueAtTime() {}, exponentialRampToValueAtTime() {} });
  const node = (extra) => Object.assign({ connect() {}, disconnect() {} }, extra);
  class FakeAudioContext {
    constructor() { window.__audio.contexts += 1; this.state = 'running'; }
    get currentTime() { return 0; }
    get sampleRate() { return 8000; }
    get destination() { return node({}); }
    resume() { return Promise.resolve(); }
    createOscillator() {
      const start = () => { window.__audio.notes += 1; };
      return node({ type: 'sine', frequency: param(), start, stop() {} });
    }
    createGain() { return node({ gain: param() }); }
    createBiquadFilter() { return node({ type: 'lowpass', frequency: param() }); }
    createBuffer(channels, length) {
      const data = new Float32Array(length);
      return { getChannelData: () => data };
    }
    createBufferSource() { return node({ buffer: null, start() { window.__audio.noises += 1; } }); }
  }
  window.AudioContext = FakeAudioContext;
  window.webkitAudioContext = FakeAudioContext;
})();"""


def _sounds(page: Any) -> int:
    counts: dict[str, int] = page.evaluate("() => window.__audio")
    return counts["notes"] + counts["noises"]


def test_sound_effects_follow_the_toggle_which_is_remembered(
    server: ThreadServer, browser: Any
) -> None:
    seed, actions, stop = _seed_with_early_captures()
    p = table_page(browser, viewport=DESKTOP, reduced_motion="reduce")
    page = p.page
    page.add_init_script(_AUDIO_STUB)
    page.goto(f"{server.base}/")
    toggle = page.locator("#sound-toggle")
    toggle.wait_for()
    # On by default, but silent until the first gesture: no audio context at all.
    assert toggle.get_attribute("aria-pressed") == "true"
    assert toggle.inner_text() == "Sound: on"
    page.evaluate("() => KKSound.event({type: 'yaku'})")
    assert page.evaluate("() => window.__audio.contexts") == 0

    # A game: clicking Start is the gesture; each move sounds.
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand button.card.playable")
    play_to(p, seed, actions, stop)
    page.wait_for_selector("#bottom-hand button.card.playable")
    assert page.evaluate("() => window.__audio.contexts") == 1
    assert _sounds(page) >= stop  # a sound for each play, draw and capture at least

    # Turned off, it stays off after a reload: moves are silent.
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert toggle.inner_text() == "Sound: off"
    assert page.evaluate("() => localStorage.getItem('koikoi.sound')") == "off"
    page.reload()
    page.wait_for_selector("#bottom-hand button.card.playable")
    assert toggle.get_attribute("aria-pressed") == "false"
    page.mouse.click(5, 400)
    before = _sounds(page)
    page.locator("#bottom-hand button.card.playable").first.click()
    if page.locator("#choice-bar button").count() > 1:
        page.locator("#field button.card.target, #choice-bar button").first.click()
    page.wait_for_function("() => window.KOIKOI.state.seq > 0 && !window.KOIKOI.running")
    page.wait_for_timeout(300)
    assert _sounds(page) == before

    # Turned on again: the click on the toggle plays a sample, and it is remembered.
    toggle.click()
    assert page.evaluate("() => localStorage.getItem('koikoi.sound')") == "on"
    assert _sounds(page) > before
    p.close()


# ---------------------------------------------------------------------- phone


def test_no_page_is_wider_than_a_phone(server: ThreadServer, browser: Any) -> None:
    p = table_page(browser, reduced_motion="reduce", **PHONE_OPTIONS)
    page = p.page
    for path, ready in (("/", "#agent option"), ("/replay", "#pick"), ("/keeper", "main")):
        page.goto(f"{server.base}{path}")
        page.wait_for_selector(ready, state="attached")
        page.wait_for_load_state("networkidle")
        assert overflow(page) <= 0, path
    # In a game, after some moves, with the progress panel filled in.
    seed, actions, stop = _seed_with_early_captures()
    start_ai_game(p, server, seed)
    page.wait_for_selector("#bottom-hand .card")
    assert overflow(page) <= 0
    play_to(p, seed, actions, stop)
    page.wait_for_selector("#progress .progress-row", state="attached")
    assert overflow(page) <= 0
    p.shot("phone-in-game")
    # The match-over view: a one-round match that ends at the deal (an instant hand).
    instant = 246
    assert Match(ONE_ROUND, seed=instant).is_over
    start_ai_game(p, server, instant)
    deadline = time.monotonic() + 30
    while not page.locator("#over-dialog[open]").count():
        assert time.monotonic() < deadline
        if not dismiss_round_dialog(p, {"round": True}):
            page.wait_for_timeout(50)
    assert overflow(page) <= 0
    p.shot("phone-match-over")
    page.locator("#over-close").click()
    assert overflow(page) <= 0
    # Its replay.
    page.goto(f"{server.base}/replay#game={game_id(page)}")
    page.wait_for_load_state("networkidle")
    assert overflow(page) <= 0
    p.shot("phone-replay")
    p.close()


def test_cards_in_the_piles_are_named(server: ThreadServer, browser: Any) -> None:
    """Every card in a capture pile is an image labelled with its name."""
    seed, actions, stop = _seed_with_early_captures()
    p = desktop_page_at(browser, server, seed, actions, stop, shown="#bottom-hand .card")
    page = p.page
    cards = page.eval_on_selector_all(
        ".pile .card",
        "ns => ns.map((n) => [n.dataset.code, n.getAttribute('role'), n.ariaLabel])",
    )
    assert cards
    for code, role, label in cards:
        assert code in CODES and role == "img" and label
    p.close()
