"""Connections and the rooms they are in: a :class:`Connection` is a transport-neutral
outbox of JSON texts (the WebSocket endpoint of ``app.py`` drains it), a
:class:`LiveRoom` a room in memory with its lock and its connections, a
:class:`Submission` one action submitted to a room."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Final

from koikoi.server.config import ServerConfig
from koikoi.server.limits import TokenBucket
from koikoi.server.protocol import encode
from koikoi.server.rooms import Room

__all__ = ["CLOSE", "Connection", "ConnectionRefused", "LiveRoom", "Submission"]

CLOSE: Final = object()
"""Outbox sentinel: close the connection."""


class ConnectionRefused(Exception):
    """:meth:`Hub.connect` refuses a connection: ``code`` and ``reason`` to close it with."""

    def __init__(self, reason: str, code: int = 1013) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class Connection:
    """One client connection: its seat, its rate limit, its outbox of JSON texts."""

    def __init__(self, config: ServerConfig, peer: str = "") -> None:
        self.id = secrets.token_hex(4)
        self.peer = peer
        """The client address (connection caps count per address)."""
        self.opened = time.monotonic()
        self.live: LiveRoom | None = None
        self.seat: int | None = None
        self.cursor = 0
        """Events already sent to this connection (index into the match's events)."""
        self.bucket = TokenBucket(config.message_burst, config.message_rate)
        self.outbox: asyncio.Queue[tuple[str, float | None] | object] = asyncio.Queue()
        self.limit = config.outbox_limit
        self.closed = False
        self.close_code: int | None = None
        self.close_reason = ""
        self.detached = False
        self.unknown_tokens = 0
        self.rate_violations = 0
        self.hint_task: asyncio.Task[None] | None = None

    def push(self, text: str, t0: float | None = None) -> None:
        """Queue a message; a connection too far behind is closed (it can reconnect)."""
        if self.closed:
            return
        if self.outbox.qsize() >= self.limit:
            self.close(reason="too many messages waiting to be sent; reconnect")
            return
        self.outbox.put_nowait((text, t0))

    def send(self, message: dict[str, Any], t0: float | None = None) -> None:
        self.push(encode(message), t0)

    def close(self, code: int | None = None, reason: str = "") -> None:
        """Close after the queued messages, with ``code`` and ``reason`` (default 1013,
        or 1012 while the server stops)."""
        if not self.closed:
            self.closed = True
            self.close_code = code
            self.close_reason = reason
            self.outbox.put_nowait(CLOSE)


@dataclass(eq=False)
class LiveRoom:
    """A room in memory with its lock, its connections and its AI task."""

    room: Room
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    conns: set[Connection] = field(default_factory=set)
    ai_task: asyncio.Task[None] | None = None
    last_active: float = field(default_factory=time.monotonic)
    finished_stored: bool = False
    owner: str | None = None
    """The address that created an AI game while it counts against
    :attr:`ServerConfig.max_ai_games_per_address`."""


@dataclass(frozen=True, eq=False)
class Submission:
    """One action submitted to a room: by which seat, at which sequence number, and
    which connection gets the acknowledgement.

    ``conn`` and ``t0`` (when the message arrived, for the latency metric) are
    ``None`` for the AI's moves and for actions that came from another node.
    """

    seat: int | None
    action: int
    seq: int
    conn: Connection | None = None
    t0: float | None = None
