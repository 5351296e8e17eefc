"""Rate and connection limits: a token bucket, one bucket per key (a client address),
a budget of seconds per key (:class:`SecondsBudget`: the AI workers' time an address
may use), the budget of open client connections (:class:`ConnectionBudget`), and the
size and time limits of request bodies (:class:`RequestBodyLimits`, ASGI middleware)."""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import Callable
from typing import Any, Final

from koikoi.server.protocol import encode, error_message

__all__ = [
    "CROWDED_PER_ADDRESS",
    "CROWDED_SHARE",
    "ERROR_SCOPE_KEY",
    "BucketsByKey",
    "ConnectionBudget",
    "RequestBodyLimits",
    "SecondsBudget",
    "TokenBucket",
    "default_connection_budget",
]


class TokenBucket:
    """A token bucket: ``take()`` is True while tokens remain; they refill at ``rate``/s."""

    __slots__ = ("capacity", "rate", "tokens", "updated")

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.tokens = capacity
        self.updated = time.monotonic()

    def take(self, n: float = 1.0) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False


class BucketsByKey:
    """One :class:`TokenBucket` per key (a client address), the least recently used
    forgotten beyond ``keep`` keys.

    >>> buckets = BucketsByKey(capacity=2, rate=0.0)
    >>> [buckets.take("a"), buckets.take("a"), buckets.take("a"), buckets.take("b")]
    [True, True, False, True]
    """

    def __init__(self, capacity: float, rate: float, keep: int = 10_000) -> None:
        self.capacity = capacity
        self.rate = rate
        self.keep = keep
        self._buckets: collections.OrderedDict[str, TokenBucket] = collections.OrderedDict()

    def take(self, key: str) -> bool:
        """Take one token from the bucket of ``key`` (a full one if ``key`` is new)."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self.capacity, self.rate)
            self._buckets[key] = bucket
            if len(self._buckets) > self.keep:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket.take()


CROWDED_SHARE: Final = 0.75
"""Share of :attr:`ConnectionBudget.total` in use from which the server is crowded."""
CROWDED_PER_ADDRESS: Final = 8
"""While the server is crowded, an address with this many open connections gets no
more: the rest of the budget is kept for addresses with fewer (a browser tab needs
one WebSocket and a few HTTP connections)."""


def default_connection_budget() -> int:
    """Client connections one server process admits by default: three quarters of its
    limit of open files (``RLIMIT_NOFILE``, at most 1,000,000), the rest kept for its
    database, AI workers, static files and logs; at least 16.

    >>> default_connection_budget() >= 16
    True
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Unix
        return 768
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > 1_000_000:
        soft = 1_000_000
    return max(16, soft * 3 // 4)


class ConnectionBudget:
    """Open client connections by address: HTTP ones (still reading requests) and
    upgraded ones (WebSockets), and whether one more may open.

    A new connection is refused when the budget (``total``) is spent, when its address
    already has ``http_per_address`` HTTP connections open, or when the server is
    crowded (:data:`CROWDED_SHARE` of the budget in use) and its address already has
    :data:`CROWDED_PER_ADDRESS` connections of any kind: one address cannot take the
    room kept for new ones.

    >>> budget = ConnectionBudget(total=8, http_per_address=2)
    >>> [budget.admit("a"), budget.admit("a"), budget.admit("a")]
    [None, None, 'http_per_address']
    >>> budget.upgrade("a")  # a WebSocket now: the address may open one more HTTP one
    >>> budget.admit("a"), budget.open, budget.http_of("a"), budget.of("a")
    (None, 3, 2, 3)
    >>> budget.release("a", upgraded=True)
    >>> budget.open, budget.of("a")
    (2, 2)

    Args:
        total: connections admitted in all (the descriptor budget).
        http_per_address: HTTP connections (not upgraded) one address may hold.
    """

    REASONS: Final = {
        "full": "the server has no room for more connections; try again later",
        "http_per_address": "too many HTTP connections from this address",
        "crowded": "the server is busy and this address holds many connections; "
        "close some or try again later",
    }
    """Why a connection is refused, by the reason :meth:`admit` returns."""

    def __init__(self, total: int, http_per_address: int) -> None:
        if total < 1 or http_per_address < 1:
            raise ValueError(
                f"total and http_per_address must be at least 1, not {total} and {http_per_address}"
            )
        self.total = total
        self.http_per_address = http_per_address
        self.open = 0
        """Connections open now (HTTP and upgraded)."""
        self._all: collections.Counter[str] = collections.Counter()
        self._http: collections.Counter[str] = collections.Counter()

    def of(self, address: str) -> int:
        """Open connections of ``address`` (HTTP and upgraded)."""
        return self._all[address]

    def http_of(self, address: str) -> int:
        """Open HTTP (not upgraded) connections of ``address``."""
        return self._http[address]

    @property
    def addresses(self) -> int:
        """Addresses with an open connection."""
        return len(self._all)

    @property
    def crowded(self) -> bool:
        """Whether :data:`CROWDED_SHARE` of the budget is in use."""
        return self.open >= self.total * CROWDED_SHARE

    def admit(self, address: str) -> str | None:
        """Count one more HTTP connection of ``address``, or return why not (a key of
        :attr:`REASONS`, nothing counted)."""
        if self.open >= self.total:
            return "full"
        if self._http[address] >= self.http_per_address:
            return "http_per_address"
        if self.crowded and self._all[address] >= CROWDED_PER_ADDRESS:
            return "crowded"
        self.open += 1
        self._all[address] += 1
        self._http[address] += 1
        return None

    def upgrade(self, address: str) -> None:
        """One HTTP connection of ``address`` became a WebSocket (it still counts in the
        budget; the WebSocket caps of the hub apply to it now)."""
        _decrement(self._http, address)

    def release(self, address: str, *, upgraded: bool) -> None:
        """One connection of ``address`` closed."""
        self.open -= 1
        _decrement(self._all, address)
        if not upgraded:
            _decrement(self._http, address)


def _decrement(counter: collections.Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


# ---------------------------------------------------------------- bodies

ERROR_SCOPE_KEY: Final = "koikoi.error"
"""Where a refused request's error code is left in the ASGI scope for the request log."""

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Any
"""An ASGI receive callable (``async () -> Message``)."""
Send = Any
"""An ASGI send callable (``async (Message) -> None``)."""


class _BodyRefused(Exception):
    """Raised out of ``receive`` to the middleware: the body is too large or too slow."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class RequestBodyLimits:
    """ASGI middleware: a request body larger than ``max_bytes`` (declared or sent) is
    answered ``too_large`` (413), one that takes more than ``timeout`` seconds to
    arrive ``timeout`` (408); both as JSON errors, with ``connection: close``.

    Set it inside the middleware that adds the security headers and logs requests, so
    that these answers get the headers like every other error and a request log line
    with the code (at info level: a refused request is not a server fault).

    Args:
        app: the ASGI app.
        max_bytes: the largest body accepted.
        timeout: seconds from the start of a request until its body has arrived.
    """

    def __init__(self, app: Any, max_bytes: int, timeout: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _refuse(scope, send, _too_large(self.max_bytes))
            return
        loop = asyncio.get_running_loop()
        timeout = self.timeout
        deadline = loop.time() + timeout
        received = 0
        body_done = False
        response_started = False

        async def limited_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                message: Message = await receive()
                return message
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise _BodyRefused(
                    408, "timeout", f"the request body did not arrive within {timeout:g} s"
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _too_large(self.max_bytes)
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except _BodyRefused as refused:
            if not response_started:
                await _refuse(scope, send, refused)
            # else: the answer is under way; the connection ends with it


def _too_large(max_bytes: int) -> _BodyRefused:
    return _BodyRefused(413, "too_large", f"the body is larger than {max_bytes} bytes")


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


async def _refuse(scope: Scope, send: Send, refused: _BodyRefused) -> None:
    scope[ERROR_SCOPE_KEY] = refused.code
    body = encode(error_message(refused.code, refused.message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refused.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SecondsBudget:
    """Seconds of a shared resource (the AI workers) that each key (a client address)
    may use: ``per_minute`` seconds a minute, of which up to ``burst`` can be saved up.

    A key is charged after the fact, with the seconds it really used, so its balance
    may go below zero (a debt, paid off as time passes); a key is *within* its budget
    while its balance is positive. A new key starts with a full balance. Its
    :meth:`recent` use (the seconds it used, fading over a minute) says who has used
    least lately. ``clock`` (seconds, monotonic) is injected by tests.

    >>> now = [0.0]
    >>> budget = SecondsBudget(per_minute=30.0, burst=10.0, clock=lambda: now[0])
    >>> budget.charge("a", 12.0)
    >>> budget.within("a"), budget.balance("a"), budget.within("b")
    (False, -2.0, True)
    >>> now[0] = 60.0  # a minute later: 30 s more, but no more than the burst
    >>> budget.balance("a")
    10.0

    Raises:
        ValueError: ``per_minute`` or ``burst`` is not positive.
    """

    def __init__(
        self,
        per_minute: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        keep: int = 10_000,
    ) -> None:
        burst = per_minute if burst is None else burst
        if not per_minute > 0 or not burst > 0:
            raise ValueError(
                f"an AI time budget needs positive seconds a minute and burst, not "
                f"{per_minute!r} and {burst!r}"
            )
        self.per_minute = per_minute
        self.burst = burst
        self.keep = keep
        self._clock = clock
        self._balances: collections.OrderedDict[str, tuple[float, float, float]]
        self._balances = collections.OrderedDict()
        """Key -> (balance, recent use, when they were last brought up to date)."""

    def _now(self, key: str) -> tuple[float, float]:
        entry = self._balances.get(key)
        if entry is None:
            return self.burst, 0.0
        balance, used, updated = entry
        elapsed = max(0.0, self._clock() - updated)
        return (
            min(self.burst, balance + elapsed * self.per_minute / 60.0),
            used * math.exp(-elapsed / 60.0),
        )

    def balance(self, key: str) -> float:
        """The seconds ``key`` may still use now (negative: a debt)."""
        return self._now(key)[0]

    def recent(self, key: str) -> float:
        """The seconds ``key`` used lately: each charge fades by a factor e a minute."""
        return self._now(key)[1]

    def within(self, key: str) -> bool:
        """Whether ``key`` has seconds left."""
        return self.balance(key) > 0

    def charge(self, key: str, seconds: float) -> None:
        """``key`` used ``seconds`` (the least recently charged keys beyond ``keep`` are
        forgotten: they start afresh)."""
        balance, used = self._now(key)
        seconds = max(0.0, seconds)
        self._balances[key] = (balance - seconds, used + seconds, self._clock())
        self._balances.move_to_end(key)
        if len(self._balances) > self.keep:
            self._balances.popitem(last=False)
