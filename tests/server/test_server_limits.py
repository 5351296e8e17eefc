"""Serving the public: connection caps, the hello deadline, strict input, one error path.

Each test repeats an attack of issue #14 and checks what the server does now:
refuses or closes with a documented code, answers JSON with the security
headers, logs one line without a traceback or a token, and keeps serving.
"""

from __future__ import annotations

import asyncio
import collections
import doctest
import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from server_helpers import FAST, WS, ThreadServer
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from starlette.testclient import TestClient

from koikoi.server import config as config_module
from koikoi.server import limits as limits_module
from koikoi.server import logs as logs_module
from koikoi.server import metrics as metrics_module
from koikoi.server import protocol as protocol_module
from koikoi.server import storage as storage_module
from koikoi.server.app import SECURITY_HEADERS, create_app
from koikoi.server.config import ServerConfig
from koikoi.server.protocol import (
    CLOSE_CODES,
    MAX_HOUSE_RULES_DEPTH,
    ProtocolError,
    parse_new_game,
    toml_depth,
)
from koikoi.server.storage import normalize_url

websockets_client = pytest.importorskip("websockets.asyncio.client")
websockets_exceptions = pytest.importorskip("websockets.exceptions")

SURROGATE = "\ud800"


# ------------------------------------------------------------------ helpers


def new_game(client: TestClient, **body: Any) -> dict[str, Any]:
    body.setdefault("mode", "friend")
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def post_raw(client: TestClient, path: str, text: str) -> httpx.Response:
    """POST JSON text as it is (``json.dumps`` writes a lone surrogate as ``\\ud800``)."""
    return client.post(path, content=text.encode(), headers={"content-type": "application/json"})


def assert_json_error(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """An error response: JSON with ``code``, ``status``, and every security header."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    for name, value in SECURITY_HEADERS:
        assert r.headers[name] == value, name
    data: dict[str, Any] = r.json()
    assert data["type"] == "error" and data["code"] == code, data
    return data


def closed_with(session: Any, timeout: float = 5.0) -> tuple[int, str]:
    """Wait for the server to close a TestClient WebSocket: (code, reason)."""

    async def receive() -> Any:
        with anyio.fail_after(timeout):
            while True:
                message = await session._send_rx.receive()
                if message["type"] == "websocket.close":
                    return message

    message = session.portal.call(receive)
    return int(message.get("code", 1000)), str(message.get("reason") or "")


def play_ai_game(client: TestClient, **body: Any) -> dict[str, Any]:
    """Create a one-round game against ``random`` and play it to the end (first legal)."""
    g = new_game(client, mode="ai", agent="random", rounds=1, **body)
    with client.websocket_connect("/ws") as session:
        ws = WS(session, "player")
        _, state = ws.hello(g["token"])
        while not state["over"]:
            view = state["view"]
            if view["current"] == g["seat"] and view["legal"]:
                ws.send({"type": "act", "action": view["legal"][0]["id"], "seq": state["seq"]})
            state = ws.recv_type("state")
    return g


def server_lines(
    caplog: pytest.LogCaptureFixture, msg: str | None = None
) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith("koikoi.server") and (msg is None or r.getMessage() == msg)
    ]


def log_text(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(
        r.getMessage() + json.dumps(getattr(r, "fields", {}), default=str) for r in caplog.records
    )


def assert_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, (record.name, record.getMessage())
        assert "Traceback" not in record.getMessage()


def test_server_doctests() -> None:
    for module in (
        protocol_module,
        config_module,
        limits_module,
        metrics_module,
        logs_module,
        storage_module,
    ):
        failures, _ = doctest.testmod(module)
        assert failures == 0, module.__name__


# ----------------------------------------------------------- connection caps


def test_caps_per_address_and_without_hello_refuse_with_1013(make_client: Any) -> None:
    config = replace(FAST, max_connections_per_address=3, max_unauthenticated_per_address=2)
    client = make_client(config)
    g = new_game(client)
    j = client.post("/api/join", json={"invite": g["invite"]}).json()
    first, second = client.websocket_connect("/ws"), client.websocket_connect("/ws")
    a, b = WS(first.__enter__(), "a"), WS(second.__enter__(), "b")
    health = client.get("/healthz").json()
    assert (health["connections"], health["unauthenticated"], health["max_per_address"]) == (
        2,
        2,
        2,
    )
    with client.websocket_connect("/ws") as third:
        code, reason = closed_with(third)
    assert code == 1013 and code in CLOSE_CODES and "without hello" in reason
    a.hello(g["token"])
    b.hello(j["token"])
    third = client.websocket_connect("/ws")
    c = WS(third.__enter__(), "c")
    c.hello(g["watch"])
    with client.websocket_connect("/ws") as fourth:
        code, reason = closed_with(fourth)
    assert code == 1013 and "too many connections from this address (at most 3)" in reason
    health = client.get("/healthz").json()
    assert (health["connections"], health["unauthenticated"], health["max_per_address"]) == (
        3,
        0,
        3,
    )
    assert health["in_games"] == 3 and health["addresses"] == 1
    metrics = client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "koikoi_connections 3\n" in metrics.text
    assert "koikoi_connections_unauthenticated 0\n" in metrics.text
    assert "koikoi_connections_max_per_address 3\n" in metrics.text
    assert 'koikoi_events_total{event="connections_refused"} 2\n' in metrics.text
    for ctx in (first, second, third):
        ctx.__exit__(None, None, None)
    deadline = time.monotonic() + 5
    while client.get("/healthz").json()["connections"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client.get("/healthz").json()["connections"] == 0


def test_repeated_refusals_are_logged_once_with_a_count(
    make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A flood from one address must not write a log line per refused connection: the
    first refusal is logged, the next ones within 10 s are only counted (metrics)."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    client = make_client(replace(FAST, max_unauthenticated_per_address=1))
    with client.websocket_connect("/ws"):
        for _ in range(5):
            with client.websocket_connect("/ws") as extra:
                code, _ = closed_with(extra)
            assert code == 1013
    lines = server_lines(caplog, "connection refused")
    assert len(lines) == 1
    assert lines[0].fields["not_logged"] == 0  # type: ignore[attr-defined]
    metrics = client.get("/metrics")
    assert 'koikoi_events_total{event="connections_refused"} 5\n' in metrics.text


def test_hello_deadline_closes_a_silent_connection_with_4408(make_client: Any) -> None:
    client = make_client(replace(FAST, hello_timeout=0.3))
    started = time.monotonic()
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        ws.send({"type": "ping"})
        assert ws.recv()["type"] == "pong"  # pings do not extend the deadline
        code, reason = closed_with(session)
    assert code == 4408 and code in CLOSE_CODES and reason == "no hello within 0.3 s"
    assert time.monotonic() - started > 0.25  # not before the deadline
    g = new_game(client)
    with client.websocket_connect("/ws") as session:  # a hello in time keeps it open
        ws = WS(session)
        ws.hello(g["token"])
        time.sleep(0.5)
        ws.send({"type": "ping", "ref": 1})
        assert ws.recv_type("pong")["ref"] == 1
    health = client.get("/healthz").json()
    assert health["unauthenticated"] == 0


def test_connection_flood_is_refused_and_the_server_stays_responsive(db_url: str) -> None:
    """100 connections from one address at once, none saying hello (the attack opened
    6,000 in 16.6 s): most are refused at once with 1013, the rest closed by the hello
    deadline with 4408; meanwhile /healthz answers and another address plays."""
    config = replace(
        FAST, max_connections_per_address=32, max_unauthenticated_per_address=8, hello_timeout=1.0
    )
    app = create_app(db_url, config=config)
    flood_size = 100
    with ThreadServer(app) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        g = httpx.post(server.base + "/api/games", json={"mode": "friend"}).json()

        async def attacker() -> tuple[int, str]:
            async with websockets_client.connect(url, open_timeout=10, close_timeout=2) as ws:
                try:
                    await asyncio.wait_for(ws.recv(), 10)
                except websockets_exceptions.ConnectionClosed as exc:
                    assert exc.rcvd is not None
                    return exc.rcvd.code, exc.rcvd.reason
            raise AssertionError("the server sent a message to a connection without hello")

        async def observer() -> dict[str, Any]:
            await asyncio.sleep(0.3)
            async with httpx.AsyncClient(base_url=server.base) as http:
                health = (await http.get("/healthz")).json()  # it answers (5 s at most)
            # Another address is not affected: it connects, says hello and plays.
            async with websockets_client.connect(url, local_addr=("127.0.0.2", 0)) as ws:
                await ws.send(json.dumps({"type": "hello", "token": g["token"]}))
                health["other_address"] = json.loads(await ws.recv())["type"]
            return health

        async def main() -> tuple[list[tuple[int, str]], dict[str, Any]]:
            task = asyncio.create_task(observer())
            closes = await asyncio.gather(*(attacker() for _ in range(flood_size)))
            return list(closes), await task

        started = time.monotonic()
        closes, health = asyncio.run(main())
        elapsed = time.monotonic() - started
        codes = collections.Counter(code for code, _ in closes)
        assert set(codes) <= {1013, 4408}, codes
        assert codes[1013] >= flood_size // 2, codes  # most are refused at once
        assert 1 <= codes[4408] <= 8 * (int(elapsed / 1.0) + 2), codes
        reasons = {reason for _, reason in closes}
        assert reasons <= {
            "too many connections without hello from this address (at most 8)",
            "no hello within 1 s",
        }
        assert health["unauthenticated"] <= 8 and health["max_per_address"] <= 8, health
        assert health["other_address"] == "welcome"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            health = httpx.get(server.base + "/healthz").json()
            if health["connections"] == 0:
                break
            time.sleep(0.05)
        assert health["connections"] == 0 and health["unauthenticated"] == 0


def test_unfinished_ai_games_per_address_are_capped(make_client: Any) -> None:
    client = make_client(replace(FAST, max_ai_games_per_address=2))
    finished = play_ai_game(client, seed=5)  # finished: it no longer counts
    assert client.app.state.hub.rooms[finished["game"]].room.is_over
    for seed in (1, 2):
        new_game(client, mode="ai", agent="random", seed=seed)
    r = client.post("/api/games", json={"mode": "ai", "agent": "random"})
    data = assert_json_error(r, 429, "rate_limited")
    assert "2 unfinished games against the AI" in data["message"]
    new_game(client)  # friend games are not capped
    hub = client.app.state.hub
    for live in list(hub.rooms.values()):  # the AI games leave memory: their slots free
        if live.room.mode == "ai" and not live.room.is_over:
            hub._unregister(live)
    new_game(client, mode="ai", agent="random", seed=3)


def test_config_from_the_environment() -> None:
    env = {
        "KOIKOI_MAX_CONNECTIONS_PER_ADDRESS": "10",
        "KOIKOI_MAX_UNAUTHENTICATED_PER_ADDRESS": "4",
        "KOIKOI_HELLO_TIMEOUT": "2.5",
        "KOIKOI_MAX_AI_GAMES_PER_ADDRESS": "3",
        "KOIKOI_FINISHED_GRACE": "",
        "KOIKOI_HTTP_RATE": "40",
        "KOIKOI_HTTP_BURST": "400",
        "KOIKOI_MESSAGE_RATE": "12.5",
    }
    config = ServerConfig.from_env(env, allow_seed=True)
    assert (config.http_rate, config.http_burst, config.message_rate) == (40.0, 400.0, 12.5)
    assert config.message_burst == ServerConfig().message_burst
    assert (config.max_connections_per_address, config.max_unauthenticated_per_address) == (10, 4)
    assert config.hello_timeout == 2.5 and config.max_ai_games_per_address == 3
    assert config.finished_grace == ServerConfig().finished_grace and config.allow_seed
    with pytest.raises(ValueError, match="KOIKOI_HELLO_TIMEOUT must be a positive float"):
        ServerConfig.from_env({"KOIKOI_HELLO_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="KOIKOI_MAX_CONNECTIONS must be a positive int"):
        ServerConfig.from_env({"KOIKOI_MAX_CONNECTIONS": "0"})
    defaults = ServerConfig()
    assert (defaults.max_connections_per_address, defaults.max_unauthenticated_per_address) == (
        64,
        16,
    )
    assert defaults.hello_timeout == 10.0


# ------------------------------------------------------------- strict input


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/games", {"mode": SURROGATE}, "mode"),
        ("/api/games", {"mode": "ai", "agent": SURROGATE}, "agent"),
        ("/api/games", {"mode": "friend", "rules": SURROGATE}, "rules"),
        ("/api/games", {"mode": "friend", "name": "Ann" + SURROGATE}, "name"),
        (
            "/api/games",
            {"mode": "friend", "house_rules": f'description = "{SURROGATE}"'},
            "house_rules",
        ),
        ("/api/games", {"mode": "friend", "house_rules": f'name = "{SURROGATE}"'}, "house_rules"),
        ("/api/games", {"mode": "friend", SURROGATE: 1}, SURROGATE),
        ("/api/join", {"invite": "A" * 43, "name": SURROGATE}, "name"),
        ("/api/join", {"invite": SURROGATE * 43}, "invite"),
        ("/api/score", {"cards": ["1L", SURROGATE]}, "cards[1]"),
        ("/api/score", {"cards": SURROGATE}, "cards"),
        ("/api/score", {"cards": [], "rules": SURROGATE}, "rules"),
        ("/api/score", {"cards": [], "house_rules": f'description = "{SURROGATE}"'}, "house_rules"),
        ("/api/games/abc/record", {"token": SURROGATE}, "token"),
        ("/api/games/abc/replay", {"token": SURROGATE}, "token"),
        ("/api/replay", {"record": {"players": ["Ann", SURROGATE]}}, "record.players[1]"),
    ],
)
def test_lone_surrogates_in_any_http_field_are_refused(
    client: TestClient, caplog: pytest.LogCaptureFixture, path: str, body: Any, field: str
) -> None:
    caplog.set_level(logging.INFO, logger="koikoi.server")
    r = post_raw(client, path, json.dumps(body))
    data = assert_json_error(r, 400, "bad_json")
    assert "lone UTF-16 surrogate" in data["message"] and repr(field) in data["message"]
    lines = server_lines(caplog, "request")
    assert len(lines) == 1 and lines[0].fields["code"] == "bad_json"  # type: ignore[attr-defined]
    assert_no_traceback(caplog)


def test_surrogate_escapes_inside_house_rules_toml_are_rules_errors(client: TestClient) -> None:
    toml = 'description = "\\ud800"'  # a TOML escape: tomllib refuses it
    for path, body in (
        ("/api/games", {"mode": "friend", "house_rules": toml}),
        ("/api/score", {"cards": [], "house_rules": toml}),
    ):
        data = assert_json_error(client.post(path, json=body), 400, "rules")
        assert "Unicode scalar value" in data["message"]


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "ping", "ref": SURROGATE},
        {"type": SURROGATE},
        {"type": "hello", "token": SURROGATE * 43},
        {"type": "act", "action": 8, "seq": 0, "ref": "x" + SURROGATE},
        {"type": "hint", SURROGATE: 1},
        {"type": "ping", "ref": [SURROGATE]},
    ],
)
def test_lone_surrogates_in_any_frame_field_get_an_error_and_the_connection_lives(
    client: TestClient, caplog: pytest.LogCaptureFixture, frame: dict[str, Any]
) -> None:
    """The muted connection of the issue: a ping whose ref was a lone surrogate got no
    answer (its pong could not be encoded) and the connection stayed open, silent."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    g = new_game(client)
    for said_hello in (False, True):
        with client.websocket_connect("/ws") as session:
            ws = WS(session)
            if said_hello:
                ws.hello(g["token"])
            ws.send(json.dumps(frame))
            err = ws.recv_type("error")
            assert err["code"] == "bad_json" and "lone UTF-16 surrogate" in err["message"]
            assert "ref" not in err
            ws.send({"type": "ping", "ref": 7})
            assert ws.recv_type("pong")["ref"] == 7
    refused = server_lines(caplog, "message refused")
    assert len(refused) == 2
    assert all(r.fields["code"] == "bad_json" for r in refused)  # type: ignore[attr-defined]
    assert_no_traceback(caplog)
    assert g["token"] not in log_text(caplog)


def test_duplicate_keys_are_refused_naming_the_key(client: TestClient) -> None:
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        ws.send('{"type":"act","type":"ping"}')
        err = ws.recv()
        assert err["type"] == "error" and err["code"] == "bad_json"
        assert err["message"] == "message repeats the key 'type'"
        ws.expect_nothing(0.1)  # no pong
        ws.send('{"type":"ping","ref":1,"ref":2}')
        assert "'ref'" in ws.recv()["message"]
    r = post_raw(client, "/api/games", '{"mode":"ai","mode":"friend"}')
    data = assert_json_error(r, 400, "bad_json")
    assert data["message"] == "the body repeats the key 'mode'"
    r = post_raw(client, "/api/score", '{"cards":[],"x":{"a":1,"a":1}}')
    assert "'a'" in assert_json_error(r, 400, "bad_json")["message"]


def test_binary_frames_close_the_connection_with_1003(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="koikoi.server")
    g = new_game(client)
    for said_hello in (False, True):
        with client.websocket_connect("/ws") as session:
            ws = WS(session)
            if said_hello:
                ws.hello(g["token"])
            ws.send(b'{"type": "ping"}')
            code, reason = closed_with(session)
        assert code == 1003 and code in CLOSE_CODES
        assert reason == "binary frames are not accepted: send JSON text frames"
    lines = server_lines(caplog, "connection closed")
    assert [r.fields["why"] for r in lines] == ["binary_frame"] * 2  # type: ignore[attr-defined]
    assert_no_traceback(caplog)


def test_toml_depth_skips_strings_and_comments() -> None:
    assert toml_depth("[game]\nrounds = 3\n") == 1
    assert toml_depth("a = [[1, 2], [3]]") == 2
    assert toml_depth("a = \"[[[[{{{{\"  # [[[[[\nb = '[[['") == 0
    assert toml_depth('a = """\n[[[[\n"""\nb = [1]') == 1
    assert toml_depth('a = "\\"[[["') == 0
    assert toml_depth("[[x]]") == 2


@pytest.mark.parametrize("path", ["/api/games", "/api/score"])
@pytest.mark.parametrize(
    "toml",
    [
        "a = " + "[" * 3000 + "]" * 3000,
        "a = " + "{b = " * 400 + "1" + "}" * 400,
        "a = " + "[" * (MAX_HOUSE_RULES_DEPTH + 1) + "]" * (MAX_HOUSE_RULES_DEPTH + 1),
    ],
    ids=["arrays-3000", "inline-tables-400", "one-too-deep"],
)
def test_deeply_nested_house_rules_are_refused(
    client: TestClient, caplog: pytest.LogCaptureFixture, path: str, toml: str
) -> None:
    """The attack: nested TOML raised RecursionError in the parser (a bare 500)."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    body = {"mode": "friend", "house_rules": toml} if path == "/api/games" else {"cards": []}
    if path == "/api/score":
        body["house_rules"] = toml
    data = assert_json_error(client.post(path, json=body), 400, "rules")
    assert f"at most {MAX_HOUSE_RULES_DEPTH}" in data["message"]
    assert_no_traceback(caplog)
    assert len(server_lines(caplog, "request")) == 1


def test_house_rules_size_and_depth_limits() -> None:
    ok = "a = " + "[" * MAX_HOUSE_RULES_DEPTH + "]" * MAX_HOUSE_RULES_DEPTH
    assert parse_new_game({"mode": "friend", "house_rules": ok}).house_rules == ok
    with pytest.raises(ProtocolError) as info:
        parse_new_game({"mode": "friend", "house_rules": "#" * 8001})
    assert info.value.code == "too_large"


# -------------------------------------------------------- one error path


def test_an_unexpected_fault_is_a_json_500_logged_in_one_line(
    client: TestClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    secret = "S" * 43
    hub = client.app.state.hub

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"fault while handling {secret}")

    monkeypatch.setattr(hub, "create_game", broken)
    data = assert_json_error(
        client.post("/api/games", json={"mode": "friend"}), 500, "server_error"
    )
    assert secret not in data["message"]
    lines = server_lines(caplog)
    assert len(lines) == 1
    fields = lines[0].fields  # type: ignore[attr-defined]
    assert fields["status"] == 500 and fields["code"] == "server_error"
    assert fields["error"] == "RuntimeError" and fields["where"].startswith(
        "test_server_limits.py:"
    )
    assert lines[0].levelno == logging.ERROR
    assert_no_traceback(caplog)
    assert secret not in log_text(caplog)
    # The same on a WebSocket: an error frame, one line, and the connection goes on.
    caplog.clear()
    monkeypatch.setattr(hub, "hello", broken)
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        ws.send({"type": "hello", "token": secret, "ref": 3})
        err = ws.recv()
        assert (err["code"], err["ref"]) == ("server_error", 3)
        ws.send({"type": "ping"})
        assert ws.recv()["type"] == "pong"
    assert [r.getMessage() for r in server_lines(caplog)] == ["message failed"]
    assert_no_traceback(caplog)
    assert secret not in log_text(caplog)


def test_unknown_paths_and_methods_are_json_errors(client: TestClient) -> None:
    assert_json_error(client.get("/no/such/page"), 404, "not_found")
    assert_json_error(client.get("/static/nothing.js"), 404, "not_found")
    assert_json_error(client.get("/cards/13L.svg"), 404, "not_found")
    assert_json_error(client.get("/api/games"), 405, "method_not_allowed")
    config = client.get("/api/config").json()
    assert "method_not_allowed" in config["errors"]


def broken_engine(url: str, tmp_path: Path) -> Any:
    """An engine of the same backend whose database does not answer."""
    if url.startswith("sqlite"):
        return create_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'gone.db'}")
    down = make_url(normalize_url(url)).set(host="127.0.0.1", port=1)
    return create_engine(down, connect_args={"connect_timeout": 2})


def test_storage_down_answers_503_server_error(
    make_client: Any, any_db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    client = make_client(url=any_db_url)
    hub = client.app.state.hub
    finished = play_ai_game(client, seed=9)
    friend = new_game(client)
    working = hub.storage.engine
    hub.storage.engine = broken_engine(any_db_url, tmp_path)
    caplog.clear()
    try:
        create = client.post("/api/games", json={"mode": "friend"})
        assert_json_error(create, 503, "server_error")
        join = client.post("/api/join", json={"invite": friend["invite"]})
        assert_json_error(join, 503, "server_error")
        record = client.post(
            f"/api/games/{finished['game']}/record", json={"token": finished["token"]}
        )
        assert_json_error(record, 503, "server_error")
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["database"] == "error"
        with client.websocket_connect("/ws") as session:  # a token not in memory
            ws = WS(session)
            for _ in range(ServerConfig().max_unknown_tokens + 1):
                ws.send({"type": "hello", "token": "Q" * 43})
                assert ws.recv()["code"] == "server_error"  # not counted as unknown
    finally:
        hub.storage.engine.dispose()
        hub.storage.engine = working
    failures = server_lines(caplog, "database error")
    assert [r.fields["op"] for r in failures] == [  # type: ignore[attr-defined]
        "create_game",
        "claim_invite",
        "get_record",
        *["find_token"] * (ServerConfig().max_unknown_tokens + 1),
    ]
    assert_no_traceback(caplog)
    text = log_text(caplog)
    for secret in (finished["token"], friend["invite"], friend["token"]):
        assert secret not in text
    # The database is back: everything works again.
    assert client.post("/api/join", json={"invite": friend["invite"]}).status_code == 200
    record = client.post(f"/api/games/{finished['game']}/record", json={"token": finished["token"]})
    assert record.status_code == 200 and json.loads(record.text)["format"] == "koikoi-record"


# ------------------------------------------------------------------ memory


def test_finished_games_leave_memory(make_client: Any) -> None:
    client = make_client(replace(FAST, finished_grace=0.05))
    hub = client.app.state.hub
    games = []
    most = 0
    for seed in range(24):
        games.append(play_ai_game(client, seed=seed))
        most = max(most, len(hub.rooms))
    assert most <= 6, most  # without the grace period: 24, one per game played
    deadline = time.monotonic() + 5
    while hub.rooms and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not hub.rooms
    # Late spectators, reconnects and records are served from storage.
    g = games[3]
    with client.websocket_connect("/ws") as session:
        ws = WS(session)
        welcome, state = ws.hello(g["watch"])
        assert welcome["role"] == "spectator" and state["over"] and state["full"]
        assert g["game"] in hub.rooms  # it stays while someone watches
        time.sleep(0.2)
        assert g["game"] in hub.rooms
    record = client.post(f"/api/games/{g['game']}/record", json={"token": g["token"]})
    assert record.status_code == 200
    deadline = time.monotonic() + 5
    while hub.rooms and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not hub.rooms


def test_a_match_the_deal_ends_is_stored_and_leaves_memory(make_client: Any) -> None:
    """A one-round match can end at the deal (a hand shown there scores the round): no
    action is ever played, yet the game is finished in storage and leaves memory after
    the grace (the soak test found such games kept in memory, their records missing)."""
    from sqlalchemy import select

    from koikoi.game.rules import get_rules
    from koikoi.server.rooms import Room, SeatInfo
    from koikoi.server.storage import GameRow

    rules = get_rules("nintendo").replace(game__rounds=1)
    seats = [SeatInfo(kind="human"), SeatInfo(kind="human")]
    seed = next(
        s
        for s in range(5000)
        if Room("g", mode="friend", rules=rules, seed=s, seats=seats, watch_hash="w").is_over
    )
    client = make_client(replace(FAST, finished_grace=0.05))
    hub = client.app.state.hub
    g = new_game(client, rules="nintendo", rounds=1, seed=seed)
    assert hub.storage.get_record(g["game"]) is not None
    with hub.storage.engine.connect() as conn:
        status = conn.execute(select(GameRow.status).where(GameRow.id == g["game"])).scalar_one()
    assert status == "finished"
    deadline = time.monotonic() + 5
    while hub.rooms and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not hub.rooms


# ------------------------------------------------------ a real server (uvicorn)


def test_a_message_that_cannot_be_sent_closes_the_connection_and_the_other_seat_sees_it(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """On uvicorn (the TestClient does not encode frames): a ping with a lone surrogate
    as ``ref`` is refused with an error, and a message that cannot be encoded closes its
    connection with 1011 instead of leaving it open and silent."""
    caplog.set_level(logging.INFO)
    app = create_app(db_url, config=FAST)
    with ThreadServer(app) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        g = httpx.post(server.base + "/api/games", json={"mode": "friend", "seed": 3}).json()
        j = httpx.post(server.base + "/api/join", json={"invite": g["invite"]}).json()
        hub = app.state.hub

        async def recv_type(ws: Any, kind: str) -> dict[str, Any]:
            while True:
                msg: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 5))
                if msg["type"] == kind:
                    return msg

        async def main() -> tuple[dict[str, Any], dict[str, Any], tuple[int, str]]:
            async with (
                websockets_client.connect(url) as a,
                websockets_client.connect(url) as b,
            ):
                await a.send(json.dumps({"type": "hello", "token": g["token"]}))
                await recv_type(a, "state")
                await b.send(json.dumps({"type": "hello", "token": j["token"]}))
                await recv_type(b, "state")
                await a.send('{"type":"ping","ref":"\\ud800"}')
                error = await recv_type(a, "error")
                await a.send('{"type":"ping","ref":"ok"}')
                assert (await recv_type(a, "pong"))["ref"] == "ok"
                conn = next(c for c in hub.connections if c.seat == g["seat"])
                hub._janitor.get_loop().call_soon_threadsafe(conn.push, '"\ud800"')
                try:
                    while True:
                        await asyncio.wait_for(a.recv(), 5)
                except websockets_exceptions.ConnectionClosed as exc:
                    assert exc.rcvd is not None
                    closed = (exc.rcvd.code, exc.rcvd.reason)
                presence = await recv_type(b, "presence")
                while presence["connected"][g["seat"]]:
                    presence = await recv_type(b, "presence")
                return error, presence, closed

        error, presence, closed = asyncio.run(main())
    assert error["code"] == "bad_json" and "'ref'" in error["message"]
    assert closed == (1011, "the server could not send a message") and 1011 in CLOSE_CODES
    assert presence["connected"] == [g["seat"] != 0, g["seat"] != 1]
    failed = server_lines(caplog, "send failed")
    assert len(failed) == 1 and failed[0].fields["error"] == "UnicodeEncodeError"  # type: ignore[attr-defined]
    assert_no_traceback(caplog)
    text = log_text(caplog)
    assert g["token"] not in text and j["token"] not in text
