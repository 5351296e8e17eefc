"""Issue #29: ratings people can trust, names that reach no store unchecked, and no
player row made by a read.

SQLite, then PostgreSQL when ``KOIKOI_TEST_DATABASE_URL`` is set.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_server_protocol import new_game

from koikoi.server.players import PlayerStore, key_hash


def device_key() -> str:
    return secrets.token_urlsafe(32)


# ------------------------------------------------------------------- names

BAD_NAMES = ["Ao\x00i", "Ao\ni", "Ao\x1bi", "Ao\x7fi", "Ao\x85i"]


def name_requests(client: TestClient, name: str) -> dict[str, Any]:
    """Each endpoint that takes a name, asked with ``name`` (as JSON escapes: a lone
    surrogate travels as ``\\ud800``)."""
    friend = new_game(client, mode="friend")
    bodies: dict[str, dict[str, Any]] = {
        "/api/games": {"mode": "friend"},
        "/api/join": {"invite": friend["invite"]},
        "/api/players/me": {"key": device_key()},
        "/api/players/games": {
            "key": device_key(),
            "game": friend["game"],
            "token": friend["token"],
        },
        "/api/lobby/quick": {"key": device_key(), "rules": "nintendo"},
    }
    headers = {"content-type": "application/json"}
    return {
        path: client.post(path, content=json.dumps({**body, "name": name}), headers=headers)
        for path, body in bodies.items()
    }


@pytest.mark.parametrize("name", BAD_NAMES, ids=lambda n: f"U+{ord(n[2]):04X}")
def test_control_characters_in_a_name_are_a_400_on_every_store(
    any_db_url: str, make_client: Callable[..., TestClient], name: str
) -> None:
    # Regression (#29 bug 4): PostgreSQL answered a NUL with 503 "the database is not
    # answering" and an error log per request; SQLite stored it.
    client = make_client(url=any_db_url)
    for endpoint, r in name_requests(client, name).items():
        assert r.status_code == 400, (endpoint, r.status_code, r.text)
        data = r.json()
        assert data["code"] == "bad_field", endpoint
        assert "name" in data["message"] and "control character" in data["message"], endpoint
        assert f"U+{ord(name[2]):04X}" in data["message"]
    assert client.get("/healthz").status_code == 200


def test_ordinary_names_still_pass(client: TestClient) -> None:
    for endpoint, r in name_requests(client, "Ao i 青い").items():
        assert r.status_code == 200, (endpoint, r.text)


# ------------------------------------------------------------------ players


def test_reading_a_profile_makes_no_player(client: TestClient) -> None:
    # Regression (#29 bug 9): every new key asking /api/players/me made a player row.
    store: PlayerStore = client.app.state.players.store  # type: ignore[attr-defined]
    keys = [device_key() for _ in range(5)]
    for key in keys:
        r = client.post("/api/players/me", json={"key": key})
        assert r.status_code == 200 and r.json() == {"type": "player", "name": "", "games": 0}
    assert all(store.find_player(key_hash(k)) is None for k in keys)
    # Giving a name is a write: the player is made then, once.
    named = client.post("/api/players/me", json={"key": keys[0], "name": "Aoi"})
    assert named.json() == {"type": "player", "name": "Aoi", "games": 0}
    again = client.post("/api/players/me", json={"key": keys[0]})
    assert again.json() == {"type": "player", "name": "Aoi", "games": 0}
    assert store.find_player(key_hash(keys[0])) is not None
