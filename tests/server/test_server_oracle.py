"""The server never offers the ceiling (:mod:`koikoi.lab.oracle`), a player that sees
every card: not as an opponent, not for hints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from server_helpers import FAST
from starlette.testclient import TestClient

from koikoi.game.errors import InvalidInputError
from koikoi.server.protocol import ProtocolError, parse_new_game

pytestmark = pytest.mark.web

ORACLES = ("oracle", "oracle:iterations=50", "oracle:sees=hand")


@pytest.mark.parametrize("spec", ORACLES)
def test_a_new_game_against_the_oracle_is_refused(spec: str, client: TestClient) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_new_game({"mode": "ai", "agent": spec})
    assert info.value.code == "bad_field" and "is not offered" in info.value.message
    r = client.post("/api/games", json={"mode": "ai", "agent": spec})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "bad_field" and f"agent {spec!r} is not offered" in body["message"]


@pytest.mark.parametrize("spec", ORACLES)
def test_the_server_will_not_give_hints_from_the_oracle(
    spec: str, make_client: Callable[..., TestClient]
) -> None:
    with pytest.raises(InvalidInputError, match="unknown agent 'oracle'"):
        make_client(replace(FAST, hint_agent=spec))
