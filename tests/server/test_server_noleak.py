"""No hidden card ever reaches a client.

Every message sent to each seat (and to a spectator) over many random games is
recorded; then each game is replayed and every card code in each message is
compared with the cards hidden from that seat at the moment the message was
built (the opponent's hand and the stock of the deal it belongs to, as the
engine holds them).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from server_helpers import WS, LeakReport, check_no_leak, room_of
from starlette.testclient import TestClient

from koikoi.game.rules import PRESET_NAMES

HOUSE = {
    "wild": 'extends = "compendium"\n[play]\nwild_lightning = true\n[points]\ntsukifuda = 4\n',
    "discard": 'extends = "wikipedia"\n[koikoi]\nlimit = 2\n',
    "instants": 'extends = "nintendo"\n[deal]\nfield_redeal = ["three_of_a_month"]\n'
    "[instant]\nteshi_collected = true\n",
}


def play_friend_game(
    client: TestClient, rng: random.Random, seed: int, body: dict[str, Any]
) -> tuple[Any, dict[int | None, WS]]:
    g = client.post("/api/games", json={"mode": "friend", "seed": seed, **body}).json()
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    socks: dict[int | None, WS] = {}
    contexts = []
    for seat, token in ((0, g["token"]), (1, j["token"]), (None, g["watch"])):
        ctx = client.websocket_connect("/ws")
        socks[seat] = WS(ctx.__enter__(), f"seat {seat}")
        socks[seat].hello(token)
        contexts.append(ctx)
    room = room_of(client, g["game"])
    last = {seat: ws.log[-1] for seat, ws in socks.items()}
    while not room.is_over:
        cur = room.match.current
        mine = last[cur]
        assert mine["view"]["current"] == cur and mine["view"]["legal"]
        if rng.random() < 0.15:
            socks[cur].send({"type": "hint"})
            socks[cur].recv_type("hint")
        action = rng.choice(mine["view"]["legal"])["id"]
        socks[cur].send({"type": "act", "action": action, "seq": mine["seq"]})
        for seat, ws in socks.items():
            last[seat] = ws.recv_type("state")
    for ctx in contexts:
        ctx.__exit__(None, None, None)
    return room, socks


@pytest.mark.parametrize("variant", [*PRESET_NAMES, *HOUSE])
def test_friend_games_leak_nothing(client: TestClient, variant: str) -> None:
    rng = random.Random(variant)
    report = LeakReport()
    body: dict[str, Any] = {"rounds": 3}
    if variant in HOUSE:
        body["house_rules"] = HOUSE[variant]
    else:
        body["rules"] = variant
    for _ in range(4):
        seed = rng.randrange(2**40)
        room, socks = play_friend_game(client, rng, seed, body)
        for seat, ws in socks.items():
            assert all(m["type"] != "error" for m in ws.log)
            check_no_leak(room.rules, seed, list(room.match.actions), seat, ws.log, report)
    assert report.states > 100 and report.cards_checked > 1000
    assert {"welcome", "state", "presence", "event:play", "event:round_over"} <= report.kinds
    if variant == "instants":
        assert "event:redeal" in report.kinds
    if variant == "discard":
        assert "event:take" in report.kinds


def test_ai_games_leak_nothing(client: TestClient) -> None:
    rng = random.Random(7)
    report = LeakReport()
    for i, agent in enumerate(["random", "greedy", "heuristic", "random", "greedy", "random"]):
        seed = 1000 + i
        g = client.post(
            "/api/games",
            json={"mode": "ai", "agent": agent, "seed": seed, "rounds": 3, "seat": i % 2},
        ).json()
        me = g["seat"]
        spec_ctx = client.websocket_connect("/ws")
        spectator = WS(spec_ctx.__enter__(), "spectator")
        spectator.hello(g["watch"])
        ctx = client.websocket_connect("/ws")
        human = WS(ctx.__enter__(), "human")
        _, state = human.hello(g["token"])
        while not state["over"]:
            v = state["view"]
            if v["current"] == me and v["legal"]:
                if rng.random() < 0.2:
                    human.send({"type": "hint"})
                    human.recv_type("hint")
                action = rng.choice(v["legal"])["id"]
                human.send({"type": "act", "action": action, "seq": state["seq"]})
            state = human.recv_type("state")
        room = room_of(client, g["game"])
        while spectator.log[-1].get("seq") != room.seq or spectator.log[-1]["type"] != "state":
            spectator.recv()
        ctx.__exit__(None, None, None)
        spec_ctx.__exit__(None, None, None)
        check_no_leak(room.rules, seed, list(room.match.actions), me, human.log, report)
        check_no_leak(room.rules, seed, list(room.match.actions), None, spectator.log, report)
    assert report.cards_checked > 1000 and "hint" in report.kinds


def test_the_checker_catches_a_leak(client: TestClient) -> None:
    """The checker itself: an opponent's card slipped into a view is found."""
    g = client.post("/api/games", json={"mode": "friend", "seed": 3}).json()
    room = room_of(client, g["game"])
    state = room.state(0, 0)
    opponent_card = room.view(1).to_dict()["hand"][0]
    state["view"]["field"].append(opponent_card)
    with pytest.raises(AssertionError, match="hidden cards"):
        check_no_leak(room.rules, 3, [], 0, [state])
    stock_card = room.match.round.stock[0]
    from koikoi.game.cards import CODES

    state = room.state(None, 0)
    state["events"][-1]["cards"] = [CODES[stock_card]]
    with pytest.raises(AssertionError, match="hidden cards"):
        check_no_leak(room.rules, 3, [], None, [state])
