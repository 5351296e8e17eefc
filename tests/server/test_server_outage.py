"""After a database outage (issue #29, bug 9): a hello that failed is answered when the
database answers again (not closed as "no hello"), every client is brought back to the
current state without reconnecting, and the AI-game cap counts only games in play."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from server_helpers import FAST, WS
from sqlalchemy import create_engine
from starlette.testclient import TestClient

from koikoi.server.connections import Submission
from koikoi.server.protocol import ProtocolError

pytestmark = pytest.mark.web


def ai_game(client: TestClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"mode": "ai", "agent": "random", **body})
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def break_database(hub: Any, tmp_path: Path) -> Any:
    """Point the hub's storage at a SQLite file that cannot be opened; returns the
    working engine (put it back to end the outage)."""
    working = hub.storage.engine
    hub.storage.engine = create_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'gone.db'}")
    return working


def test_abandoned_ai_games_stop_counting_against_the_cap(make_client: Any) -> None:
    client = make_client(replace(FAST, max_ai_games_per_address=2))
    hub = client.app.state.hub
    games = [ai_game(client) for _ in range(2)]
    refused = client.post("/api/games", json={"mode": "ai", "agent": "random"})
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    with client.websocket_connect("/ws") as session:
        WS(session).hello(games[0]["token"])  # a player at this table
        for g in games:  # ...and no action in either game for a long time
            hub.rooms[g["game"]].last_active -= 10 * hub.config.abandoned_after
        assert hub.ai_games_counted("testclient") == 1  # the abandoned one is not counted
        ai_game(client)  # refused before: abandoned games counted
        again = client.post("/api/games", json={"mode": "ai", "agent": "random"})
        assert again.status_code == 429  # the table in play and the new game count
    assert games[1]["game"] in hub.rooms  # abandoned, not forgotten: it can be resumed


def test_a_hello_that_failed_on_the_database_is_answered_when_it_is_back(
    make_client: Any, tmp_path: Path
) -> None:
    client = make_client(replace(FAST, hello_timeout=0.3, outage_poll=0.05))
    hub = client.app.state.hub
    game = ai_game(client)
    assert hub.evict_idle(now=10**12) == 1  # out of memory: a hello needs the database
    working = break_database(hub, tmp_path)
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        ws.send({"type": "hello", "token": game["token"], "ref": 1})
        error = ws.recv()
        assert (error["code"], error["ref"]) == ("server_error", 1)
        ws.expect_nothing(wait=0.6)  # twice the hello timeout: still open, waiting
        hub.storage.engine.dispose()
        hub.storage.engine = working  # the database answers again
        welcome = ws.recv_type("welcome", timeout=10)
        state = ws.recv_type("state")
        assert welcome["game"] == game["game"] and state["full"]
        ws.send({"type": "ping"})
        assert ws.recv_type("pong")["type"] == "pong"
    counters = hub.metrics.counters
    assert counters["closed_hello_timeout"] == 0 and counters["hellos"] == 1
    assert counters["database_outages"] == 1 and counters["database_recoveries"] == 1


def test_a_hello_that_waits_too_long_for_the_database_is_closed_as_such(
    make_client: Any, tmp_path: Path
) -> None:
    config = replace(FAST, hello_timeout=0.1, outage_poll=0.05, outage_hello_wait=0.3)
    client = make_client(config)
    hub = client.app.state.hub
    game = ai_game(client)
    hub.evict_idle(now=10**12)
    working = break_database(hub, tmp_path)
    try:
        with client.websocket_connect("/ws") as session:
            ws = WS(session)
            ws.send({"type": "hello", "token": game["token"]})
            assert ws.recv()["code"] == "server_error"
            with pytest.raises(ConnectionError, match="closed with code 1013"):
                ws.recv(timeout=10)
    finally:
        hub.storage.engine.dispose()
        hub.storage.engine = working
    counters = hub.metrics.counters
    assert counters["closed_hello_failed"] == 1 and counters["closed_hello_timeout"] == 0


def test_a_client_that_only_waits_after_an_outage_is_brought_back(
    make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The AI's move is refused with ``server_error`` (as when the lease of the game
    cannot be renewed on PostgreSQL while the database is down): the player, who sent
    nothing since, gets the AI's move once the database answers."""
    client = make_client(replace(FAST, outage_poll=0.05))
    hub = client.app.state.hub
    game = ai_game(client, seed=5)
    commit = hub.commit
    refused: list[int] = []

    async def flaky(live: Any, submission: Submission) -> None:
        if submission.conn is None and not refused:  # the AI's first move
            refused.append(submission.seq)
            hub.metrics.count("database_errors")
            raise ProtocolError("server_error", "the database is not answering")
        await commit(live, submission)

    monkeypatch.setattr(hub, "commit", flaky)
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        _, state = ws.hello(game["token"])
        view = state["view"]
        if view["current"] == game["seat"]:  # our move first
            ws.send({"type": "act", "action": view["legal"][0]["id"], "seq": state["seq"]})
            assert ws.recv_type("state")["ack"] == state["seq"]
        # The AI's move was refused; the client waits, and is brought back.
        nxt = ws.recv_type("state", timeout=10)
        while nxt["seq"] <= refused[0]:
            nxt = ws.recv_type("state", timeout=10)
        assert nxt["seq"] == refused[0] + 1 or nxt["view"]["current"] == game["seat"]
    assert refused and hub.metrics.counters["database_recoveries"] == 1


def test_metrics_say_which_worker_answered(client: TestClient) -> None:
    """Under ``--workers N`` each process counts its own figures: ``/metrics`` says whose."""
    text = client.get("/metrics").text
    assert f'koikoi_worker_info{{pid="{os.getpid()}"}} 1\n' in text
    data = client.get("/metrics", headers={"accept": "application/json"}).json()
    assert data["worker"] == {"pid": str(os.getpid())}
