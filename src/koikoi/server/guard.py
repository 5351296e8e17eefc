"""The connections of ``koikoi serve`` below the app: who may open one, and how long a
request's headers may take.

uvicorn reads a request's line and headers before the app sees anything, and has no
time limit on them nor a cap per client address: one address that sends its headers
a byte at a time could hold every file descriptor of the process (issue #29). Its
HTTP and WebSocket protocols are subclassed here, for every connection:

- **admission**: a :class:`~.limits.ConnectionBudget` counts the open connections by
  address (:attr:`~.config.ServerConfig.max_http_connections_per_address`,
  :attr:`~.config.ServerConfig.connection_budget`, with room kept for new addresses);
  a refused connection is answered with a JSON error and closed at once;
- **request headers** must arrive within :attr:`~.config.ServerConfig.header_timeout`
  of the connection's opening or of its previous request's end, and weigh at most
  :data:`MAX_HEADER_BYTES`; else the connection is closed.

Refusals and closings are logged once per address and reason every 10 s
(``connection refused``, with the number left out since). The body's own limits
(size, time) are the app's: :class:`~.limits.RequestBodyLimits`.

``koikoi serve`` calls :func:`install` with its settings (in each process under
``--workers``) and passes the two protocol classes to uvicorn; without
:func:`install`, they behave as uvicorn's own.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final, cast

from koikoi.server.app import SECURITY_HEADERS
from koikoi.server.config import ServerConfig
from koikoi.server.limits import ConnectionBudget
from koikoi.server.logs import LOGGER_NAME, LogThrottle, log_event
from koikoi.server.protocol import encode, error_message

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol as _HttpBase
    from uvicorn.protocols.websockets.wsproto_impl import WSProtocol as _WsBase
else:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HttpBase
    except ImportError:  # pragma: no cover - without httptools
        from uvicorn.protocols.http.h11_impl import H11Protocol as _HttpBase
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import (
            WebSocketsSansIOProtocol as _WsBase,
        )
    except ImportError:  # pragma: no cover - without websockets
        from uvicorn.protocols.websockets.wsproto_impl import WSProtocol as _WsBase

__all__ = [
    "MAX_HEADER_BYTES",
    "ConnectionGuard",
    "GuardedHTTPProtocol",
    "GuardedWebSocketProtocol",
    "install",
    "installed",
    "uninstall",
]

log = logging.getLogger(LOGGER_NAME)

MAX_HEADER_BYTES: Final = 64 * 1024
"""Bytes a request's line and headers may take; more and the connection is closed."""

_STATUS_OF: Final[dict[str, tuple[int, str]]] = {
    "full": (503, "server_error"),
    "crowded": (503, "server_error"),
    "http_per_address": (429, "rate_limited"),
}
"""The HTTP status and error code that answer each reason of refusal."""


class ConnectionGuard:
    """The connection limits of one server process: its :class:`ConnectionBudget`,
    its timeouts, and the log of refusals (one line per address and reason every
    10 s). :attr:`events` counts every refusal and closing by reason."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.budget = ConnectionBudget(
            config.connection_budget, config.max_http_connections_per_address
        )
        self.events: collections.Counter[str] = collections.Counter()
        self._log = LogThrottle(every=10.0)

    def note(self, address: str, why: str, message: str) -> None:
        """Count a refused or closed connection and log it (throttled)."""
        self.events[why] += 1
        left_out = self._log.admit((address, why))
        if left_out is not None:
            log_event(
                log,
                "connection refused",
                logging.WARNING,
                client=address,
                reason=message,
                why=why,
                not_logged=left_out,
            )

    def refusal(self, why: str) -> bytes:
        """The whole HTTP answer to a connection refused for ``why`` (a reason of
        :meth:`ConnectionBudget.admit`): a JSON error with the security headers."""
        status, code = _STATUS_OF[why]
        body = encode(error_message(code, self.reason(why))).encode()
        lines = [
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "cache-control: no-store",
            "connection: close",
            *(f"{name}: {value}" for name, value in SECURITY_HEADERS),
        ]
        if status in (429, 503):
            lines.append("retry-after: 10")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    def reason(self, why: str) -> str:
        """The sentence that says why a connection was refused or closed."""
        cfg = self.config
        if why == "http_per_address":
            return (
                f"too many HTTP connections from this address (at most "
                f"{cfg.max_http_connections_per_address}); try again in a moment"
            )
        if why == "header_timeout":
            return f"the request headers did not arrive within {cfg.header_timeout:g} s"
        if why == "header_size":
            return f"the request headers are larger than {MAX_HEADER_BYTES} bytes"
        return ConnectionBudget.REASONS[why]


_installed: ConnectionGuard | None = None


def install(config: ServerConfig) -> ConnectionGuard:
    """Guard the connections of this process with ``config`` (``koikoi serve`` calls
    it before uvicorn starts, and each ``--workers`` process in its app factory)."""
    global _installed
    _installed = ConnectionGuard(config)
    return _installed


def installed() -> ConnectionGuard | None:
    """The guard of this process, if :func:`install` was called."""
    return _installed


def uninstall() -> None:
    """Stop guarding new connections (tests)."""
    global _installed
    _installed = None


def _address(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, (tuple, list)) and peer:
        return str(peer[0])
    return "?"


class GuardedHTTPProtocol(_HttpBase):
    """uvicorn's HTTP protocol (httptools, else h11) under the :class:`ConnectionGuard`
    of :func:`install`: admission, the header deadline and size."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = _installed
        self._peer = "?"
        self._counted = False
        self._timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        if self._guard is not None:
            self._inner_app = self.app
            self.app = self._guarded_app

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        guard = self._guard
        if guard is None:
            super().connection_made(transport)  # type: ignore[arg-type]
            return
        self._peer = _address(transport)
        why = guard.budget.admit(self._peer)
        if why is not None:
            guard.note(self._peer, why, guard.reason(why))
            writer = cast(asyncio.WriteTransport, transport)
            writer.write(guard.refusal(why))
            writer.close()
            return
        self._counted = True
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._guard is not None and not self._counted:
            return  # refused: uvicorn never knew this connection
        self._cancel()
        if self._counted and self._guard is not None:
            self._counted = False
            self._guard.budget.release(self._peer, upgraded=False)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:  # reading a request's line and headers
            if self._header_bytes > MAX_HEADER_BYTES:
                self._close("header_size")
                return
            self._header_bytes += len(data)
        super().data_received(data)

    async def _guarded_app(self, scope: Any, receive: Any, send: Any) -> None:
        """The app, for one request whose headers have arrived: no header deadline
        while it runs; the next request's starts when it ends."""
        self._cancel()
        try:
            await self._inner_app(scope, receive, send)
        finally:
            if self._counted and not self.transport.is_closing():
                self._arm()

    def _arm(self) -> None:
        self._cancel()
        if self._guard is None:
            return
        self._header_bytes = 0
        self._timer = self.loop.call_later(
            self._guard.config.header_timeout, self._close, "header_timeout"
        )

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _close(self, why: str) -> None:
        """Close the connection for ``why`` unless it is closing or a WebSocket now."""
        self._cancel()
        transport = self.transport
        guard = self._guard
        if guard is None or transport is None or transport.is_closing():
            return
        if transport.get_protocol() is not self:
            return  # upgraded: a WebSocket now, under the hub's deadlines
        guard.note(self._peer, why, guard.reason(why))
        transport.close()


class GuardedWebSocketProtocol(_WsBase):
    """uvicorn's WebSocket protocol that counts, in the :class:`ConnectionGuard`, the
    connections upgraded from a :class:`GuardedHTTPProtocol` until they close."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = _installed
        self._peer = "?"
        self._counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if self._guard is not None:
            self._peer = _address(transport)
            self._guard.budget.upgrade(self._peer)
            self._counted = True

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted and self._guard is not None:
            self._counted = False
            self._guard.budget.release(self._peer, upgraded=True)
        super().connection_lost(exc)
