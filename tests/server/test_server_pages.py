"""The web game's pages: each page file assembled with the parts all pages share.

Every page must come out with the same document head, the same nav (the link to
itself marked ``aria-current="page"``) and the same language switch, and no
include marker left behind.
"""

from __future__ import annotations

import doctest
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from koikoi.server import pages

NAV_LINKS = [
    ("/#", "New game"),
    ("/keeper", "Score keeper"),
    ("/replay", "Replays"),
    ("/stats", "Statistics"),
    ("/lobby", "Lobby"),
]
# The link each page marks as its own; the home page's "New game" starts a game.
CURRENT = {
    "/": None,
    "/keeper": "/keeper",
    "/replay": "/replay",
    "/stats": "/stats",
    "/lobby": "/lobby",
}


@dataclass
class Outline:
    """What a page shows of the shared parts, read with :mod:`html.parser`."""

    doctype: str = ""
    lang: str | None = None
    metas: list[dict[str, str | None]] = field(default_factory=list)
    links: list[dict[str, str | None]] = field(default_factory=list)
    scripts: list[dict[str, str | None]] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    navs: list[dict[str, str | None]] = field(default_factory=list)
    nav_links: list[dict[str, str | None]] = field(default_factory=list)
    nav_texts: list[str] = field(default_factory=list)
    switches: list[dict[str, str | None]] = field(default_factory=list)
    language_buttons: list[tuple[str | None, str]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outline = Outline()
        self._in: list[str] = []  # "head", "title", "nav", "a", "switch", "button"

    def handle_decl(self, decl: str) -> None:
        self.outline.doctype = decl

    def handle_comment(self, data: str) -> None:
        self.outline.comments.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        o = self.outline
        if tag == "html":
            o.lang = a.get("lang")
        elif tag in ("head", "title"):
            self._in.append(tag)
        elif tag in ("meta", "link", "script") and "head" in self._in:
            {"meta": o.metas, "link": o.links, "script": o.scripts}[tag].append(a)
        elif tag == "nav":
            o.navs.append(a)
            self._in.append("nav")
        elif tag == "a" and "nav" in self._in:
            o.nav_links.append(a)
            o.nav_texts.append("")
            self._in.append("a")
        elif tag == "div" and "lang-switch" in (a.get("class") or "").split():
            o.switches.append(a)
            self._in.append("switch")
        elif tag == "button" and "switch" in self._in:
            o.language_buttons.append((a.get("data-lang"), ""))
            self._in.append("button")

    def handle_endtag(self, tag: str) -> None:
        wanted = {"head": "head", "title": "title", "nav": "nav", "a": "a", "div": "switch"}
        name = "button" if tag == "button" else wanted.get(tag)
        if name is not None and self._in and self._in[-1] == name:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        o = self.outline
        if not self._in:
            return
        if self._in[-1] == "title":
            o.titles.append(data.strip())
        elif self._in[-1] == "a":
            o.nav_texts[-1] += data
        elif self._in[-1] == "button":
            lang, text = o.language_buttons[-1]
            o.language_buttons[-1] = (lang, text + data)


def outline(html: str) -> Outline:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.outline


@pytest.mark.parametrize("path", list(pages.PAGES))
def test_every_page_has_the_shared_head(path: str) -> None:
    o = outline(pages.page(path))
    assert o.doctype.lower() == "doctype html"
    assert o.lang == "en"
    assert {"charset": "utf-8"} in o.metas
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in o.metas
    assert {"name": "color-scheme", "content": "dark"} in o.metas
    assert len(o.titles) == 1 and "Koi-Koi" in o.titles[0]
    stylesheets = [link["href"] for link in o.links if link.get("rel") == "stylesheet"]
    # the bundled Japanese face, then the shared sheet; the page's own sheets come after
    assert stylesheets[:2] == ["/static/fonts.css", "/static/style.css"]
    assert {"rel": "icon", "href": "/cards/8L.svg", "type": "image/svg+xml"} in o.links
    sources = [script.get("src") for script in o.scripts]
    assert sources[0] == "/static/common.js"  # deferred, so it runs before the page's own
    assert all("defer" in script for script in o.scripts)
    assert len(sources) == len(set(sources))


@pytest.mark.parametrize("path", list(pages.PAGES))
def test_every_page_has_the_nav_with_its_own_link_current(path: str) -> None:
    o = outline(pages.page(path))
    assert o.navs == [{"aria-label": "Pages", "data-i18n-label": "Pages"}]
    links = [(a["href"], text) for a, text in zip(o.nav_links, o.nav_texts, strict=True)]
    assert links == NAV_LINKS
    assert [a["data-i18n"] for a in o.nav_links] == [text for _, text in NAV_LINKS]
    current = [a["href"] for a in o.nav_links if "aria-current" in a]
    assert current == ([CURRENT[path]] if CURRENT[path] else [])
    assert all(a.get("aria-current") in (None, "page") for a in o.nav_links)
    assert o.nav_links[0].get("id") == "nav-new"  # app.js may reach the link by it


@pytest.mark.parametrize("path", list(pages.PAGES))
def test_every_page_has_the_language_switch(path: str) -> None:
    o = outline(pages.page(path))
    # The game page has a second copy in the phone's More drawer (the header's is
    # hidden there while a game is on).
    copies = 2 if path == "/" else 1
    assert len(o.switches) == copies
    for switch in o.switches:
        assert switch["role"] == "group"
        assert switch["aria-label"] == switch["data-i18n-label"] == "Language"
    assert o.language_buttons == [("en", "English"), ("ja", "日本語")] * copies


@pytest.mark.parametrize("path", list(pages.PAGES))
def test_no_include_marker_is_left(path: str) -> None:
    html = pages.page(path)
    assert not [c for c in outline(html).comments if "include" in c]
    assert "include:" not in html


def test_each_page_keeps_its_own_parts() -> None:
    titles = {path: outline(pages.page(path)).titles[0] for path in pages.PAGES}
    assert len(set(titles.values())) == len(titles)
    assert '<script src="/static/app.js" defer></script>' in pages.page("/")
    assert '<button type="button" id="sound-toggle"' in pages.page("/")
    assert 'class="keeper-page"' in pages.page("/keeper")
    assert '<link rel="stylesheet" href="/static/stats.css">' in pages.page("/lobby")


def test_a_page_is_assembled_once() -> None:
    assert pages.page("/stats") is pages.page("/stats")


def test_a_part_is_indented_like_its_marker() -> None:
    text = "<header>\n    <!-- include: nav -->\n</header>\n"
    parts = {"nav": '<nav>\n  <a href="/a">A</a>\n\n  <a href="/b">B</a>\n</nav>\n'}
    assert pages.assemble(text, parts, current="/a") == (
        "<header>\n"
        "    <nav>\n"
        '      <a href="/a" aria-current="page">A</a>\n'
        "\n"
        '      <a href="/b">B</a>\n'
        "    </nav>\n"
        "</header>\n"
    )


def test_only_the_parts_links_are_marked_current() -> None:
    text = '<!-- include: nav -->\n<a href="/b">B again</a>'
    parts = {"nav": '<a href="/b">B</a> <a href="/bb">BB</a>'}
    assert pages.assemble(text, parts, current="/b") == (
        '<a href="/b" aria-current="page">B</a> <a href="/bb">BB</a>\n<a href="/b">B again</a>'
    )
    assert pages.assemble(text, parts) == text.replace("<!-- include: nav -->", parts["nav"])


def test_an_unknown_part_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"no shared part 'footer' .*parts: head, nav"):
        pages.assemble("<!-- include: footer -->", {"head": "", "nav": ""})


@pytest.mark.parametrize(
    "text",
    ["<p><!-- include: nav --></p>", "<!-- include: Nav -->", "<!--include: nav-->"],
)
def test_a_marker_not_alone_on_its_line_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="not alone on its line, or malformed, at line 2"):
        pages.assemble("<body>\n" + text, {"nav": "<nav></nav>"})


def test_an_unknown_page_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"no page at '/nowhere'; the pages are /, /keeper"):
        pages.page("/nowhere")


def test_the_server_serves_the_assembled_pages(client: TestClient) -> None:
    for path in pages.PAGES:
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache"
        assert r.text == pages.page(path)


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
"""What Chromium sends with a navigation."""


def test_the_not_found_page_has_the_shared_parts_and_a_way_home() -> None:
    o = outline(pages.not_found_page())
    assert o.doctype.lower() == "doctype html" and o.lang == "en"
    assert len(o.titles) == 1 and "Page not found" in o.titles[0]
    links = [(a["href"], text) for a, text in zip(o.nav_links, o.nav_texts, strict=True)]
    assert links == NAV_LINKS
    assert not any("aria-current" in a for a in o.nav_links)
    assert len(o.language_buttons) == 2
    html = pages.not_found_page()
    assert '<a href="/" data-i18n="Go to the home page">' in html
    assert "<!-- include" not in html


@pytest.mark.parametrize("path", ["/nope", "/no/such/page", "/keeper/x", "/static/nothing.html"])
def test_a_browser_gets_an_html_page_at_an_unknown_address(client: TestClient, path: str) -> None:
    r = client.get(path, headers={"accept": BROWSER_ACCEPT})
    assert r.status_code == 404
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.text == pages.not_found_page()
    assert "content-security-policy" in r.headers


@pytest.mark.parametrize(
    ("path", "accept"),
    [
        ("/nope", "application/json"),
        ("/nope", "*/*"),
        ("/nope", None),
        ("/api/nope", BROWSER_ACCEPT),
        ("/api/games/x/nothing", BROWSER_ACCEPT),
    ],
)
def test_api_clients_keep_json_errors_at_an_unknown_address(
    client: TestClient, path: str, accept: str | None
) -> None:
    headers = {"accept": accept} if accept is not None else {}
    r = client.get(path, headers=headers)
    assert r.status_code == 404
    assert r.headers["content-type"] == "application/json"
    assert r.json()["code"] == "not_found"


def test_a_wrong_method_stays_a_json_error_even_for_a_browser(client: TestClient) -> None:
    r = client.get("/api/games", headers={"accept": BROWSER_ACCEPT})
    assert r.status_code == 405 and r.json()["code"] == "method_not_allowed"


def test_doctests() -> None:
    failures, tried = doctest.testmod(pages)
    assert failures == 0 and tried > 0
