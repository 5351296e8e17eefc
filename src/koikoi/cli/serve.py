"""``koikoi serve``: the web game (needs the ``web`` extra).

Registering the command imports nothing heavy; Starlette, uvicorn and
SQLAlchemy are imported when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from typing import Any, Final

from koikoi.cli.common import add_command
from koikoi.game.errors import KoiKoiError
from koikoi.i18n import t

__all__ = ["ServeError", "browser_line", "check_address", "register", "run", "worker_app"]

CONFIG_ENV: Final = "KOIKOI_SERVE_CONFIG"
"""How ``--workers`` hands the server settings (JSON) to its worker processes."""
KEEP_ALIVE_SECONDS: Final = 5
"""uvicorn's ``timeout_keep_alive``: an idle connection between two requests is closed
after this long (uvicorn's default, said here)."""


class ServeError(KoiKoiError):
    """The web server cannot start (missing extra, bad option)."""


def _default_ai_workers() -> int:
    """The server's default (``koikoi.server.aipool.default_workers``, not imported here):
    one per CPU core but one, at least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 2
    return max(1, cores - 1)


def _default_connection_budget() -> int:
    """The server's default (``koikoi.server.limits.default_connection_budget``, not
    imported here): three quarters of the open-file limit, at least 16."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Unix
        return 768
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > 1_000_000:
        soft = 1_000_000
    return max(16, soft * 3 // 4)


_LIMITS: tuple[tuple[str, type[int] | type[float], float, str], ...] = (
    ("--max-connections", int, 10_000, "open WebSocket connections in all"),
    ("--max-connections-per-address", int, 64, "open connections from one address"),
    ("--max-unauthenticated-per-address", int, 16, "connections from one address before hello"),
    ("--hello-timeout", float, 10.0, "seconds a new connection has to say hello"),
    ("--max-ai-games-per-address", int, 8, "unfinished games against the AI per address"),
    ("--finished-grace", float, 60.0, "seconds a finished game stays in memory"),
    (
        "--ai-workers",
        int,
        _default_ai_workers(),
        "worker processes that choose the AI's moves (one per CPU core but one)",
    ),
    ("--ai-timeout", float, 30.0, "seconds one AI move may take before it fails"),
    ("--http-rate", float, 2.0, "game creations and joins per second from one address"),
    ("--http-burst", float, 60.0, "game creations and joins one address may make at once"),
    ("--header-timeout", float, 10.0, "seconds a client has to send a request's headers"),
    ("--body-timeout", float, 30.0, "seconds a request's body may take to arrive"),
    (
        "--max-http-connections-per-address",
        int,
        32,
        "open HTTP connections (not WebSockets) from one address",
    ),
    (
        "--connection-budget",
        int,
        _default_connection_budget(),
        "client connections (HTTP and WebSocket) kept open in all (three quarters of "
        "the open-file limit, ulimit -n)",
    ),
    ("--message-rate", float, 10.0, "WebSocket messages per second on one connection"),
    ("--message-burst", float, 30.0, "WebSocket messages one connection may send at once"),
    (
        "--turn-seconds",
        float,
        90.0,
        "seconds each decision of a quick match from the lobby may take before the "
        "player forfeits; 0: no turn clock",
    ),
    (
        "--lease-seconds",
        float,
        5.0,
        "PostgreSQL: seconds before another process takes over the games of one that died",
    ),
)


def register(subparsers: Any) -> None:
    """Add ``serve`` to the ``koikoi`` command."""
    parser = add_command(
        subparsers,
        "serve",
        run=run,
        help="run the web game (play the AI, a friend by invite link, spectate, score keeper)",
        description=(
            "Run the web game on http://HOST:PORT/: play the AI from level 1 to 8 (expert, "
            "the default; hints come from the expert whatever the level), a friend by invite "
            "link, or watch. Games are stored in a database (SQLite by default: "
            "$KOIKOI_HOME/koikoi.db, else ./koikoi.db); a restart loses no game."
        ),
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes behind the one port (default: %(default)s); more than one "
        "needs a PostgreSQL database, where any process serves any game (docs/deploy.md)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        metavar="URL",
        help="SQLAlchemy URL, e.g. sqlite:///games.db or postgresql://user@host/db "
        "(default: $KOIKOI_DATABASE_URL, else a SQLite file)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="log level (logs are JSON lines on stderr; default: %(default)s)",
    )
    limits = parser.add_argument_group(
        "limits",
        "abuse limits and capacity (default: $KOIKOI_<NAME> in upper case, else the value shown)",
    )
    for flag, kind, default, text in _LIMITS:
        limits.add_argument(
            flag,
            type=kind,
            default=None,
            metavar="S" if kind is float else "N",
            help=f"{text} (default {default:g})",
        )
    parser.add_argument(
        "--ws-deflate",
        action="store_true",
        help="accept WebSocket compression (permessage-deflate) when a client offers it; off "
        "by default: it saves bandwidth on small messages but costs CPU on every message "
        "and memory on every connection (docs/deploy.md)",
    )
    parser.add_argument("--ai-delay", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--allow-seed", action="store_true", help=argparse.SUPPRESS)


def _config(args: argparse.Namespace) -> Any:
    """The server settings: the environment's ``KOIKOI_*`` limits, then the flags given."""
    from koikoi.server.config import OFF_AT_ZERO, ServerConfig

    given: dict[str, Any] = {}
    for flag, _, _, _ in _LIMITS:
        name = flag[2:].replace("-", "_")
        value = getattr(args, name, None)
        if value is None:
            continue
        if name in OFF_AT_ZERO:
            if not value >= 0:
                raise ServeError(f"{flag} must be 0 (off) or a positive number, not {value:g}")
        elif not value > 0:
            raise ServeError(f"{flag} must be a positive number, not {value:g}")
        given[name] = value
    try:
        return ServerConfig.from_env(allow_seed=args.allow_seed, ai_delay=args.ai_delay, **given)
    except ValueError as exc:
        raise ServeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Start uvicorn with the app; returns when the server stops (Ctrl-C: graceful)."""
    try:
        import uvicorn

        from koikoi.server import guard
        from koikoi.server.app import create_app
        from koikoi.server.logs import configure_logging
        from koikoi.server.storage import default_database_url
    except ModuleNotFoundError as exc:
        raise ServeError(
            f"the web game needs the 'web' extra ({exc.name} is missing): pip install 'koikoi[web]'"
        ) from None
    if not 0 < args.port < 65536:
        raise ServeError(f"--port must be 1 to 65535, not {args.port}")
    if not 1 <= args.workers <= 256:
        raise ServeError(t("--workers must be 1 to 256, not {n}", n=args.workers))
    url = args.database_url or os.environ.get("KOIKOI_DATABASE_URL") or default_database_url()
    if args.workers > 1 and not is_postgresql(url):
        raise ServeError(
            t(
                "--workers {n} needs a PostgreSQL database (--database-url "
                "postgresql://USER@HOST/DB or $KOIKOI_DATABASE_URL): SQLite serves one "
                "process only",
                n=args.workers,
            )
        )
    check_address(args.host, args.port)
    print(browser_line(args.host, args.port), flush=True)
    configure_logging(args.log_level)
    config = _config(args)
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_config": None,
        "access_log": False,
        "ws_max_size": 64 * 1024,
        "ws_per_message_deflate": args.ws_deflate,
        "timeout_graceful_shutdown": 10,
        "proxy_headers": False,
        "server_header": False,
        # Connection limits below the app (koikoi.server.guard; docs/deploy.md).
        "http": guard.GuardedHTTPProtocol,
        "ws": guard.GuardedWebSocketProtocol,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
    }
    if args.workers == 1:
        guard.install(config)
        uvicorn.run(create_app(url, config=config, settle_gc=True), **options)
        return 0
    # uvicorn binds the port once and hands the socket to N worker processes
    # (started afresh, restarted if one dies); each builds the app with worker_app().
    _prepare_database(url)
    os.environ["KOIKOI_DATABASE_URL"] = url
    os.environ["KOIKOI_LOG_LEVEL"] = args.log_level
    os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(config))
    uvicorn.run("koikoi.cli.serve:worker_app", factory=True, workers=args.workers, **options)
    return 0


def browser_line(host: str, port: int) -> str:
    """The one plain line printed before the server's JSON logs: where to open the game
    (in the language in use).

    >>> browser_line("127.0.0.1", 8000)
    'Open http://127.0.0.1:8000/ in a browser.'
    >>> browser_line("::1", 8080)
    'Open http://[::1]:8080/ in a browser.'
    >>> browser_line("0.0.0.0", 8000)  # doctest: +NORMALIZE_WHITESPACE
    'Listening on every address of this machine: open http://127.0.0.1:8000/ in a browser
    here, or http://THIS-MACHINE:8000/ from another device.'
    """
    if host in ("0.0.0.0", "::", ""):
        return t(
            "Listening on every address of this machine: open {url} in a browser here, or "
            "http://THIS-MACHINE:{port}/ from another device.",
            url=f"http://127.0.0.1:{port}/",
            port=port,
        )
    shown = f"[{host}]" if ":" in host else host
    return t("Open {url} in a browser.", url=f"http://{shown}:{port}/")


def is_postgresql(url: str) -> bool:
    """Whether a database URL names PostgreSQL (any driver)."""
    return url.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


def _prepare_database(url: str) -> None:
    """Create the tables once, before the workers start (not N times at once)."""
    from koikoi.server.cluster import conninfo_of, create_lease_table
    from koikoi.server.storage import Storage

    store = Storage(url)
    try:
        create_lease_table(conninfo_of(store.url))
    finally:
        store.dispose()


def worker_app() -> Any:
    """The app of one ``--workers`` process, from the settings its parent left in the
    environment (``KOIKOI_DATABASE_URL``, ``KOIKOI_SERVE_CONFIG``, ``KOIKOI_LOG_LEVEL``)."""
    from koikoi.server import guard
    from koikoi.server.app import create_app
    from koikoi.server.config import ServerConfig
    from koikoi.server.logs import configure_logging

    configure_logging(os.environ.get("KOIKOI_LOG_LEVEL", "info"))
    config = ServerConfig(**json.loads(os.environ.get(CONFIG_ENV, "{}")))
    guard.install(config)
    return create_app(os.environ["KOIKOI_DATABASE_URL"], config=config, settle_gc=True)


def check_address(host: str, port: int) -> None:
    """Raise :class:`ServeError` with one clear sentence unless ``host:port`` can be
    listened on (checked before the server starts, which would log its failure as
    several lines of JSON).
    """
    import errno
    import socket

    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(f"cannot listen on {host!r}: {exc.strerror}; check --host") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ServeError(
                    f"port {port} on {host} is already in use; choose another with --port"
                ) from None
            if exc.errno == errno.EACCES:
                raise ServeError(
                    f"no permission to listen on port {port} of {host}; "
                    "choose a port above 1023 with --port"
                ) from None
            raise ServeError(
                f"cannot listen on {host} port {port}: {exc.strerror or exc}"
            ) from None
