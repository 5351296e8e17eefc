"""HTTP under the WebSockets (issue #29): bodies too large or too slow, slow request
headers, connections per address and the descriptor budget.

Each test repeats an attack of issue #29 and checks what the server does now: a JSON
error with the security headers where the client can read one, connections closed
on time, one log line per address and reason, and another address still served.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from server_helpers import FAST, ThreadServer

from koikoi.server import guard
from koikoi.server.app import SECURITY_HEADERS, create_app
from koikoi.server.config import ServerConfig
from koikoi.server.limits import ConnectionBudget, RequestBodyLimits

websockets_client = pytest.importorskip("websockets.asyncio.client")

BIG = 3 * 1024 * 1024
"""A declared body over the 2 MiB the server accepts."""


def assert_json_error(r: Any, status: int, code: str) -> dict[str, Any]:
    """An error response: JSON with ``code``, ``status``, and every security header."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json"), r.headers
    for name, value in SECURITY_HEADERS:
        assert r.headers.get(name) == value, name
    data: dict[str, Any] = r.json()
    assert data["type"] == "error" and data["code"] == code, data
    return data


def server_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("koikoi.server")]


# ------------------------------------------------------------------ bodies


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/replay"), ("POST", "/api/games"), ("GET", "/healthz")],
)
def test_a_body_declared_over_2_mib_is_a_json_413_with_the_headers_not_a_fault(
    make_client: Any, caplog: pytest.LogCaptureFixture, method: str, path: str
) -> None:
    """Issue #29, what broke 5: a plain-text 413 without the security headers, logged
    as a server error."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    client = make_client(FAST)
    r = client.request(
        method,
        path,
        content=b"{}",
        headers={"content-type": "application/json", "content-length": str(BIG)},
    )
    data = assert_json_error(r, 413, "too_large")
    assert str(2 * 1024 * 1024) in data["message"]
    records = server_records(caplog)
    assert records, "the refusal is logged"
    assert all(r.levelno < logging.ERROR for r in records), [
        (r.levelname, r.getMessage(), getattr(r, "fields", None)) for r in records
    ]


def test_a_streamed_body_over_2_mib_is_a_json_413(make_client: Any) -> None:
    """No Content-Length (chunked): the body is counted as it arrives."""
    client = make_client(FAST)

    def chunks() -> Any:
        for _ in range(5):
            yield b" " * (1024 * 1024)

    r = client.post("/api/replay", content=chunks(), headers={"content-type": "application/json"})
    assert_json_error(r, 413, "too_large")


def run_limits(receive_parts: list[bytes | None], timeout: float) -> list[dict[str, Any]]:
    """Run :class:`RequestBodyLimits` around an app that reads the whole body; the
    client sends ``receive_parts`` (``None``: it stops sending and never finishes).
    Returns what the middleware sent."""
    sent: list[dict[str, Any]] = []
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/", "headers": []}

    async def receive() -> dict[str, Any]:
        if not receive_parts:
            await asyncio.Event().wait()  # a client that stopped sending
        part = receive_parts.pop(0)
        if part is None:
            await asyncio.Event().wait()
        return {"type": "http.request", "body": part, "more_body": bool(receive_parts)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"read"})

    asyncio.run(RequestBodyLimits(app, max_bytes=10, timeout=timeout)(scope, receive, send))
    return sent


def test_a_body_that_stops_arriving_is_answered_408_timeout() -> None:
    sent = run_limits([b"abc", None], timeout=0.05)
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    data = json.loads(sent[1]["body"])
    assert data["type"] == "error" and data["code"] == "timeout"
    assert "0.05 s" in data["message"]


def test_a_body_in_time_and_in_size_reaches_the_app() -> None:
    sent = run_limits([b"abc", b"defg"], timeout=5.0)
    assert sent[0]["status"] == 200 and sent[1]["body"] == b"read"
    sent = run_limits([b"abcdef", b"ghijk"], timeout=5.0)  # 11 bytes: one too many
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["code"] == "too_large"


# ------------------------------------------------------------- connections


def test_connection_budget_keeps_room_for_new_addresses() -> None:
    budget = ConnectionBudget(total=16, http_per_address=100)
    for _ in range(12):  # three quarters: crowded from here
        assert budget.admit("busy") is None
    assert budget.crowded
    assert budget.admit("busy") == "crowded"
    for address in ("new1", "new2", "new3", "new4"):
        assert budget.admit(address) is None
    assert budget.admit("new5") == "full"
    budget.release("new1", upgraded=False)
    assert budget.admit("new5") is None
    assert (budget.open, budget.of("busy"), budget.addresses) == (16, 12, 5)
    with pytest.raises(ValueError, match="at least 1"):
        ConnectionBudget(total=0, http_per_address=1)


class GuardedServer(ThreadServer):
    """uvicorn in a thread with the protocols of ``koikoi serve`` and its guard."""

    def __init__(self, app: Any, config: ServerConfig) -> None:
        import uvicorn

        super().__init__(app)
        self.guard = guard.install(config)
        self.server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=self.port,
                log_config=None,
                access_log=False,
                lifespan="on",
                http=guard.GuardedHTTPProtocol,
                ws=guard.GuardedWebSocketProtocol,
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        guard.uninstall()


@pytest.fixture
def guarded(db_url: str) -> Iterator[Callable[[ServerConfig], GuardedServer]]:
    started: list[GuardedServer] = []

    def start(config: ServerConfig) -> GuardedServer:
        server = GuardedServer(create_app(db_url, config=config), config)
        server.__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


def open_socket(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    return sock


def read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection (``timeout``: a
    server that never closes fails the test)."""
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def refusal_lines(caplog: pytest.LogCaptureFixture, why: str) -> list[logging.LogRecord]:
    return [
        r
        for r in server_records(caplog)
        if r.getMessage() == "connection refused" and getattr(r, "fields", {}).get("why") == why
    ]


def test_request_headers_that_do_not_arrive_in_time_close_the_connection(
    guarded: Callable[[ServerConfig], GuardedServer], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue #29, what broke 1: a connection that sends its headers a byte at a time
    was held for ever."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    server = guarded(replace(FAST, header_timeout=0.5))
    slow = open_socket(server.port, "127.0.0.2")
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHo")
    assert read_until_closed(slow, timeout=10) == b""
    slow.close()
    # After a request answered, the next one's headers have the same deadline.
    kept = open_socket(server.port, "127.0.0.2")
    kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    kept.settimeout(10)
    assert kept.recv(65536).startswith(b"HTTP/1.1 200")
    kept.sendall(b"GET /healthz HTTP/1.1\r\n")
    assert read_until_closed(kept, timeout=10) == b""
    kept.close()
    lines = refusal_lines(caplog, "header_timeout")
    assert len(lines) == 1 and lines[0].fields["client"] == "127.0.0.2"  # type: ignore[attr-defined]
    assert server.guard.events["header_timeout"] == 2
    wait_until(lambda: server.guard.budget.open == 0)


def test_request_headers_over_64_kib_close_the_connection(
    guarded: Callable[[ServerConfig], GuardedServer],
) -> None:
    server = guarded(FAST)
    sock = open_socket(server.port, "127.0.0.2")
    sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    with contextlib.suppress(OSError):
        for _ in range(40):
            sock.sendall(b"X-Filler: " + b"a" * 4000 + b"\r\n")
    read_until_closed(sock, timeout=10)
    sock.close()
    assert server.guard.events["header_size"] == 1


def test_http_connections_per_address_are_capped_and_others_still_served(
    guarded: Callable[[ServerConfig], GuardedServer], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue #29, what broke 1: no cap per address on plain HTTP connections."""
    caplog.set_level(logging.INFO, logger="koikoi.server")
    server = guarded(replace(FAST, max_http_connections_per_address=3))
    held = [open_socket(server.port, "127.0.0.2") for _ in range(3)]
    wait_until(lambda: server.guard.budget.http_of("127.0.0.2") == 3)
    for _ in range(4):
        extra = open_socket(server.port, "127.0.0.2")
        answer = read_until_closed(extra, timeout=10)
        extra.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429"), answer
        headers = head.decode().lower()
        for name, value in SECURITY_HEADERS:
            assert f"{name}: {value}".lower() in headers, name
        data = json.loads(body)
        assert data["code"] == "rate_limited" and "at most 3" in data["message"]
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.3")) as other:
        assert other.get(server.base + "/healthz").status_code == 200
        assert other.post(server.base + "/api/games", json={"mode": "friend"}).status_code == 200
    lines = refusal_lines(caplog, "http_per_address")
    assert len(lines) == 1 and lines[0].fields["not_logged"] == 0  # type: ignore[attr-defined]
    assert server.guard.events["http_per_address"] == 4
    held.pop().close()  # a slot frees: the address is served again
    wait_until(lambda: server.guard.budget.http_of("127.0.0.2") == 2)
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as again:
        assert again.get(server.base + "/healthz").status_code == 200
    for sock in held:
        sock.close()
    wait_until(lambda: server.guard.budget.open == 0)


def test_websockets_leave_the_http_cap_and_count_in_the_budget_until_closed(
    guarded: Callable[[ServerConfig], GuardedServer],
) -> None:
    server = guarded(replace(FAST, max_http_connections_per_address=1))
    url = f"ws://127.0.0.1:{server.port}/ws"
    budget = server.guard.budget

    async def main() -> None:
        async with (
            websockets_client.connect(url) as first,
            websockets_client.connect(url) as second,
        ):
            await first.send(json.dumps({"type": "ping"}))
            await second.send(json.dumps({"type": "ping"}))
            assert json.loads(await first.recv())["type"] == "pong"
            assert json.loads(await second.recv())["type"] == "pong"
            assert (budget.open, budget.http_of("127.0.0.1")) == (2, 0)
            async with httpx.AsyncClient() as http:  # the HTTP slot is free
                assert (await http.get(server.base + "/healthz")).status_code == 200

    asyncio.run(main())
    wait_until(lambda: budget.open == 0)


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def test_http_limits_come_from_the_environment() -> None:
    env = {
        "KOIKOI_HEADER_TIMEOUT": "4",
        "KOIKOI_BODY_TIMEOUT": "20",
        "KOIKOI_MAX_HTTP_CONNECTIONS_PER_ADDRESS": "8",
        "KOIKOI_CONNECTION_BUDGET": "100",
    }
    config = ServerConfig.from_env(env)
    assert (config.header_timeout, config.body_timeout) == (4.0, 20.0)
    assert (config.max_http_connections_per_address, config.connection_budget) == (8, 100)
    with pytest.raises(ValueError, match="KOIKOI_CONNECTION_BUDGET must be a positive int"):
        ServerConfig.from_env({"KOIKOI_CONNECTION_BUDGET": "-3"})
