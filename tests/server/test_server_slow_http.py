"""The slow-HTTP attack of issue #29 against ``koikoi serve``, bounded in count and time.

One address (127.0.0.2) opens 240 connections and sends a request's headers one byte
every half second, on a server whose limit of open files is 256 (before the fix, the
attack held every connection and took every file descriptor). Meanwhile another
address (127.0.0.3) creates a game and reads ``/healthz``, on a new connection each
time. Every 127.x.y.z is loopback on Linux: the two addresses reach the server on
127.0.0.1 and it tells them apart as it would two hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import SubprocessServer

pytestmark = [
    pytest.mark.multiprocess,
    pytest.mark.skipif(sys.platform != "linux", reason="needs 127.0.0.2 and 127.0.0.3"),
]

ATTACKER = "127.0.0.2"
VICTIM = "127.0.0.3"
CONNECTIONS = 240
NOFILE = 256
DRIP = 0.5
"""Seconds between two bytes of an attacker's headers."""
HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: " + b"s" * 40 + b"\r\n\r\n"
"""About 80 bytes: 40 s at one byte per half second, were the server to wait."""
HEADER_TIMEOUT = 10.0
"""The server's default."""
GIVE_UP = 25.0
"""Seconds after which an attacker stops by itself (the server should close it first)."""
VICTIM_BOUND = 1.0
"""Seconds the victim's requests may take each, attack or not (the issue's bound)."""


async def attacker(port: int) -> tuple[str, float]:
    """One slow connection: how it ended (``closed`` by the server, or ``gave_up``) and
    after how many seconds."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, local_addr=(ATTACKER, 0), limit=1 << 20
    )

    async def drip() -> None:
        with contextlib.suppress(OSError):
            for i in range(len(HEADERS)):
                writer.write(HEADERS[i : i + 1])
                await writer.drain()
                await asyncio.sleep(DRIP)

    dripping = asyncio.create_task(drip())
    how = "closed"
    try:
        async with asyncio.timeout(GIVE_UP):
            while await reader.read(65536):
                pass
    except TimeoutError:
        how = "gave_up"
    except OSError:
        pass  # reset: closed by the server
    finally:
        dripping.cancel()
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    return how, loop.time() - started


async def victim(base: str, until: asyncio.Event) -> list[tuple[float, float]]:
    """Create a game and read /healthz, each on a new connection, until ``until``;
    returns (seconds to create, seconds to read health) for each round."""
    rounds: list[tuple[float, float]] = []
    while not until.is_set() or len(rounds) < 3:
        times = []
        for method, path, body in (
            ("POST", "/api/games", {"mode": "friend"}),
            ("GET", "/healthz", None),
        ):
            transport = httpx.AsyncHTTPTransport(local_address=VICTIM)
            async with httpx.AsyncClient(base_url=base, transport=transport, timeout=5) as http:
                t0 = time.monotonic()
                r = await http.request(method, path, json=body)
                times.append(time.monotonic() - t0)
                assert r.status_code == 200, r.text
        rounds.append((times[0], times[1]))
        await asyncio.sleep(0.5)
    return rounds


def refusal_lines(log_path: Path) -> list[dict[str, Any]]:
    lines = []
    for text in log_path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            line = json.loads(text)
            if line.get("msg") == "connection refused":
                lines.append(line)
    return lines


def test_one_slow_address_leaves_room_for_another(tmp_path: Path) -> None:
    server = SubprocessServer(
        f"sqlite:///{tmp_path / 'slow.db'}",
        tmp=tmp_path,
        args=("--ai-workers", "1"),
        nofile=NOFILE,
    )
    server.start(timeout=60)
    try:

        async def main() -> tuple[list[tuple[str, float]], list[tuple[float, float]]]:
            attack_over = asyncio.Event()
            attack = asyncio.gather(*(attacker(server.port) for _ in range(CONNECTIONS)))
            await asyncio.sleep(1.5)  # the attack is in place
            watching = asyncio.create_task(victim(server.base, attack_over))
            ends = await attack
            attack_over.set()
            return ends, await watching

        started = time.monotonic()
        ends, rounds = asyncio.run(main())
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    how = [h for h, _ in ends]
    assert how.count("gave_up") == 0, "the server held slow connections past its deadline"
    refused_at_once = sum(1 for _, seconds in ends if seconds < HEADER_TIMEOUT / 2)
    held = sorted(seconds for _, seconds in ends if seconds >= HEADER_TIMEOUT / 2)
    assert refused_at_once >= CONNECTIONS - 32, (refused_at_once, held)  # the cap per address
    assert held and held[0] >= HEADER_TIMEOUT - 0.5 and held[-1] <= HEADER_TIMEOUT + 5, held
    # The victim was served throughout, within the bound, while connections were held.
    assert len(rounds) >= 5, rounds
    worst = max(max(r) for r in rounds)
    assert worst < VICTIM_BOUND, rounds
    assert elapsed < 40
    # Refusals are logged once per address and reason, not once per connection.
    lines = [line for line in refusal_lines(server.log_path) if line.get("client") == ATTACKER]
    reasons = sorted(line["why"] for line in lines)
    assert reasons == ["header_timeout", "http_per_address"], lines
