"""The web game's limits and switches: :class:`ServerConfig`, read from the environment
by :meth:`ServerConfig.from_env`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from koikoi.features.opponents import HINT_SPEC
from koikoi.server.aipool import default_workers
from koikoi.server.limits import default_connection_budget

__all__ = ["ENV_FIELDS", "OFF_AT_ZERO", "ServerConfig"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Limits and switches of the server."""

    allow_seed: bool = False
    """Accept a ``seed`` when creating a game (tests only: it reveals the deal)."""
    message_rate: float = 10.0
    """Per-connection token bucket: messages per second..."""
    message_burst: float = 30.0
    """...and burst size."""
    http_rate: float = 2.0
    """Per-client-address bucket for game creation and joins: requests per second..."""
    http_burst: float = 60.0
    """...and burst size."""
    outbox_limit: int = 1000
    """Queued messages after which a slow connection is closed."""
    idle_seconds: float = 900.0
    """Rooms with no connection are dropped from memory after this long (they stay stored)."""
    max_rooms: int = 20_000
    ai_delay: float = 0.0
    """Pause before each AI action (seconds)."""
    hint_timeout: float = 10.0
    hint_agent: str = HINT_SPEC
    """The agent spec of hints, whatever the opponent (tests pass a cheaper one)."""
    max_unknown_tokens: int = 5
    """Unknown tokens on one connection before it is closed."""
    max_rate_violations: int = 100
    """Rate-limited messages on one connection before it is closed."""
    max_connections: int = 10_000
    """Open WebSocket connections in all; more are refused (close code 1013)."""
    max_connections_per_address: int = 64
    """Open WebSocket connections from one client address; more are refused (1013)."""
    max_unauthenticated_per_address: int = 16
    """Connections from one client address that have not said ``hello`` yet (1013)."""
    hello_timeout: float = 10.0
    """Seconds a connection has to say ``hello``; then it is closed (close code 4408)."""
    max_ai_games_per_address: int = 8
    """Unfinished games against the AI that one client address may have in memory at
    once; one more is ``rate_limited``."""
    abandoned_after: float = 120.0
    """Seconds after its last action (or its player's leaving) after which an AI game
    with no player connected stops counting against
    :attr:`max_ai_games_per_address` (it stays in memory until :attr:`idle_seconds`)."""
    outage_poll: float = 1.0
    """Seconds between two checks of a database that stopped answering; when it
    answers again every client is sent the current state and the hellos that failed
    are answered."""
    outage_hello_wait: float = 120.0
    """Seconds a connection whose ``hello`` failed on the database waits for it to
    answer again; then it is closed (1013, counted ``closed_hello_failed``)."""
    finished_grace: float = 60.0
    """Seconds a finished game stays in memory after its last activity when no client
    is connected (it is reloaded from storage for late spectators and records)."""
    ai_workers: int = default_workers()
    """Worker processes that make the search AIs' decisions (:mod:`.aipool`); default:
    one per CPU core but one, at least one."""
    ai_timeout: float = 30.0
    """Seconds one AI decision may take; then its worker is replaced and the players
    get an error (reconnecting retries the move)."""
    ai_seconds_per_minute: float = 30.0
    """Seconds of AI worker time (moves and hints) one client address may use a minute;
    beyond it its searches are cut to :attr:`ai_slice` and it waits behind the
    addresses within theirs (:class:`~.aipool.AIScheduler`). One game against the
    expert, with hints, uses about 10 to 20."""
    ai_seconds_burst: float = 10.0
    """Seconds of that budget an address may save up (and spend at once)."""
    ai_slice: float = 0.1
    """Seconds a search may take when its address is over its budget, or while another
    address within its budget waits for a worker: what one address can make another
    wait for each worker, for each of its AI's decisions (a reply is often two or
    three)."""
    ai_in_process: bool = False
    """Make the AI decisions in threads of the server process instead (tests)."""
    header_timeout: float = 10.0
    """Seconds a client has to send a request's line and headers, from when its
    connection opened or its previous response was sent; then the connection is closed
    (``koikoi serve`` only: the HTTP layer is uvicorn's)."""
    body_timeout: float = 30.0
    """Seconds a request's body may take to arrive in full; then the answer is a
    ``timeout`` error (408) and the connection is closed."""
    max_http_connections_per_address: int = 32
    """Open HTTP connections (not WebSockets) from one client address; more are refused
    at once (``koikoi serve`` only)."""
    connection_budget: int = default_connection_budget()
    """Client connections (HTTP and WebSocket) the process keeps open in all; default:
    three quarters of its limit of open files (``RLIMIT_NOFILE``). From three quarters
    of it in use, an address that holds 8 connections gets no more, so that new
    addresses still find room (``koikoi serve`` only)."""
    turn_seconds: float = 90.0
    """The turn clock of quick matches from the lobby (the games that may be rated):
    seconds each decision may take, counted from when it became the player's, whether
    they are connected or not; when it runs out the player forfeits the match. 0: no
    clock. Games against the AI and between friends have none."""
    lease_seconds: float = 5.0
    """On PostgreSQL: how long a game's lease lasts without renewal, that is how long
    its games wait after a server process died before another takes them over
    (:mod:`~koikoi.server.cluster`)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ServerConfig:
        """The defaults, then the ``KOIKOI_<FIELD>`` variables of :data:`ENV_FIELDS`
        (``KOIKOI_HELLO_TIMEOUT=5``), then ``overrides``.

        >>> ServerConfig.from_env({"KOIKOI_HELLO_TIMEOUT": "2.5"}).hello_timeout
        2.5

        Raises:
            ValueError: a variable that is not a positive number (or 0, for the fields of
                :data:`OFF_AT_ZERO`), naming it.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        kinds = {f.name: f.type for f in dataclasses.fields(cls)}
        for name in ENV_FIELDS:
            var = f"KOIKOI_{name.upper()}"
            text = env.get(var)
            if text is None or not text.strip():
                continue
            kind = int if kinds[name] in (int, "int") else float
            try:
                value = kind(text)
            except ValueError:
                value = -1
            if name in OFF_AT_ZERO:
                if not value >= 0:
                    raise ValueError(
                        f"{var} must be 0 (off) or a positive {kind.__name__}, not {text!r}"
                    )
            elif not value > 0:
                raise ValueError(f"{var} must be a positive {kind.__name__}, not {text!r}")
            values[name] = value
        values.update(overrides)
        return cls(**values)


ENV_FIELDS: Final = (
    "max_connections",
    "max_connections_per_address",
    "max_unauthenticated_per_address",
    "hello_timeout",
    "max_ai_games_per_address",
    "abandoned_after",
    "outage_poll",
    "outage_hello_wait",
    "finished_grace",
    "idle_seconds",
    "max_rooms",
    "ai_workers",
    "ai_timeout",
    "ai_seconds_per_minute",
    "ai_seconds_burst",
    "ai_slice",
    "lease_seconds",
    "header_timeout",
    "body_timeout",
    "max_http_connections_per_address",
    "connection_budget",
    "http_rate",
    "http_burst",
    "message_rate",
    "message_burst",
    "turn_seconds",
)
"""The :class:`ServerConfig` fields :meth:`ServerConfig.from_env` reads from ``KOIKOI_<FIELD>``."""
OFF_AT_ZERO: Final = frozenset({"turn_seconds"})
"""The fields of :data:`ENV_FIELDS` that 0 turns off (the others must be positive)."""
