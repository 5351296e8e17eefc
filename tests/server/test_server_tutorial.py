"""The web game's tutorial mode ("Learn to play") over HTTP and WebSocket: the fixed
guided round, its coaching in the state messages, and nothing hidden in it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from server_helpers import FAST, WS, check_no_leak, room_of
from starlette.testclient import TestClient

from koikoi.features.tutorial import (
    TUTORIAL_OPPONENT,
    TUTORIAL_SEAT,
    TUTORIAL_SEED,
    suggestion,
    tutorial_rules,
)


def test_the_tutorial_is_the_guided_round_with_its_coaching(client: TestClient) -> None:
    r = client.post("/api/games", json={"mode": "tutorial", "name": "Aiko"})
    assert r.status_code == 200, r.text
    g = r.json()
    assert (g["mode"], g["seat"], g["rules"]) == ("tutorial", TUTORIAL_SEAT, "nintendo")
    room = room_of(client, g["game"])
    assert room.seed == TUTORIAL_SEED and room.rules == tutorial_rules()
    with client.websocket_connect("/ws") as session:
        me = WS(session, "newcomer")
        welcome, state = me.hello(g["token"])
        assert welcome["mode"] == "tutorial"
        assert welcome["players"][1 - TUTORIAL_SEAT]["agent"] == TUTORIAL_OPPONENT
        keys = [tip["key"] for tip in state["tutorial"]["tips"]]
        assert keys == ["welcome", "months", "goal", "play_match"]
        assert state["tutorial"]["tips"][-1]["wait"] is False  # the prompt: play now
        shown: list[str] = []
        while not state["over"]:
            tips = state["tutorial"]["tips"]
            for tip in tips:
                if tip["wait"] and tip["key"] not in shown:
                    shown.append(tip["key"])
            view = state["view"]
            if view["current"] == TUTORIAL_SEAT and view["legal"]:
                action = suggestion(room.view(TUTORIAL_SEAT))
                assert tips[-1]["wait"] is False  # every move of the newcomer is prompted
                me.send({"type": "act", "action": action, "seq": state["seq"]})
            state = me.recv_type("state")
        shown += [t["key"] for t in state["tutorial"]["tips"] if t["key"] not in shown]
    assert shown == [
        "welcome",
        "months",
        "goal",
        "pile",
        "kind_bright",
        "kind_ribbon",
        "draw",
        "opponent_turn",
        "kind_plain",
        "kind_animal",
        "draw_match",
        "yaku",
        "settlement",
        "finish",
    ]
    assert room.match.scores[TUTORIAL_SEAT] == 5  # the red poetry ribbons, stopped at once
    check_no_leak(room.rules, TUTORIAL_SEED, list(room.match.actions), TUTORIAL_SEAT, me.log)


@pytest.mark.parametrize(
    ("extra", "word"),
    [({"rules": "leaflet"}, "'rules'"), ({"seed": 3}, "'seed'"), ({"agent": "expert"}, "'agent'")],
)
def test_a_tutorial_takes_only_a_name(client: TestClient, extra: dict[str, Any], word: str) -> None:
    before = len(client.app.state.hub.rooms)
    r = client.post("/api/games", json={"mode": "tutorial", **extra})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "unexpected_field"
    assert word in body["message"] and "tutorial" in body["message"]
    assert len(client.app.state.hub.rooms) == before


def test_only_the_tutorials_player_is_coached(client: TestClient) -> None:
    g = client.post("/api/games", json={"mode": "tutorial"}).json()
    with client.websocket_connect("/ws") as session:
        _, state = WS(session, "spectator").hello(g["watch"])
        assert "tutorial" not in state
    other = client.post("/api/games", json={"mode": "friend"}).json()
    with client.websocket_connect("/ws") as session:
        _, state = WS(session, "player").hello(other["token"])
        assert "tutorial" not in state


def test_starting_over_is_never_refused_by_the_cap_on_ai_games(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(replace(FAST, max_ai_games_per_address=2))
    for _ in range(4):
        r = client.post("/api/games", json={"mode": "tutorial"})
        assert r.status_code == 200, r.text
    for _ in range(2):
        assert client.post("/api/games", json={"mode": "ai", "agent": "random"}).status_code == 200
    r = client.post("/api/games", json={"mode": "ai", "agent": "random"})
    assert r.status_code == 429 and r.json()["code"] == "rate_limited"
