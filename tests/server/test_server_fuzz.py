"""Fuzz: malformed, out-of-turn, stale and illegal messages change no game."""

from __future__ import annotations

import json
import random
from typing import Any

from server_helpers import WS, room_of
from starlette.testclient import TestClient

from koikoi.game.actions import NUM_ACTIONS
from koikoi.game.views import view_of

ERROR_CODES_SEEN: set[str] = set()


def snapshot(client: TestClient, game: str) -> tuple[Any, ...]:
    room = room_of(client, game)
    m = room.match
    return (
        room.seq,
        list(m.actions),
        len(m.events),
        view_of(m, 0, with_history=False).to_dict(),
        view_of(m, 1, with_history=False).to_dict(),
        list(m.scores),
        client.app.state.hub.storage.count_actions([game]),
    )


def bad_messages(
    rng: random.Random, state: dict[str, Any], legal: list[int]
) -> list[tuple[Any, str]]:
    """(frame, expected error code) for the seat whose turn it is."""
    seq = state["seq"]
    not_legal = [a for a in rng.sample(range(NUM_ACTIONS), 40) if a not in legal][:3]
    some_legal = rng.choice(legal)
    frames: list[tuple[Any, str]] = [
        ("{not json", "bad_json"),
        ('{"type": "ping", "ref": "\\udfff"}', "bad_json"),
        ('{"type": "ping", "type": "hint"}', "bad_json"),
        ("null", "bad_json"),
        (json.dumps([{"type": "act"}]), "bad_json"),
        (json.dumps({"type": "Act", "action": some_legal, "seq": seq}), "unknown_type"),
        (json.dumps({"action": some_legal, "seq": seq}), "unknown_type"),
        (json.dumps({"type": "act", "action": some_legal}), "missing_field"),
        (json.dumps({"type": "act", "seq": seq}), "missing_field"),
        (json.dumps({"type": "act", "action": str(some_legal), "seq": seq}), "bad_field"),
        (json.dumps({"type": "act", "action": some_legal, "seq": str(seq)}), "bad_field"),
        (json.dumps({"type": "act", "action": some_legal + 0.5, "seq": seq}), "bad_field"),
        (
            json.dumps({"type": "act", "action": NUM_ACTIONS + rng.randrange(9), "seq": seq}),
            "bad_field",
        ),
        (json.dumps({"type": "act", "action": -1 - rng.randrange(9), "seq": seq}), "bad_field"),
        (
            json.dumps({"type": "act", "action": some_legal, "seq": seq, "cheat": True}),
            "unexpected_field",
        ),
        (json.dumps({"type": "act", "action": 2**70, "seq": seq}), "bad_field"),
        ('{"type": "act", "action": ' + "[" * 3000 + "]" * 3000 + ', "seq": 0}', "too_large"),
        (json.dumps({"type": "ping", "pad": "x" * 3000}), "too_large"),
        (json.dumps({"type": "act", "action": some_legal, "seq": seq + 1}), "stale"),
        (json.dumps({"type": "hello", "token": "Z" * 43}), "already_authenticated"),
    ]
    if seq > 0:
        frames.append((json.dumps({"type": "act", "action": some_legal, "seq": seq - 1}), "stale"))
    for a in not_legal:
        frames.append((json.dumps({"type": "act", "action": a, "seq": seq}), "illegal_action"))
    rng.shuffle(frames)
    return frames


def test_fuzz_changes_no_game(client: TestClient) -> None:
    rng = random.Random(2024)
    checked = 0
    for game_no, rules in enumerate(["nintendo", "wikipedia", "modern-hanafuda", "koikoi-japan"]):
        g = client.post(
            "/api/games",
            json={"mode": "friend", "rules": rules, "rounds": 1, "seed": 100 + game_no},
        ).json()
        j = client.post("/api/join", json={"invite": g["invite"]}).json()
        contexts = []
        socks: dict[int | None, WS] = {}
        for seat, token in ((g["seat"], g["token"]), (j["seat"], j["token"]), (None, g["watch"])):
            ctx = client.websocket_connect("/ws")
            ws = WS(ctx.__enter__(), f"seat {seat}")
            ws.hello(token)
            contexts.append(ctx)
            socks[seat] = ws
        game = g["game"]
        room = room_of(client, game)
        while not room.is_over:
            cur = room.match.current
            legal = room.match.legal_ids()
            state = {"seq": room.seq}
            before = snapshot(client, game)
            # The player to act sends garbage; the other player and the spectator act out of turn.
            for frame, code in bad_messages(rng, state, legal):
                socks[cur].send(frame)
                err = socks[cur].recv_type("error")
                assert err["code"] == code, (frame[:80], err)
                ERROR_CODES_SEEN.add(code)
                checked += 1
            for seat, code in ((1 - cur, "not_your_turn"), (None, "spectator")):
                socks[seat].send({"type": "act", "action": rng.choice(legal), "seq": room.seq})
                err = socks[seat].recv_type("error")
                assert err["code"] == code
                checked += 1
            socks[1 - cur].send({"type": "hint"})
            assert socks[1 - cur].recv_type("error")["code"] == "hint_unavailable"
            assert snapshot(client, game) == before, "a refused message changed the game"
            # Then a legal move, which every connection sees once.
            action = rng.choice(legal)
            socks[cur].send({"type": "act", "action": action, "seq": room.seq})
            acked = socks[cur].recv_type("state")
            assert acked["ack"] == before[0]
            for other in (1 - cur, None):
                assert socks[other].recv_type("state")["seq"] == before[0] + 1
        for ctx in contexts:
            ctx.__exit__(None, None, None)
    assert checked > 500
    assert {
        "bad_json",
        "unknown_type",
        "missing_field",
        "bad_field",
        "too_large",
        "stale",
        "illegal_action",
        "unexpected_field",
        "already_authenticated",
    } <= ERROR_CODES_SEEN
