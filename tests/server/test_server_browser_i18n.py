"""The web game in Japanese, in real headless Chromium: the header's language switch,
the remembered choice, the browser's language as the default, and Japanese names of
cards, yaku, levels and rule sets.

Skipped when /usr/bin/chromium or Playwright is missing; no browser is ever downloaded.
"""

from __future__ import annotations

from typing import Any

from browser_helpers import AI_LEVEL, Page
from server_helpers import ThreadServer

from koikoi import i18n
from koikoi.game.rules import get_rules


def _ja(message: str, **params: object) -> str:
    return i18n.translate(message, "ja", **params)


def _switch(page: Any, lang: str) -> None:
    with page.expect_navigation():
        page.click(f".lang-switch button[data-lang='{lang}']")
    page.wait_for_selector("#agent option", state="attached")


def test_switch_to_japanese_play_reload_and_switch_back(server: ThreadServer, browser: Any) -> None:
    p = Page(
        browser, viewport={"width": 1280, "height": 900}, reduced_motion="reduce", locale="en-US"
    )
    page = p.page
    page.goto(f"{server.base}/#seed=5")
    page.wait_for_selector("#agent option", state="attached")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.locator("#new-title").inner_text() == "New game"
    assert page.get_attribute(".lang-switch button[data-lang='en']", "aria-pressed") == "true"

    _switch(page, "ja")
    assert page.evaluate("document.documentElement.lang") == "ja"
    assert page.evaluate("localStorage.getItem('koikoi.lang')") == "ja"
    assert page.get_attribute(".lang-switch button[data-lang='ja']", "aria-pressed") == "true"
    # the new-game screen: static text, the level list and the rule set's description
    assert page.locator("#new-title").inner_text() == "新しいゲーム"
    assert page.locator("label[for='agent']").inner_text() == "AIの強さ"
    assert page.locator("#start").inner_text() == "開始"
    assert "達人" in page.locator("#agent").inner_text()
    page.select_option("#rules", "nintendo")
    assert page.locator("#rules-desc").inner_text() == _ja(get_rules("nintendo").description)
    assert page.locator("#rules-desc").inner_text().startswith("任天堂")

    # a game in Japanese: status, stock, card names, log, the rules dialog's yaku
    page.select_option("#agent", AI_LEVEL)
    page.fill("#rounds", "1")
    page.click("#start")
    page.wait_for_selector("#bottom-hand .card")
    assert page.locator("#stock-count").inner_text().startswith("山札：")
    assert page.locator("#hint-btn").inner_text() == "ヒント (H)"
    log = page.locator("#log").inner_text()
    assert "第1回" in log, log
    labels = page.eval_on_selector_all(
        "#bottom-hand .card", "nodes => nodes.map(n => n.getAttribute('aria-label'))"
    )
    assert labels and all(" · " in label and "Pine" not in label for label in labels), labels
    page.click("#rules-btn")
    page.wait_for_selector("#rules-dialog[open] #yaku-table")
    assert page.locator("#yaku-table caption").inner_text() == "ルール「nintendo」の役"
    names = page.eval_on_selector_all(
        "#yaku-table tr[data-yaku] th", "ns => ns.map(n => n.textContent)"
    )
    assert "五光" in names and "猪鹿蝶" in names and "Five Brights" not in names, names
    page.keyboard.press("Escape")
    p.shot("30-japanese-table")

    # reload: still Japanese
    page.reload()
    page.wait_for_selector("#bottom-hand .card")
    assert page.locator("#hint-btn").inner_text() == "ヒント (H)"
    assert page.evaluate("document.documentElement.lang") == "ja"

    # and back to English, remembered too
    with page.expect_navigation():
        page.click(".lang-switch button[data-lang='en']")
    page.wait_for_selector("#bottom-hand .card")
    assert page.locator("#hint-btn").inner_text() == "Hint (H)"
    assert page.locator("#stock-count").inner_text().startswith("Stock: ")
    assert page.evaluate("localStorage.getItem('koikoi.lang')") == "en"
    p.close()


def test_a_japanese_browser_gets_japanese_until_it_chooses(
    server: ThreadServer, browser: Any
) -> None:
    p = Page(browser, viewport={"width": 1000, "height": 800}, locale="ja-JP")
    page = p.page
    page.goto(f"{server.base}/keeper")
    page.wait_for_selector("#k-months .card")
    assert page.evaluate("document.documentElement.lang") == "ja"
    assert page.locator("#result-title").inner_text() == "この局"  # "This round"
    crane = page.get_attribute("#k-months .card[data-code='1L']", "aria-label")
    assert crane == "松に鶴 · 光 (1L)"
    page.goto(f"{server.base}/replay")
    page.wait_for_selector(".lang-switch button[aria-pressed='true'][data-lang='ja']")
    assert page.locator("#pick h2").inner_text() == "再生を開く"
    assert page.locator("nav a[href='/keeper']").inner_text() == "点数計算"
    page.goto(f"{server.base}/keeper")
    page.wait_for_selector("#k-months .card")
    with page.expect_navigation():
        page.click(".lang-switch button[data-lang='en']")
    page.wait_for_selector("#k-months .card")
    assert page.locator("#result-title").inner_text() == "This round"
    assert page.evaluate("document.documentElement.lang") == "en"
    p.close()
