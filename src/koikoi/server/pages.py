"""The web game's pages: each page file plus the parts that every page shares.

A page file in ``static/`` holds only what is its own (title, its stylesheets
and scripts, body, skip link, heading, main content) and marks where a shared
part goes with a line of its own, ``<!-- include: NAME -->``. The part is the
file ``static/_NAME.html``: ``head`` (the doctype, the meta tags, ``style.css``,
the icon, ``common.js``), ``nav`` (the links to the five pages) and
``languages`` (the language switch). Each line of a part is indented like the
marker it replaces. In the nav, the link to the page being served gets
``aria-current="page"``; the home page has none (its "New game" link, ``/#``,
starts a game rather than naming the page).

An unknown address gets :func:`not_found_page` (``static/404.html``) when a browser
asks for it; API clients get JSON (``server/app.py``).

:func:`page` builds a page once and keeps it; :func:`assemble` is the pure
step underneath.

Example:
    >>> parts = {"nav": '<nav>\\n  <a href="/">Home</a>\\n  <a href="/b">B</a>\\n</nav>'}
    >>> print(assemble("<body>\\n  <!-- include: nav -->\\n</body>", parts, current="/b"))
    <body>
      <nav>
        <a href="/">Home</a>
        <a href="/b" aria-current="page">B</a>
      </nav>
    </body>
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["NOT_FOUND", "PAGES", "STATIC_DIR", "assemble", "not_found_page", "page"]

STATIC_DIR: Final = Path(__file__).parent / "static"

PAGES: Final[Mapping[str, str]] = {
    "/": "index.html",
    "/keeper": "keeper.html",
    "/replay": "replay.html",
    "/stats": "stats.html",
    "/lobby": "lobby.html",
}
"""The page files by the path they are served at."""
NOT_FOUND: Final = "404.html"
"""The page file of an unknown address (:func:`not_found_page`)."""

_MARKER: Final = re.compile(r"^([ \t]*)<!-- include: ([a-z][a-z-]*) -->[ \t]*$", re.M)
_ANY_MARKER: Final = re.compile(r"<!--\s*include\b")


def assemble(text: str, parts: Mapping[str, str], *, current: str | None = None) -> str:
    """Puts the shared parts into a page at its include markers.

    Args:
        text: The page file's text.
        parts: The shared parts by name (``"nav"`` for ``<!-- include: nav -->``).
        current: The path of the page; a link of a part with exactly this
            ``href`` gets ``aria-current="page"``. None, or a path no link
            has, marks none (links of the page's own text are left as they are).

    Returns:
        The page with every marker replaced by its part, each line of the part
        indented like the marker.

    Raises:
        ValueError: A marker names no part, or an include marker is not alone
            on its line.

    Example:
        >>> assemble("<p>\\n<!-- include: x -->\\n</p>", {"x": "<b>x</b>"})
        '<p>\\n<b>x</b>\\n</p>'
    """

    def include(match: re.Match[str]) -> str:
        indent, name = match.groups()
        if name not in parts:
            known = ", ".join(sorted(parts)) or "none"
            marker = match.group(0).strip()
            raise ValueError(f"no shared part {name!r} for {marker} (parts: {known})")
        part = parts[name]
        if current is not None:
            part = part.replace(f'<a href="{current}"', f'<a href="{current}" aria-current="page"')
        lines = part.rstrip("\n").split("\n")
        return "\n".join(indent + line if line else line for line in lines)

    result = _MARKER.sub(include, text)
    left = _ANY_MARKER.search(result)
    if left is not None:
        line = result.count("\n", 0, left.start()) + 1
        raise ValueError(f"include marker not alone on its line, or malformed, at line {line}")
    return result


@functools.cache
def _parts(directory: Path) -> dict[str, str]:
    return {
        path.stem.removeprefix("_"): path.read_text("utf-8")
        for path in sorted(directory.glob("_*.html"))
    }


@functools.cache
def page(path: str) -> str:
    """The HTML of the page served at ``path``, assembled once and kept.

    Args:
        path: One of the keys of :data:`PAGES` (``"/"``, ``"/keeper"``, ...).

    Returns:
        The page file of ``path`` with the shared parts in it.

    Raises:
        ValueError: No page is served at ``path``, or its file has a bad marker.

    Example:
        >>> '<a href="/stats" aria-current="page"' in page("/stats")
        True
    """
    name = PAGES.get(path)
    if name is None:
        raise ValueError(f"no page at {path!r}; the pages are {', '.join(PAGES)}")
    return _build(name, path)


@functools.cache
def not_found_page() -> str:
    """The HTML of the page a browser gets at an unknown address, assembled once.

    Returns:
        ``static/404.html`` with the shared parts in it (no nav link is current).

    Example:
        >>> '<a href="/"' in not_found_page() and "Page not found" in not_found_page()
        True
    """
    return _build(NOT_FOUND, None)


def _build(name: str, current: str | None) -> str:
    text = (STATIC_DIR / name).read_text("utf-8")
    try:
        return assemble(text, _parts(STATIC_DIR), current=current)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
