"""HTTP under the WebSockets (issue #29): bodies too large or too slow, slow request
headers, connections per address and the descriptor budget.

Each test repeats an attack of issue #29 and checks what the server does now: a JSON
error with the security headers where the client can read one, connections closed
on time, one log line per address and reason, and another address still served.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from server_helpers import FAST

from koikoi.server.app import SECURITY_HEADERS
from koikoi.server.limits import RequestBodyLimits

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
