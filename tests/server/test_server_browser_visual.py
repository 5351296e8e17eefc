"""Visual regression: the main screens at three window sizes, compared with committed
baselines, so that a broken layout fails CI.

Each screen is put in a fixed state (a seeded game, reduced motion, no caret, no toast
or banner), photographed, shrunk to half size, and compared pixel by pixel with
``tests/server/visual/<screen>-<size>.png``. A pixel differs when one of its colour
channels differs by more than :data:`CHANNEL_TOLERANCE`; the screen fails when more than
:data:`PIXEL_TOLERANCE` of its pixels differ (text drawn a little differently by another
font version passes; a panel that moved does not). On a failure the screenshot and a
picture of the differences go to test-artifacts/visual/.

To accept new looks after a deliberate change, run ``make screenshots`` (it sets
``KOIKOI_UPDATE_SCREENSHOTS=1``, writes the baselines and the full-size pictures of
docs/web.md), look at them, and commit them.

Skipped when /usr/bin/chromium, Playwright or Pillow is missing.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import (
    AI_LEVEL,
    ROOT,
    Page,
    capture_options,
    do_action,
    legal_before,
    simulate,
    wait_seq,
)

from koikoi.game.actions import KOIKOI_ID, describe_action_id

Image = pytest.importorskip("PIL.Image")
ImageChops = pytest.importorskip("PIL.ImageChops")

BASELINES = Path(__file__).parent / "visual"
DOCS_IMAGES = ROOT / "docs" / "images"
ARTIFACTS = ROOT / "test-artifacts" / "visual"
UPDATE = os.environ.get("KOIKOI_UPDATE_SCREENSHOTS") == "1"

CHANNEL_TOLERANCE = 48
"""How far (0-255) a colour channel may differ before the pixel counts as changed."""
PIXEL_TOLERANCE = 0.02
"""The share of changed pixels a screen may have and still pass."""

SIZES: dict[str, dict[str, Any]] = {
    "laptop": {"viewport": {"width": 1366, "height": 768}},
    "desktop": {"viewport": {"width": 1920, "height": 1080}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
DOCS = {("table", "laptop"), ("table", "phone"), ("koikoi", "laptop"), ("koikoi", "phone")}
"""The screens docs/web.md shows, at full size."""

STILL = """
*, *::before, *::after { caret-color: transparent !important; animation: none !important;
  transition: none !important; }
.toast, .banner, .moment-banner { visibility: hidden !important; }
"""
"""Put on every page: nothing blinks, moves, or comes and goes."""

SEED = 11
"""The seeded game of the table screen."""
KOIKOI_SEED = 14
"""A game in which the scripted human makes a yaku early (checked when it runs)."""


def _settle(page: Any) -> None:
    page.add_style_tag(content=STILL)
    page.wait_for_load_state("networkidle")
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(200)


def screen_home(p: Page, base: str) -> None:
    p.page.goto(f"{base}/#seed=1")
    p.page.wait_for_selector("#agent option", state="attached")


def screen_table(p: Page, base: str) -> None:
    page = p.page
    page.goto(f"{base}/#seed={SEED}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    page.fill("#rounds", "1")
    page.click("#start")
    page.wait_for_selector("#bottom-hand button.card.playable")
    page.wait_for_function("() => !!window.KOIKOI.state && !window.KOIKOI.running")


def screen_koikoi(p: Page, base: str) -> None:
    """The koi-koi decision of a scripted game: the dialog over the table."""
    page = p.page
    page.goto(f"{base}/#seed={KOIKOI_SEED}")
    page.wait_for_selector("#agent option", state="attached")
    page.select_option("#agent", AI_LEVEL)
    page.fill("#rounds", "1")
    page.click("#start")
    _, actions = simulate(KOIKOI_SEED, 1)
    shots = {"round": True, "koikoi": True, "take": True, "choice": True}
    deadline = time.monotonic() + 120
    for index, (player, action) in enumerate(actions):
        if player == 0 and action == KOIKOI_ID:
            page.wait_for_selector("#koikoi-dialog[open]")
            return
        if player == 0:
            options = capture_options(legal_before(1, KOIKOI_SEED, actions, index), action)
            do_action(p, describe_action_id(action), shots, deadline, options)
        wait_seq(p, index + 1, shots, deadline)
    raise AssertionError("the scripted game never reached a koi-koi decision")


def screen_lobby(p: Page, base: str) -> None:
    p.page.goto(f"{base}/lobby")
    p.page.wait_for_selector("main")


def screen_replay(p: Page, base: str) -> None:
    p.page.goto(f"{base}/replay")
    p.page.wait_for_selector("#pick", state="attached")


SCREENS: dict[str, Callable[[Page, str], None]] = {
    "home": screen_home,
    "table": screen_table,
    "koikoi": screen_koikoi,
    "lobby": screen_lobby,
    "replay": screen_replay,
}


def _half(png: bytes) -> Any:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return image.resize((image.width // 2, image.height // 2), Image.Resampling.BILINEAR)


def changed_share(a: Any, b: Any) -> float:
    """The share of pixels of which some channel differs by more than the tolerance."""
    if a.size != b.size:
        return 1.0
    diff = ImageChops.difference(a, b).point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0)
    mask = diff.convert("L").point(lambda v: 255 if v else 0)
    histogram = mask.histogram()
    return float(histogram[255]) / (a.width * a.height)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_screen_looks_as_its_baseline(
    server: Any, browser: Any, screen: str, size: str
) -> None:
    p = Page(
        browser,
        full_page=False,
        reduced_motion="reduce",
        locale="en-GB",
        bypass_csp=True,  # for the style that stills the page
        **SIZES[size],
    )
    SCREENS[screen](p, server.base)
    _settle(p.page)
    png = p.page.screenshot(full_page=False)
    p.close()
    name = f"{screen}-{size}"
    got = _half(png)
    baseline = BASELINES / f"{name}.png"
    if UPDATE:
        BASELINES.mkdir(parents=True, exist_ok=True)
        got.save(baseline, optimize=True)
        if (screen, size) in DOCS:
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            (DOCS_IMAGES / f"web-{name}.png").write_bytes(png)
        return
    if not baseline.exists():
        pytest.fail(f"no baseline {baseline.name}: run `make screenshots` and commit it")
    want = Image.open(baseline).convert("RGB")
    share = changed_share(got, want)
    if share > PIXEL_TOLERANCE:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        got.save(ARTIFACTS / f"{name}.png")
        if got.size == want.size:
            ImageChops.difference(got, want).save(ARTIFACTS / f"{name}-diff.png")
        pytest.fail(
            f"{name}: {share:.1%} of the pixels changed (at most {PIXEL_TOLERANCE:.0%}); "
            f"see test-artifacts/visual/{name}.png. If the change is meant, run "
            "`make screenshots` and commit the new baselines."
        )


def test_the_comparison_tells_a_moved_panel_from_a_font_difference() -> None:
    """The tolerance passes small rendering differences and fails a moved block."""
    base = Image.new("RGB", (200, 100), (31, 58, 43))
    for x in range(20, 120):
        for y in range(20, 60):
            base.putpixel((x, y), (22, 40, 30))
    slightly = base.point(lambda v: min(255, v + 10))  # another font's antialiasing
    assert changed_share(base, slightly) == 0.0
    moved = Image.new("RGB", (200, 100), (31, 58, 43))
    moved.paste(base.crop((20, 20, 120, 60)).point(lambda v: v * 4), (80, 50))
    assert changed_share(base, moved) > PIXEL_TOLERANCE
    assert changed_share(base, base.resize((100, 50))) == 1.0
