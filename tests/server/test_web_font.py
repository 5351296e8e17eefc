"""The web game's bundled Japanese font (``static/fonts/``): it covers every character
the pages can show, carries its licence, is linked by its hash and served with a long
cache. When a test here says a character is missing, run ``scripts/subset-font.py``
(static/fonts/README.md says how).

The font's tests read the WOFF2 with fontTools and brotli (the ``dev`` extra) and skip
without them.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
import unicodedata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.testclient import TestClient

from koikoi.server import pages
from koikoi.server.app import CONTENT_SECURITY_POLICY

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "subset-font.py"
REGENERATE = "run scripts/subset-font.py (see src/koikoi/server/static/fonts/README.md)"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("subset_font", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


subset_font = _load_script()
FONT = subset_font.FONT_DIR / subset_font.FONT_FILE


@pytest.fixture(scope="module")
def cmap() -> dict[int, str]:
    """The bundled font's character map (code point -> glyph name)."""
    pytest.importorskip("brotli", reason="brotli reads WOFF2 (the dev extra)")
    ttlib = pytest.importorskip("fontTools.ttLib", reason="fontTools (the dev extra)")
    font: Any = ttlib.TTFont(FONT)
    best: dict[int, str] = font.getBestCmap()
    return best


def _describe(chars: dict[str, Path]) -> str:
    return "\n".join(
        f"  U+{ord(ch):04X} {unicodedata.name(ch, '?')} ({ch}) in {path.relative_to(ROOT)}"
        for ch, path in sorted(chars.items())
    )


def test_the_font_has_every_character_of_the_catalogs_and_pages(cmap: dict[int, str]) -> None:
    wanted = subset_font.wanted_characters()
    # the collection reaches the catalogs, the pages and the names in the sources
    assert {"親", "光", "タ", "ネ", "短", "冊", "カ", "ス", "鶴", "鳳", "凰"} <= set(wanted)
    assert "こ" in wanted and "い" in wanted
    missing = {ch: path for ch, path in wanted.items() if ord(ch) not in cmap}
    assert not missing, (
        f"the bundled Japanese font lacks {len(missing)} character(s) the web game shows:\n"
        f"{_describe(missing)}\n{REGENERATE}"
    )


def test_the_font_has_all_kana_and_ascii(cmap: dict[int, str]) -> None:
    margin = subset_font.margin_characters()
    assert "ゔ" in margin and "ヶ" in margin and "~" in margin and "！" in margin
    missing = sorted(ch for ch in margin if ord(ch) not in cmap)
    assert not missing, f"missing from the safety margin: {''.join(missing)}; {REGENERATE}"


def test_a_new_japanese_string_is_caught(tmp_path: Path, cmap: dict[int, str]) -> None:
    """The coverage test fails for a catalog message with a character the subset lacks."""
    catalogs = tmp_path / "i18n" / "locales" / "ja"
    catalogs.mkdir(parents=True)
    (catalogs / "web.json").write_text(json.dumps({"Gloom": "憂鬱"}), encoding="utf-8")
    static = tmp_path / "server" / "static"
    static.mkdir(parents=True)
    (static / "page.html").write_text("<p lang='ja'>麒麟</p>", encoding="utf-8")
    (tmp_path / "game").mkdir()
    (tmp_path / "game" / "names.py").write_text('NAME = "鰻 unagi"\n', encoding="utf-8")
    wanted = subset_font.wanted_characters(tmp_path)
    assert {"憂", "鬱", "麒", "麟", "鰻"} <= set(wanted)
    assert "u" not in wanted  # of the sources, only Japanese-script characters
    assert [ch for ch in "憂鬱麒麟鰻" if ord(ch) in cmap] == []


def test_symbols_left_to_system_fonts_are_not_japanese() -> None:
    assert subset_font.LEFT_TO_SYSTEM_FONTS
    assert not [ch for ch in subset_font.LEFT_TO_SYSTEM_FONTS if subset_font.is_japanese(ch)]


def test_the_font_is_small_and_keeps_its_licence(cmap: dict[int, str]) -> None:
    ttlib = pytest.importorskip("fontTools.ttLib")
    font: Any = ttlib.TTFont(FONT)
    assert font.flavor == "woff2"
    assert FONT.stat().st_size < 400 * 1024
    names = font["name"]
    assert names.getDebugName(1) == subset_font.FACE
    assert "SIL Open Font License" in names.getDebugName(13)
    version = names.getDebugName(5).split(";")[0].removeprefix("Version ")
    folder = subset_font.FONT_DIR
    assert "SIL OPEN FONT LICENSE Version 1.1" in (folder / "OFL.txt").read_text("utf-8")
    readme = (folder / "README.md").read_text("utf-8")
    assert f"version {version}" in readme and "scripts/subset-font.py" in readme


def test_fonts_css_links_this_very_file() -> None:
    css = subset_font.FONTS_CSS.read_text("utf-8")
    linked = subset_font.linked_version(css)
    assert linked == subset_font.font_version(FONT), (
        f"fonts.css links the font as version {linked}, but the file is "
        f"{subset_font.font_version(FONT)}: {REGENERATE}"
    )
    assert "font-display: swap" in css and 'font-family: "Koikoi JP"' in css


def test_every_font_stack_has_the_bundled_face() -> None:
    style = (pages.STATIC_DIR / "style.css").read_text("utf-8")
    stacks = [s for s in re.findall(r"font-family:([^;]+);", style) if "inherit" not in s]
    assert len(stacks) >= 3  # the page, Japanese text, text areas
    assert not [s for s in stacks if '"Koikoi JP"' not in s], stacks
    japanese = re.search(r":lang\(ja\)\)? \{\s*font-family:([^;]+);", style)
    assert japanese and '"Koikoi JP"' in japanese.group(1)


def test_the_script_doctests() -> None:
    result = doctest.testmod(subset_font)
    assert result.attempted >= 2 and result.failed == 0


def test_the_font_is_served_with_a_long_cache(client: TestClient) -> None:
    css = client.get("/static/fonts.css")
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    version = subset_font.linked_version(css.text)
    r = client.get(f"/static/fonts/{subset_font.FONT_FILE}?v={version}")
    assert r.status_code == 200
    assert r.headers["content-type"] == "font/woff2"
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert r.content == FONT.read_bytes()
    assert "font-src 'self'" in r.headers["content-security-policy"]
    assert "font-src 'self'" in CONTENT_SECURITY_POLICY
    assert client.get("/static/fonts/OFL.txt").status_code == 200
    assert client.get("/static/fonts/nope.woff2").status_code == 404
    # the other static files keep the default (revalidated) caching
    assert "immutable" not in client.get("/static/style.css").headers.get("cache-control", "")


def test_every_page_links_the_font_before_its_style() -> None:
    for path in pages.PAGES:
        html = pages.page(path)
        assert html.index("/static/fonts.css") < html.index("/static/style.css"), path
