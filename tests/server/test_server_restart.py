"""A server killed mid-game loses nothing: restart on the same database, reconnect, finish.

Runs ``koikoi serve`` as a child process, on SQLite and (when KOIKOI_TEST_DATABASE_URL
is set) PostgreSQL.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import SeatSocket, SubprocessServer

from koikoi.game.record import load_record, replay

pytest.importorskip("websockets.sync.client")  # SeatSocket's client

pytestmark = pytest.mark.multiprocess


class Client(SeatSocket):
    """One seat over a real WebSocket."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.ws: Any = None
        self.state: dict[str, Any] = {}
        self.log: list[dict[str, Any]] = []

    def connect(self) -> dict[str, Any]:
        return self.hello(self.url, self.token, open_timeout=5)

    def recv_type(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            self.log.append(msg)
            if msg["type"] == "error":
                raise AssertionError(f"server error: {msg}")
            if msg["type"] == "state":
                self.state = msg
            if msg["type"] == kind:
                return msg


def play(
    clients: dict[int, Client], rng: random.Random, acked: list[int], until: int | None
) -> None:
    """Random legal moves, each acknowledged, until ``until`` actions or the end."""
    while True:
        state = next(iter(clients.values())).state
        if state["over"] or (until is not None and state["seq"] >= until):
            return
        cur = state["view"]["current"]
        me = clients[cur]
        action = rng.choice(me.state["view"]["legal"])["id"]
        me.ws.send(json.dumps({"type": "act", "action": action, "seq": me.state["seq"]}))
        ack = me.recv_type("state")
        assert ack["ack"] == len(acked)
        acked.append(action)
        for seat, other in clients.items():
            if seat != cur:
                other.recv_type("state")


def test_kill_restart_and_finish(any_db_url: str, tmp_path: Path) -> None:
    server = SubprocessServer(any_db_url, tmp=tmp_path)
    server.start()
    rng = random.Random(99)
    clients: dict[int, Client] = {}
    try:
        g = httpx.post(
            server.base + "/api/games", json={"mode": "friend", "seed": 4242, "rounds": 3}
        ).json()
        j = httpx.post(server.base + "/api/join", json={"invite": g["invite"]}).json()
        clients = {
            g["seat"]: Client(server.ws_url, g["token"]),
            j["seat"]: Client(server.ws_url, j["token"]),
        }
        for c in clients.values():
            c.connect()
        acked: list[int] = []
        play(clients, rng, acked, until=23)
        views = {seat: c.state["view"] for seat, c in clients.items()}

        # An AI game in progress too: the AI must move again after the restart.
        ai = httpx.post(
            server.base + "/api/games",
            json={"mode": "ai", "agent": "random", "seed": 7, "rounds": 1},
        ).json()
        human = Client(server.ws_url, ai["token"])
        state = human.connect()
        while state["view"]["current"] != ai["seat"]:
            state = human.recv_type("state")
        human.ws.send(
            json.dumps(
                {"type": "act", "action": state["view"]["legal"][0]["id"], "seq": state["seq"]}
            )
        )
        ai_seq = human.recv_type("state")["seq"]

        server.kill()  # SIGKILL: nothing graceful
        for c in [*clients.values(), human]:
            c.close()

        server.start()
        for seat, c in clients.items():
            state = c.connect()
            assert state["full"] and state["seq"] == len(acked), "an acknowledged action was lost"
            assert state["view"] == views[seat]
        play(clients, rng, acked, until=None)
        final = next(iter(clients.values())).state
        assert final["over"]

        state = human.connect()
        assert state["seq"] >= ai_seq
        while not state["over"]:
            v = state["view"]
            if v["current"] == ai["seat"] and v["legal"]:
                human.ws.send(
                    json.dumps({"type": "act", "action": v["legal"][0]["id"], "seq": state["seq"]})
                )
            state = human.recv_type("state")

        r = httpx.post(f"{server.base}/api/games/{g['game']}/record", json={"token": g["watch"]})
        assert r.status_code == 200
        record = load_record(r.text)
        assert [a.action for a in record.actions] and len(record.actions) == len(acked)
        assert record.finished and record.seed == 4242
        again = replay(record)
        assert again.actions == acked
        assert list(again.scores) == final["view"]["match_scores"]

        # Graceful stop (SIGTERM): exits cleanly, says so in its JSON log.
        for c in [*clients.values(), human]:
            c.close()
        # uvicorn shuts down gracefully, then re-raises the signal: status 0 or -SIGTERM.
        assert server.terminate() in (0, -15)
        lines = [
            json.loads(x) for x in server.log_path.read_text().splitlines() if x.startswith("{")
        ]
        assert any(line["msg"] == "server stopped" for line in lines)
        assert any(line["msg"] == "game loaded" for line in lines)
        text = server.log_path.read_text()
        for secret in (g["token"], g["invite"], g["watch"], j["token"], ai["token"]):
            assert secret not in text
    finally:
        for c in clients.values():
            c.close()
        server.stop()
