"""The card images the server sends: with and without the code badge, and their size."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from koikoi.game.cards import CODES

SPRITE_MAX_BYTES = 160_000
"""Regression guard on the sprite sheet with badges (the richest art of all 49 symbols)."""


@pytest.mark.parametrize("code", ["1L", "9A", "11P", "12P3"])
def test_card_with_badge_off_has_no_code_text(client: TestClient, code: str) -> None:
    off = client.get(f"/cards/{code}.svg?badge=off")
    assert off.status_code == 200 and off.headers["content-type"].startswith("image/svg+xml")
    assert "<text" not in off.text and 'class="mark' not in off.text
    on = client.get(f"/cards/{code}.svg?badge=on")
    month, kind = re.fullmatch(r"(\d+)([LARP])\d?", code).groups()  # type: ignore[union-attr]
    assert re.findall(r"<text[^>]*>([^<]*)</text>", on.text) == [month, kind]
    # Without the parameter the badge is drawn, as before.
    assert client.get(f"/cards/{code}.svg").text == on.text


def test_sprite_with_and_without_badges(client: TestClient) -> None:
    on = client.get("/cards/sprite.svg?badge=on").text
    off = client.get("/cards/sprite.svg?badge=off").text
    assert on.count("<symbol") == off.count("<symbol") == 49
    assert on.count('class="mark"') == 48 and "<text" not in off
    for code in CODES:
        assert f'id="card-{code}"' in off
    assert len(off.encode()) < len(on.encode()) < SPRITE_MAX_BYTES


@pytest.mark.parametrize("value", ["yes", "", "ON"])
def test_bad_badge_value_is_refused(client: TestClient, value: str) -> None:
    r = client.get(f"/cards/9A.svg?badge={value}")
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "bad_field"
    assert "badge must be one of on, off" in body["message"] and repr(value) in body["message"]
