"""Japanese on a machine with no Japanese font: the bundled web font draws the table.

Chromium is started with a fontconfig file that lists only a folder of Latin fonts
(DejaVu), so the machine's Japanese fonts (CI installs IPA Gothic) are out of its
sight. The test first shows that this is so (Japanese drawn with a system family
comes out as identical missing-glyph boxes), then opens the game table in Japanese
and checks that every Japanese character on it is drawn by a real glyph of the
bundled face, and that the title, the dealer badge and the capture piles' kinds look
different from their system-font (missing-glyph) rendering. The screenshot is
``test-artifacts/web/ja-table-without-japanese-fonts.png``.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import ARGS, ARTIFACTS, CHROMIUM, Page, start_ai_game, sync_api
from server_helpers import ThreadServer

pytestmark = pytest.mark.browser

LATIN_FONTS = Path("/usr/share/fonts/truetype/dejavu")
"""The only fonts the browser sees: DejaVu has Latin, Greek, symbols, no Japanese."""

FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  {dirs}
  <cachedir>{cache}</cachedir>
</fontconfig>
"""

GLYPHS = """([text, font]) => {
  // One bitmap digest per character: drawn alone on a canvas in the given font.
  const canvas = document.createElement("canvas");
  canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const out = {};
  for (const ch of new Set(Array.from(text))) {
    ctx.clearRect(0, 0, 64, 64);
    ctx.font = font;
    ctx.fillStyle = "#000";
    ctx.textBaseline = "middle";
    ctx.fillText(ch, 8, 32);
    const data = ctx.getImageData(0, 0, 64, 64).data;
    let h = 0, ink = 0;
    for (let i = 3; i < data.length; i += 4) {
      h = (Math.imul(h, 31) + data[i]) | 0;
      ink += data[i] > 0 ? 1 : 0;
    }
    out[ch] = ink ? String(h) : "blank";
  }
  return out;
}"""

JAPANESE = "[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
SYSTEM_FAMILY = "sans-serif"
"""A family with no web font in it: what the machine alone draws."""


@pytest.fixture(scope="module")
def bare_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium that sees no Japanese font (a fontconfig file of its own)."""
    folder = tmp_path_factory.mktemp("fontconfig")
    dirs = f"<dir>{LATIN_FONTS}</dir>" if LATIN_FONTS.is_dir() else ""
    conf = folder / "fonts.conf"
    conf.write_text(FONTCONFIG.format(dirs=dirs, cache=folder / "cache"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FONTCONFIG")}
    env["FONTCONFIG_FILE"] = str(conf)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, env=env)
        yield b
        b.close()


def _glyphs(page: Any, text: str, family: str) -> dict[str, str]:
    digests: dict[str, str] = page.evaluate(GLYPHS, [text, f"32px {family}"])
    return digests


def _with_system_font(element: Any) -> bytes:
    """A screenshot of the element as the machine's own fonts draw it."""
    restyle = """(el, family) => {
      for (const n of [el, ...el.querySelectorAll("*")]) n.style.fontFamily = family;
    }"""
    element.evaluate(restyle, SYSTEM_FAMILY)
    shot: bytes = element.screenshot()
    element.evaluate(restyle, "")
    return shot


def test_the_japanese_table_draws_without_a_japanese_font(
    server: ThreadServer, bare_browser: Any
) -> None:
    p = Page(
        bare_browser,
        viewport={"width": 1366, "height": 900},
        reduced_motion="reduce",
        locale="ja-JP",
        prefix="ja-",
    )
    page = p.page
    start_ai_game(p, server, seed=3)
    page.wait_for_selector("#bottom-hand .card")
    page.wait_for_selector(".pile-group .kind-ja")
    assert page.evaluate("document.documentElement.lang") == "ja"
    statuses = page.evaluate(
        """() => document.fonts.ready.then(() =>
             [...document.fonts].filter(f => f.family.includes("Koikoi JP")).map(f => f.status))"""
    )
    assert statuses == ["loaded"], statuses

    # The check means something: without the web font, Japanese is missing-glyph boxes,
    # every character the same, while Latin letters differ.
    sample = "こいこい親光タネ短冊カス松鶴"
    system = _glyphs(page, sample, SYSTEM_FAMILY)
    assert len(set(system.values())) == 1, f"this browser has a Japanese font: {system}"
    (box,) = set(system.values())
    latin = _glyphs(page, "AB", SYSTEM_FAMILY)
    assert latin["A"] != latin["B"] and box not in latin.values()

    # Every Japanese character on the table is a glyph of its own in the page's font.
    text = page.evaluate("document.body.innerText") + page.evaluate("document.title")
    for word in ("こいこい", "親", "光", "タネ", "短冊", "カス", "山札"):
        assert word in text, word
    chars = "".join(sorted(set(re.findall(JAPANESE, text))))
    assert len(chars) > 30, chars
    family = page.evaluate("getComputedStyle(document.body).fontFamily")
    assert '"Koikoi JP"' in family, family
    drawn = _glyphs(page, chars, family)
    boxes = [ch for ch, digest in drawn.items() if digest in (box, "blank")]
    assert not boxes, f"drawn as missing glyphs: {''.join(boxes)}"
    assert len(set(drawn.values())) == len(drawn), "two characters drew the same bitmap"

    # The page itself: the title, the dealer badge and the piles' kinds look different
    # from what the machine alone would draw.
    for selector in (".site-header h1 .ja", ".badge.dealer", ".pile-group[data-kind='L'] .kind"):
        element = page.locator(selector).first
        with_font = element.screenshot()
        assert with_font != _with_system_font(element), selector
    p.shot("table-without-japanese-fonts", full_page=False)
    p.close()
