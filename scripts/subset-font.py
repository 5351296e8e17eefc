#!/usr/bin/env python3
"""Write the web game's Japanese subset font from the catalogs and the pages.

Usage::

    python scripts/subset-font.py [--source NotoSansCJK-Regular.ttc] [--list]

Collects every character the web game can show in Japanese: all of the Japanese
message catalogs (``src/koikoi/i18n/locales/ja/*.json``, keys and messages), all of
the static pages, scripts and style sheets (``src/koikoi/server/static/``), and the
Japanese-script characters of the Python and TOML sources that name cards, yaku and
rule sets (``game/``, ``i18n/``, ``features/``, ``server/``), plus every kana, the
CJK punctuation, ASCII and its full-width forms as a safety margin. It writes a
WOFF2 subset of Noto Sans CJK JP Regular with those characters to
``src/koikoi/server/static/fonts/`` (see the README.md there) and links it from
``static/fonts.css`` with its hash (``?v=``), so that browsers may cache it for good.

The source is Debian's ``fonts-noto-cjk`` (``NotoSansCJK-Regular.ttc``, the face
"Noto Sans CJK JP"). Without installing it system-wide::

    apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb /tmp/noto
    python scripts/subset-font.py \\
        --source /tmp/noto/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc

Needs fontTools and brotli (both in the ``dev`` extra). ``--list`` prints the
characters and writes nothing (no fontTools needed). The test
``tests/server/test_web_font.py`` fails when a character is missing from the subset.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "koikoi"
FONT_DIR = PACKAGE / "server" / "static" / "fonts"
FONT_FILE = "NotoSansCJKjp-Regular-subset.woff2"
"""The subset's file name in :data:`FONT_DIR`."""
FONTS_CSS = PACKAGE / "server" / "static" / "fonts.css"
"""The style sheet that links the subset as ``FONT_FILE?v=<version>``."""
DEFAULT_SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
"""Where Debian's fonts-noto-cjk puts the collection."""
FACE = "Noto Sans CJK JP"
"""The face of the collection (name ID 1) that is subset."""

JAPANESE_RANGES: tuple[tuple[int, int], ...] = (
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x309F),  # hiragana
    (0x30A0, 0x30FF),  # katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half-width and full-width forms
)
"""The scripts the font is shipped for: every character in them must be in the subset."""

MARGIN: tuple[tuple[int, int], ...] = (
    (0x0020, 0x007E),  # ASCII
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3041, 0x3096),  # hiragana
    (0x3099, 0x309F),  # sound marks, iteration marks
    (0x30A0, 0x30FF),  # katakana
    (0xFF01, 0xFF5E),  # full-width ASCII
)
"""Always in the subset, used or not, so that a new message in kana needs no new font."""

LEFT_TO_SYSTEM_FONTS = frozenset("ϟ≋▬✎")
"""Symbols of the pages that Noto Sans CJK JP has no glyph for; the browser draws them
with a system font (every common one has them). Only non-Japanese characters may be
listed here."""

CODE_FOLDERS = ("game", "i18n", "features", "server")
"""Folders of the package whose Python and TOML sources hold Japanese names."""
STATIC_SUFFIXES = (".html", ".js", ".css")


def is_japanese(ch: str) -> bool:
    """Whether ``ch`` is in one of :data:`JAPANESE_RANGES`.

    >>> is_japanese("光"), is_japanese("カ"), is_japanese("a")
    (True, True, False)
    """
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in JAPANESE_RANGES)


def _drawable(ch: str) -> bool:
    """Whether ``ch`` is drawn (not a control, format or line break character)."""
    return unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def _strings(value: Any) -> Iterator[str]:
    """Every key and string of a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def catalog_files(package: Path = PACKAGE) -> list[Path]:
    """The Japanese message catalogs."""
    return sorted((package / "i18n" / "locales" / "ja").glob("*.json"))


def static_files(package: Path = PACKAGE) -> list[Path]:
    """The web game's pages, scripts and style sheets."""
    static = package / "server" / "static"
    return sorted(p for p in static.rglob("*") if p.suffix in STATIC_SUFFIXES and p.is_file())


def code_files(package: Path = PACKAGE) -> list[Path]:
    """The Python and TOML sources that name cards, yaku and rule sets in Japanese."""
    out: list[Path] = []
    for folder in CODE_FOLDERS:
        for suffix in ("*.py", "*.toml"):
            out.extend((package / folder).rglob(suffix))
    return sorted(out)


def wanted_characters(package: Path = PACKAGE) -> dict[str, Path]:
    """Every character the subset must draw, with the first file it was found in.

    All the characters of the catalogs and the static files, the Japanese-script
    characters of the sources (:func:`code_files`), less :data:`LEFT_TO_SYSTEM_FONTS`.
    The safety margin (:data:`MARGIN`) is not included.
    """
    found: dict[str, Path] = {}

    def add(chars: Iterable[str], path: Path) -> None:
        for ch in chars:
            if _drawable(ch) and ch not in LEFT_TO_SYSTEM_FONTS:
                found.setdefault(ch, path)

    for path in catalog_files(package):
        data = json.loads(path.read_text(encoding="utf-8"))
        for text in _strings(data):
            add(text, path)
    for path in static_files(package):
        add(path.read_text(encoding="utf-8"), path)
    for path in code_files(package):
        add((ch for ch in path.read_text(encoding="utf-8") if is_japanese(ch)), path)
    return found


def margin_characters() -> set[str]:
    """The characters of :data:`MARGIN`."""
    return {chr(c) for lo, hi in MARGIN for c in range(lo, hi + 1) if _drawable(chr(c))}


def font_version(font: Path) -> str:
    """The version fonts.css links ``font`` with: the start of its SHA-256."""
    return hashlib.sha256(font.read_bytes()).hexdigest()[:12]


def linked_version(css: str) -> str | None:
    """The version of :data:`FONT_FILE` that the style sheet ``css`` links, if any.

    >>> linked_version('src: url("/static/fonts/NotoSansCJKjp-Regular-subset.woff2?v=ab12")')
    'ab12'
    """
    match = re.search(re.escape(FONT_FILE) + r"\?v=([0-9a-f]+)", css)
    return match.group(1) if match else None


def link_version(css_path: Path, version: str) -> None:
    """Make the style sheet at ``css_path`` link :data:`FONT_FILE` with ``version``."""
    css = css_path.read_text(encoding="utf-8")
    new, count = re.subn(
        re.escape(FONT_FILE) + r"(\?v=[0-9a-f]+)?", f"{FONT_FILE}?v={version}", css
    )
    if count != 1:
        raise SystemExit(f"{css_path} should name {FONT_FILE} once, not {count} times")
    css_path.write_text(new, encoding="utf-8")


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '?')} ({ch})"


def write_subset(source: Path, out: Path, wanted: dict[str, Path]) -> tuple[str, int]:
    """Subset :data:`FACE` of ``source`` to the wanted characters and the margin.

    Returns the source's version string and the number of characters written.

    Raises:
        SystemExit: The source has no face :data:`FACE`, or lacks a wanted character.
    """
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    number = 0
    if source.suffix.lower() in (".ttc", ".otc"):
        names = [f["name"].getDebugName(1) for f in TTCollection(source).fonts]
        if FACE not in names:
            raise SystemExit(f"{source} has no face {FACE!r}; its faces are {names}")
        number = names.index(FACE)
    font = TTFont(source, fontNumber=number, recalcTimestamp=False)
    family = font["name"].getDebugName(1)
    if family != FACE:
        raise SystemExit(f"{source} is {family!r}, not {FACE!r}")
    cmap = font.getBestCmap()
    missing = sorted(ch for ch in wanted if ord(ch) not in cmap)
    if missing:
        lines = [f"  {_describe(ch)} in {wanted[ch].relative_to(ROOT)}" for ch in missing]
        raise SystemExit(
            f"{FACE} has no glyph for {len(missing)} character(s):\n"
            + "\n".join(lines)
            + "\nUse other characters, or (symbols only, never Japanese) add them to "
            "LEFT_TO_SYSTEM_FONTS in scripts/subset-font.py."
        )
    chars = set(wanted) | {ch for ch in margin_characters() if ord(ch) in cmap}

    options = subset.Options()
    options.flavor = "woff2"
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # keep the copyright and the licence
    options.notdef_outline = True
    options.desubroutinize = True
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(ch) for ch in chars))
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)
    return font["name"].getDebugName(5) or "?", len(chars)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help=f"Noto Sans CJK Regular collection or Noto Sans CJK JP OTF (default {DEFAULT_SOURCE})",
    )
    parser.add_argument("--list", action="store_true", help="print the characters, write nothing")
    args = parser.parse_args(argv)

    wanted = wanted_characters()
    if args.list:
        print("".join(sorted(wanted)))
        return 0
    if not args.source.is_file():
        parser.error(
            f"no font at {args.source}: install Debian's fonts-noto-cjk, or extract its "
            "package and pass --source .../NotoSansCJK-Regular.ttc"
        )
    for module in ("fontTools", "brotli"):
        if importlib.util.find_spec(module) is None:
            parser.error(f"{module} is missing: pip install -e '.[dev]' (fonttools, brotli)")
    out = FONT_DIR / FONT_FILE
    version, count = write_subset(args.source, out, wanted)
    link_version(FONTS_CSS, font_version(out))
    size = out.stat().st_size
    print(f"{out.relative_to(ROOT)}: {count} characters, {size // 1024} KiB, from {FACE} {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
