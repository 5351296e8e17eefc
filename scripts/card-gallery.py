#!/usr/bin/env python3
"""Write a gallery of the 48 cards and the back (HTML, optionally PNG).

Usage::

    python scripts/card-gallery.py [OUT_DIR] [--width 120] [--small 60] [--png] [--no-mark]

Writes ``OUT_DIR/cards.html`` (every card inline, one month per row, at the
given width and at the small width: 40 is a card in a phone's hand) and
``OUT_DIR/cards.svg`` (the sprite sheet, with or without the code badges). With
``--png``, takes a screenshot with a headless Chromium (``chromium`` or
``google-chrome`` on the PATH) into ``OUT_DIR/cards.png``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from koikoi.features.svg import card_back_svg, card_svg, sprite_sheet
from koikoi.game.cards import MONTH_NAMES, MONTH_NAMES_JA, Card


def gallery_html(width: int, mark_kind: bool, small_width: int = 60) -> str:
    rows = []
    for month in range(1, 13):
        cards = [c for c in Card if c.month == month]
        big = "".join(card_svg(c, width=width, mark_kind=mark_kind) for c in cards)
        small = "".join(card_svg(c, width=small_width, mark_kind=mark_kind) for c in cards)
        label = f"{month} {MONTH_NAMES[month - 1]}<br>{MONTH_NAMES_JA[month - 1]}"
        rows.append(
            f'<div class="row"><div class="label">{label}</div>{big}'
            f'<span class="gap"></span>{small}</div>'
        )
    back = card_back_svg(width=width) + card_back_svg(width=small_width)
    return (
        "<!doctype html><meta charset=utf-8><title>koikoi cards</title>"
        "<style>body{background:#2e5e3a;margin:8px;font:12px sans-serif;color:#fff}"
        ".row{display:flex;align-items:flex-end;gap:6px;margin-bottom:6px}"
        ".label{width:84px}.gap{width:24px}</style>"
        + "".join(rows)
        + f'<div class="row"><div class="label">back</div>{back}</div>'
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="card-gallery", type=Path)
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--small", type=int, default=60, help="width of the small copies")
    parser.add_argument("--png", action="store_true", help="screenshot with headless Chromium")
    parser.add_argument("--no-mark", action="store_true", help="leave out the corner marks")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    html = out / "cards.html"
    html.write_text(gallery_html(args.width, not args.no_mark, args.small), encoding="utf-8")
    (out / "cards.svg").write_text(sprite_sheet(mark_kind=not args.no_mark), encoding="utf-8")
    print(html)
    if args.png:
        browser = shutil.which("chromium") or shutil.which("google-chrome")
        if browser is None:
            print("no chromium on the PATH; open the HTML file instead", file=sys.stderr)
            return 1
        png = out / "cards.png"
        height = 13 * (round(args.width * 1.6) + 6) + 20
        width = 84 + 4 * (args.width + 6) + 24 + 4 * (args.small + 6) + 30
        subprocess.run(
            [
                browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
                html.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
