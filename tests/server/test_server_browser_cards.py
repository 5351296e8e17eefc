"""Code badges on the cards in real headless Chromium: a setting, off by default.

The page reads ``koikoi.badges`` ("on"/"off") from localStorage into
``document.documentElement.dataset.badges`` and asks the server for each card's image
with or without its badge; the tutorial shows them whatever the setting, without
changing it.

Skipped when /usr/bin/chromium (Debian's package) or Playwright is missing.
"""

from __future__ import annotations

from typing import Any

from browser_helpers import SHOTS, Page, start_ai_game
from server_helpers import ThreadServer

DESKTOP = {"viewport": {"width": 1280, "height": 800}}


def shown_badges(page: Any) -> dict[str, Any]:
    """The page's setting and, for every card image, whether what it shows has a badge
    (the image's own SVG text, fetched from its address, has the code's text)."""
    result: dict[str, Any] = page.evaluate(
        """async () => {
          const imgs = [...document.querySelectorAll('.card[data-code] img')];
          const out = [];
          for (const img of imgs) {
            await img.decode().catch(() => null);
            const text = await (await fetch(img.src)).text();
            out.push({code: img.closest('.card').dataset.code, src: img.getAttribute('src'),
                      loaded: img.naturalWidth > 0, badge: text.includes('class="mark"')});
          }
          return {setting: document.documentElement.dataset.badges,
                  stored: localStorage.getItem('koikoi.badges'), cards: out};
        }"""
    )
    return result


def start_game(browser: Any, server: ThreadServer, stored: str | None) -> Page:
    p = Page(browser, folder=SHOTS, prefix="badges-", full_page=False, **DESKTOP)
    if stored is not None:
        p.page.add_init_script(f"localStorage.setItem('koikoi.badges', {stored!r})")
    start_ai_game(p, server, seed=7)
    p.page.wait_for_selector("#bottom-hand .card img")
    return p


def test_badges_are_off_by_default(server: ThreadServer, browser: Any) -> None:
    p = start_game(browser, server, None)
    seen = shown_badges(p.page)
    assert seen["setting"] == "off" and seen["stored"] is None
    assert len(seen["cards"]) >= 8
    assert all(c["loaded"] and not c["badge"] for c in seen["cards"]), seen["cards"]
    p.shot("off")
    # The settings dialog writes the key and the page follows: the images are swapped.
    p.page.evaluate("localStorage.setItem('koikoi.badges', 'on'); KK.applyBadges()")
    p.page.wait_for_function(
        "[...document.querySelectorAll('.card[data-code] img')]"
        ".every((i) => i.getAttribute('src').endsWith('?badge=on'))"
    )
    seen = shown_badges(p.page)
    assert seen["setting"] == "on"
    assert all(c["loaded"] and c["badge"] for c in seen["cards"]), seen["cards"]
    p.close()


def test_badges_on_when_stored_on(server: ThreadServer, browser: Any) -> None:
    p = start_game(browser, server, "on")
    seen = shown_badges(p.page)
    assert seen["setting"] == "on"
    assert seen["cards"] and all(c["loaded"] and c["badge"] for c in seen["cards"])
    p.shot("on")
    p.close()


def test_an_unknown_stored_value_means_off(server: ThreadServer, browser: Any) -> None:
    p = start_game(browser, server, "sometimes")
    seen = shown_badges(p.page)
    assert seen["setting"] == "off" and not any(c["badge"] for c in seen["cards"])
    p.close()


def test_the_tutorial_shows_badges_without_changing_the_setting(
    server: ThreadServer, browser: Any
) -> None:
    p = Page(browser, folder=SHOTS, prefix="badges-", full_page=False, **DESKTOP)
    page = p.page
    page.add_init_script("localStorage.setItem('koikoi.badges', 'off')")
    page.goto(server.base + "/")
    page.click("#learn-btn")
    page.wait_for_selector("#coach")
    page.wait_for_selector("#bottom-hand .card img")
    seen = shown_badges(page)
    assert seen["setting"] == "on" and seen["stored"] == "off"
    assert seen["cards"] and all(c["loaded"] and c["badge"] for c in seen["cards"])
    p.shot("tutorial")
    # Leaving the tutorial gives the player's own setting back.
    page.click("#coach .coach-leave")
    page.wait_for_selector("#home:not([hidden])")
    assert page.evaluate("document.documentElement.dataset.badges") == "off"
    p.close()
